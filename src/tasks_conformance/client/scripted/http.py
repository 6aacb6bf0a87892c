"""What both scripted servers share: the Streamable HTTP endpoint they serve on 127.0.0.1, every
byte both ways recorded in the run's WireLog, a reply as plain JSON or as an SSE stream, and the
small JSON-RPC helpers. Each era's server (scripted/extension.py, scripted/legacy.py) says only how it
answers a message (`respond`) and which of its connections a message arrived on (`connection_for`:
one for the stateless 2026-07-28 server, a session each for the 2025-11-25 one); every frame
carries that number (`Frame.connection`), so that a task is judged on the connection that made it.
A GET of the endpoint is answered 405 unless the era's server serves a stream there (`listen`).
"""

from __future__ import annotations

import contextlib
import json
import socket
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, MutableMapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlsplit

from tasks_conformance.client.jsonrpc import parse, strict_error
from tasks_conformance.client.scripted.waits import DEFAULT_WAITS, ScriptedWaits
from tasks_conformance.core.scenario_record import Limit
from tasks_conformance.core.wirelog import Frame, FrameFlag, HttpMeta, WireLog

ENDPOINT = "/mcp"
MAX_BODY = 1024 * 1024  # a client's request is small; a larger body is not read on (README: "Limits")
SSE = "text/event-stream"
MAX_RECEIVES = 100  # ASGI messages read while a stream plays (after the body: its disconnect)
INCOMPLETE_BODY = "incomplete body: the client went before sending all of it (not a request)"
OVERSIZE_BODY = f"body over {MAX_BODY} bytes: not read on, answered 413 (not a request)"

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


@dataclass(frozen=True)
class Fault:
    """A JSON-RPC error a handler answers with (and the HTTP status it travels with)."""

    code: int
    message: str
    http_status: int = 200
    data: dict[str, Any] | None = None


def rpc_error(rid: Any, code: int, message: str, data: dict[str, Any] | None = None) -> dict[str, Any]:
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return {"jsonrpc": "2.0", "id": rid, "error": error}


def rpc_result(rid: Any, result: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rid, "result": result}


@dataclass
class Answer:
    """How one POST is answered: an HTTP status and a JSON body (None: no body), or an SSE stream
    whose events are the JSON-RPC messages `events` yields (the last one the response)."""

    status: int
    body: dict[str, Any] | None = None
    headers: tuple[tuple[str, str], ...] = ()
    events: AsyncIterator[dict[str, Any]] | None = None


