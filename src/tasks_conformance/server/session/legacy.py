"""The 2025-11-25 session: initialize handshake, Mcp-Session-Id over HTTP, DELETE on close."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tasks_conformance import __version__
from tasks_conformance.core.protocol import HEADER_PROTOCOL_VERSION, HEADER_SESSION
from tasks_conformance.core.rpc.peer import Peer, Reply
from tasks_conformance.core.transports.base import Transport
from tasks_conformance.core.wirelog import FrameTag, Purpose
from tasks_conformance.core.wires import DIALECTS, PROTOCOL_LEGACY, Wire
from tasks_conformance.server.evidence.records import Intent
from tasks_conformance.server.session.base import Session

CLIENT_INFO = {"name": "tasks-conformance", "version": __version__}


class LegacySession(Session):
    protocol_version = PROTOCOL_LEGACY
    dialect = DIALECTS[Wire.LEGACY]

    def __init__(self, transport: Transport, peer: Peer, *, capabilities: Mapping[str, Any]) -> None:
        super().__init__(transport, peer)
        self.capabilities = dict(capabilities)
        self.session_id: str | None = None
        self.negotiated_version: str | None = None
        self.initialize_reply: Reply | None = None

    def base_headers(self, method: str, params: Any) -> dict[str, str]:
        if not self.transport.uses_headers:
            return {}
        headers: dict[str, str] = {}
        if self.negotiated_version is not None:
            headers[HEADER_PROTOCOL_VERSION] = self.negotiated_version
        if self.session_id is not None:
            headers[HEADER_SESSION] = self.session_id
        return headers

    async def initialize(self, timeout_s: float | None = None) -> Reply:
        params = {
            "protocolVersion": PROTOCOL_LEGACY,
            "capabilities": self.capabilities,
            "clientInfo": dict(CLIENT_INFO),
        }
        reply = await self.peer.request(
            "initialize", params, headers=self.base_headers("initialize", params), timeout_s=timeout_s,
            tag=self.frame_tag(FrameTag(Purpose.HANDSHAKE)),
        )
        self.initialize_reply = reply
        self.intents.append(Intent(reply.request_seq, "initialize", self.protocol_version, False))
        if reply.http is not None:
            sid = reply.http.header(HEADER_SESSION, response=True)
            if sid:
                self.session_id = sid
        if reply.ok:
            version = reply.result.get("protocolVersion")
            self.negotiated_version = version if isinstance(version, str) else PROTOCOL_LEGACY
            await self.notify("notifications/initialized")
        return reply

    def build_params(self, method: str, params: dict[str, Any] | None, *, declare_tasks: bool) -> dict[str, Any]:
        """The params as sent: params.task on tools/call as the dialect declares it; no envelope."""
        return self.dialect.declare(method, dict(params or {}), tasks=declare_tasks)

    def response_headers(self) -> dict[str, str]:
        return self.base_headers("", None)

    async def aclose(self) -> None:
        delete = getattr(self.transport, "delete", None)  # HTTP only; avoids importing httpx here
        if delete is not None and self.session_id is not None:
            await delete(self.base_headers("", None))
