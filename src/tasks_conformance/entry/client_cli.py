"""`tasks-conformance client`: judge a tasks client from its bytes. The tool plays a scripted tasks
server per scenario, starts the client under test by the official conformance suite's client
harness convention, and reports with the server mode's reporters and exit codes.

    tasks-conformance client --command "node my-client.js" [--transport http|stdio] [--era extension|legacy|both]
                             [--scenario NAME]…
    tasks-conformance client --list-scenarios [--format json]
    tasks-conformance client demo        every scenario of both eras and transports against the reference client

No `from __future__ import annotations` (see cli.py): typer reads the annotations at start-up.
"""

import json
import os
import sys
from typing import Annotated, Any

import typer

from tasks_conformance.core.errors import UsageError
from tasks_conformance.core.result import EXIT_CODES, EXIT_INTERRUPTED, EXIT_USAGE

client_app = typer.Typer(rich_markup_mode=None, add_completion=False,
                         help="Judge a tasks client: play a scripted server, run the client, judge its bytes.")

ERAS = ("extension", "legacy", "both")
REPORT_NAMES = ("human", "json", "json-summary", "junit-xml", "markdown")


def _fail(message: str) -> typer.Exit:
    typer.echo(f"tasks-conformance client: {message}", err=True)
    return typer.Exit(EXIT_USAGE)


def reference_client_command() -> list[str]:
    return [sys.executable, "-m", "tasks_conformance.client.reference_client"]


@client_app.callback(invoke_without_command=True)
def client_command(
    ctx: typer.Context,
    command: Annotated[str | None, typer.Option("--command", metavar="CMD", help="the client under test, started once per scenario with the scripted server's URL appended (split like a shell would)")] = None,
    transport: Annotated[str, typer.Option("--transport", metavar="http|stdio", help="how the client reaches the scripted server: http (the default; its URL is the last argument) or stdio (the client spawns it; its command is the last argument and, as a JSON array, MCP_CONFORMANCE_SERVER_COMMAND); both runs each scenario on each")] = "http",
    era: Annotated[str, typer.Option("--era", metavar="|".join(ERAS), help="which wire the scenarios speak: extension (2026-07-28, the default), legacy (2025-11-25) or both")] = "extension",
    scenario: Annotated[list[str] | None, typer.Option("--scenario", metavar="NAME", help="run only this scenario (repeatable; --list-scenarios names them)")] = None,
    timeout: Annotated[int, typer.Option("--timeout", metavar="MS", help="at most this long per scenario's client (default 30000)")] = 30_000,
    jobs: Annotated[int | None, typer.Option("--jobs", metavar="N", help="scenarios run at once (default: the CPU count)")] = None,
    format: Annotated[str | None, typer.Option("--format", metavar="|".join(REPORT_NAMES), help="the report on stdout (default human)")] = None,
    reporter: Annotated[list[str] | None, typer.Option("--reporter", metavar="NAME=PATH", help="also write a report to a file (repeatable)")] = None,
    wire_log: Annotated[str | None, typer.Option("--wire-log", metavar="PATH", help="write every frame of every scenario as JSON lines")] = None,
    list_scenarios: Annotated[bool, typer.Option("--list-scenarios", help="list the scenarios (with --format json: their eras, context keys and rules) and exit")] = False,
) -> None:
    if ctx.invoked_subcommand is not None:
        return
    if list_scenarios:
        typer.echo(_scenarios_text(format))
        raise typer.Exit(0)
    if not command:
        raise _fail("--command is required (or --list-scenarios, or `client demo`)")
    raise typer.Exit(_run(command, transport, era, tuple(scenario or ()), timeout, jobs, format, reporter or [],
                          wire_log))


@client_app.command("demo")
def client_demo_command(
    format: Annotated[str | None, typer.Option("--format", metavar="|".join(REPORT_NAMES), help="the report on stdout (default human)")] = None,
) -> None:
    """Every scenario of both eras and both transports against the bundled reference client (a compliant tasks client)."""
    raise typer.Exit(_run(reference_client_command(), "both", "both", (), 30_000, None, format, [], None))


def _scenarios_text(format: str | None) -> str:
    from tasks_conformance.client.checks import CLIENT_CHECKS
    from tasks_conformance.client.scenarios import PROTOCOL_VERSION, SCENARIOS

    rows = []
    for s in SCENARIOS:
        era = s.eras[0]
        checks = [c.id for c in CLIENT_CHECKS.values() if c.reads(s.name)]
        rows.append({"name": s.name, "description": s.description, "eras": list(s.eras), "transports": list(s.transports),
                     "protocolVersions": [PROTOCOL_VERSION[e] for e in s.eras],
                     "context": s.context_for(era), "rules": list(s.rules), "checks": checks})
    if format == "json":
        return json.dumps({"scenarios": rows}, indent=2, ensure_ascii=False)
    lines = []
    for r in rows:
        lines.append(f"{r['name']}  ({', '.join(r['eras'])}; {', '.join(r['transports'])})\n    {r['description']}\n"
                     f"    context: {json.dumps(r['context'], ensure_ascii=False)}\n    rules: {', '.join(r['rules'])}")
    lines.append("The harness gets the scenario in MCP_CONFORMANCE_SCENARIO, the protocol version in "
                 "MCP_CONFORMANCE_PROTOCOL_VERSION (2026-07-28, or 2025-11-25 for the tasks-client-legacy-* "
                 "scenarios) and the context in MCP_CONFORMANCE_CONTEXT (JSON: toolName and "
                 "arguments always; cancel: true to cancel the task once it reads working; request: "
                 "{method, params} to send instead of tools/call); the server URL is its last argument. With "
                 "--transport stdio the client spawns the server: its command is the last argument, shell-quoted, "
                 "and MCP_CONFORMANCE_SERVER_COMMAND as a JSON array (the form to prefer); "
                 "tasks-client-unsafe-task-id runs over HTTP only. It may print one line TASKS-CONFORMANCE-OUTCOME "
                 "{\"status\", \"isError\", \"error\"} with what it would show its user.")
    return "\n".join(lines)