class ScriptedHttp:
    """The ASGI app both eras' scripted servers are: POST /mcp (and GET /mcp where the era's server
    serves a stream there), every frame in `wire`."""

    def __init__(self, wire: WireLog, waits: ScriptedWaits = DEFAULT_WAITS) -> None:
        self.wire = wire
        self.waits = waits  # how long it waits for what the client may never do
        # What carries it: "http", or "stdio" where scripted/stdio.py serves it (a request is
        # cancelled by closing its stream over HTTP, by notifications/cancelled over stdio).
        self.transport = "http"
        self.requests = 0  # JSON-RPC messages received: 0 means the client never reached us
        # The frames of this scenario in the run's wire log (every scenario of a run shares one).
        self.seqs: list[int] = []
        self.limits: Counter[Limit] = Counter()  # the limits the client reached, and how often

    async def respond(self, message: Any, connection: int = 1) -> Answer:
        """The answer to one JSON-RPC message that arrived on `connection`."""
        raise NotImplementedError

    def refuse(self, message: Any, headers: tuple[tuple[str, str], ...]) -> Answer | None:
        """What a request whose HTTP headers disagree with it gets before it is answered (None: nothing)."""
        return None

    def listen(self, connection: int, headers: tuple[tuple[str, str], ...]) -> Answer:
        """What a GET of the endpoint gets on `connection`: 405, no stream is served, unless the
        era's server serves one (an Answer with `events`: the messages the stream carries)."""
        return Answer(405)

    def connection_for(self, session: str | None, message: Any) -> int:
        """The connection (numbered from 1) an HTTP message arrived on, by the Mcp-Session-Id it
        carries: one, unless the era's server keeps sessions."""
        return 1

    async def strict_respond(self, message: Any, not_json: str | None, connection: int = 1) -> Answer:
        """What a strict JSON-RPC peer answers (jsonrpc.py): -32700 for what is not JSON, -32600
        for an invalid message (a bad id answered with id null), with nothing of it echoed; a
        message that is one gets the era's `respond`."""
        error = strict_error(message, not_json)
        return Answer(400, error) if error is not None else await self.respond(message, connection)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        raw_headers = tuple((k.decode("latin-1"), v.decode("latin-1")) for k, v in scope.get("headers", []))
        url = f"http://{_host(raw_headers)}{scope.get('path', '')}"
        # The client's credentials (Authorization, Cookie, X-Api-Key…) and the run's secrets are
        # redacted as they are recorded, as the server mode's HTTP transport records its own.
        headers = tuple(self.wire.redactor.headers(raw_headers))
        body, complete = await _read_body(receive)
        meta = HttpMeta(scope.get("method", ""), url, request_headers=headers)
        if complete is None:
            # Over the limit: its bytes are not read on nor kept (a flood of them would fill the
            # wire log), it is counted and said in the scenario's record, and it is no request.
            self.limits[Limit.HTTP_BODY] += 1
            self.wire.record("in", "http", b"", http=meta, note=OVERSIZE_BODY, flags=(FrameFlag.OVERSIZE,))
            error = json.dumps(rpc_error(None, -32600, f"request body over {MAX_BODY} bytes")).encode()
            await _respond(send, 413, error, (("connection", "close"),))
            return
        if not complete:
            # The client went (or the scenario ended) before its body did: no request was made.
            # Kept in the log for the record, outside the scenario's frames, never answered.
            self.wire.record("in", "http", body, http=meta, note=INCOMPLETE_BODY)
            return
        posted = scope.get("method") == "POST" and scope.get("path") == ENDPOINT
        message, not_json = parse(body) if posted else (None, None)
        session = next((v for k, v in raw_headers if k.lower() == "mcp-session-id"), None)
        connection = self.connection_for(session, message)
        inbound = self.wire.record("in", "http", body, http=meta, connection=connection)
        self.seqs.append(inbound.seq)
        if not posted:
            listening = scope.get("method") == "GET" and scope.get("path") == ENDPOINT
            answer = self.listen(connection, raw_headers) if listening else Answer(404)
            if answer.events is not None:
                await self._stream(send, receive, answer, HttpMeta("GET", url, answer.status, headers,
                                                          (("content-type", SSE), *answer.headers)), inbound, None)
                return
            await _respond(send, answer.status, b"", answer.headers)
            return
        self.requests += 1
        refused = _foreign_origin(raw_headers) or self.refuse(message, raw_headers)
        answer = refused or await self.strict_respond(message, not_json, connection)
        if answer.events is not None:
            rid = message.get("id") if isinstance(message, dict) else None
            await self._stream(send, receive, answer, HttpMeta("POST", url, answer.status, headers,
                                                      (("content-type", SSE), *answer.headers)), inbound, rid)
            return
        data = json.dumps(answer.body, separators=(",", ":")).encode() if answer.body is not None else b""
        if answer.body is not None:
            out_meta = HttpMeta("POST", url, answer.status, headers,
                                (("content-type", "application/json"), *answer.headers))
            self.seqs.append(self.wire.record("out", "http", data, http=out_meta, reply_to=inbound.seq,
                                              connection=connection).seq)
        await _respond(send, answer.status, data, answer.headers)

    async def _stream(self, send: Send, receive: Receive, answer: Answer, out_meta: HttpMeta, inbound: Frame,
                      rid: Any) -> None:
        """An SSE response: each message one event, recorded as it is sent; the one with the
        request's id (a result or an error) is recorded as the reply. A client may drop the stream
        at any time (C-LEG-MAY-04): the script stops playing it then, so a blocked tasks/result
        neither advances its task nor sends an input request nobody can read any more."""
        import anyio

        events = answer.events
        assert events is not None
        await send({"type": "http.response.start", "status": answer.status,
                    "headers": [(b"content-type", SSE.encode()), (b"cache-control", b"no-store"),
                                *((k.encode(), v.encode()) for k, v in answer.headers)]})
        dropped = False

        async def watch(scope: anyio.CancelScope) -> None:
            nonlocal dropped
            for _ in range(MAX_RECEIVES):  # the body was read whole: what comes next is the disconnect
                if (await receive()).get("type") == "http.disconnect":
                    dropped = True
                    scope.cancel()
                    return

        try:
            async with anyio.create_task_group() as tg:
                tg.start_soon(watch, tg.cancel_scope)
                async for message in events:
                    data = json.dumps(message, separators=(",", ":")).encode()
                    reply = "method" not in message and message.get("id") == rid
                    frame = self.wire.record("out", "sse", data, http=out_meta,
                                             reply_to=inbound.seq if reply else None, connection=inbound.connection)
                    self.seqs.append(frame.seq)
                    await send({"type": "http.response.body", "body": b"data: " + data + b"\n\n", "more_body": True})
                tg.cancel_scope.cancel()
        finally:
            closing = getattr(events, "aclose", None)
            if closing is not None:
                with anyio.CancelScope(shield=True):
                    await closing()
        if not dropped:
            await send({"type": "http.response.body", "body": b"", "more_body": False})


