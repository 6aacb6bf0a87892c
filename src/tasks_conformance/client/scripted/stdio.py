"""The scripted server as a stdio process, for `tasks-conformance client --transport stdio`: the
client under test spawns it (the command is in MCP_CONFORMANCE_SERVER_COMMAND and is the last
argument), it plays one scenario's script with the very servers the HTTP runs use (their
`respond`, which knows nothing of the transport), and it reports every frame it read or wrote,
with its time, to the tasks-conformance run that is waiting on 127.0.0.1 (stdio_relay.py), so
that stdio verdicts rest on bytes exactly as HTTP ones do.

    python -m tasks_conformance.client.scripted.stdio --report HOST:PORT --token-file PATH
                                                      --scenario NAME [--lifetime S]

Newline-delimited JSON-RPC on stdin/stdout. Each message is handled in its own task, so a
2025-11-25 `tasks/result` that blocks (its elicitation sent on stdout meanwhile) does not hold up
the client's answer to it. The process ends when stdin ends, when the run closes the report
connection, or after `--lifetime` seconds, whichever comes first: a server a client leaks cannot
outlive the run.

The report protocol, one JSON object a line: first `{"token", "pid"}` (the token read from
--token-file, a file only the run's user can read: it is not in the command the client is
given), then one per frame,
`{"seq", "time", "direction", "replyTo", "data"}` (`time` in seconds since the hello, `data` the
frame's bytes in base64, `direction` "in" for what the client sent), and `{"limit"}` each time the
client reaches one (core/scenario_record.py `Limit`: a line over MAX_LINE, a message beyond
MAX_MESSAGES). A frame is let go of once reported: this process keeps none.
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import json
import os
import socket
import sys
import threading
from collections.abc import Callable
from typing import Any

from tasks_conformance.client.jsonrpc import parse
from tasks_conformance.client.lines import split_lines
from tasks_conformance.client.scenarios import BY_NAME, LegacyScript, Scenario
from tasks_conformance.client.scripted.extension import ScriptedServer
from tasks_conformance.client.scripted.http import Answer, ScriptedHttp
from tasks_conformance.client.scripted.legacy import LegacyScriptedServer
from tasks_conformance.client.scripted.waits import DEFAULT_WAITS, FLAGS, ScriptedWaits
from tasks_conformance.core.scenario_record import Limit
from tasks_conformance.core.wirelog import Frame, WireLog

CHANNEL = "stdio"
# A client's message is small: a longer line is dropped unread up to its newline, and a client that
# floods the scripted server is served its first messages only; both are counted (README: "Limits").
MAX_LINE = 4 * 1024 * 1024
MAX_MESSAGES = 10_000
DEFAULT_LIFETIME_S = 60.0
CONNECT_TIMEOUT_S = 5.0


def scripted_server(scenario: Scenario, wire: WireLog, waits: ScriptedWaits = DEFAULT_WAITS) -> ScriptedHttp:
    """The scripted server that plays the scenario's script (each era's script its own type),
    whatever the transport: both HTTP and stdio runs build it here."""
    script = scenario.script
    if isinstance(script, LegacyScript):
        return LegacyScriptedServer(script, wire, waits)
    return ScriptedServer(script, wire, waits)


class Reporter:
    """Every frame of the local wire log, sent to the run as it is recorded (before the reply it
    describes reaches the client, so the run has it by the time the client has gone)."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.lock = threading.Lock()
        self.broken = False

    def send(self, record: dict[str, Any]) -> None:
        data = json.dumps(record, separators=(",", ":")).encode() + b"\n"
        with self.lock:
            if self.broken:
                return
            try:
                self.sock.sendall(data)
            except OSError:
                self.broken = True  # the run has gone: the watcher ends the process

    def frame(self, frame: Frame) -> None:
        self.send({"seq": frame.seq, "time": round(frame.time, 6), "direction": frame.direction,
                   "replyTo": frame.reply_to, "data": base64.b64encode(frame.data).decode("ascii")})


def _exit_when_closed(sock: socket.socket) -> None:
    """The run closed the report connection (or went away): stop at once."""
    with contextlib.suppress(OSError):
        while sock.recv(4096):
            pass
    os._exit(0)


def _exit_after(seconds: float) -> None:
    threading.Event().wait(seconds)
    os._exit(0)


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


def build_parser() -> argparse.ArgumentParser:
    """The flags the run starts this server with (stdio_relay.server_argv)."""
    parser = argparse.ArgumentParser(prog="scripted_stdio", description=__doc__.split("\n")[0])
    parser.add_argument("--report", required=True, metavar="HOST:PORT")
    parser.add_argument("--token-file", required=True, metavar="PATH")
    parser.add_argument("--scenario", required=True, choices=sorted(BY_NAME))
    parser.add_argument("--lifetime", type=float, default=DEFAULT_LIFETIME_S)
    for name, flag in FLAGS.items():  # the run's waits (scripted/waits.py)
        parser.add_argument(flag, dest=name, type=float, default=getattr(DEFAULT_WAITS, name))
    return parser


def waits_of(ns: argparse.Namespace) -> ScriptedWaits:
    """The waits the flags name (ValueError for one out of bounds)."""
    return ScriptedWaits(**{name: getattr(ns, name) for name in FLAGS})


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    ns = parser.parse_args(argv)
    host, _, port = ns.report.rpartition(":")
    try:
        with open(ns.token_file, encoding="ascii") as f:
            token = f.read(256).strip()
    except (OSError, ValueError) as exc:
        print(f"scripted server: cannot read the tasks-conformance run's token file: {exc}", file=sys.stderr)
        return 1
    try:
        sock = socket.create_connection((host, int(port)), timeout=CONNECT_TIMEOUT_S)
    except (OSError, ValueError) as exc:
        print(f"scripted server: cannot reach the tasks-conformance run at {ns.report}: {exc}", file=sys.stderr)
        return 1
    sock.settimeout(None)
    reporter = Reporter(sock)
    wire = WireLog()  # its clock starts now: frame times are seconds since the hello
    reporter.send({"token": token, "pid": os.getpid()})

    def report(frame: Frame) -> None:
        reporter.frame(frame)
        wire.discard(frame)  # the run keeps it: a flood does not fill this process (nor empty its frames)

    wire.observer = report
    threading.Thread(target=_exit_when_closed, args=(sock,), daemon=True).start()
    threading.Thread(target=_exit_after, args=(ns.lifetime,), daemon=True).start()
    import anyio

    try:
        waits = waits_of(ns)
    except ValueError as exc:
        parser.error(str(exc))
    app = scripted_server(BY_NAME[ns.scenario], wire, waits)
    app.transport = CHANNEL
    with contextlib.suppress(KeyboardInterrupt):
        anyio.run(serve, app, wire, lambda limit: reporter.send({"limit": limit.value}))
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_WR)
    # Exit without interpreter shutdown: a reader thread may still be blocked in os.read.
    sys.stdout.flush()
    os._exit(0)


if __name__ == "__main__":
    raise SystemExit(main())
