"""TCP and Unix-socket targets: newline-delimited JSON-RPC, exactly as on stdio."""

from __future__ import annotations

import anyio
import anyio.abc
from anyio.abc import ByteReceiveStream, ByteSendStream, ByteStream

from tasks_conformance.core.errors import ConnectFailed
from tasks_conformance.core.transports.stream import StreamTransport
from tasks_conformance.core.transports.tcp_tuning import QuickAckReceiveStream, tune
from tasks_conformance.core.wirelog import WireLog


class SocketTransport(StreamTransport):
    def __init__(
        self,
        wire: WireLog,
        *,
        tcp: tuple[str, int] | None,
        unix: str | None,
        max_message_bytes: int,
        connect_timeout_s: float = 10.0,
    ) -> None:
        super().__init__(wire, max_message_bytes=max_message_bytes)
        self.tcp = tcp
        self.unix = unix
        self.kind = "tcp" if tcp is not None else "unix"
        self.channel = self.kind
        self._connect_timeout_s = connect_timeout_s
        self._stream: ByteStream | None = None

    def fresh(self) -> SocketTransport:
        """A second connection to the same socket."""
        return SocketTransport(self.wire, tcp=self.tcp, unix=self.unix, max_message_bytes=self.max_message_bytes,
                               connect_timeout_s=self._connect_timeout_s)

    async def _open(self) -> tuple[ByteReceiveStream, ByteSendStream]:
        try:
            with anyio.fail_after(self._connect_timeout_s):
                if self.tcp is not None:
                    self._stream = await anyio.connect_tcp(self.tcp[0], self.tcp[1])
                else:
                    assert self.unix is not None
                    self._stream = await anyio.connect_unix(self.unix)
        except TimeoutError:
            raise ConnectFailed(f"could not connect to {self._where()} within {self._connect_timeout_s:.0f}s") from None
        except OSError as exc:
            raise ConnectFailed(f"could not connect to {self._where()}: {exc.strerror or exc}") from exc
        if self.tcp is None:
            return self._stream, self._stream
        sock = self._stream.extra(anyio.abc.SocketAttribute.raw_socket, None)
        tune(sock)
        return QuickAckReceiveStream(self._stream, sock), self._stream

    def _where(self) -> str:
        return f"tcp://{self.tcp[0]}:{self.tcp[1]}" if self.tcp is not None else f"unix:{self.unix}"

    async def aclose(self) -> None:
        if self._stream is not None:
            with anyio.CancelScope(shield=True):
                try:
                    await self._stream.aclose()
                except (OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
                    pass
        await self._close_tasks()