# The origins a local server accepts: its own host's (a request from a page anywhere else is a
# DNS-rebinding attempt, refused with 403, as both eras' transports require).
LOCAL_HOSTS = frozenset({"127.0.0.1", "localhost", "::1"})


def _foreign_origin(headers: tuple[tuple[str, str], ...]) -> Answer | None:
    origin = next((v for k, v in headers if k.lower() == "origin"), None)
    if origin is None:
        return None
    try:
        host = urlsplit(origin).hostname
    except ValueError:
        host = None
    if host in LOCAL_HOSTS:
        return None
    return Answer(403, rpc_error(None, -32600, "forbidden: the request's Origin is not this server's"))


def _host(headers: tuple[tuple[str, str], ...]) -> str:
    return next((v for k, v in headers if k.lower() == "host"), "127.0.0.1")


async def _read_body(receive: Receive) -> tuple[bytes, bool | None]:
    """(the body; whether it was received to its end, None when it went over MAX_BODY and was not
    read on). A client that disconnects mid-body, or is stopped while sending it, sent no request."""
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message.get("type") != "http.request":
            return b"".join(chunks), False
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > MAX_BODY:
            return b"", None
        chunks.append(chunk)
        if not message.get("more_body"):
            return b"".join(chunks), True


async def _respond(send: Send, status: int, data: bytes, extra: tuple[tuple[str, str], ...] = ()) -> None:
    headers = [(b"content-length", str(len(data)).encode())]
    if data:
        headers.append((b"content-type", b"application/json"))
    headers.extend((k.encode(), v.encode()) for k, v in extra)
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": data})


def _bind() -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.bind(("127.0.0.1", 0))
    return sock


@contextlib.asynccontextmanager
async def serving(app: ScriptedHttp) -> AsyncIterator[str]:
    """Serve `app` on an ephemeral 127.0.0.1 port for the block; yields the endpoint URL."""
    import anyio
    import uvicorn

    class _Quiet(uvicorn.Server):
        @contextlib.contextmanager
        def capture_signals(self) -> Iterator[None]:  # the command line owns SIGINT/SIGTERM
            yield

    sock = _bind()
    config = uvicorn.Config(app, lifespan="off", log_config=None, log_level="critical", access_log=False,
                            http="h11", ws="none", timeout_graceful_shutdown=1)
    server = _Quiet(config)
    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(server.serve, [sock])
            with anyio.fail_after(10):
                while not server.started:
                    await anyio.sleep(0.005)
            host, port = sock.getsockname()[:2]
            try:
                yield f"http://{host}:{port}{ENDPOINT}"
            finally:
                # The client has gone: stop listening and drop what is left now, not at uvicorn's
                # next 0.1 s tick nor after its graceful 0.1 s wait for connections (a run waits
                # for every scenario's server; benchmarks/client_run.py measures it).
                server.should_exit = server.force_exit = True
                for listening in getattr(server, "servers", ()):
                    listening.close()
                for connection in list(server.server_state.connections):
                    connection.shutdown()
                    # A request still in flight keeps its connection open through shutdown(): a
                    # client that flooded us left its POSTs queued in the socket, and their
                    # reading went on (and grew) until the event loop closed. Drop them now.
                    transport = getattr(connection, "transport", None)
                    if transport is not None:
                        transport.abort()
                for task in list(server.server_state.tasks):
                    task.cancel()
                tg.cancel_scope.cancel()
    finally:
        sock.close()
