"""Open a connection and choose the era (spec-digest §3.6), then resolve the tasks wire.

Automatic mode probes `server/discover` with the 2026-07-28 envelope. A DiscoverResult or a
recognised modern error (-32020/-32021/-32022) means a modern server; anything else (timeout,
-32601, -32602, an HTTP error without a modern body, a dead process) falls back to
`initialize` offering 2025-11-25. The decision never hinges on one error code.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tasks_conformance.config import PROTOCOL_LEGACY, PROTOCOL_MODERN, RunConfig
from tasks_conformance.errors import ConnectFailed
from tasks_conformance.protocol import (
    ERR_HEADER_MISMATCH,
    ERR_MISSING_CAPABILITY,
    ERR_UNSUPPORTED_VERSION,
    EXT_TASKS,
    META_SERVER_INFO,
    get_path,
)
from tasks_conformance.rpc.peer import Peer, Reply, ServerRequestHandler
from tasks_conformance.session.base import Session
from tasks_conformance.session.legacy import LegacySession
from tasks_conformance.session.modern import ModernSession
from tasks_conformance.transports.base import Transport
from tasks_conformance.wirelog import WireLog

MODERN_ERROR_CODES = frozenset({ERR_HEADER_MISMATCH, ERR_MISSING_CAPABILITY, ERR_UNSUPPORTED_VERSION})
# How long the era probe may wait before a silent server is taken for a legacy one.
DISCOVER_PROBE_TIMEOUT_S = 5.0

DEFAULT_CLIENT_CAPABILITIES: dict[str, Any] = {"elicitation": {"form": {}}, "roots": {}}


@dataclass
class Discovered:
    """What the handshake established; the raw replies stay for checks to judge."""

    era: str | None = None  # the protocol version in use, or None when nothing answered
    wire: str = "none"  # legacy | extension | none
    discover_reply: Reply | None = None
    initialize_reply: Reply | None = None
    tools_replies: list[Reply] = field(default_factory=list)
    tools: list[dict[str, Any]] = field(default_factory=list)
    server_info: dict[str, Any] | None = None
    server_capabilities: dict[str, Any] | None = None
    legacy_placement: str | None = None  # "capabilities.tasks" | "capabilities.experimental.tasks"
    looked_for: list[str] = field(default_factory=list)  # what was looked for on each era
    connection_problem: str | None = None  # could not talk at all
    negotiation_notes: list[str] = field(default_factory=list)

    @property
    def task_capable_tools(self) -> list[dict[str, Any]]:
        return [t for t in self.tools if get_path(t, "execution", "taskSupport") in ("optional", "required")]


def make_transport(config: RunConfig, wire: WireLog) -> Transport:
    if config.transport == "stdio":
        from tasks_conformance.transports.stdio import StdioTransport

        return StdioTransport(
            wire, command=config.command, cwd=config.cwd, env=config.env,
            max_message_bytes=config.max_message_bytes,
        )
    if config.transport == "http":
        from tasks_conformance.transports.http import HttpTransport

        assert config.url is not None
        return HttpTransport(
            wire, url=config.url, headers=config.headers, max_message_bytes=config.max_message_bytes,
            connect_timeout_s=min(config.timeout_s, 10.0),
        )
    from tasks_conformance.transports.sockets import SocketTransport

    return SocketTransport(
        wire, tcp=config.tcp, unix=config.unix, max_message_bytes=config.max_message_bytes,
        connect_timeout_s=min(config.timeout_s, 10.0),
    )


def client_capabilities(config: RunConfig) -> dict[str, Any]:
    if config.client_capabilities is not None:
        return dict(config.client_capabilities)
    return dict(DEFAULT_CLIENT_CAPABILITIES)


def make_handlers(config: RunConfig) -> dict[str, ServerRequestHandler]:
    async def ping(method: str, params: Any) -> tuple[Any, dict[str, Any] | None]:
        return {}, None

    async def roots(method: str, params: Any) -> tuple[Any, dict[str, Any] | None]:
        cwd = Path(config.cwd or Path.cwd()).resolve()
        return {"roots": [{"uri": cwd.as_uri(), "name": cwd.name or "/"}]}, None

    async def elicit(method: str, params: Any) -> tuple[Any, dict[str, Any] | None]:
        if config.elicitation_response is not None:
            return config.elicitation_response, None
        # On the legacy wire the task's question arrives as an elicitation; answer it from
        # --input-responses (the first answer shaped like an ElicitResult).
        for answer in (config.input_responses or {}).values():
            if isinstance(answer, dict) and "action" in answer:
                return answer, None
        return {"action": "decline"}, None

    async def sampling(method: str, params: Any) -> tuple[Any, dict[str, Any] | None]:
        if config.sampling_response is not None:
            return config.sampling_response, None
        return None, {"code": -32601, "message": "sampling is not supported by tasks-conformance"}

    return {"ping": ping, "roots/list": roots, "elicitation/create": elicit, "sampling/createMessage": sampling}


class Connection:
    """Owns the transport, the peer and the session for one run; `aclose` always reaps."""

    def __init__(self, config: RunConfig, wire: WireLog) -> None:
        self.config = config
        self.wire = wire
        self.transport: Transport | None = None
        self.peer: Peer | None = None
        self.session: Session | None = None
        self.discovered = Discovered()
        self._stack = contextlib.AsyncExitStack()
        self._legacy: LegacySession | None = None

    async def _open_transport(self) -> None:
        transport = make_transport(self.config, self.wire)
        await transport.start()
        self.transport = transport
        self._stack.push_async_callback(transport.aclose)

        def response_headers() -> Mapping[str, str]:
            return self._legacy.response_headers() if self._legacy is not None else {}

        peer = Peer(
            transport, timeout_s=self.config.timeout_s, handlers=make_handlers(self.config),
            response_headers=response_headers,
        )
        await self._stack.enter_async_context(peer)
        self.peer = peer

    async def open(self) -> Discovered:
        d = self.discovered
        try:
            await self._open_transport()
        except ConnectFailed as exc:
            d.connection_problem = str(exc)
            return d
        # --expect-wire names an era too: on a server of both eras, test the one asked for.
        wanted = {"legacy": PROTOCOL_LEGACY, "extension": PROTOCOL_MODERN}.get(self.config.expect_wire)
        pinned = self.config.protocol_version or wanted
        if pinned != PROTOCOL_LEGACY:
            modern = await self._try_modern(pinned == PROTOCOL_MODERN)
            if pinned == PROTOCOL_MODERN or (modern and d.wire == "extension"):
                return d
            if modern:
                # A modern server without the extension may still serve legacy tasks to an
                # initialize: look there too before saying there is no wire.
                await self._legacy_after_modern()
                return d
        await self._legacy_handshake()
        if pinned is None and self._modern_after_all():
            # The era probe timed out on a slow starter, but the server turned out modern (a
            # late DiscoverResult, or initialize refused with -32022): ask again, waiting fully.
            d.negotiation_notes.append("server/discover answered late; negotiating 2026-07-28 again")
            d.looked_for.clear()
            d.tools.clear()
            d.tools_replies.clear()
            d.legacy_placement = None
            d.era = None
            self.session = None
            self._legacy = None
            if self.peer is not None and self.peer.closed is not None:
                await self._stack.aclose()
                self._stack = contextlib.AsyncExitStack()
                await self._open_transport()
            await self._try_modern(True)
        return d

    def _modern_after_all(self) -> bool:
        """After a timed-out era probe: should the modern era be asked again? Yes when no wire
        was found and initialize said -32022, or when a late DiscoverResult arrived that lists
        2026-07-28 and either nothing else was found or it offers the extension (preferred)."""
        d = self.discovered
        init = d.initialize_reply
        if d.wire == "none" and init is not None and init.error_code == ERR_UNSUPPORTED_VERSION:
            return True
        for method, frame in self.peer.late if self.peer is not None else ():
            result = get_path(frame.json(), "result")
            versions = get_path(result, "supportedVersions")
            if method != "server/discover" or not isinstance(versions, list) or PROTOCOL_MODERN not in versions:
                continue
            if d.wire == "none" or get_path(result, "capabilities", "extensions", EXT_TASKS) is not None:
                return True
        return False

    async def _legacy_after_modern(self) -> None:
        d = self.discovered
        saved = (d.era, d.server_info, d.server_capabilities, list(d.tools), list(d.tools_replies), self.session)
        d.tools.clear()
        d.tools_replies.clear()
        # Over a stream, a server may have fixed this connection's era at the first request
        # (seen in FastMCP and mcp 2.x): ask on a fresh process or connection.
        await self._legacy_handshake(fresh=self.config.transport != "http")
        if d.wire == "legacy":
            d.negotiation_notes.append("2026-07-28 has no tasks extension; the legacy wire answered initialize")
            return
        d.era, d.server_info, d.server_capabilities = saved[0], saved[1], saved[2]
        d.tools[:] = saved[3]
        d.tools_replies[:] = saved[4]
        self.session = saved[5]
        d.connection_problem = None

    def _failure_text(self, reply: Reply) -> str:
        text = reply.describe()
        ctx = self.transport.failure_context() if self.transport is not None else ""
        return f"{text}; {ctx}" if ctx and ctx not in text else text

    async def _try_modern(self, pinned: bool) -> bool:
        d = self.discovered
        assert self.transport is not None and self.peer is not None
        session = ModernSession(
            self.transport, self.peer, version=PROTOCOL_MODERN, capabilities=client_capabilities(self.config)
        )
        timeout = self.config.timeout_s if pinned else min(self.config.timeout_s, DISCOVER_PROBE_TIMEOUT_S)
        reply = await session.request("server/discover", {}, declare_tasks=True, timeout_s=timeout,
                                      purpose="era probe (server/discover)")
        d.discover_reply = reply
        result = reply.result if reply.ok else None
        versions = result.get("supportedVersions") if isinstance(result, dict) else None
        is_discover = isinstance(versions, list) and PROTOCOL_MODERN in versions
        modern_error = reply.error_code in MODERN_ERROR_CODES
        if reply.error_code == ERR_UNSUPPORTED_VERSION:
            supported = get_path(reply.error.data if reply.error else None, "supported")
            if isinstance(supported, list) and PROTOCOL_MODERN not in supported:
                modern_error = False  # a server that knows the modern error but not our version
                d.negotiation_notes.append(
                    f"server/discover answered -32022; the server supports {supported}"
                )
        if not (is_discover or modern_error):
            what = reply.describe()
            if pinned:
                d.looked_for.append(
                    f"2026-07-28: server/discover gave {what}, not a DiscoverResult listing 2026-07-28"
                )
                d.connection_problem = None if reply.answered else self._failure_text(reply)
                d.era = PROTOCOL_MODERN if reply.answered else None
                self.session = session
            else:
                d.negotiation_notes.append(f"server/discover gave {what}; falling back to initialize")
            return False
        d.era = PROTOCOL_MODERN
        self.session = session
        if isinstance(result, dict):
            caps = result.get("capabilities")
            d.server_capabilities = caps if isinstance(caps, dict) else None
            info = get_path(result, "_meta", META_SERVER_INFO) or result.get("serverInfo")
            d.server_info = info if isinstance(info, dict) else None
        ext = get_path(d.server_capabilities, "extensions", EXT_TASKS)
        if ext is not None:
            d.wire = "extension"
        else:
            d.looked_for.append(
                f'2026-07-28: server/discover capabilities.extensions["{EXT_TASKS}"] is absent'
            )
        await self._list_tools(session, modern=True)
        return True

    async def _legacy_handshake(self, *, fresh: bool = False) -> None:
        d = self.discovered
        assert self.transport is not None
        if fresh or (self.peer is not None and self.peer.closed is not None):
            # Either the process died on the era probe (some legacy servers exit on an unknown
            # first request) or its era is already fixed: start it again for the handshake.
            if not fresh and self.peer is not None:
                d.negotiation_notes.append(f"the server closed after the era probe ({self.peer.closed}); restarted")
            await self._stack.aclose()
            self._stack = contextlib.AsyncExitStack()
            try:
                await self._open_transport()
            except ConnectFailed as exc:
                d.connection_problem = str(exc)
                return
        assert self.transport is not None and self.peer is not None
        session = LegacySession(self.transport, self.peer, capabilities=client_capabilities(self.config))
        self._legacy = session
        reply = await session.initialize()
        d.initialize_reply = reply
        self.session = session
        if not reply.ok:
            if reply.answered:
                d.era = None
                d.looked_for.append(f"2025-11-25: initialize gave {reply.describe()}")
            else:
                d.connection_problem = self._failure_text(reply)
                if d.discover_reply is not None and not d.discover_reply.answered:
                    d.connection_problem = self._failure_text(reply)
            return
        result = reply.result
        d.era = str(result.get("protocolVersion") or PROTOCOL_LEGACY)
        caps = result.get("capabilities")
        d.server_capabilities = caps if isinstance(caps, dict) else None
        info = result.get("serverInfo")
        d.server_info = info if isinstance(info, dict) else None
        if d.era != PROTOCOL_LEGACY:
            d.looked_for.append(f"2025-11-25: initialize negotiated {d.era!r} instead of 2025-11-25")
        elif get_path(d.server_capabilities, "tasks", "requests", "tools", "call") is not None:
            d.wire = "legacy"
            d.legacy_placement = "capabilities.tasks"
        elif get_path(d.server_capabilities, "experimental", "tasks", "requests", "tools", "call") is not None:
            d.wire = "legacy"
            d.legacy_placement = "capabilities.experimental.tasks"
        else:
            d.looked_for.append(
                "2025-11-25: initialize capabilities.tasks.requests.tools.call is absent"
            )
        await self._list_tools(session, modern=False)

    async def _list_tools(self, session: Session, *, modern: bool) -> None:
        d = self.discovered
        cursor: Any = None
        for _ in range(20):  # bounded pagination
            params: dict[str, Any] = {"cursor": cursor} if cursor is not None else {}
            reply = await session.request("tools/list", params, declare_tasks=modern, purpose="discovery")
            d.tools_replies.append(reply)
            if not reply.ok:
                return
            tools = reply.result.get("tools")
            if isinstance(tools, list):
                d.tools.extend(t for t in tools[:10_000] if isinstance(t, dict))
            cursor = reply.result.get("nextCursor")
            if not isinstance(cursor, str) or not cursor:
                return

    async def aclose(self) -> None:
        if self.session is not None:
            with contextlib.suppress(Exception):
                await self.session.aclose()
        await self._stack.aclose()