def _run(command: str | list[str], transport: str, era: str, scenarios: tuple[str, ...], timeout_ms: int,
         jobs: int | None, format: str | None, reporters: list[str], wire_log: str | None) -> int:
    try:
        config = _config(command, transport, era, scenarios, timeout_ms, jobs)
        outputs = _outputs(format, reporters, wire_log)
    except UsageError as exc:
        typer.echo(f"tasks-conformance client: {exc}", err=True)
        return EXIT_USAGE
    import anyio

    from tasks_conformance.client.runner import execute_client

    try:
        execution = anyio.run(execute_client, config)
    except KeyboardInterrupt:
        typer.echo("tasks-conformance client: interrupted", err=True)
        return EXIT_INTERRUPTED
    _write(execution.result, execution.wire, outputs, format)
    return EXIT_CODES[execution.result.outcome]


def _config(command: str | list[str], transport: str, era: str, scenarios: tuple[str, ...], timeout_ms: int,
            jobs: int | None) -> Any:
    from tasks_conformance.client.launch import split_command
    from tasks_conformance.client.runner import ClientConfig
    from tasks_conformance.client.scenarios import BY_NAME

    if transport not in ("http", "stdio", "both"):
        raise UsageError(f"--transport must be http, stdio or both, got {transport!r}")
    transports: tuple[Any, ...] = ("http", "stdio") if transport == "both" else (transport,)
    if era not in ERAS:
        raise UsageError(f"--era must be one of {', '.join(ERAS)}, got {era!r}")
    eras = eras_of(era)
    unknown = [s for s in scenarios if s not in BY_NAME]
    if unknown:
        raise UsageError(f"--scenario: unknown {unknown[0]!r}; `tasks-conformance client --list-scenarios` names them")
    elsewhere = [s for s in scenarios if not set(BY_NAME[s].eras) & set(eras)]
    if elsewhere:
        raise UsageError(f"--scenario {elsewhere[0]}: a scenario of --era {BY_NAME[elsewhere[0]].eras[0]}, "
                         f"not of --era {era}")
    http_only = [s for s in scenarios if not set(BY_NAME[s].transports) & set(transports)]
    if http_only:
        raise UsageError(f"--scenario {http_only[0]}: a scenario of --transport {BY_NAME[http_only[0]].transports[0]} only")
    if timeout_ms <= 0:
        raise UsageError("--timeout must be a positive number of milliseconds")
    if jobs is not None and jobs <= 0:
        raise UsageError("--jobs must be at least 1")
    argv = split_command(command)
    if not argv:
        raise UsageError("--command is empty")
    return ClientConfig(command=tuple(argv), eras=eras, scenarios=scenarios, timeout_s=timeout_ms / 1000,
                        jobs=jobs or os.cpu_count() or 2, transports=transports)


def eras_of(era: str) -> Any:
    """The eras an --era value runs: both is every tasks wire, in the registry's order."""
    from tasks_conformance.core.wires import DIALECTS

    return tuple(str(wire) for wire in DIALECTS) if era == "both" else (era,)


def _outputs(format: str | None, reporters: list[str], wire_log: str | None) -> list[tuple[str, str]]:
    from tasks_conformance.core.flag_values import parse_reporter
    from tasks_conformance.reporters import available_reporters, known_reporter

    if format is not None and format not in REPORT_NAMES and not known_reporter(format):
        raise UsageError(f"--format: unknown report {format!r}; available: {', '.join(available_reporters())}")
    out = []
    for value in reporters:
        spec = parse_reporter(value)
        if not known_reporter(spec.name):
            raise UsageError(f"--reporter: unknown reporter {spec.name!r}; available: {', '.join(available_reporters())}")
        if spec.path is None:
            raise UsageError(f"--reporter {spec.name}: give a path (NAME=PATH); --format chooses stdout's report")
        out.append((spec.name, spec.path))
    if wire_log is not None:
        out.append(("wire-log", wire_log))
    for _name, path in out:
        try:
            open(path, "a", encoding="utf-8").close()
        except OSError as exc:
            raise UsageError(f"cannot write {path!r}: {exc.strerror}") from None
    return out


def _write(result: Any, wire: Any, outputs: list[tuple[str, str]], format: str | None) -> None:
    from tasks_conformance.reporters import ReportOptions, render, write_wire_log
    from tasks_conformance.reporters.output import want_color

    name = format or "human"
    color = name == "human" and sys.stdout.isatty() and want_color(sys.stdout)
    render(name, result, sys.stdout, ReportOptions(color=color))
    for report, path in outputs:
        with open(path, "w", encoding="utf-8", newline="\n") as fh:
            if report == "wire-log":
                write_wire_log(wire, fh)
            else:
                render(report, result, fh)
