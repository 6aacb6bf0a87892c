"""Per-request context, legacy sessions, and server->client requests.

A ``Stream`` is where out-of-band messages for one request go: the stdio pipe, or the SSE
response of that request's POST. ``Outbound`` correlates server->client requests (legacy
elicitation) with the client's JSON-RPC responses, which arrive on stdin or as separate POSTs.
"""

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal, Protocol

from tasks_conformance.core.eras import Era
from tasks_conformance.server.reference.protocol import JSON, RequestId, RpcError, valid_id


class StreamClosed(Exception):
    """The request's stream is gone (client disconnected, or the request was answered as JSON)."""


class Stream(Protocol):
    async def send(self, message: JSON) -> None:
        """Send one message before the response (raises StreamClosed when it cannot)."""

    async def begin(self) -> None:
        """Commit to a streamed response now (HTTP: SSE headers), before anything is sent."""


class Outbound:
    """Server->client requests waiting for the client's response (bounded)."""

    def __init__(self, prefix: str, limit: int = 64) -> None:
        self._prefix = prefix
        self._limit = limit
        self._ids = itertools.count(1)
        self._pending: dict[RequestId, asyncio.Future[JSON]] = {}

    def open(self) -> tuple[str, asyncio.Future[JSON]]:
        if len(self._pending) >= self._limit:
            raise RpcError(-32603, "Too many server-to-client requests outstanding")
        request_id = f"{self._prefix}-{next(self._ids)}"
        future: asyncio.Future[JSON] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = future
        return request_id, future

    def forget(self, request_id: RequestId) -> None:
        self._pending.pop(request_id, None)

    def resolve(self, message: JSON) -> bool:
        """Deliver a client response; False if nobody was waiting for that id."""
        request_id = message.get("id")
        if not isinstance(request_id, (str, int)) or not valid_id(request_id):
            return False
        future = self._pending.pop(request_id, None)
        if future is None or future.done():
            return False
        future.set_result(message)
        return True

    def close(self) -> None:
        """The session ended: every waiting ask() raises StreamClosed (not CancelledError)."""
        for future in self._pending.values():
            if not future.done():
                future.set_exception(StreamClosed("the session ended"))
        self._pending.clear()


class LegacySession:
    """A 2025-11-25 session: the stdio process after ``initialize``, or one ``Mcp-Session-Id``."""

    def __init__(self, session_id: str, client_caps: JSON) -> None:
        self.session_id = session_id
        self.client_caps = client_caps
        self.outbound = Outbound(prefix=f"srv-{session_id[:8]}")
        self.last_seen = time.monotonic()
        self.initialized = False  # its notifications/initialized has arrived

    def close(self) -> None:
        self.outbound.close()


@dataclass
class RequestContext:
    era: Era
    request_id: RequestId
    method: str
    params: JSON
    transport: Literal["stdio", "http", "tcp", "unix"]
    headers: Mapping[str, str] | None = None  # lower-cased names; HTTP only
    session: LegacySession | None = None
    stream: Stream | None = None
    client_caps: JSON = field(default_factory=dict)

    async def ask(self, method: str, params: JSON, timeout: float) -> JSON:
        """Send a request to the client on this request's stream; return the client's result.

        Raises StreamClosed when there is no stream, TimeoutError, or RpcError when the client
        answered with an error.
        """
        if self.stream is None or self.session is None:
            raise StreamClosed("no stream to send a server-to-client request on")
        outbound = self.session.outbound
        request_id, future = outbound.open()
        try:
            await self.stream.send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
            reply = await asyncio.wait_for(future, timeout)
        finally:
            outbound.forget(request_id)
        if "error" in reply:
            err = reply.get("error")
            code = err.get("code") if isinstance(err, dict) else None
            message = err.get("message") if isinstance(err, dict) else None
            raise RpcError(code if isinstance(code, int) else -32603, str(message or "client error"))
        result = reply.get("result")
        return result if isinstance(result, dict) else {}
