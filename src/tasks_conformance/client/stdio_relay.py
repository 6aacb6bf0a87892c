"""The run's end of a stdio scenario: the client under test spawns the scripted server itself
(scripted/stdio.py), and that server reports every frame it read or wrote to a listener of ours
on an ephemeral 127.0.0.1 port, with a one-time token it reads from a file only the run's user
can read (0600 in a 0700 directory, removed after the scenario): the token is not in the command
the client is given, so no client reports frames by mistake. (A client can still forge them: it
starts the server, and could read the file; the README's "Trust model".) Each reported frame goes
into the run's WireLog as it arrives, with the time the server saw it, so the checks read stdio
runs exactly as HTTP ones. Each server process is a connection of its own, numbered from 1 in the
order their hellos came (`Frame.connection`): its tasks are its own, and a second process the
client starts knows none of the first's.

When the client has gone, every server it started is stopped: it ends by itself when its stdin
ends; one still connected is told to stop (the report connection closes), and one that does not
is killed by the pid it reported, but only once /proc shows that pid is the process that said
hello (its start time) and descends from the client's supervisor (its parent chain): a hello
naming another process gets nothing killed, and the report says so. What is left after that the
supervisor stops (subreaper.py).
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import secrets
import shutil
import signal
import sys
import tempfile
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from tasks_conformance.client.scenarios import Scenario
from tasks_conformance.client.scripted.waits import DEFAULT_WAITS, ScriptedWaits
from tasks_conformance.client.subreaper import descends_from, signal_descendant, start_time
from tasks_conformance.core.scenario_record import Limit
from tasks_conformance.core.wirelog import WireLog

MODULE = "tasks_conformance.client.scripted.stdio"
MAX_CONNECTIONS = 8  # servers one client may start in a scenario; more are refused, and counted (README: "Limits")
MAX_REPORT_LINE = 16 * 1024 * 1024  # one reported frame (base64 of a message the server read in full)
SETTLE_S = 1.0  # how long a server gets to end by itself once its client has gone
STOP_S = 0.5  # then, how long it gets after the report connection is closed, before SIGKILL
LIFETIME_MARGIN_S = 10.0  # a server's own bound: the scenario's timeout plus this


@dataclass
class Connection:
    """One scripted server process the client started."""

    pid: int | None = None
    start: int | None = None  # the start time /proc gave for that pid at the hello
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
    # Pids named in a hello that were not signalled: not verifiably a descendant of the client.
    not_signalled: list[str] = field(default_factory=list)
    released: bool = False

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

    async def stop(self, roots: tuple[int, ...] = ()) -> None:
        """Stop every server still running: close its report connection (it exits on that), then
        SIGKILL what is left by the pid it reported, if that pid verifiably descends from `roots`
        (the client's supervisor); any other pid is named in `not_signalled`, never signalled."""
        import anyio

        if self.released or not self.live():
            self.released = True
            return
        self.released = True
        conns = [c for c in self.live() if c.pid is not None]
        for close in self.closers:
            with contextlib.suppress(Exception):
                await close()
        # Closing ends the report connections at once, not the processes: wait for those to exit.
        with anyio.move_on_after(STOP_S):
            while any(_running(c.pid) for c in conns if c.pid is not None):
                await anyio.sleep(0.01)
        for conn in conns:
            pid = conn.pid
            if pid is None or not _running(pid):
                continue
            why = self._unverified(conn, pid, roots)
            if why is None and signal_descendant(pid, signal.SIGKILL, roots):
                continue
            self.not_signalled.append(f"pid {pid}, named in the hello of scripted server connection "
                                      f"{conn.number}: {why or 'no longer a descendant of the client'}, "
                                      "so it was not signalled")

    @staticmethod
    def _unverified(conn: Connection, pid: int, roots: tuple[int, ...]) -> str | None:
        """Why `pid` cannot be killed as the scripted server that said hello (None: it can)."""
        if not roots:
            return "the client's process tree is not known"
        descends = descends_from(pid, roots)
        if descends is None:
            return "this system cannot show whether it descends from the client (no /proc)"
        if not descends:
            return "not a descendant of the client"
        if conn.start is None or start_time(pid) != conn.start:
            return "not the process that said hello (it started at another time)"
        return None


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


def server_argv(scenario: Scenario, port: int, token_file: str, lifetime_s: float,
                waits: ScriptedWaits = DEFAULT_WAITS) -> tuple[str, ...]:
    return (sys.executable, "-m", MODULE, "--report", f"127.0.0.1:{port}", "--token-file", token_file,
            "--scenario", scenario.name, "--lifetime", f"{lifetime_s:g}", *waits.argv())


def _token_file(token: str) -> tuple[str, str]:
    """(its directory, its path): the token in a file only this user can read (0600 in a 0700 directory)."""
    directory = tempfile.mkdtemp(prefix="tasks-conformance-relay-")
    path = os.path.join(directory, "token")
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="ascii") as f:
        f.write(token)
    return directory, path


@contextlib.asynccontextmanager
async def relaying(scenario: Scenario, wire: WireLog, timeout_s: float, waits: ScriptedWaits = DEFAULT_WAITS,
                   launch: Callable[[Sequence[str]], tuple[str, ...]] | None = None) -> AsyncIterator[Relay]:
    """Listen for the scenario's scripted servers for the block; yields the Relay whose `argv`
    starts one (through `launch`, where given: it wraps the command). On leaving, every server
    still running is stopped."""
    import anyio
    from anyio.abc import SocketAttribute, SocketStream
    from anyio.streams.buffered import BufferedByteReceiveStream

    token = secrets.token_hex(16)
    directory, token_path = _token_file(token)
    try:
        listener = await anyio.create_tcp_listener(local_host="127.0.0.1", local_port=0)
    except OSError:
        shutil.rmtree(directory, ignore_errors=True)
        raise
    port = listener.extra(SocketAttribute.local_port)
    argv = server_argv(scenario, port, token_path, timeout_s + LIFETIME_MARGIN_S, waits)
    relay = Relay(launch(argv) if launch is not None else argv, token)

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
            conn.pid = hello.get("pid") if isinstance(hello.get("pid"), int) and hello["pid"] > 1 else None
            conn.start = start_time(conn.pid) if conn.pid is not None else None
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
        shutil.rmtree(directory, ignore_errors=True)


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
