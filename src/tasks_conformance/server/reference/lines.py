"""Newline-delimited JSON-RPC connections (stdio, TCP, Unix sockets): the shared part.

A ``LineConnection`` turns lines into calls on the ``ReferenceServer``: each request runs in
its own task (a blocking ``tasks/result`` or a ``subscriptions/listen`` never stalls the
connection), ``initialize`` is answered in order, client responses go to the legacy session's
pending server->client requests, ``notifications/cancelled`` cancels an in-flight request.
Subclasses only move bytes (``enqueue`` and their own read loop).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import secrets
import sys
from typing import Any, Literal

from tasks_conformance.server.reference.context import LegacySession, RequestContext, StreamClosed
from tasks_conformance.server.reference.core import Route
from tasks_conformance.server.reference.protocol import (
    INTERNAL_ERROR,
    INVALID_REQUEST,
    JSON,
    PARSE_ERROR,
    RequestId,
    RpcError,
    encode,
    error_response,
    is_response,
    response,
    valid_id,
)
from tasks_conformance.server.reference.server import ReferenceServer


class Oversize:
    """Marker for a line longer than the cap (it was discarded)."""


OVERSIZE = Oversize()
Item = bytes | Oversize


class LineSplitter:
    """Bytes in, complete lines out; a line over ``cap`` bytes is discarded and reported once."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self._buf = bytearray()
        self._discarding = False

    def feed(self, chunk: bytes) -> list[Item]:
        out: list[Item] = []
        start = 0
        while True:
            nl = chunk.find(b"\n", start)
            if nl < 0:
                if not self._discarding:
                    self._buf += chunk[start:]
                    if len(self._buf) > self.cap:
                        self._buf.clear()
                        self._discarding = True
                        out.append(OVERSIZE)
                return out
            if self._discarding:
                self._discarding = False
            else:
                self._buf += chunk[start:nl]
                out.append(OVERSIZE if len(self._buf) > self.cap else bytes(self._buf))
                self._buf.clear()
            start = nl + 1

    def end(self) -> list[Item]:
        """The stream ended: a final line without newline still counts."""
        rest = bytes(self._buf) if self._buf and not self._discarding else b""
        self._buf.clear()
        return [rest] if rest else []


EOF_GRACE_S = 2.0


