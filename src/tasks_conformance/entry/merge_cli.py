"""The `merge` command's options (the logic is merge.py): the report flags are the `suite`
command's, from the settings schema (settings.SUITE); the rest are merge's own, as `--jobs` and
`--shard` are suite's, declared in settings/commands.py (MERGE_OWN).

No `from __future__ import annotations` (see cli.py): typer reads the annotations at start-up.
"""

from typing import Annotated, Any

import typer

from tasks_conformance.core.errors import UsageError
from tasks_conformance.core.result import EXIT_USAGE
from tasks_conformance.settings import SUITE
from tasks_conformance.settings.command_line import many, takes_options, takes_settings
from tasks_conformance.settings.commands import MERGE_OWN


@takes_settings(SUITE)
@takes_options(*MERGE_OWN)
def merge_command(
    reports: Annotated[list[str], typer.Argument(metavar="REPORT", help="json reports (--reporter json=FILE) of single runs, --era both runs, suites and suite shards")],
    **flags: Any,
) -> None:
    """Combine the json reports of runs, suites and shards into the report one suite of them all would
    have written, with every reporter. Exit code: the suite's (the worst run: incomplete, then failed,
    then passed); 2 for a file that is not a report or a run given twice (without --latest)."""
    from tasks_conformance.entry.merge import run_merge

    try:
        code = run_merge(reports, latest=flags["latest"], history=flags["history"],
                         history_length=flags["history_length"], fail_on_regression=flags["fail_on_regression"],
                         format=flags["format"],
                         reporters=many(flags["reporters"]), quiet=flags["quiet"], verbose=flags["verbose"],
                         debug=flags["debug"])
    except UsageError as exc:  # one line, as every command's (cli.usage_exit)
        typer.echo(f"tasks-conformance: error: {exc}", err=True)
        raise typer.Exit(EXIT_USAGE) from None
    raise typer.Exit(code)
