"""Keep small request/response exchanges from stalling on TCP.

A server that writes a response's head and body in two writes without TCP_NODELAY (Python's
http.server family does) has Nagle's algorithm hold the body until the head is ACKed, and a
Linux client delays that ACK by about 40 ms: every exchange then costs 40 ms of nothing. We set
TCP_NODELAY on our own sockets and, on Linux, re-arm TCP_QUICKACK before each read so the head
is ACKed at once (the kernel drops quick-ACK mode by itself, so once at connect is not enough).
`benchmarks/task_bound.py` measures the difference against fixtures/split_write_proxy.py.
"""

from __future__ import annotations

import socket
import typing

import httpcore
import httpx
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


class QuickAckStream(httpcore.AsyncNetworkStream):
    """An httpcore stream that re-arms quick ACKs before every read."""

    def __init__(self, inner: httpcore.AsyncNetworkStream) -> None:
        self._inner = inner
        self._sock: socket.socket | None = inner.get_extra_info("socket")

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        rearm(self._sock)
        return await self._inner.read(max_bytes, timeout)

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        await self._inner.write(buffer, timeout)

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def start_tls(self, ssl_context: typing.Any, server_hostname: str | None = None,
                        timeout: float | None = None) -> httpcore.AsyncNetworkStream:
        return QuickAckStream(await self._inner.start_tls(ssl_context, server_hostname, timeout))

    def get_extra_info(self, info: str) -> typing.Any:
        return self._inner.get_extra_info(info)


class QuickAckBackend(httpcore.AsyncNetworkBackend):
    """httpcore's anyio backend, with our sockets tuned (see the module's doc)."""

    def __init__(self) -> None:
        self._inner = httpcore.AnyIOBackend()

    async def connect_tcp(self, host: str, port: int, timeout: float | None = None,
                          local_address: str | None = None,
                          socket_options: typing.Iterable[typing.Any] | None = None) -> httpcore.AsyncNetworkStream:
        stream = await self._inner.connect_tcp(host, port, timeout, local_address, socket_options)
        tune(stream.get_extra_info("socket"))
        return QuickAckStream(stream)

    async def connect_unix_socket(self, path: str, timeout: float | None = None,
                                  socket_options: typing.Iterable[typing.Any] | None = None
                                  ) -> httpcore.AsyncNetworkStream:
        return await self._inner.connect_unix_socket(path, timeout, socket_options)

    async def sleep(self, seconds: float) -> None:
        await self._inner.sleep(seconds)


def http_transport() -> httpx.AsyncHTTPTransport:
    """httpx's transport with the tuned backend. httpx offers no parameter for the network
    backend, so its connection pool is rebuilt with the same defaults plus ours (httpx < 1 keeps
    the pool in `_pool`; if that ever changes we fall back to the untuned pool)."""
    transport = httpx.AsyncHTTPTransport(trust_env=False)
    if hasattr(transport, "_pool"):
        limits = httpx.Limits(max_connections=100, max_keepalive_connections=20, keepalive_expiry=5.0)
        transport._pool = httpcore.AsyncConnectionPool(
            ssl_context=httpx.create_ssl_context(trust_env=False),
            max_connections=limits.max_connections,
            max_keepalive_connections=limits.max_keepalive_connections,
            keepalive_expiry=limits.keepalive_expiry,
            network_backend=QuickAckBackend(),
        )
    return transport


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
