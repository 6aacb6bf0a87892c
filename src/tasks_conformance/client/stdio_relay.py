"""The run's end of a stdio scenario: the client under test spawns the scripted server itself
(scripted_stdio.py), and that server reports every frame it read or wrote to a listener of ours
on an ephemeral 127.0.0.1 port, named with a one-time token in its argv. Each reported frame goes
into the run's WireLog as it arrives, with the time the server saw it, so the checks read stdio
runs exactly as HTTP ones. Each server process is a connection of its own, numbered from 1 in the
order their hellos came (`Frame.connection`): its tasks are its own, and a second process the
client starts knows none of the first's.

When the client has gone, every server it started is stopped: it ends by itself when its stdin
ends; one still connected is told to stop (the report connection closes), and one that does not
is killed by the pid it reported - a server the client leaked, even in a session of its own,
does not outlive the scenario.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import secrets
import signal
import sys
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from tasks_conformance.client.scenarios import Scenario
from tasks_conformance.core.scenario_record import Limit
from tasks_conformance.core.wirelog import WireLog

MODULE = "tasks_conformance.client.scripted_stdio"
MAX_CONNECTIONS = 8  # servers one client may start in a scenario; more are refused, and counted (README: "Limits")
MAX_REPORT_LINE = 16 * 1024 * 1024  # one reported frame (base64 of a message the server read in full)
SETTLE_S = 1.0  # how long a server gets to end by itself once its client has gone
STOP_S = 0.5  # then, how long it gets after the report connection is closed, before SIGKILL
LIFETIME_MARGIN_S = 10.0  # a server's own bound: the scenario's timeout plus this


@dataclass
class Connection:
    """One scripted server process the client started."""

    pid: int | None = None
    ended: bool = False
    number: int | None = None  # its connection number, once its hello was read
    seqs: dict[int, int] = field(default_factory=dict)  # its frame numbers -> the run's


@dataclass
class Relay:
    """One scenario's listener: the command that starts its scripted server, and what the servers
    the client started have reported so far."""

    argv: tuple[str, ...]
    token: str  # a server's hello must carry it: another local process cannot report frames
    seqs: list[int] = field(default_factory=list)  # the scenario's frames in the run's wire log
    requests: int = 0  # messages the client sent: 0 means it never reached a scripted server
    connections: list[Connection] = field(default_factory=list)
    closers: list[Callable[[], Awaitable[None]]] = field(default_factory=list)  # each report connection's
    limits: Counter[Limit] = field(default_factory=Counter)  # the limits the client reached, and how often

    def server_env(self) -> dict[str, str]:
        """MCP_CONFORMANCE_SERVER_COMMAND: the server's argv as a JSON array."""
        return {"MCP_CONFORMANCE_SERVER_COMMAND": json.dumps(list(self.argv))}

    def live(self) -> list[Connection]:
        return [c for c in self.connections if not c.ended]

    async def settle(self, seconds: float = SETTLE_S) -> None:
        """Wait (bounded) for every server to end by itself."""
        import anyio

        with anyio.move_on_after(seconds):
            while self.live():
                await anyio.sleep(0.01)

    async def stop(self) -> None:
        """Stop every server still running: close its report connection (it exits on that), then
        SIGKILL what is left by the pid it reported."""
        import anyio

        if not self.live():
            return
        pids = [c.pid for c in self.live() if c.pid is not None]
        for close in self.closers:
            with contextlib.suppress(Exception):
                await close()
        # Closing ends the report connections at once, not the processes: wait for those to exit.
        with anyio.move_on_after(STOP_S):
            while any(_running(pid) for pid in pids):
                await anyio.sleep(0.01)
        for pid in pids:
            if _running(pid):
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)


def _running(pid: int) -> bool:
    """Whether the process is still running (an exited one its parent has not reaped yet is not)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            return stat.read().rpartition(b")")[2].split()[:1] != [b"Z"]
    except OSError:
        return True  # no /proc: alive as far as can be told


def server_argv(scenario: Scenario, port: int, token: str, lifetime_s: float) -> tuple[str, ...]:
    return (sys.executable, "-m", MODULE, "--report", f"127.0.0.1:{port}", "--token", token,
            "--scenario", scenario.name, "--lifetime", f"{lifetime_s:g}")


@contextlib.asynccontextmanager
async def relaying(scenario: Scenario, wire: WireLog, timeout_s: float) -> AsyncIterator[Relay]:
    """Listen for the scenario's scripted servers for the block; yields the Relay whose `argv`
    starts one. On leaving, every server still running is stopped."""
    import anyio
    from anyio.abc import SocketAttribute, SocketStream
    from anyio.streams.buffered import BufferedByteReceiveStream

    listener = await anyio.create_tcp_listener(local_host="127.0.0.1", local_port=0)
    port = listener.extra(SocketAttribute.local_port)
    token = secrets.token_hex(16)
    relay = Relay(server_argv(scenario, port, token, timeout_s + LIFETIME_MARGIN_S), token)

    async def serve(stream: SocketStream) -> None:
        if len(relay.connections) >= MAX_CONNECTIONS:
            relay.limits[Limit.SERVERS] += 1
            await stream.aclose()
            return
        conn = Connection()
        relay.connections.append(conn)
        relay.closers.append(stream.aclose)
        buffered = BufferedByteReceiveStream(stream)
        try:
            hello = json.loads(await buffered.receive_until(b"\n", 4096))
            if not isinstance(hello, dict) or hello.get("token") != token:
                return
            conn.pid = hello.get("pid") if isinstance(hello.get("pid"), int) else None
            conn.number = 1 + sum(c.number is not None for c in relay.connections)
            base = wire.elapsed()
            while True:
                _record(json.loads(await buffered.receive_until(b"\n", MAX_REPORT_LINE)), conn, relay, wire, base)
        except (anyio.EndOfStream, anyio.IncompleteRead, anyio.DelimiterNotFound, anyio.BrokenResourceError,
                anyio.ClosedResourceError, ValueError, OSError):
            pass
        finally:
            conn.ended = True
            with contextlib.suppress(Exception):
                await stream.aclose()

    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(listener.serve, serve)
            try:
                yield relay
            finally:
                with anyio.CancelScope(shield=True):
                    await relay.settle(0.0 if not relay.connections else SETTLE_S)
                    await relay.stop()
                tg.cancel_scope.cancel()
    finally:
        with anyio.CancelScope(shield=True):
            await listener.aclose()


def _record(report: Any, conn: Connection, relay: Relay, wire: WireLog, base: float) -> None:
    """One reported frame into the run's wire log, at the time the server saw it (or a limit the
    client reached, counted)."""
    if isinstance(report, dict) and report.get("limit") in (Limit.STDIO_LINE.value, Limit.STDIO_MESSAGES.value):
        relay.limits[Limit(report["limit"])] += 1
        return
    if not isinstance(report, dict) or report.get("direction") not in ("in", "out"):
        return
    data = base64.b64decode(str(report.get("data", "")), validate=False)
    reply_to = conn.seqs.get(report["replyTo"]) if isinstance(report.get("replyTo"), int) else None
    frame = wire.record(report["direction"], "stdio", data, reply_to=reply_to, connection=conn.number)
    at = report.get("time")
    if isinstance(at, int | float):
        # The frame's time is when the scripted server read or wrote it (its clock started at the
        # hello), not when its report arrived: poll gaps are measured between those.
        frame.time = base + float(at)
    if isinstance(report.get("seq"), int):
        conn.seqs[report["seq"]] = frame.seq
    relay.seqs.append(frame.seq)
    if report["direction"] == "in":
        relay.requests += 1
