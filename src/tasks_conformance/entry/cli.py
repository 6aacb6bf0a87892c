"""The command line. Thin: flags -> RunOptions -> build_run_config() -> cli_run (runner, reporters)
-> exit code.

Exit codes, chosen here and (for one run's result) in cli_run: 0 passed, 1 failed, 2 usage error,
3 incomplete, 130 interrupted. `--help`, `--version` and `--list-checks` import neither httpx nor
pydantic; the run path imports what it needs when it runs.

No `from __future__ import annotations` here, unlike the rest of the package: typer reads every
command's parameters from its annotations when it builds the command line, on every start, and
string annotations would be compiled and evaluated there (about 5 ms of each run's start-up)
instead of coming ready-made from the module's bytecode.
"""

import contextlib
import json
import os
import sys
from collections.abc import Iterator, Sequence
from dataclasses import replace
from typing import Annotated, Any, NoReturn

import typer
from typer.core import TyperArgument, TyperCommand, TyperGroup

from tasks_conformance import __version__
from tasks_conformance.core.errors import UsageError
from tasks_conformance.core.result import EXIT_CODES, EXIT_INTERRUPTED, EXIT_USAGE
from tasks_conformance.entry.call_cli import call_command
from tasks_conformance.entry.cli_coercion import install as install_plain_coercion
from tasks_conformance.entry.cli_run import run_one as _run
from tasks_conformance.entry.client_cli import client_app
from tasks_conformance.entry.merge_cli import merge_command
from tasks_conformance.server.check_catalog import catalog
from tasks_conformance.server.reference.config import build_parser as build_reference_parser
from tasks_conformance.settings import CLIENT, DEMO, ERA, RUN, SETTINGS, SUITE, RunOptions
from tasks_conformance.settings.command_line import (
    command_parameter,
    given_flags,
    options_from,
    parser_argv,
    takes_options,
    takes_parser,
    takes_settings,
    typer_option,
)
from tasks_conformance.settings.command_line import many as _many
from tasks_conformance.settings.commands import FORMAT, LIST_CHECKS, SUITE_OWN, VERSION, one_of
from tasks_conformance.settings.config import Catalog, build_run_config

_RAW_ARGS = "tasks_conformance.raw_args"


class _MainGroup(TyperGroup):
    """The main command, keeping its raw arguments for the eager --list-checks (see there)."""

    # `Any`: typer's Context base class lives in a private module; Any keeps the override valid.
    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        ctx.meta[_RAW_ARGS] = tuple(args)
        # Plain flag values are converted without pydantic (see cli_coercion: ~70 ms a start).
        install_plain_coercion([*self.get_params(ctx), *(p for cmd in self.commands.values() for p in cmd.params)])
        return super().parse_args(ctx, args)


class _MetavarCommand(TyperCommand):
    """A subcommand whose arguments show their metavar alone ("ID", not "ID <str>")."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for param in self.params:
            if isinstance(param, TyperArgument) and param.metavar:
                param.display_type_rich = lambda ctx: None  # type: ignore[method-assign]


app = typer.Typer(
    cls=_MainGroup,
    add_completion=True,
    no_args_is_help=False,
    invoke_without_command=True,
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
    help=(
        "Check an MCP server's Tasks behaviour on the 2025-11-25 legacy wire and the 2026-07-28 "
        "io.modelcontextprotocol/tasks extension wire. Exit codes: 0 passed, 1 failed, 2 usage error, "
        "3 incomplete, 130 interrupted."
    ),
)

def _version(value: bool) -> None:
    if value:
        typer.echo(f"tasks-conformance {__version__}")
        raise typer.Exit(0)


def _list_checks_seen(ctx: typer.Context, value: bool) -> None:
    # Eager, like --version: it prints before typer converts the other flags, because that
    # conversion imports pydantic, a cost --list-checks must not pay. So --format is read from
    # the raw arguments with the command's own parser, wherever on the line it was given.
    if value:
        opts, _rest, _order = ctx.command.make_parser(ctx).parse_args(list(ctx.meta.get(_RAW_ARGS, ())))
        fmt = opts.get("format")
        _list_checks(fmt if isinstance(fmt, str) else None)


def _list_checks(format: str | None) -> NoReturn:
    """--list-checks: a table for people, or with --format json the registry for scripts."""
    from tasks_conformance.server.check_catalog import listing

    with _usage_errors():
        one_of(FORMAT, format)
    typer.echo(listing(as_json=format == "json"))
    raise typer.Exit(0)


def usage_exit(message: str) -> NoReturn:
    typer.echo(f"tasks-conformance: error: {message}", err=True)
    raise typer.Exit(EXIT_USAGE)


@contextlib.contextmanager
def _usage_errors(resolved: Any = None) -> Iterator[None]:
    """A UsageError exits 2 with its message; `resolved` (config_file.Resolved): the settings it
    came from, so an error about a value the config file gave names the file's key."""
    try:
        yield
    except UsageError as exc:
        if resolved is not None:
            from tasks_conformance.settings.config_file import from_where

            exc = from_where(exc, resolved)
        usage_exit(str(exc))


