"""Our sockets never wait on delayed ACKs: TCP_NODELAY on connect, TCP_QUICKACK before reads.

No timing here (benchmarks/task_bound.py measures the effect against
fixtures/split_write_proxy.py); these tests pin the mechanism."""

from __future__ import annotations

import socket
from typing import Any

import anyio
import httpcore
import pytest

from tasks_conformance.transports import http_tuning, tcp_tuning
from tasks_conformance.transports.http_tuning import QuickAckBackend, QuickAckStream

linux_only = pytest.mark.skipif(tcp_tuning.TCP_QUICKACK is None, reason="TCP_QUICKACK exists on Linux only")


class RecordingSocket:
    family = socket.AF_INET

    def __init__(self) -> None:
        self.calls: list[tuple[int, int]] = []

    def setsockopt(self, level: int, option: int, value: int) -> None:
        self.calls.append((option, value))


class FakeStream(httpcore.AsyncNetworkStream):
    def __init__(self, sock: RecordingSocket) -> None:
        self.sock = sock
        self.reads = 0

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        self.reads += 1
        return b"x"

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        return None

    async def aclose(self) -> None:
        return None

    def get_extra_info(self, info: str) -> Any:
        return self.sock if info == "socket" else None


@linux_only
def test_quick_ack_is_rearmed_before_every_read() -> None:
    sock = RecordingSocket()
    stream = QuickAckStream(FakeStream(sock))

    async def body() -> None:
        for _ in range(3):
            await stream.read(10)

    anyio.run(body)
    assert sock.calls == [(tcp_tuning.TCP_QUICKACK, 1)] * 3


def test_a_real_connection_gets_tcp_nodelay() -> None:
    async def body() -> int:
        listener = await anyio.create_tcp_listener(local_host="127.0.0.1", local_port=0)
        port = listener.extra(anyio.abc.SocketAttribute.local_port)
        try:
            stream = await QuickAckBackend().connect_tcp("127.0.0.1", port, timeout=5)
            sock = stream.get_extra_info("socket")
            value = int(sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
            await stream.aclose()
            return value
        finally:
            await listener.aclose()

    assert anyio.run(body) == 1


def test_the_http_transport_uses_the_tuned_backend() -> None:
    transport = http_tuning.http_transport()
    pool = getattr(transport, "_pool", None)
    assert pool is not None and isinstance(pool._network_backend, QuickAckBackend)
