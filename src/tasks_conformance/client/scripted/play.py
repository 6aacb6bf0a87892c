"""One scenario's scripted server, played over stdin and stdout: `scripted_server` builds the
server of a scenario's script (each era's script its own type), whatever the transport (both HTTP
and stdio runs build it here), and `serve` answers newline-delimited JSON-RPC on fds 0 and 1, each
message in its own task, so that a 2025-11-25 `tasks/result` that blocks (its elicitation sent on
stdout meanwhile) does not hold up the client's answer to it. The stdio process (stdio.py) imports
this only once it has said hello to the run: these imports are most of its start-up.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from typing import Any

from tasks_conformance.client.jsonrpc import parse
from tasks_conformance.client.lines import split_lines
from tasks_conformance.client.scenarios import LegacyScript, Scenario
from tasks_conformance.client.scripted.extension import ScriptedServer
from tasks_conformance.client.scripted.http import Answer, ScriptedHttp
from tasks_conformance.client.scripted.legacy import LegacyScriptedServer
from tasks_conformance.client.scripted.waits import DEFAULT_WAITS, ScriptedWaits
from tasks_conformance.core.scenario_record import Limit
from tasks_conformance.core.wirelog import WireLog

CHANNEL = "stdio"
# A client's message is small: a longer line is dropped unread up to its newline, and a client that
# floods the scripted server is served its first messages only; both are counted (README: "Limits").
MAX_LINE = 4 * 1024 * 1024
MAX_MESSAGES = 10_000


def scripted_server(scenario: Scenario, wire: WireLog, waits: ScriptedWaits = DEFAULT_WAITS) -> ScriptedHttp:
    """The scripted server that plays the scenario's script (each era's script its own type),
    whatever the transport: both HTTP and stdio runs build it here."""
    script = scenario.script
    if isinstance(script, LegacyScript):
        return LegacyScriptedServer(script, wire, waits)
    return ScriptedServer(script, wire, waits)


def _write(data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(1, view):]


async def serve(app: ScriptedHttp, wire: WireLog, reached: Callable[[Limit], None] = lambda _limit: None) -> None:
    """Read stdin to its end; answer each message in its own task, writing each reply line to
    stdout after recording it. `reached` is told of each limit the client reaches."""
    import anyio

    write_lock = anyio.Lock()

    async def out(message: dict[str, Any], reply_to: int | None) -> None:
        data = json.dumps(message, separators=(",", ":")).encode()
        async with write_lock:
            wire.record("out", CHANNEL, data, reply_to=reply_to)
            try:
                _write(data + b"\n")
            except OSError:
                os._exit(0)  # the client closed our stdout: it has gone

    async def handle(line: bytes, seq: int) -> None:
        message, not_json = parse(line)
        rid = message.get("id") if isinstance(message, dict) else None
        answer: Answer = await app.strict_respond(message, not_json)
        if answer.events is not None:
            async for event in answer.events:
                reply = "method" not in event and event.get("id") == rid
                await out(event, seq if reply else None)
        elif answer.body is not None:
            await out(answer.body, seq)

    pending = bytearray()
    skipping = [False]
    async with anyio.create_task_group() as tg:
        while True:
            chunk = await anyio.to_thread.run_sync(os.read, 0, 65536, abandon_on_cancel=True)
            if not chunk:
                break
            for raw, too_long in split_lines(chunk, pending, skipping, MAX_LINE):
                if too_long:
                    reached(Limit.STDIO_LINE)
                    continue
                line = raw.rstrip(b"\r")
                if not line.strip():
                    continue
                if app.requests >= MAX_MESSAGES:
                    reached(Limit.STDIO_MESSAGES)
                    continue
                app.requests += 1
                inbound = wire.record("in", CHANNEL, line)
                tg.start_soon(handle, line, inbound.seq)
        tg.cancel_scope.cancel()  # stdin ended: the client has gone, what is left is unanswerable
