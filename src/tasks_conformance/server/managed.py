"""--server-command: the server a run starts before its traffic and stops after it.

For an HTTP, TCP or Unix target that a CI job would otherwise start in the background, wait for
and kill by hand. The command is started in its own process group (with --cwd and -e), the run
waits until the target accepts a connection (at most --timeout), and afterwards the whole group
gets SIGTERM, then SIGKILL after a grace. A server that exits or never listens is the run's one
connection problem, with the end of its output, never a traceback.
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from urllib.parse import urlsplit

import anyio
from anyio.abc import ByteReceiveStream, Process, TaskGroup

from tasks_conformance.core.redact import Redactor
from tasks_conformance.settings.config import RunConfig

GRACE_S = 5.0  # between SIGTERM and SIGKILL of the server's process group
POLL_S = 0.05  # between two attempts to connect while the server starts
TAIL_BYTES = 4096  # the end of its output a problem quotes


def _endpoint(config: RunConfig) -> tuple[str, int] | str:
    """(host, port) to connect to, or a Unix socket path."""
    if config.unix:
        return config.unix
    if config.tcp:
        return config.tcp
    parts = urlsplit(config.url or "")
    return parts.hostname or "127.0.0.1", parts.port or (443 if parts.scheme == "https" else 80)


async def _listening(endpoint: tuple[str, int] | str) -> bool:
    try:
        stream = await (anyio.connect_unix(endpoint) if isinstance(endpoint, str)
                        else anyio.connect_tcp(*endpoint))
    except OSError:
        return False
    await stream.aclose()
    return True


async def _drain(stream: ByteReceiveStream | None, tail: bytearray) -> None:
    if stream is None:
        return
    async for chunk in stream:
        tail.extend(chunk)
        del tail[:-TAIL_BYTES]


@dataclass
class ServerExit:
    """What the --server-command server had done when the run's traffic ended: its own exit code
    (None while it still ran, before we stopped it) and the end of its output, redacted."""

    exit_code: int | None = None
    output_tail: str = ""


def _said(tail: bytearray, redactor: Redactor) -> str:
    lines = tail.decode("utf-8", "replace").strip().splitlines()
    return f"; its output ends: {redactor.text(' | '.join(lines[-3:]))[:400]}" if lines else ""


async def _wait(config: RunConfig, proc: Process, tail: bytearray, redactor: Redactor) -> str | None:
    """None once the target accepts a connection; else what went wrong."""
    endpoint = _endpoint(config)
    deadline = time.monotonic() + config.startup_timeout_s
    while time.monotonic() < deadline:
        if await _listening(endpoint):
            return None
        if proc.returncode is not None:
            return (f"the --server-command server exited with code {proc.returncode} before it listened"
                    f"{_said(tail, redactor)}")
        await anyio.sleep(POLL_S)
    return (f"the --server-command server did not listen at the target within --startup-timeout "
            f"({config.startup_timeout_s:g} s){_said(tail, redactor)}")


async def stop_group(proc: Process, *, close: bool = True) -> bool:
    """SIGTERM to the process group of `proc`, then SIGKILL after GRACE_S; reaped. True when it
    exited on the SIGTERM (a restart test reads it). `close=False` leaves its pipes to their owner
    (the stdio transport, whose own close then finds the process gone)."""
    on_term = False
    for sig, wait_s in ((signal.SIGTERM, GRACE_S), (signal.SIGKILL, GRACE_S)):
        try:
            os.killpg(proc.pid, sig)
        except (ProcessLookupError, PermissionError):
            break
        with anyio.move_on_after(wait_s):
            await proc.wait()
        if proc.returncode is not None:
            on_term = sig is signal.SIGTERM
            break
    if close:
        with anyio.move_on_after(GRACE_S):
            await proc.aclose()
    return on_term


class ManagedServer:
    """The --server-command server of one run: started before the traffic, stopped after it, and
    stopped and started again, with the same command, by the restart probe (profile durable)."""

    def __init__(self, config: RunConfig, redactor: Redactor) -> None:
        self.config = config
        self.redactor = redactor
        self.problem: str | None = None  # why it never listened: the run's one connection problem
        self.proc: Process | None = None
        self._tg: TaskGroup | None = None
        self._tail = bytearray()

    @property
    def owned(self) -> bool:
        """Whether the run started the server (so it can restart it)."""
        return bool(self.config.server_command)

    async def start(self) -> str | None:
        """Start the command and wait until the target listens: None, or what went wrong."""
        assert self._tg is not None, "start() outside managed_server()"
        try:
            proc = await anyio.open_process(list(self.config.server_command), cwd=self.config.cwd,
                                            env={**os.environ, **self.config.env}, start_new_session=True)
        except OSError as exc:
            return self.redactor.text(f"the --server-command server could not be started: {exc.strerror or exc}")
        self.proc, self._tail = proc, bytearray()
        self._tg.start_soon(_drain, proc.stdout, self._tail)
        self._tg.start_soon(_drain, proc.stderr, self._tail)
        return await _wait(self.config, proc, self._tail, self.redactor)

    async def stop(self) -> bool:
        """Stop the server's process group (see stop_group); True when SIGTERM ended it."""
        proc, self.proc = self.proc, None
        if proc is None:
            return False
        with anyio.CancelScope(shield=True):
            on_term = await stop_group(proc)
        return on_term


@asynccontextmanager
async def managed_server(config: RunConfig, redactor: Redactor,
                         seen: ServerExit | None = None) -> AsyncIterator[ManagedServer]:
    """Start --server-command for the block (its `problem` is None once it listens); stop its
    process group afterwards, having noted in `seen` whether it had exited on its own. Without
    --server-command, the server is not owned and nothing runs."""
    server = ManagedServer(config, redactor)
    if not server.owned:
        yield server
        return
    async with anyio.create_task_group() as tg:
        server._tg = tg
        try:
            server.problem = await server.start()
            yield server
        finally:
            if seen is not None and server.proc is not None:
                seen.exit_code = server.proc.returncode
                seen.output_tail = redactor.text(server._tail.decode("utf-8", "replace")).strip()[-600:]
            await server.stop()  # shielded: an error or interrupt above never leaves the group behind
            tg.cancel_scope.cancel()
