"""Start the server first, then import the rest: the run as the command line starts it.

Over stdio the server's own start-up (an interpreter, its imports) is most of the time before
its first answer. Spawning it only after the runner, the probes and the sessions are imported
puts their import time and its start-up one after the other. Here the process is spawned as
soon as the configuration is known, and the runner is imported while it boots; the run then
adopts the process as its first connection (StdioTransport opens it exactly as it would have).

Kept out of the way of everything else: a spawn that fails is reported by the connection as
usual, a process the run never adopted (an error, an interrupt during the imports) is stopped
and reaped here, and the era fallback's second connection spawns anew as before.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import anyio
from anyio.abc import ByteReceiveStream, ByteSendStream

from tasks_conformance.core.errors import ConnectFailed
from tasks_conformance.core.redact import Redactor
from tasks_conformance.core.transports.base import Transport
from tasks_conformance.core.transports.stdio import StdioTransport
from tasks_conformance.core.wirelog import Frame, WireLog
from tasks_conformance.settings.config import RunConfig

if TYPE_CHECKING:
    from tasks_conformance.server.runner import Execution

Progress = Callable[[str], None]


class EarlyStdioTransport(StdioTransport):
    """A StdioTransport whose process may be spawned before the connection starts it."""

    _spawned: tuple[ByteReceiveStream, ByteSendStream] | None = None
    _spawn_error: ConnectFailed | None = None
    adopted = False

    async def spawn(self) -> None:
        try:
            self._spawned = await super()._open()
        except ConnectFailed as exc:
            self._spawn_error = exc  # raised again where the connection opens it, and reported there

    async def _open(self) -> tuple[ByteReceiveStream, ByteSendStream]:
        self.adopted = True
        if self._spawn_error is not None:
            raise self._spawn_error
        if self._spawned is not None:
            streams, self._spawned = self._spawned, None
            return streams
        return await super()._open()


def _early_transport(config: RunConfig, wire: WireLog) -> EarlyStdioTransport | None:
    if config.transport != "stdio":
        return None
    return EarlyStdioTransport(
        wire, command=config.command, cwd=config.cwd, env=config.env, max_message_bytes=config.max_message_bytes,
    )


async def execute_soon(
    config: RunConfig,
    progress: Progress | None = None,
    on_frame: Callable[[Frame], None] | None = None,
    interrupt: anyio.Event | None = None,
) -> Execution:
    """runner.execute (same arguments), with a stdio server spawned before the runner is imported."""
    wire = WireLog(Redactor(config.secrets()))
    early = _early_transport(config, wire)
    try:
        if early is not None:
            await early.spawn()
        from tasks_conformance.server.runner import execute
        from tasks_conformance.server.session.factory import make_transport

        def first_then_fresh(cfg: RunConfig, log: WireLog) -> Transport:
            if early is not None and not early.adopted:
                early.adopted = True
                return early
            return make_transport(cfg, log)

        return await execute(config, progress, on_frame, interrupt, wire=wire, transport_factory=first_then_fresh)
    finally:
        if early is not None and not early.adopted:
            with anyio.CancelScope(shield=True):
                await early.aclose()  # spawned, never used: stop and reap it
