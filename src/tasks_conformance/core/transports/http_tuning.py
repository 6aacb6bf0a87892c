"""The httpx side of tcp_tuning: an httpcore network backend whose sockets get TCP_NODELAY and
re-armed TCP_QUICKACK (see tcp_tuning for why), and the httpx transport that uses it."""

from __future__ import annotations

import functools
import socket
import ssl
import typing

import httpcore
import httpx

from tasks_conformance.core.transports.tcp_tuning import rearm, tune

# A request larger than this is written as httpcore hands it over, not held back.
MAX_COALESCED_BYTES = 256 * 1024


class QuickAckStream(httpcore.AsyncNetworkStream):
    """An httpcore stream that re-arms quick ACKs before every read, and sends a request's
    head and body in one write.

    httpcore writes an HTTP/1.1 request as two writes (head, then body) and only then reads.
    Over loopback each write is a syscall that runs the receiver's side of TCP and may wake
    the server for half a request; held until the read that always follows, they go out as
    one. A failed write surfaces at that read as the WriteError httpcore would have seen; it
    is dropped there as httpcore drops a request's WriteError, so the read then tells what the
    server did (an early error response, or the closed connection)."""

    def __init__(self, inner: httpcore.AsyncNetworkStream) -> None:
        self._inner = inner
        self._sock: socket.socket | None = inner.get_extra_info("socket")
        self._pending = bytearray()
        self._write_timeout: float | None = None

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        if self._pending:
            try:
                await self._flush()
            except httpcore.WriteError:
                pass  # as httpcore itself does for a request's writes: see the class doc
        rearm(self._sock)
        return await self._inner.read(max_bytes, timeout)

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        if not buffer:
            return
        self._pending += buffer
        self._write_timeout = timeout
        if len(self._pending) > MAX_COALESCED_BYTES:
            await self._flush()

    async def _flush(self) -> None:
        data, self._pending = bytes(self._pending), bytearray()
        await self._inner.write(data, self._write_timeout)

    async def aclose(self) -> None:
        self._pending.clear()  # a request never read for is abandoned with its connection
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


@functools.cache
def tls_context(tls: bool) -> ssl.SSLContext:
    """httpx's verifying context for an https target. Loading its CA bundle costs tens of ms,
    which an http:// target never needs: redirects are followed within the origin only (scheme
    included), so such a run never speaks TLS. It gets a context that verifies like the real one
    but trusts no CA, so a TLS connection, were one ever made, would fail closed.

    One per process: a run opens several connection pools (a brand-new connection for durability,
    the 2025-11-25 session of a dual-era server, a second principal), and each would otherwise load
    the bundle again on the event loop. A context holds no connection or session state, so pools
    that share it still share nothing a server could tell them apart by."""
    if tls:
        return httpx.create_ssl_context(trust_env=False)
    return ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)


def http_transport(*, tls: bool = True) -> httpx.AsyncHTTPTransport:
    """httpx's transport with the tuned backend. httpx offers no parameter for the network
    backend, so its connection pool is rebuilt with the same defaults plus ours (httpx < 1 keeps
    the pool in `_pool`; if that ever changes we fall back to the untuned pool). One TLS context
    serves both, built only for an https target (see tls_context)."""
    context = tls_context(tls)
    transport = httpx.AsyncHTTPTransport(verify=context, trust_env=False)
    if hasattr(transport, "_pool"):
        limits = httpx.Limits(max_connections=100, max_keepalive_connections=20, keepalive_expiry=5.0)
        transport._pool = httpcore.AsyncConnectionPool(
            ssl_context=context,
            max_connections=limits.max_connections,
            max_keepalive_connections=limits.max_keepalive_connections,
            keepalive_expiry=limits.keepalive_expiry,
            network_backend=QuickAckBackend(),
        )
    return transport