def _run_options(options: RunOptions, era: str = "auto", resolved: Any = None) -> NoReturn:
    """Build the RunConfig (usage errors exit 2 here), run it and exit with its code."""
    with _usage_errors(resolved):
        # The catalog is read only to check --check-id/--category names; without them, the checks
        # are first imported by the runner, while a stdio server boots (see launch.py).
        known = catalog() if options.check_ids or options.categories or options.areas else Catalog()
        config = build_run_config(options, known)
        if era == "auto":
            code = _run(config)
        else:
            from tasks_conformance.entry.multirun import era_plan, run_combined

            planned = era_plan(config, era)  # --era both: one run per era, reported together
            code = _run(planned[0].config) if len(planned) == 1 else run_combined(config, planned, "eras")
    raise typer.Exit(code)


@app.callback()
@takes_settings(RUN, command_parameter(VERSION, _version), command_parameter(LIST_CHECKS, _list_checks_seen))
def main_command(ctx: typer.Context, **flags: Any) -> None:
    """Run the conformance checks against one server."""
    era = flags[ERA.name]
    options = options_from(flags)
    given = _given(ctx)
    if ctx.invoked_subcommand is not None:
        ctx.obj = (options, given)  # for `config show`, which reports these flags
        ctx.meta[_ERA_FLAG] = era if "era" in given else None
        return
    from tasks_conformance.settings.config_file import resolve

    with _usage_errors():
        # Credentials from the environment apply to an HTTP target only (resolve checks the url).
        resolved = resolve(options, given, environ=os.environ, era=era if "era" in given else None)
    _run_options(resolved.options, resolved.era, resolved)


_ERA_FLAG = "tasks_conformance.era"  # ctx.meta: --era as given before `config show` (None: not given)


def _given(ctx: typer.Context) -> frozenset[str]:
    """The RunOptions fields given on the command line (not left at their defaults)."""
    return given_flags(ctx)


def _credentials_from_environment(
    access_token: str | None, oauth_access_token: str | None, headers: list[str] | None,
) -> tuple[str | None, list[str] | None]:
    """Credentials kept off the command line (and out of `ps` and shell history): without
    --access-token/--oauth-access-token, the token is $TASKS_CONFORMANCE_ACCESS_TOKEN (in the
    flag's forms: the token, @FILE or -); without --header, the headers are the non-empty lines
    of $TASKS_CONFORMANCE_HEADERS ("Name: value" each). A flag given always wins. The values
    are secrets like the flags'. (config_file.resolve applies this to the merged settings.)"""
    from tasks_conformance.settings.config_file import credentials_from_environment

    return credentials_from_environment(access_token, oauth_access_token, headers)


def reference_command(extra: list[str] | None = None) -> list[str]:
    return [sys.executable, "-m", "tasks_conformance.server.reference", "--transport", "stdio", *(extra or [])]


# The reference server's confirm_action asks for input under the key confirm-1; accepting lets
# the input-required checks run to completion.
DEMO_INPUT_RESPONSES = '{"confirm-1": {"action": "accept", "content": {"confirm": true}}}'


def demo_options(options: RunOptions, task_store: str | None = None) -> RunOptions:
    """`options` aimed at the bundled reference server over stdio, with the tool and answer it
    needs, and a tool for every probe role, so that the demo shows every check it can; with
    `task_store`, the server keeps its tasks there (profile durable restarts it)."""
    from tasks_conformance.server.reference.hint import ROLE_PROBES

    cmd = reference_command(["--task-store", task_store] if task_store else None)
    return replace(
        options, command=cmd[0], args=tuple(cmd[1:]), tool_name="confirm_action",
        input_responses=DEMO_INPUT_RESPONSES, probes=ROLE_PROBES,
    )


