"""Keep small request/response exchanges from stalling on TCP.

A server that writes a response's head and body in two writes without TCP_NODELAY (Python's
http.server family does) has Nagle's algorithm hold the body until the head is ACKed, and a
Linux client delays that ACK by about 40 ms: every exchange then costs 40 ms of nothing. We set
TCP_NODELAY on our own sockets and, on Linux, re-arm TCP_QUICKACK before each read so the head
is ACKed at once (the kernel drops quick-ACK mode by itself, so once at connect is not enough).
`benchmarks/task_bound.py` measures the difference against the reference server's --no-tcp-nodelay
mode.

The httpx side (a tuned httpcore network backend) is in http_tuning.py, so that TCP and Unix
runs, which use only this module, never import httpx.
"""

from __future__ import annotations

import socket

from anyio.abc import ByteReceiveStream

# Linux only; elsewhere delayed ACKs stay as the system has them.
TCP_QUICKACK: int | None = getattr(socket, "TCP_QUICKACK", None)


def tune(sock: socket.socket | None) -> None:
    """TCP_NODELAY for our own writes, and quick ACKs for the next read."""
    if sock is None or sock.family not in (socket.AF_INET, socket.AF_INET6):
        return
    try:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    except OSError:
        return
    rearm(sock)


def rearm(sock: socket.socket | None) -> None:
    if sock is None or TCP_QUICKACK is None or sock.family not in (socket.AF_INET, socket.AF_INET6):
        return
    try:
        sock.setsockopt(socket.IPPROTO_TCP, TCP_QUICKACK, 1)
    except OSError:
        pass  # a closed socket: the read that follows reports it


class QuickAckReceiveStream(ByteReceiveStream):
    """For the newline-delimited TCP transport: re-arm quick ACKs before each receive."""

    def __init__(self, inner: ByteReceiveStream, sock: socket.socket | None) -> None:
        self._inner = inner
        self._sock = sock

    async def receive(self, max_bytes: int = 65536) -> bytes:
        rearm(self._sock)
        return await self._inner.receive(max_bytes)

    async def aclose(self) -> None:
        await self._inner.aclose()
