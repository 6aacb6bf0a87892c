"""The reference client's JSON-RPC peer over Streamable HTTP (its stdio peer is stdio.py):
every message its own POST, a request's reply read as a JSON body or from an SSE stream
(C-CORE-MUST-03), the session's GET stream read for the server's requests (`listen`), every wait
bounded by the call's timeout and every reply by MAX_REPLY_BYTES."""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator, Mapping
from typing import TYPE_CHECKING

import anyio

from tasks_conformance.client.reference.wire import (
    JSON,
    MAX_REPLY_BYTES,
    ClientFailure,
    Headers,
    Link,
    StreamEnded,
)
from tasks_conformance.core.transports.lean_httpx import import_httpx
from tasks_conformance.core.transports.sse import SseParser

if TYPE_CHECKING:
    import httpx


class HttpLink(Link):
    """A JSON-RPC peer over Streamable HTTP: every message is its own POST; a request's reply is
    a JSON body or an SSE stream on which the response has the request's id."""

    def __init__(self, url: str, http: httpx.AsyncClient, timeout_s: float) -> None:
        super().__init__(timeout_s)
        self.url, self.http = url, http

    async def exchange(self, body: JSON, headers: Headers, want: int | None) -> tuple[JSON, Mapping[str, str]]:
        import_httpx()
        import httpx

        try:
            raw = [(k.encode(), v if isinstance(v, bytes) else v.encode()) for k, v in headers.items()]
            with anyio.fail_after(self.timeout_s):
                async with self.http.stream("POST", self.url, content=json.dumps(body).encode(), headers=raw) as resp:
                    if want is None:  # a notification or a response: the server only acknowledges
                        return {}, resp.headers
                    ctype = resp.headers.get("content-type", "").partition(";")[0].strip().lower()
                    if ctype == "text/event-stream":
                        return await self._from_stream(resp, want), resp.headers
                    found = _find(await _read(resp), want)
                    if found is None:
                        raise ClientFailure(f"HTTP {resp.status_code} without the JSON-RPC response")
                    return found, resp.headers
        except TimeoutError:
            raise ClientFailure(f"no reply from {self.url} within {self.timeout_s:g} s") from None
        except (httpx.ConnectError, httpx.ConnectTimeout) as exc:
            raise ClientFailure(f"could not connect to {self.url}: {exc or type(exc).__name__}") from None
        except httpx.HTTPError as exc:
            raise ClientFailure(f"HTTP error from {self.url}: {type(exc).__name__}: {exc}") from None

    async def listen(self, headers: Headers, answers: bool = True) -> None:
        """The session's GET SSE stream, read until it ends or the call is over (the caller cancels
        it): each request the server sends there is handed to `on_server_request`, as one on a
        response stream is (C-LEG-SHOULD-06), unless `answers` is false. A server that serves no
        GET stream (405) or cannot be reached ends it quietly: the stream is optional."""
        import_httpx()
        raw = [(k.encode(), v if isinstance(v, bytes) else v.encode()) for k, v in headers.items()
               if k.lower() != "content-type"]
        raw = [(k, b"text/event-stream" if k.lower() == b"accept" else v) for k, v in raw]
        # Whatever goes wrong on it (a transport's own error too) ends the optional stream, never the call.
        with contextlib.suppress(Exception), anyio.move_on_after(self.timeout_s):
            async with self.http.stream("GET", self.url, headers=raw) as resp:
                ctype = resp.headers.get("content-type", "").partition(";")[0].strip().lower()
                if resp.status_code != 200 or ctype != "text/event-stream":
                    return
                async for data in _events(resp):
                    if answers:
                        await self._event(data, None)

    async def _from_stream(self, resp: httpx.Response, want: int) -> JSON:
        async for data in _events(resp):
            found = await self._event(data, want)
            if found is not None:
                return found
        raise StreamEnded("the response stream ended without the response")

    async def _event(self, data: bytes, want: int | None) -> JSON | None:
        found = _find(data, want) if want is not None else None
        if found is not None:
            return found
        with contextlib.suppress(ValueError):
            message = json.loads(data)
            if (isinstance(message, dict) and isinstance(message.get("method"), str) and "id" in message
                    and self.on_server_request is not None):
                await self.on_server_request(message)
        return None


async def _events(resp: httpx.Response) -> AsyncIterator[bytes]:
    """The data of each event of an SSE response, as it comes (an event over MAX_REPLY_BYTES ends
    it with a ClientFailure)."""
    parser = SseParser(MAX_REPLY_BYTES)
    async for chunk in resp.aiter_bytes():
        for event in parser.feed(chunk):
            yield event.data
        if parser.oversize:
            raise ClientFailure(f"an SSE event over {MAX_REPLY_BYTES} bytes")
    for event in parser.end():
        yield event.data


async def _read(resp: httpx.Response) -> bytes:
    body = bytearray()
    async for chunk in resp.aiter_bytes():
        body.extend(chunk)
        if len(body) > MAX_REPLY_BYTES:
            raise ClientFailure(f"a reply over {MAX_REPLY_BYTES} bytes")
    return bytes(body)


def _find(raw: bytes, want: int) -> JSON | None:
    """The response to request `want` in a JSON body (a message or a batch), if it is there."""
    try:
        decoded = json.loads(raw)
    except ValueError:
        return None
    for message in decoded if isinstance(decoded, list) else [decoded]:
        if (isinstance(message, dict) and message.get("id") == want and not isinstance(message.get("id"), bool)
                and ("result" in message or "error" in message)):
            return message
    return None