@app.command("demo")
@takes_settings(DEMO)
def demo_command(**flags: Any) -> None:
    """Run the whole suite against the bundled reference server over stdio (it should pass)."""
    from tasks_conformance.core.profiles import OPT_IN_CHECKS

    options = options_from(flags)
    if options.profile != "durable" and not set(options.check_ids) & set(OPT_IN_CHECKS):
        _run_options(demo_options(options), era=flags[ERA.name])
    import tempfile  # a restart test: the server's task store, for this run only

    with tempfile.TemporaryDirectory(prefix="tasks-conformance-demo-") as store:
        _run_options(demo_options(options, os.path.join(store, "tasks.jsonl")), era=flags[ERA.name])


# `serve-reference` takes the reference server's flags from its own parser (reference/config.py), in
# the style of every other command: declared once there, with their checks and defaults.
_REFERENCE_PARSER = build_reference_parser("tasks-conformance serve-reference")


@app.command("serve-reference")
@takes_parser(_REFERENCE_PARSER)
def serve_reference_command(ctx: typer.Context, **flags: Any) -> None:
    """Serve the bundled reference server, both tasks wires, until stopped (the demo command runs
    the whole suite against it over stdio)."""
    from tasks_conformance.server.reference import serve

    argv = parser_argv(ctx, _REFERENCE_PARSER)
    parser = build_reference_parser("tasks-conformance serve-reference")

    def one_line(message: str) -> NoReturn:  # argparse would print its whole usage first
        usage_exit(f"serve-reference: {message} (see --help)")

    parser.error = one_line  # type: ignore[method-assign]
    parser.parse_args(argv)  # the reference server's own checks (a port in range, durations >= 0...)
    raise typer.Exit(serve(argv))


@app.command("explain", cls=_MetavarCommand)
def explain_command(
    ident: Annotated[str, typer.Argument(metavar="ID", help="A check id (tasks-inline-result, tasks-client-follows-task) or a requirement id (S-EXT-MUST-03, C-EXT-MUST-02)")],
) -> None:
    """Explain a check (a server check: what it sends, its precondition, what it expects on each wire; a
    client check: the scenarios it reads and the client rules it judges) or a requirement (the rule, its
    level and spec link, the checks that judge it)."""
    from tasks_conformance.entry.explain import UnknownId, explain

    try:
        text = explain(ident)
    except UnknownId as exc:
        usage_exit(f"{exc}; `tasks-conformance --list-checks`, `tasks-conformance client --list-scenarios` and "
                   "`tasks-conformance requirements` list them")
    typer.echo(text)


@app.command("requirements")
@takes_options(FORMAT)
def requirements_command(**flags: Any) -> None:
    """The coverage matrix: every requirement, its level, the checks that judge it (or why none does)
    and the rule in our words (json: with its spec link too)."""
    from tasks_conformance.entry import coverage

    with _usage_errors():
        format = one_of(FORMAT, flags["format"])
    if format == "json":
        typer.echo(json.dumps(coverage.document(), indent=2, ensure_ascii=False))
    else:
        import shutil

        # As wide as the terminal (COLUMNS off one), up to a width a rule stays readable at.
        typer.echo(coverage.text(min(shutil.get_terminal_size((coverage.DEFAULT_WIDTH, 24)).columns, 120)))


@app.command("schema", cls=_MetavarCommand)
def schema_command(kind: Annotated[str, typer.Argument(metavar="json|json-summary|multi", help="json, json-summary, or multi (their shape for --era both and suite)")]) -> None:
    """Print the JSON Schema of the json or json-summary report (multi: of several runs at once)."""
    if kind not in ("json", "json-summary", "multi"):
        usage_exit(f"schema: expected json, json-summary or multi, got {kind!r}")
    from tasks_conformance.reporters import schema_text

    typer.echo(schema_text(kind))  # type: ignore[arg-type]


config_app = typer.Typer(help="The config file: `config show` prints the effective settings.",
                          rich_markup_mode=None, no_args_is_help=True)
app.add_typer(config_app, name="config")
app.add_typer(client_app, name="client")
app.command("call")(call_command)
app.command("merge", cls=_MetavarCommand)(merge_command)


