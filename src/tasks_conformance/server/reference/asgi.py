"""ASGI plumbing of the HTTP transport: reading a request body, writing plain, JSON and SSE responses.

Nothing here knows MCP; ``http_app.py`` builds the endpoint on these pieces.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from tasks_conformance.server.reference.context import StreamClosed
from tasks_conformance.server.reference.protocol import JSON, encode

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]


class Disconnected(Exception):
    """The client went away before the request body was complete."""


class TooLarge(Exception):
    """The request body is over the configured cap."""


def request_headers(scope: Scope) -> dict[str, str]:
    """Header names lower-cased; repeated headers joined with ", " as HTTP allows."""
    out: dict[str, str] = {}
    for raw_name, raw_value in scope.get("headers", []):
        name = raw_name.decode("latin-1").lower()
        value = raw_value.decode("latin-1")
        out[name] = f"{out[name]}, {value}" if name in out else value
    return out


class SseStream:
    """The SSE response of one POST; started lazily so that early errors can still be JSON."""

    def __init__(self, send: Send) -> None:
        self._send = send
        self._lock = asyncio.Lock()
        self.started = False
        self.closed = False

    async def begin(self) -> None:
        async with self._lock:
            await self._start()

    async def _start(self) -> None:
        if self.started:
            return
        if self.closed:
            raise StreamClosed("stream closed")
        self.started = True
        await self._send(
            {
                "type": "http.response.start",
                "status": 200,
                "headers": [
                    (b"content-type", b"text/event-stream"),
                    (b"cache-control", b"no-cache, no-transform"),
                    (b"x-accel-buffering", b"no"),
                ],
            }
        )

    async def send(self, message: JSON) -> None:
        async with self._lock:
            if self.closed:
                raise StreamClosed("stream closed")
            await self._start()
            await self._send(
                {
                    "type": "http.response.body",
                    "body": b"event: message\ndata: " + encode(message) + b"\n\n",
                    "more_body": True,
                }
            )

    async def close(self) -> None:
        async with self._lock:
            if self.closed:
                return
            self.closed = True
            if self.started:
                await self._send({"type": "http.response.body", "body": b"", "more_body": False})


async def respond(
    send: Send, status: int, content_type: bytes, body: bytes, headers: list[tuple[bytes, bytes]] | None
) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", content_type), *(headers or [])],
        }
    )
    await send({"type": "http.response.body", "body": body})


async def plain(send: Send, status: int, body: bytes, headers: list[tuple[bytes, bytes]] | None = None) -> None:
    await respond(send, status, b"text/plain; charset=utf-8", body, headers)


async def send_json(send: Send, status: int, message: JSON, headers: list[tuple[bytes, bytes]] | None = None) -> None:
    await respond(send, status, b"application/json", encode(message), headers)


async def empty(send: Send, status: int) -> None:
    await send({"type": "http.response.start", "status": status, "headers": []})
    await send({"type": "http.response.body", "body": b""})


async def read_body(receive: Receive, cap: int) -> bytes:
    """The whole request body; raises Disconnected, or TooLarge past ``cap`` bytes."""
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise Disconnected
        if message["type"] != "http.request":
            continue
        chunk = bytes(message.get("body", b""))
        size += len(chunk)
        if size > cap:
            raise TooLarge
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks)


async def wait_disconnect(receive: Receive) -> None:
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return
