"""`tasks-conformance client`: judge a tasks client from its bytes. The tool plays a scripted tasks
server per scenario, starts the client under test by the official conformance suite's client
harness convention, and reports with the server mode's reporters and exit codes.

    tasks-conformance client --command "node my-client.js" [--era extension|legacy|both] [--scenario NAME]…
    tasks-conformance client --list-scenarios [--format json]
    tasks-conformance client demo        every scenario of both eras and transports against the reference client

Its options are the settings schema's for the client subject (settings/: the fields whose
subjects include CLIENT), as the main command's are the server's; the config file's [client]
table gives their defaults. No `from __future__ import annotations` (see cli.py): typer reads
the annotations at start-up.
"""

import json
import sys
from dataclasses import replace
from typing import Any

import typer

from tasks_conformance.core.errors import UsageError
from tasks_conformance.core.result import EXIT_USAGE
from tasks_conformance.settings import CLIENT, DEMO, RUN
from tasks_conformance.settings.command_line import command_parameter, given_flags, options_from, takes_settings
from tasks_conformance.settings.commands import LIST_SCENARIOS

client_app = typer.Typer(rich_markup_mode=None, add_completion=False,
                         help="Judge a tasks client: play a scripted server, run the client, judge its bytes.")


def _fail(message: str) -> typer.Exit:
    typer.echo(f"tasks-conformance client: {message}", err=True)
    return typer.Exit(EXIT_USAGE)


def reference_client_command() -> list[str]:
    return [sys.executable, "-m", "tasks_conformance.client.reference_client"]


@client_app.callback(invoke_without_command=True)
@takes_settings(RUN, command_parameter(LIST_SCENARIOS), subject=CLIENT)
def client_command(ctx: typer.Context, **flags: Any) -> None:
    if ctx.invoked_subcommand is not None:
        return
    if flags["list_scenarios"]:
        typer.echo(_scenarios_text(flags["format"]))
        raise typer.Exit(0)
    from tasks_conformance.settings.config_file import resolve

    try:
        resolved = resolve(options_from(flags, CLIENT), given_flags(ctx), subject=CLIENT)
    except UsageError as exc:
        raise _fail(str(exc)) from None
    raise typer.Exit(_run(resolved.options, resolved=resolved))


@client_app.command("demo")
@takes_settings(DEMO, subject=CLIENT)
def client_demo_command(**flags: Any) -> None:
    """Every scenario of both eras and both transports against the bundled reference client (a compliant tasks client)."""
    import shlex

    options = replace(options_from(flags, CLIENT), command=shlex.join(reference_client_command()), era="both")
    raise typer.Exit(_run(options, both_transports=True))


def _run(options: Any, *, both_transports: bool = False, resolved: Any = None) -> int:
    """`resolved` (config_file.Resolved): where the settings came from, so an error about a value
    of the file's [client] table names that table's key."""
    from tasks_conformance.entry.client_run import build_client, run_client_cli
    from tasks_conformance.settings.config_file import from_where

    try:
        config = build_client(options)
        if both_transports:  # `client demo`: every scenario over HTTP and over stdio
            config = replace(config, transport="both")
    except UsageError as exc:
        typer.echo(f"tasks-conformance client: {from_where(exc, resolved) if resolved else exc}", err=True)
        return EXIT_USAGE
    try:
        return run_client_cli(config)
    except UsageError as exc:  # a report path that cannot be written, found before any traffic
        typer.echo(f"tasks-conformance client: {exc}", err=True)
        return EXIT_USAGE


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
