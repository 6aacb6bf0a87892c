"""Our sockets never wait on delayed ACKs: TCP_NODELAY on connect, TCP_QUICKACK before reads.

No timing here (benchmarks/task_bound.py measures the effect against the reference server's
--no-tcp-nodelay mode); these tests pin the mechanism, and the full suite's verdicts must not
depend on how a server writes its bytes."""

from __future__ import annotations

import json
import socket
import ssl
import sys
from typing import Any

import anyio
import httpcore
import httpx
import pytest

from tasks_conformance.core.transports import http_tuning, tcp_tuning
from tasks_conformance.core.transports.http_tuning import QuickAckBackend, QuickAckStream

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


class WritingStream(FakeStream):
    """Records the order of writes and reads; can fail its writes."""

    def __init__(self, sock: RecordingSocket, fail_writes: bool = False) -> None:
        super().__init__(sock)
        self.log: list[tuple[str, bytes]] = []
        self.fail_writes = fail_writes
        self.closed = False

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        self.log.append(("read", b""))
        return b"x"

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        if self.fail_writes:
            raise httpcore.WriteError("broken pipe")
        self.log.append(("write", buffer))

    async def aclose(self) -> None:
        self.closed = True


def test_a_requests_head_and_body_go_out_in_one_write_before_the_read() -> None:
    inner = WritingStream(RecordingSocket())
    stream = QuickAckStream(inner)

    async def body() -> None:
        await stream.write(b"POST / HTTP/1.1\r\n\r\n")
        await stream.write(b"")
        await stream.write(b'{"id":1}')
        assert inner.log == []  # held until the read
        await stream.read(10)
        await stream.read(10)

    anyio.run(body)
    assert inner.log == [("write", b'POST / HTTP/1.1\r\n\r\n{"id":1}'), ("read", b""), ("read", b"")]


def test_a_large_request_is_not_held_back() -> None:
    inner = WritingStream(RecordingSocket())
    stream = QuickAckStream(inner)
    big = b"x" * (http_tuning.MAX_COALESCED_BYTES + 1)

    async def body() -> None:
        await stream.write(b"head")
        await stream.write(big)

    anyio.run(body)
    assert inner.log == [("write", b"head" + big)]


def test_a_failed_write_is_dropped_as_httpcore_drops_it_and_the_read_tells() -> None:
    inner = WritingStream(RecordingSocket(), fail_writes=True)
    stream = QuickAckStream(inner)

    async def body() -> bytes:
        await stream.write(b"request")
        return await stream.read(10)

    assert anyio.run(body) == b"x"
    assert inner.log == [("read", b"")]


def test_closing_drops_a_request_never_read_for() -> None:
    inner = WritingStream(RecordingSocket())
    stream = QuickAckStream(inner)

    async def body() -> None:
        await stream.write(b"request")
        await stream.aclose()

    anyio.run(body)
    assert inner.log == [] and inner.closed


def test_over_a_real_connection_a_request_is_one_socket_write(monkeypatch: pytest.MonkeyPatch) -> None:
    from httpcore._backends.anyio import AnyIOStream

    writes: list[bytes] = []
    real_write = AnyIOStream.write

    async def counting_write(self: AnyIOStream, buffer: bytes, timeout: float | None = None) -> None:
        writes.append(buffer)
        await real_write(self, buffer, timeout)

    monkeypatch.setattr(AnyIOStream, "write", counting_write)

    async def body() -> bytes:
        got = bytearray()

        async def serve(client: anyio.abc.SocketStream) -> None:
            while not got.endswith(b'{"id":1}'):
                got.extend(await client.receive())
            await client.send(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")

        listener = await anyio.create_tcp_listener(local_host="127.0.0.1", local_port=0)
        port = listener.extra(anyio.abc.SocketAttribute.local_port)
        async with anyio.create_task_group() as tg:
            tg.start_soon(listener.serve, serve)
            with anyio.fail_after(10):
                async with httpx.AsyncClient(transport=http_tuning.http_transport(tls=False)) as client:
                    resp = await client.post(f"http://127.0.0.1:{port}/", content=b'{"id":1}')
                    assert resp.text == "ok"
            tg.cancel_scope.cancel()
        await listener.aclose()
        return bytes(got)

    data = anyio.run(body)
    assert data.startswith(b"POST / HTTP/1.1\r\n") and data.endswith(b'\r\n\r\n{"id":1}')
    assert writes == [data]  # head and body in one write


def test_the_full_suite_passes_through_the_split_write_front() -> None:
    # The benchmark's third server: http.server-style writes (head, then body, no TCP_NODELAY)
    # in front of the reference server. Verdicts must not depend on how the bytes were written.
    from helpers.paths import FIXTURES, REFERENCE
    from helpers.processes import HttpServer, http_server
    from helpers.runs import cli

    upstream = http_server(REFERENCE)
    try:
        front = HttpServer([sys.executable, str(FIXTURES / "split_write_proxy.py"), "--upstream", upstream.url])
        try:
            proc = cli("--url", front.url, "--tool-name", "confirm_action", "--input-responses",
                       '{"confirm-1": {"action": "accept", "content": {"confirm": true}}}', "--format", "json",
                       timeout=120)
        finally:
            front.stop()
    finally:
        upstream.stop()
    report = json.loads(proc.stdout)
    assert proc.returncode == 0, [(c["id"], c["status"], c.get("message")) for c in report["checks"]
                                  if c["status"] not in ("passed", "skipped")]
    assert report["outcome"] == "passed"


def test_the_full_suite_passes_against_the_reference_server_without_tcp_nodelay() -> None:
    # The benchmark's split mode: the reference server with Nagle's algorithm on, a response's head
    # and body in two writes (where a client that delays its ACKs stalls about 40 ms per exchange).
    from helpers.paths import REFERENCE
    from helpers.processes import http_server
    from helpers.runs import cli

    server = http_server(REFERENCE, "--no-tcp-nodelay")
    try:
        proc = cli("--url", server.url, "--tool-name", "slow_compute", "--format", "json", timeout=120)
    finally:
        server.stop()
    report = json.loads(proc.stdout)
    assert proc.returncode == 0, [(c["id"], c["status"], c.get("message")) for c in report["checks"]
                                  if c["status"] not in ("passed", "skipped", "not-applicable")]
    assert report["outcome"] == "passed"


def test_the_reference_server_leaves_nagle_on_only_when_asked() -> None:
    from tasks_conformance.server.reference.config import parse_args
    from tasks_conformance.server.reference.http_serve import _bind

    assert parse_args([]).tcp_nodelay and not parse_args(["--no-tcp-nodelay"]).tcp_nodelay
    # asyncio turns TCP_NODELAY on only for sockets whose proto is TCP; accepted ones inherit it.
    for nodelay, proto in ((True, socket.IPPROTO_TCP), (False, 0)):
        sock = _bind("127.0.0.1", 0, nodelay=nodelay)
        try:
            assert sock.proto == proto
        finally:
            sock.close()


def test_the_tls_context_is_built_once_per_process() -> None:
    # Loading the CA bundle costs tens of ms on the event loop; every pool of a run shares one.
    assert http_tuning.tls_context(True) is http_tuning.tls_context(True)
    assert http_tuning.tls_context(False) is http_tuning.tls_context(False)
    assert http_tuning.tls_context(False) is not http_tuning.tls_context(True)
    assert http_tuning.tls_context(False).verify_mode == ssl.CERT_REQUIRED  # fails closed, trusts no CA
