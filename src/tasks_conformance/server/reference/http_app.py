"""Streamable HTTP transport: the ASGI app of endpoint ``/mcp`` (``http_serve.py`` runs it on uvicorn).

One POST per message. 2026-07-28 requests are stateless (routing headers validated against the
body); ``initialize`` mints an ``Mcp-Session-Id`` for a 2025-11-25 session, required afterwards
and ended by DELETE. Responses are JSON, except where messages must precede the response
(``subscriptions/listen``; legacy ``tasks/result`` and input-needing tools/call), which use SSE.
Imported only for ``--transport http``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import secrets
import sys
import time
from typing import Any

from tasks_conformance.server.reference.asgi import (
    Disconnected,
    Receive,
    Scope,
    Send,
    SseStream,
    TooLarge,
    empty,
    plain,
    read_body,
    request_headers,
    send_json,
    wait_disconnect,
)
from tasks_conformance.server.reference.context import LegacySession, RequestContext, StreamClosed
from tasks_conformance.server.reference.protocol import (
    INTERNAL_ERROR,
    INVALID_REQUEST,
    JSON,
    LEGACY_BAD_SESSION,
    LEGACY_SESSION_NOT_FOUND,
    LEGACY_VERSION,
    PARSE_ERROR,
    RequestId,
    RpcError,
    error_response,
    extension_meta,
    is_response,
    response,
    valid_id,
)
from tasks_conformance.server.reference.server import ReferenceServer

ENDPOINT = "/mcp"
_ORIGIN_OK = re.compile(r"^https?://(127\.0\.0\.1|localhost|\[::1\])(:\d{1,5})?$", re.IGNORECASE)
_SESSION_IDLE_S = 3600.0


class HttpApp:
    """ASGI application serving one ReferenceServer."""

    def __init__(self, server: ReferenceServer) -> None:
        self.server = server
        self.sessions: dict[str, LegacySession] = {}
        self._shutdown: asyncio.Event | None = None

    @property
    def shutdown_event(self) -> asyncio.Event:
        if self._shutdown is None:
            self._shutdown = asyncio.Event()
        return self._shutdown

    def begin_shutdown(self) -> None:
        self.shutdown_event.set()

    # ------------------------------------------------------------------ ASGI entry
    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
            return
        if scope["type"] != "http":
            return
        headers = request_headers(scope)
        path = str(scope.get("path", ""))
        if path.rstrip("/") != ENDPOINT:
            await plain(send, 404, b"Not Found")
            return
        origin = headers.get("origin")
        if origin is not None and not self.server.origin_allowed(origin.strip(), _ORIGIN_OK.match(origin.strip())):
            await send_json(send, 403, error_response(None, RpcError(INVALID_REQUEST, "Forbidden: invalid Origin")))
            return
        if not self._authorized(headers):
            await send_json(send, 401, error_response(None, RpcError(INVALID_REQUEST, "Unauthorized")),
                            [(b"www-authenticate", b'Bearer realm="reference"')])
            return
        method = scope.get("method", "GET")
        if method == "POST":
            await self._post(headers, receive, send)
        elif method == "DELETE":
            await self._delete(headers, send)
        else:
            await plain(send, 405, b"Method Not Allowed", [(b"allow", b"POST, DELETE")])

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await send({"type": "lifespan.shutdown.complete"})
                return

    def _authorized(self, headers: dict[str, str]) -> bool:
        tokens = self.server.config.bearer_tokens
        if not tokens:
            return True
        scheme, _, token = headers.get("authorization", "").partition(" ")
        return scheme.lower() == "bearer" and token.strip() in tokens

    # ------------------------------------------------------------------ sessions
    def _session_for(self, session_id: str | None) -> LegacySession | None:
        if session_id is None:
            return None
        session = self.sessions.get(session_id)
        if session is not None:
            session.last_seen = time.monotonic()
        return session

    def _add_session(self, session: LegacySession) -> None:
        now = time.monotonic()
        for sid in [s for s, sess in self.sessions.items() if now - sess.last_seen > _SESSION_IDLE_S]:
            self._end_session(sid)
        while len(self.sessions) >= self.server.config.max_sessions:
            oldest = min(self.sessions.values(), key=lambda s: s.last_seen)
            self._end_session(oldest.session_id)
        self.sessions[session.session_id] = session

    def _end_session(self, session_id: str) -> None:
        session = self.sessions.pop(session_id, None)
        if session is not None:
            session.close()
            self.server.tasks.drop_owner(session_id)

    # ------------------------------------------------------------------ DELETE
    async def _delete(self, headers: dict[str, str], send: Send) -> None:
        session_id = headers.get("mcp-session-id")
        if session_id is None:
            await plain(send, 405, b"Method Not Allowed", [(b"allow", b"POST")])
            return
        if session_id not in self.sessions:
            await send_json(send, 404, error_response(None, RpcError(LEGACY_SESSION_NOT_FOUND, "Session not found")))
            return
        self._end_session(session_id)
        await empty(send, 200)

    # ------------------------------------------------------------------ POST
    async def _post(self, headers: dict[str, str], receive: Receive, send: Send) -> None:
        server = self.server
        try:
            body = await asyncio.wait_for(
                read_body(receive, server.config.max_body_bytes), server.config.body_read_timeout_s
            )
        except Disconnected:
            return
        except TooLarge:
            await send_json(send, 413, error_response(None, RpcError(INVALID_REQUEST, "Request body too large")))
            return
        except TimeoutError:
            await send_json(send, 408, error_response(None, RpcError(INVALID_REQUEST, "Timed out reading the body")))
            return
        try:
            message: Any = json.loads(body)
        except (ValueError, UnicodeDecodeError):
            await send_json(send, 400, error_response(None, RpcError(PARSE_ERROR, "Parse error: not a JSON text")))
            return
        if not isinstance(message, dict):
            await send_json(
                send,
                400,
                error_response(
                    None,
                    RpcError(INVALID_REQUEST, "Expected one JSON-RPC object (batches are not supported)"),
                ),
            )
            return
        session_id = headers.get("mcp-session-id")
        await server.before_http_message()
        if is_response(message):
            await self._client_response(session_id, message, send)
            return
        method = message.get("method")
        request_id = message.get("id")
        if not isinstance(method, str) or ("id" in message and not valid_id(request_id)):
            await send_json(
                send,
                400,
                error_response(
                    request_id if valid_id(request_id) else None,
                    RpcError(INVALID_REQUEST, "Invalid JSON-RPC message"),
                ),
            )
            return
        params = message.get("params")
        if params is None:
            params = {}
        if "id" not in message:  # a notification: it keeps its session alive, nothing more
            session = self._session_for(session_id)
            if session is not None and method == "notifications/initialized":
                session.initialized = True
            await empty(send, server.notification_http_status())
            return
        assert isinstance(request_id, (str, int))
        if not isinstance(params, dict):
            await send_json(
                send, 400, error_response(request_id, RpcError(INVALID_REQUEST, "params must be an object"))
            )
            return
        await self._request(headers, session_id, request_id, method, params, receive, send)

    async def _client_response(self, session_id: str | None, message: JSON, send: Send) -> None:
        session = self._session_for(session_id)
        if session is None:
            status = 404 if session_id is not None else 400
            await send_json(
                send,
                status,
                error_response(
                    None, RpcError(LEGACY_BAD_SESSION, "Bad Request: a response needs a valid Mcp-Session-Id")
                ),
            )
            return
        session.outbound.resolve(message)
        await empty(send, 202)

    async def _request(
        self,
        headers: dict[str, str],
        session_id: str | None,
        request_id: RequestId,
        method: str,
        params: JSON,
        receive: Receive,
        send: Send,
    ) -> None:
        server = self.server
        session = self._session_for(session_id)
        route = server.route(method, params, has_session=session is not None)
        if route == "initialize":
            try:
                result, new_session = server.handle_initialize(params, secrets.token_hex(16))
            except RpcError as exc:
                await send_json(send, server.http_status_for("extension", exc), error_response(request_id, exc))
                return
            self._add_session(new_session)
            await send_json(
                send,
                200,
                response(request_id, result),
                [(b"mcp-session-id", new_session.session_id.encode())],
            )
            return
        stale = session_id is not None and session is None
        if stale and not (route == "extension" and extension_meta(params) is not None):
            await send_json(
                send, 404, error_response(request_id, RpcError(LEGACY_SESSION_NOT_FOUND, "Session not found"))
            )
            return
        if route in ("legacy", "uninitialized") and session is None:
            if session_id is not None:
                await send_json(
                    send,
                    404,
                    error_response(request_id, RpcError(LEGACY_SESSION_NOT_FOUND, "Session not found")),
                )
            else:
                await send_json(
                    send,
                    400,
                    error_response(
                        request_id, RpcError(LEGACY_BAD_SESSION, "Bad Request: No valid session ID provided")
                    ),
                )
            return
        if route == "legacy":
            assert session is not None
            if not session.initialized and method != "ping" and server.legacy_requires_initialized():
                await send_json(send, 400, error_response(request_id, RpcError(INVALID_REQUEST, "Not initialized")))
                return
            version_header = headers.get("mcp-protocol-version")
            if version_header is not None and version_header.strip() != LEGACY_VERSION:
                await send_json(
                    send,
                    400,
                    error_response(
                        request_id,
                        RpcError(
                            INVALID_REQUEST,
                            f"Bad Request: unsupported MCP-Protocol-Version {version_header.strip()!r} "
                            f"for this session (negotiated {LEGACY_VERSION})",
                        ),
                    ),
                )
                return
            ctx = RequestContext(
                era="legacy",
                request_id=request_id,
                method=method,
                params=params,
                transport="http",
                session=session,
                client_caps=dict(session.client_caps),
            )
        else:
            ctx = RequestContext(
                era="extension",
                request_id=request_id,
                method=method,
                params=params,
                transport="http",
                headers=headers,
            )
        if server.wants_stream(ctx.era, method, params):
            await self._respond_streaming(ctx, receive, send)
        else:
            reply, status = await self._invoke(ctx)
            await send_json(send, status, reply, server.http_response_headers(ctx))

    async def _invoke(self, ctx: RequestContext) -> tuple[JSON, int]:
        server = self.server
        try:
            if ctx.era == "extension":
                result = await server.handle_extension(ctx)
            else:
                result = await server.handle_legacy(ctx)
        except RpcError as exc:
            return error_response(ctx.request_id, exc), server.http_status_for(ctx.era, exc)
        except StreamClosed:
            return error_response(ctx.request_id, RpcError(INTERNAL_ERROR, "Stream closed")), 500
        except Exception as exc:  # never let a bug kill the server
            print(f"reference server: internal error in {ctx.method}: {exc!r}", file=sys.stderr)
            return error_response(ctx.request_id, RpcError(INTERNAL_ERROR, "Internal error")), 500
        return response(ctx.request_id, result), 200

    async def _respond_streaming(self, ctx: RequestContext, receive: Receive, send: Send) -> None:
        stream = SseStream(send)
        ctx.stream = stream
        handler = asyncio.create_task(self._invoke(ctx))
        disconnect = asyncio.create_task(wait_disconnect(receive))
        shutdown = asyncio.create_task(self.shutdown_event.wait())
        try:
            done, _ = await asyncio.wait({handler, disconnect, shutdown}, return_when=asyncio.FIRST_COMPLETED)
            if handler in done:
                if handler.cancelled():
                    reply, status = (
                        error_response(ctx.request_id, RpcError(INTERNAL_ERROR, "Request cancelled")),
                        500,
                    )
                else:
                    reply, status = handler.result()
                if stream.started:
                    with contextlib.suppress(StreamClosed):
                        await stream.send(reply)
                    await stream.close()
                else:
                    stream.closed = True
                    await send_json(send, status, reply)
                return
            # Client went away (closing the stream cancels the request) or the server is stopping.
            handler.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await handler
            if disconnect in done:
                stream.closed = True
                return
            if stream.started:
                await stream.close()
            else:
                stream.closed = True
                await send_json(
                    send,
                    503,
                    error_response(ctx.request_id, RpcError(INTERNAL_ERROR, "Server shutting down")),
                )
        finally:
            for task in (handler, disconnect, shutdown):
                if not task.done():
                    task.cancel()
