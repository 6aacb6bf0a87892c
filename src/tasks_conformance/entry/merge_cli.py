"""The `merge` command's options (the logic is merge.py): the report flags are the `suite`
command's, from the settings schema (settings.SUITE); the rest are merge's own, as `--jobs` and
`--shard` are suite's.

No `from __future__ import annotations` (see cli.py): typer reads the annotations at start-up.
"""

from typing import Annotated, Any

import typer

from tasks_conformance.core.errors import UsageError
from tasks_conformance.core.fleet_history import DEFAULT_LENGTH
from tasks_conformance.core.result import EXIT_USAGE
from tasks_conformance.settings import SUITE
from tasks_conformance.settings.command_line import many, takes_settings


@takes_settings(SUITE)
def merge_command(
    reports: Annotated[list[str], typer.Argument(metavar="REPORT", help="json reports (--reporter json=FILE) of single runs, --era both runs, suites and suite shards")],
    latest: Annotated[bool, typer.Option("--latest", help="A run present in two reports: keep the newer (by its startedAt) instead of stopping with an error")] = False,
    history: Annotated[str | None, typer.Option("--history", metavar="DIR", help="Keep this merge's summary in DIR (one small JSON per run, named by its time) and mark each target's last outcomes, when each failure began and its regressions")] = None,
    history_length: Annotated[int, typer.Option("--history-length", metavar="N", help=f"With --history: how many outcomes of each target the reports show (default {DEFAULT_LENGTH})")] = DEFAULT_LENGTH,
    fail_on_regression: Annotated[bool, typer.Option("--fail-on-regression", help="With --history: exit 1 when a check that passed a target's last run fails now, even when a baseline accepts the failure")] = False,
    **flags: Any,
) -> None:
    """Combine the json reports of runs, suites and shards into the report one suite of them all would
    have written, with every reporter. Exit code: the suite's (the worst run: incomplete, then failed,
    then passed); 2 for a file that is not a report or a run given twice (without --latest)."""
    from tasks_conformance.entry.merge import run_merge

    try:
        code = run_merge(reports, latest=latest, history=history, history_length=history_length,
                         fail_on_regression=fail_on_regression, format=flags["format"],
                         reporters=many(flags["reporters"]), quiet=flags["quiet"], verbose=flags["verbose"],
                         debug=flags["debug"])
    except UsageError as exc:  # one line, as every command's (cli.usage_exit)
        typer.echo(f"tasks-conformance: error: {exc}", err=True)
        raise typer.Exit(EXIT_USAGE) from None
    raise typer.Exit(code)