class LineConnection:
    """One newline-delimited JSON-RPC peer: the process on stdio, or one socket connection."""

    transport_name: Literal["stdio", "tcp", "unix"] = "stdio"

    def __init__(self, server: ReferenceServer) -> None:
        self.server = server
        self.session: LegacySession | None = None
        self._in_flight: dict[RequestId, asyncio.Task[None]] = {}

    # ------------------------------------------------------------------ bytes out
    def enqueue(self, data: bytes) -> None:
        """Queue one encoded line for writing; raise StreamClosed if the peer is gone."""
        raise NotImplementedError

    async def send(self, message: JSON) -> None:
        """Stream protocol: a message before the response (server requests, notifications)."""
        self.enqueue(encode(message) + b"\n")

    async def begin(self) -> None:
        """Nothing to open on a byte stream."""

    async def finish(self, *, eof: bool) -> None:
        """Let in-flight requests end (briefly, after EOF), then cancel the rest and end the session."""
        if eof and self._in_flight:
            await asyncio.wait(set(self._in_flight.values()), timeout=EOF_GRACE_S)
        for task in list(self._in_flight.values()):
            task.cancel()
        if self._in_flight:
            await asyncio.wait(set(self._in_flight.values()), timeout=1.0)
        if self.session is not None:
            self.server.tasks.drop_owner(self.session.session_id)
            self.session.close()
            self.session = None

    # ------------------------------------------------------------------ lines in
    def on_item(self, item: Item) -> None:
        if isinstance(item, Oversize):
            self._reply_error(None, RpcError(PARSE_ERROR, "Message too long; discarded"))
            return
        line = item.strip()
        if not line:
            return
        try:
            message: Any = json.loads(line)
        except (ValueError, UnicodeDecodeError):
            self._reply_error(None, RpcError(PARSE_ERROR, "Parse error: not a JSON text"))
            return
        if not isinstance(message, dict):
            self._reply_error(
                None, RpcError(INVALID_REQUEST, "Expected one JSON-RPC object (batches are not supported)")
            )
            return
        if is_response(message):
            if self.session is not None:
                self.session.outbound.resolve(message)
            return
        method = message.get("method")
        request_id = message.get("id")
        if "id" in message and not valid_id(request_id):
            self._reply_error(None, RpcError(INVALID_REQUEST, "Invalid request id"))
            return
        if not isinstance(method, str):
            if "id" in message:
                self._reply_error(request_id, RpcError(INVALID_REQUEST, "Missing method"))
            return
        params = message.get("params")
        if params is None:
            params = {}
        if "id" not in message:
            if isinstance(params, dict):
                self._on_notification(method, params)
            return
        assert isinstance(request_id, (str, int))
        if not isinstance(params, dict):
            self._reply_error(request_id, RpcError(INVALID_REQUEST, "params must be an object"))
            return
        if request_id in self._in_flight:
            self._reply_error(request_id, RpcError(INVALID_REQUEST, "Duplicate id of a request still in flight"))
            return
        if len(self._in_flight) >= self.server.config.max_in_flight:
            self._reply_error(request_id, RpcError(INTERNAL_ERROR, "Too many requests in flight"))
            return
        route = self.server.route(method, params, has_session=self.session is not None)
        if route == "initialize":
            self._initialize(request_id, params)
            return
        legacy_session = self.session if route == "legacy" else None
        ctx = RequestContext(
            era="extension" if route == "extension" else "legacy",
            request_id=request_id,
            method=method,
            params=params,
            transport=self.transport_name,
            session=legacy_session,
            stream=self,
            client_caps=dict(legacy_session.client_caps) if legacy_session is not None else {},
        )
        task = asyncio.create_task(self._serve(ctx, route))
        self._in_flight[request_id] = task
        task.add_done_callback(self._forget_request)

    def _forget_request(self, task: asyncio.Task[None]) -> None:
        for request_id, running in list(self._in_flight.items()):
            if running is task:
                del self._in_flight[request_id]

    def _on_notification(self, method: str, params: JSON) -> None:
        if method == "notifications/cancelled":
            request_id = params.get("requestId")
            task = self._in_flight.get(request_id) if valid_id(request_id) else None  # type: ignore[arg-type]
            if task is not None:
                task.cancel()

    def _reply_error(self, request_id: RequestId | None, error: RpcError) -> None:
        with contextlib.suppress(StreamClosed):
            self._write_now(error_response(request_id, error))

    def _write_now(self, message: JSON) -> None:
        self.enqueue(encode(message) + b"\n")

    def _initialize(self, request_id: RequestId, params: JSON) -> None:
        """initialize is answered in order, before any later message is routed."""
        try:
            result, session = self.server.handle_initialize(params, secrets.token_hex(8))
        except RpcError as exc:
            self._reply_error(request_id, exc)
            return
        if self.session is not None:
            self.server.tasks.drop_owner(self.session.session_id)
            self.session.close()
        self.session = session
        with contextlib.suppress(StreamClosed):
            self._write_now(response(request_id, result))

    async def _serve(self, ctx: RequestContext, route: Route) -> None:
        server = self.server
        try:
            if route == "extension":
                result = await server.handle_extension(ctx)
            elif route == "legacy":
                result = await server.handle_legacy(ctx)
            else:
                result = await server.handle_uninitialized(ctx)
            await self.send(response(ctx.request_id, result))
        except RpcError as exc:
            self._reply_error(ctx.request_id, exc)
        except StreamClosed:
            return
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # never let a bug kill the connection
            print(f"reference server: internal error in {ctx.method}: {exc!r}", file=sys.stderr)
            self._reply_error(ctx.request_id, RpcError(INTERNAL_ERROR, "Internal error"))