@config_app.command("show")
@takes_options(FORMAT)
def config_show_command(
    ctx: typer.Context,
    config: Annotated[str | None, typer_option(SETTINGS["config"])] = None,
    **flags: Any,
) -> None:
    """Print the effective settings (the flags before `config`, the environment, the config file,
    the defaults) and where each came from; secrets masked."""
    from tasks_conformance.settings.config_file import resolve
    from tasks_conformance.settings.config_show import show, show_text

    with _usage_errors():
        format = one_of(FORMAT, flags["format"])
    root = ctx.find_root()
    options, given = root.obj if isinstance(root.obj, tuple) else (RunOptions(), frozenset())
    if config is not None:  # `config show --config FILE` as well as `--config FILE config show`
        options, given = replace(options, config=config), given | {"config"}
    with _usage_errors():
        resolved = resolve(options, given, environ=os.environ, era=ctx.meta.get(_ERA_FLAG))
        # The client's settings, when the file has a [client] table (`tasks-conformance client` reads it).
        client = resolve(RunOptions(config=options.config), given & {"config"}, subject=CLIENT)
    rows = show(resolved)
    client_rows = show(client, subject=CLIENT) if client.client_table else None
    if format == "json":
        doc: dict[str, Any] = {"file": resolved.file, "settings": rows}
        if client_rows is not None:
            doc["client"] = client_rows
        typer.echo(json.dumps(doc, indent=2, ensure_ascii=False))
    else:
        typer.echo(show_text(rows, resolved.file, client_rows))


@app.command("suite", cls=_MetavarCommand)
@takes_settings(SUITE)
@takes_options(*SUITE_OWN)
def suite_command(
    file: Annotated[str, typer.Argument(metavar="FILE", help="A .toml or .json file listing the targets: [[targets]] tables with a name and the main command's flags as keys")],
    **flags: Any,
) -> None:
    """Run every target listed in FILE, each an independent run, and write one combined report
    (json: one result per target; junit-xml: one testsuite per target; markdown: a check x target
    matrix). Exit code: the worst of all runs (incomplete, then failed, then passed)."""
    from tasks_conformance.entry.suite import run_suite

    with _usage_errors():
        code = run_suite(file, jobs=flags["jobs"], shard=flags["shard"], format=flags["format"], reporters=_many(flags["reporters"]),
                         quiet=flags["quiet"], verbose=flags["verbose"], debug=flags["debug"])
    raise typer.Exit(code)


def run_cli(argv: Sequence[str] | None = None) -> int:
    """Run the command line and return its exit code: one line for usage errors, no traceback
    unless --debug. main() is this plus leaving the process; tests call it in-process."""
    args = list(sys.argv[1:] if argv is None else argv)
    try:
        rv = app(args, standalone_mode=False)
        code = rv if isinstance(rv, int) else 0
    except typer.Exit as exc:
        code = exc.exit_code
    except typer.Abort:
        typer.echo("tasks-conformance: interrupted", err=True)
        code = EXIT_INTERRUPTED
    except typer.TyperException as exc:
        # Typer's own (vendored click) usage errors: unknown option, missing value, bad type.
        text = exc.format_message() if hasattr(exc, "format_message") else str(exc)
        msg = text.splitlines()[0] if text else "usage error"
        typer.echo(f"tasks-conformance: error: {msg} (see --help)", err=True)
        code = int(getattr(exc, "exit_code", EXIT_USAGE) or EXIT_USAGE)
    except KeyboardInterrupt:
        typer.echo("tasks-conformance: interrupted", err=True)
        code = EXIT_INTERRUPTED
    except Exception as exc:  # the tool itself failed: incomplete, not a server failure
        _internal_error(exc, debug="--debug" in args)
        code = EXIT_CODES["incomplete"]
    sys.stdout.flush()
    return code


def _internal_error(exc: Exception, *, debug: bool) -> None:
    if debug:
        import traceback

        traceback.print_exc()
    typer.echo(
        f"tasks-conformance: internal error: {type(exc).__name__}: {exc}"
        + ("" if debug else " (run with --debug for the traceback)"),
        err=True,
    )


def main() -> None:
    """Console-script entry."""
    if not sys.warnoptions and "--debug" not in sys.argv:
        import warnings

        # A dependency's warning (a deprecation in a new release, say) is not the user's business
        # and must not reach their stderr between our lines; -W, PYTHONWARNINGS and --debug show them.
        warnings.simplefilter("ignore")
    code = run_cli()
    import gc

    # The process is leaving: everything the run built is garbage the OS takes back at once.
    # Frozen, it is skipped by the collections of the interpreter's shutdown (tens of ms).
    gc.freeze()
    sys.exit(code)


__all__ = ["app", "main", "run_cli"]
