"""The compliant reference tasks client, the client mode's counterpart of the reference server:
it calls one tool (or sends one request) over Streamable HTTP or stdio (it spawns the server) on
either tasks wire and reports
how the call ended. The breaking fixture clients (fixtures/broken_client.py) are this client
with one era's flow subclassed (one method overridden), or its `Harness` subclassed.

    await call(url, era="extension", tool_name="slow", arguments={}) -> Outcome

As a process it follows the official conformance harness's convention (the server URL is the
last argument; MCP_CONFORMANCE_SCENARIO, MCP_CONFORMANCE_PROTOCOL_VERSION and
MCP_CONFORMANCE_CONTEXT in the environment) and prints one line:

    python -m tasks_conformance.client.reference_client URL
    python -m tasks_conformance.client.reference_client "SERVER COMMAND"    (stdio; or the command
        as a JSON array in MCP_CONFORMANCE_SERVER_COMMAND)
    TASKS-CONFORMANCE-OUTCOME {"status":"completed","isError":false,"error":null}
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import ssl
import sys
import time
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import replace
from functools import partial
from typing import TYPE_CHECKING, Any, cast
from urllib.parse import urlsplit

import anyio

from tasks_conformance.client.reference.extension import ExtensionFlow
from tasks_conformance.client.reference.http import HttpLink
from tasks_conformance.client.reference.legacy import LegacyFlow
from tasks_conformance.client.reference.stdio import stdio_link
from tasks_conformance.client.reference.trace import CallTrace
from tasks_conformance.client.reference.wire import (
    JSON,
    CallOptions,
    ClientFailure,
    Clock,
    Flow,
    Link,
    Outcome,
    Sleep,
)
from tasks_conformance.core.eras import Era
from tasks_conformance.core.protocol import TERMINAL_STATUSES
from tasks_conformance.core.text import one_line
from tasks_conformance.core.transports.lean_httpx import import_httpx
from tasks_conformance.core.wires import DIALECTS, Wire

if TYPE_CHECKING:
    import httpx

__all__ = ["FLOWS", "Harness", "Outcome", "call", "main"]


FLOWS: Mapping[Wire, type[Flow]] = {Wire.EXTENSION: ExtensionFlow, Wire.LEGACY: LegacyFlow}
OUTCOME_PREFIX = "TASKS-CONFORMANCE-OUTCOME "
# The official runner kills a client after 30 s by default: finish first, the live task cancelled.
HARNESS_TIMEOUT_S = 25.0


async def call(
    url: str | None = None,
    *,
    command: Sequence[str] | None = None,
    era: Era,
    tool_name: str,
    arguments: dict[str, Any],
    cancel_after_ms: int | None = None,
    cancel_when_working: bool = False,
    input_responses: Mapping[str, Any] | None = None,
    request: dict[str, Any] | None = None,
    offer_version: str | None = None,
    list_tasks: bool = False,
    hosts_tasks: bool = False,
    cancel_request: bool = False,
    subscribe: bool = False,
    timeout_s: float = 30,
    transport: httpx.AsyncBaseTransport | None = None,
    on_status: Callable[[str], None] | None = None,
    flows: Mapping[Wire, type[Flow]] = FLOWS,
    clock: Clock | None = None,
    sleep: Sleep | None = None,
) -> Outcome:
    """Call `tool_name` (or send `request`, {"method", "params"}) on the server at `url` (Streamable
    HTTP) or the one `command` starts (stdio), and follow a task if one comes
    back, until it ends, `timeout_s` runs out (a live task is then cancelled) or the server's
    replies cannot be read (status "unknown"). `cancel_when_working` cancels the task once it is
    seen working, `cancel_after_ms` that long after it was created; polling goes on to a terminal
    status. `input_responses` answers input requests as the main command's --input-responses does
    (by key, else "*", else the first answer shaped for the method; with none an elicitation is
    declined, never accepted). `offer_version` is the protocol version the first request offers
    (2026-07-28: answered -32022, the client retries with one of data.supported). `list_tasks`
    lists the session's tasks once the task exists, page by page, and `hosts_tasks` declares and
    serves tasks.list and tasks.cancel (2025-11-25; it hosts no task). `cancel_request` cancels the
    call itself while it is in flight (2026-07-28, C-CORE-MUST-09: on stdio with
    notifications/cancelled, over HTTP by closing its response stream). `subscribe` subscribes to the
    task with subscriptions/listen and polls on (2026-07-28). The outcome's
    `trace` says what the call did. `flows` is the flow each era's call runs (a breaking client's
    subclass, in fixtures/broken_client.py). `clock` and `sleep` replace time.monotonic and
    anyio.sleep (tests)."""
    flow_type = {wire.value: flow for wire, flow in flows.items()}.get(era)
    if flow_type is None:
        raise ValueError(f"era must be one of {sorted(w.value for w in flows)}, not {era!r}")
    if request is not None and not isinstance(request.get("method"), str):
        raise ValueError("request needs a method")
    options = CallOptions(
        tool_name=tool_name, arguments=dict(arguments), cancel_after_ms=cancel_after_ms,
        cancel_when_working=cancel_when_working, input_responses=dict(input_responses or {}), request=request,
        offer_version=offer_version, list_tasks=list_tasks, hosts_tasks=hosts_tasks, cancel_request=cancel_request,
        subscribe=subscribe,
        timeout_s=timeout_s, on_status=on_status,
        clock=clock or time.monotonic, sleep=sleep or anyio.sleep)
    if (url is None) == (command is None):
        raise ValueError("give either url (Streamable HTTP) or command (stdio)")
    if command is not None:
        options = replace(options, reconnect=partial(stdio_link, command, timeout_s))
        try:
            async with stdio_link(command, timeout_s) as link:
                return await _follow(flow_type(link, options))
        except ClientFailure as exc:  # the server could not be started
            trace = CallTrace(flow_type.dialect.wire.value, flow_type.dialect.protocol_version,
                              stop="transport", failure=one_line(exc, 300))
            return Outcome("unknown", failure=trace.failure, trace=trace)
    assert url is not None
    options = replace(options, reconnect=partial(_http_link, url, transport, timeout_s))
    async with _http_link(url, transport, timeout_s) as link:
        return await _follow(flow_type(link, options))


@contextlib.asynccontextmanager
async def _http_link(url: str, transport: httpx.AsyncBaseTransport | None, timeout_s: float) -> AsyncIterator[Link]:
    """A Streamable HTTP peer of the server at `url`, on an HTTP client of its own."""
    import_httpx()
    import httpx

    # An http:// server never needs the CA bundle, whose loading was a tenth of each client
    # process's CPU; the context that stands in trusts no CA, so a TLS connection would fail closed.
    verify: ssl.SSLContext | bool = urlsplit(url).scheme == "https" or ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    async with httpx.AsyncClient(transport=transport, timeout=timeout_s, trust_env=False, verify=verify) as http:
        yield HttpLink(url, http, timeout_s)


async def _follow(flow: Flow) -> Outcome:
    """Run the flow; the outcome carries its trace, with why it stopped."""
    trace = flow.trace
    try:
        outcome = await flow.run()
    except ClientFailure as exc:
        trace.stopped("transport")
        trace.failure = one_line(exc, 300)
        await flow.leave(f"giving up on the task after a failed exchange: {trace.failure}")
        outcome = Outcome("unknown", failure=trace.failure)
    if trace.stop is None:
        if outcome.status in TERMINAL_STATUSES and trace.task_id is not None:
            trace.stopped("terminal")
        elif trace.task_id is None:
            trace.stopped("error" if outcome.error is not None else "plain")
        else:
            trace.stopped("abandoned")
    return replace(outcome, trace=trace)


class UsageProblem(Exception):
    """The harness gave the client something it cannot run."""


def _era(version: str | None) -> Era:
    """The era of MCP_CONFORMANCE_PROTOCOL_VERSION (unset: the newest, 2026-07-28)."""
    wanted = version or DIALECTS[Wire.EXTENSION].protocol_version
    for wire, dialect in DIALECTS.items():
        if dialect.protocol_version == wanted:
            return cast(Era, wire.value)
    raise UsageProblem(f"MCP_CONFORMANCE_PROTOCOL_VERSION {wanted!r} is not a tasks protocol version "
                       f"({', '.join(d.protocol_version for d in DIALECTS.values())})")


def _context(raw: str | None) -> dict[str, Any]:
    """MCP_CONFORMANCE_CONTEXT as call() keywords: toolName, arguments, cancel, request,
    inputResponses, offerVersion, listTasks, hostsTasks, cancelRequest, subscribe (other keys, the scenario's
    name among them, are ignored)."""
    try:
        ctx = json.loads(raw) if raw else {}
    except ValueError as exc:
        raise UsageProblem(f"MCP_CONFORMANCE_CONTEXT is not JSON: {exc}") from None
    if not isinstance(ctx, dict):
        raise UsageProblem("MCP_CONFORMANCE_CONTEXT is not a JSON object")
    request, tool = ctx.get("request"), ctx.get("toolName")
    if request is not None and not (isinstance(request, dict) and isinstance(request.get("method"), str)):
        raise UsageProblem("MCP_CONFORMANCE_CONTEXT request needs a method")
    if request is None and not isinstance(tool, str):
        raise UsageProblem("MCP_CONFORMANCE_CONTEXT names no toolName (nor a request)")
    arguments, answers = ctx.get("arguments", {}), ctx.get("inputResponses", {})
    if not isinstance(arguments, dict) or not isinstance(answers, dict):
        raise UsageProblem("MCP_CONFORMANCE_CONTEXT arguments and inputResponses must be objects")
    offer = ctx.get("offerVersion")
    return {"tool_name": tool if isinstance(tool, str) else "", "arguments": arguments, "request": request,
            "cancel_when_working": ctx.get("cancel") is True, "input_responses": answers,
            "offer_version": offer if isinstance(offer, str) else None, "list_tasks": ctx.get("listTasks") is True,
            "hosts_tasks": ctx.get("hostsTasks") is True, "cancel_request": ctx.get("cancelRequest") is True,
            "subscribe": ctx.get("subscribe") is True}


def _target(args: list[str]) -> dict[str, Any]:
    """Where the server is: a URL as the last argument (Streamable HTTP), else a server to spawn
    (stdio), from MCP_CONFORMANCE_SERVER_COMMAND (a JSON array, preferred) or the last argument
    split as a shell would."""
    if not args:
        raise UsageProblem("usage: python -m tasks_conformance.client.reference_client URL|SERVER-COMMAND")
    if args[-1].startswith(("http://", "https://")):
        return {"url": args[-1]}
    raw = os.environ.get("MCP_CONFORMANCE_SERVER_COMMAND")
    if raw:
        try:
            command = json.loads(raw)
        except ValueError:
            command = None
        if not (isinstance(command, list) and command and all(isinstance(a, str) for a in command)):
            raise UsageProblem("MCP_CONFORMANCE_SERVER_COMMAND is not a JSON array of strings")
        return {"command": command}
    try:
        command = shlex.split(args[-1])
    except ValueError as exc:
        raise UsageProblem(f"the server command cannot be split: {exc}") from None
    if not command:
        raise UsageProblem("the server command is empty")
    return {"command": command}


class Harness:
    """The reference client as a harness process: the flow each era's call runs, the outcome line
    it prints and its exit code. A breaking client (fixtures/broken_client.py) is a subclass, or
    one built with another flow for an era."""

    def __init__(self, flows: Mapping[Wire, type[Flow]] = FLOWS) -> None:
        self.flows = flows

    def outcome_line(self, outcome: Outcome) -> JSON:
        """What the outcome line says: the outcome as the user would be shown it."""
        return outcome.to_json()

    def exit_status(self, outcome: Outcome) -> int:
        """The exit code after the outcome line: 0, the harness convention's "the client ran" (every
        outcome, failures too, is on the line)."""
        return 0


def main(argv: list[str] | None = None, *, harness: Harness | None = None) -> int:
    """The harness entry: the server's URL, or (stdio) its command, is the last argument. Prints
    the outcome line and returns the harness's exit code; returns 1 after a one-line message on
    stderr when it could not run."""
    client = harness or Harness()
    args = sys.argv[1:] if argv is None else argv
    try:
        target = _target(args)
        era = _era(os.environ.get("MCP_CONFORMANCE_PROTOCOL_VERSION"))
        keywords = _context(os.environ.get("MCP_CONFORMANCE_CONTEXT"))
        outcome = anyio.run(partial(call, era=era, timeout_s=HARNESS_TIMEOUT_S, flows=client.flows,
                                    **target, **keywords))
    except KeyboardInterrupt:
        print("reference client: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # one line, never a traceback
        print(f"reference client: {one_line(exc, 500)}", file=sys.stderr)
        return 1
    print(OUTCOME_PREFIX + json.dumps(client.outcome_line(outcome), separators=(",", ":")), flush=True)
    return client.exit_status(outcome)


if __name__ == "__main__":
    raise SystemExit(main())
