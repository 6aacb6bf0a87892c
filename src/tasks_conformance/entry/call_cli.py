"""`tasks-conformance call`: call one tool of a server as a task with the bundled reference client,
follow it to its end, and say how it ended. A server author's quick poke at a server; the same
client every client-mode scenario must pass.

    tasks-conformance call --url URL | --command CMD --tool-name T [--tool-args JSON] [--era extension|legacy]
                           [--cancel-after MS] [--input-responses JSON] [--timeout MS] [--format human|json]

It prints the outcome, then what it did (era, task or plain call, statuses, each input request and
the answer sent, a cancel and why, why it stopped); --format json carries the same fields.

Exit codes: 0 the task completed (its result may carry isError: the call ended), 1 it failed, was
cancelled, expired (the server no longer knows it) or could not be followed, 2 a usage error, 130
interrupted.

Its options are declared in settings/commands.py (CALL). No `from __future__ import annotations`
(see cli.py): typer reads the annotations at start-up.
"""

import json
import sys
from typing import Any

import typer

from tasks_conformance.core.errors import UsageError
from tasks_conformance.core.result import EXIT_INTERRUPTED, EXIT_USAGE
from tasks_conformance.settings.command_line import takes_options
from tasks_conformance.settings.commands import CALL, CALL_ERA, CALL_FORMAT, one_of


@takes_options(*CALL)
def call_command(**flags: Any) -> None:
    """Call a tool as a task with the reference client, follow it to its end, print the outcome."""
    try:
        keywords = _keywords(**flags)
    except UsageError as exc:
        typer.echo(f"tasks-conformance call: {exc}", err=True)
        raise typer.Exit(EXIT_USAGE) from None
    raise typer.Exit(_call(keywords, flags["format"]))


def _keywords(url: str | None, command: str | None, tool_name: str | None, tool_args: str, era: str,
              cancel_after: int | None, input_responses: str | None, timeout: int, format: str) -> dict[str, Any]:
    import shlex

    from tasks_conformance.core.flag_values import parse_json_flag

    if url is None and command is None:
        raise UsageError("--url (a Streamable HTTP server) or --command (a stdio server to spawn) is required")
    if url is not None and command is not None:
        raise UsageError("give --url or --command, not both")
    target: dict[str, Any]
    if command is not None:
        try:
            argv = shlex.split(command)
        except ValueError as exc:
            raise UsageError(f"--command cannot be split: {exc}") from None
        if not argv:
            raise UsageError("--command is empty")
        target = {"command": argv}
    else:
        assert url is not None
        if not url.startswith(("http://", "https://")):
            raise UsageError("--url must start with http:// or https://")
        target = {"url": url}
    if not tool_name:
        raise UsageError("--tool-name is required")
    one_of(CALL_ERA, era)
    one_of(CALL_FORMAT, format)
    if timeout <= 0 or (cancel_after is not None and cancel_after < 0):
        raise UsageError("--timeout must be positive and --cancel-after not negative")
    arguments = parse_json_flag("--tool-args", tool_args)
    answers = parse_json_flag("--input-responses", input_responses) if input_responses is not None else None
    return {**target, "era": era, "tool_name": tool_name, "arguments": arguments, "cancel_after_ms": cancel_after,
            "input_responses": answers, "timeout_s": timeout / 1000}


def _call(keywords: dict[str, Any], format: str) -> int:
    import anyio

    from tasks_conformance.client.reference.client import call
    from tasks_conformance.core.text import one_line

    live = sys.stderr.isatty() and format == "human"

    def on_status(status: str) -> None:
        if live:
            typer.echo(f"task {one_line(status, 40)}", err=True)

    redact = _redactor(keywords.get("url")).text
    try:
        outcome = anyio.run(lambda: call(on_status=on_status, **keywords))
    except KeyboardInterrupt:
        typer.echo("tasks-conformance call: interrupted", err=True)
        return EXIT_INTERRUPTED
    except Exception as exc:  # the server's side of the exchange, or ours: one line, never a traceback
        typer.echo(redact(f"tasks-conformance call: {one_line(exc, 500)}"), err=True)
        return 1
    trace = outcome.trace.to_json() if outcome.trace is not None else {}
    if format == "json":
        typer.echo(redact(json.dumps({**outcome.to_json(), "result": outcome.result, **trace}, ensure_ascii=False)))
    else:
        lines = outcome.trace.lines() if outcome.trace is not None else []
        typer.echo(redact("\n".join([_sentence(outcome), *(f"  {line}" for line in lines)])))
    return 0 if outcome.status == "completed" else 1


def _redactor(url: str | None) -> Any:
    """The URL's password and secret-looking query values, hidden from everything call prints."""
    from tasks_conformance.core.redact import Redactor
    from tasks_conformance.settings.masking import query_secrets, url_passwords

    return Redactor([*query_secrets(url), *url_passwords(url)] if url else [])


def _sentence(outcome: Any) -> str:
    from tasks_conformance.client.reference.trace import STOPS
    from tasks_conformance.core.text import one_line

    if outcome.status == "completed":
        said = "completed with a tool error (isError: true)" if outcome.is_error else "completed"
        texts = [c.get("text") for c in (outcome.result or {}).get("content") or [] if isinstance(c, dict)]
        shown = "; ".join(t for t in texts if isinstance(t, str))
        return f"{said}" + (f": {one_line(shown, 300)}" if shown else "")
    if outcome.error:
        return f"{outcome.status}: error {outcome.error.get('code')}: {one_line(outcome.error.get('message'), 300)}"
    if outcome.failure:
        return f"{outcome.status}: {one_line(outcome.failure, 300)}"
    stop = outcome.trace.stop if outcome.trace is not None else None
    return str(outcome.status) + (f" ({STOPS[stop]})" if stop in ("timeout", "gone", "abandoned") else "")
