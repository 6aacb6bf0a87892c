"""Helpers for the tests that run the peer and the transports against a scripted server."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from typing import Any, TypeVar

import anyio

from tasks_conformance.core.rpc.peer import Peer, ServerRequestHandler
from tasks_conformance.core.transports.base import Inbound, Transport
from tasks_conformance.core.transports.memory import Reaction, Sent

T = TypeVar("T")

# Every test body runs under this bound, so a hang fails fast instead of waiting for
# pytest-timeout; the bound is far above what any of these tests needs.
TEST_BOUND_S = 10.0


def run(fn: Callable[[], Awaitable[T]]) -> T:
    """Run an async test body, bounded."""

    async def bounded() -> T:
        with anyio.fail_after(TEST_BOUND_S):
            return await fn()

    return anyio.run(bounded)


def answer_pings(more: Callable[[Sent], Reaction] | None = None) -> Callable[[Sent], Reaction]:
    """A script that answers `ping` (the tests' barrier) and hands the rest to `more`."""

    def script(sent: Sent) -> Reaction:
        if sent.method == "ping":
            return sent.result({})
        return more(sent) if more is not None else None

    return script


async def barrier(peer: Peer) -> None:
    """Wait until the peer has read everything the server wrote before now.

    The peer reads frames in order, so once the answer to a ping (written after them) is in,
    so are they; no sleeping and no timing involved.
    """
    reply = await peer.request("ping", timeout_s=5.0)
    assert reply.ok, reply.describe()


@asynccontextmanager
async def running(
    transport: Transport,
    *,
    timeout_s: float = 5.0,
    handlers: Mapping[str, ServerRequestHandler] | None = None,
) -> AsyncIterator[Peer]:
    """A started transport with a peer reading it; both closed on the way out."""
    await transport.start()
    try:
        async with Peer(transport, timeout_s=timeout_s, handlers=handlers) as peer:
            yield peer
    finally:
        await transport.aclose()


async def next_inbound(transport: Transport) -> Inbound:
    with anyio.fail_after(5):
        return await transport.inbound.receive()


def as_dict(value: Any) -> dict[str, Any]:
    assert isinstance(value, dict), value
    return value
