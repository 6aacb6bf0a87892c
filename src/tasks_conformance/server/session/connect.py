"""Open a connection and choose the era, then resolve the tasks wire.

Automatic mode probes `server/discover` with the 2026-07-28 envelope. A DiscoverResult or a
recognised 2026-07-28 error (-32020/-32021/-32022) means a server of the 2026-07-28 base protocol,
with or without the tasks extension; anything else (timeout, -32601, -32602, an HTTP error
without a 2026-07-28 body, a dead process) falls back to `initialize` offering 2025-11-25. The
decision never hinges on one error code.

What negotiation learns is a frozen Discovery, replaced step by step; going back on a step
means keeping the earlier value, never undoing fields by hand.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from tasks_conformance.core.causes import CauseKind
from tasks_conformance.core.errors import ConnectFailed
from tasks_conformance.core.protocol import (
    ERR_HEADER_MISMATCH,
    ERR_MISSING_CAPABILITY,
    ERR_UNSUPPORTED_VERSION,
    EXT_TASKS,
    META_SERVER_INFO,
    get_path,
)
from tasks_conformance.core.rpc.peer import Peer, Reply
from tasks_conformance.core.transports.base import Transport
from tasks_conformance.core.wirelog import FrameTag, Purpose, WireLog
from tasks_conformance.core.wires import DIALECTS, PROTOCOL_EXTENSION, PROTOCOL_LEGACY, Wire
from tasks_conformance.server.evidence.discovery import Discovery
from tasks_conformance.server.session.base import Session
from tasks_conformance.server.session.extension import ExtensionSession
from tasks_conformance.server.session.factory import TransportFactory, client_capabilities, make_transport
from tasks_conformance.server.session.handlers import make_handlers
from tasks_conformance.server.session.legacy import LegacySession
from tasks_conformance.settings.config import RunConfig

BASE_2026_ERROR_CODES = frozenset({ERR_HEADER_MISMATCH, ERR_MISSING_CAPABILITY, ERR_UNSUPPORTED_VERSION})
# How long the era probe may wait before a silent server is taken for a legacy one.
DISCOVER_PROBE_TIMEOUT_S = 5.0
MAX_TOOL_PAGES = 20
MAX_TOOLS = 10_000
EXPECTED_VERSION = {str(wire): d.protocol_version for wire, d in DIALECTS.items()}


class Connection:
    """Owns the transport, the peer and the session for one run; `aclose` always reaps."""

    def __init__(self, config: RunConfig, wire: WireLog, *, transport_factory: TransportFactory | None = None,
                 first_id: int = 1) -> None:
        self.config = config
        self.first_id = first_id  # a probe's own connection numbers its requests apart from the main one's
        self.wire = wire
        self.transport: Transport | None = None
        self.peer: Peer | None = None
        self.session: Session | None = None
        self.discovery = Discovery()
        self._make_transport = transport_factory or make_transport
        self._stack = contextlib.AsyncExitStack()
        self._legacy: LegacySession | None = None

    # -- what negotiation learns ------------------------------------------------------------

    def _learn(self, **changes: Any) -> None:
        if changes.get("connection_problem") is not None and "connection_problem_kind" not in changes:
            known = self.transport.problem_kind() if self.transport is not None else None
            changes["connection_problem_kind"] = known or CauseKind.UNREACHABLE
        self.discovery = replace(self.discovery, **changes)

    def _note(self, text: str) -> None:
        self._learn(negotiation_notes=(*self.discovery.negotiation_notes, text))

    def _looked_for(self, text: str) -> None:
        self._learn(looked_for=(*self.discovery.looked_for, text))

    def record_problem(self, text: str, kind: CauseKind | None = None) -> None:
        """A connection problem found outside negotiation (our own bug while connecting, or the
        --server-command server that never listened: `kind` says what to change)."""
        self._learn(connection_problem=text, **({"connection_problem_kind": kind} if kind is not None else {}))

    def finish(self) -> Discovery:
        """The final Discovery: a silent server with no wire and no other word gets a cause."""
        d = self.discovery
        if d.connection_problem is None and d.wire is Wire.NONE and self.transport is not None and not d.looked_for:
            self._learn(connection_problem=self.transport.failure_context() or "the server did not answer")
        return self.discovery

    # -- opening ------------------------------------------------------------------------------

    async def _open_transport(self) -> None:
        transport = self._make_transport(self.config, self.wire)
        await transport.start()
        self.transport = transport
        self._stack.push_async_callback(transport.aclose)

        def response_headers() -> Mapping[str, str]:
            return self._legacy.response_headers() if self._legacy is not None else {}

        peer = Peer(
            transport, timeout_s=self.config.timeout_s, handlers=make_handlers(self.config),
            response_headers=response_headers, first_id=self.first_id,
        )
        await self._stack.enter_async_context(peer)
        self.peer = peer

    async def _reopen(self) -> None:
        await self._stack.aclose()
        self._stack = contextlib.AsyncExitStack()
        await self._open_transport()

    async def open(self) -> Discovery:
        try:
            await self._open_transport()
        except ConnectFailed as exc:
            self._learn(connection_problem=str(exc), connection_problem_kind=exc.kind or CauseKind.UNREACHABLE)
            return self.discovery
        # --expect-wire names an era too: on a server of both eras, test the one asked for.
        pinned = self.config.protocol_version or EXPECTED_VERSION.get(self.config.expect_wire)
        if pinned != PROTOCOL_LEGACY:
            base_2026 = await self._try_base_2026(pinned == PROTOCOL_EXTENSION)
            if pinned == PROTOCOL_EXTENSION or (base_2026 and self.discovery.wire is Wire.EXTENSION):
                if self.config.protocol_version is None and self.discovery.wire is Wire.NONE:
                    await self._look_at_other_era(PROTOCOL_EXTENSION)
                return self.discovery
            if base_2026:
                # A 2026-07-28 server without the extension may still serve legacy tasks to an
                # initialize: look there too before saying there is no wire.
                await self._legacy_after_base_2026()
                return self.discovery
        await self._legacy_handshake()
        if pinned is None and self._base_2026_after_all():
            await self._renegotiate_base_2026()
        elif self.config.protocol_version is None and pinned == PROTOCOL_LEGACY and self.discovery.wire is Wire.NONE:
            await self._look_at_other_era(PROTOCOL_LEGACY)
        return self.discovery

    async def _look_at_other_era(self, asked: str) -> None:
        """--expect-wire found no wire in its era: find out whether the server speaks the other
        one, to say so, without switching the run to it."""
        if asked == PROTOCOL_LEGACY and self.discovery.connection_problem is not None:
            return
        before, session, legacy = self.discovery, self.session, self._legacy
        try:
            if asked == PROTOCOL_LEGACY:
                if self.peer is not None and self.peer.closed is not None:
                    await self._reopen()
                await self._try_base_2026(True)
            else:
                await self._legacy_handshake(fresh=self.config.transport != "http")
        except ConnectFailed:
            pass
        found, version = self.discovery.wire, self.discovery.protocol_version
        self.discovery = replace(before, other_wire=found,
                                 other_protocol_version=version if found is not Wire.NONE else None)
        self.session, self._legacy = session, legacy

    async def _renegotiate_base_2026(self) -> None:
        """The era probe timed out on a slow starter, but the server turned out to speak 2026-07-28 (a late
        DiscoverResult, or initialize refused with -32022): ask again, waiting fully."""
        self._note("server/discover answered late; negotiating 2026-07-28 again")
        self._learn(looked_for=(), tools=(), tools_replies=(), legacy_placement=None, protocol_version=None)
        self.session = None
        self._legacy = None
        if self.peer is not None and self.peer.closed is not None:
            await self._reopen()
        await self._try_base_2026(True)

    def _base_2026_after_all(self) -> bool:
        """After a timed-out era probe: should 2026-07-28 be asked again? Yes when no wire
        was found and initialize said -32022, or when a late DiscoverResult arrived that lists
        2026-07-28 and either nothing else was found or it offers the extension (preferred)."""
        d = self.discovery
        init = d.initialize_reply
        if d.wire is Wire.NONE and init is not None and init.error_code == ERR_UNSUPPORTED_VERSION:
            return True
        for method, frame in self.peer.late if self.peer is not None else ():
            result = get_path(frame.json(), "result")
            versions = get_path(result, "supportedVersions")
            if method != "server/discover" or not isinstance(versions, list) or PROTOCOL_EXTENSION not in versions:
                continue
            if d.wire is Wire.NONE or get_path(result, "capabilities", "extensions", EXT_TASKS) is not None:
                return True
        return False

    async def _legacy_after_base_2026(self) -> None:
        before, session = self.discovery, self.session
        self._learn(tools=(), tools_replies=())
        # Over a stream, a server may have fixed this connection's era at the first request
        # (seen in FastMCP and mcp 2.x): ask on a fresh process or connection.
        await self._legacy_handshake(fresh=self.config.transport != "http")
        if self.discovery.wire is Wire.LEGACY:
            self._note("2026-07-28 has no tasks extension; the legacy wire answered initialize")
            return
        # Keep what 2026-07-28 established; what the legacy attempt looked for stays too.
        self._learn(protocol_version=before.protocol_version,
                    server_info=before.server_info, server_capabilities=before.server_capabilities,
                    tools=before.tools, tools_replies=before.tools_replies, connection_problem=None)
        self.session = session

    def _failure_text(self, reply: Reply) -> str:
        text = reply.describe()
        ctx = self.transport.failure_context() if self.transport is not None else ""
        return f"{text}; {ctx}" if ctx and ctx not in text else text

    def _handshake_failed(self, reply: Reply) -> None:
        """The handshake got no answer. Timed out on a live server, that is a setting to change
        (--startup-timeout: a cold start can outlast any request); else nothing answered."""
        known = self.transport.problem_kind() if self.transport is not None else None
        kind = known or (CauseKind.SETTING if reply.timed_out and not reply.lost else CauseKind.UNREACHABLE)
        self._learn(connection_problem=self._failure_text(reply), connection_problem_kind=kind)

    # -- the 2026-07-28 era -------------------------------------------------------------------

    async def _try_base_2026(self, pinned: bool) -> bool:
        """server/discover: True when the server speaks the 2026-07-28 base protocol, whether or
        not it offers the tasks extension (the session declares it either way)."""
        assert self.transport is not None and self.peer is not None
        session = ExtensionSession(
            self.transport, self.peer, version=PROTOCOL_EXTENSION, capabilities=client_capabilities(self.config)
        )
        # Pinned, server/discover is the handshake and waits for a slow starter; unpinned it is a
        # probe, and a silent server is soon taken for a legacy one (whose initialize then waits).
        timeout = self.config.startup_timeout_s if pinned else min(self.config.timeout_s, DISCOVER_PROBE_TIMEOUT_S)
        reply = await session.request("server/discover", {}, declare_tasks=True, timeout_s=timeout,
                                      purpose="era probe (server/discover)", tag=FrameTag(Purpose.ERA_PROBE))
        self._learn(discover_reply=reply)
        result = reply.result if reply.ok else None
        if not self._is_base_2026_answer(reply, result):
            what = reply.describe()
            if pinned:
                self._looked_for(f"2026-07-28: server/discover gave {what}, not a DiscoverResult listing 2026-07-28")
                if reply.answered:
                    self._learn(connection_problem=None, protocol_version=PROTOCOL_EXTENSION)
                else:
                    self._handshake_failed(reply)
                    self._learn(protocol_version=None)
                self.session = session
            else:
                self._note(f"server/discover gave {what}; falling back to initialize")
            return False
        self._learn(protocol_version=PROTOCOL_EXTENSION)
        self.session = session
        if isinstance(result, dict):
            caps = result.get("capabilities")
            info = get_path(result, "_meta", META_SERVER_INFO) or result.get("serverInfo")
            self._learn(server_capabilities=caps if isinstance(caps, dict) else None,
                        server_info=info if isinstance(info, dict) else None)
        if get_path(self.discovery.server_capabilities, "extensions", EXT_TASKS) is not None:
            self._learn(wire=Wire.EXTENSION)
        else:
            self._looked_for(f'2026-07-28: server/discover capabilities.extensions["{EXT_TASKS}"] is absent')
        await self._list_tools(session, declare_tasks=True)
        return True

    def _is_base_2026_answer(self, reply: Reply, result: Any) -> bool:
        versions = result.get("supportedVersions") if isinstance(result, dict) else None
        if isinstance(versions, list) and PROTOCOL_EXTENSION in versions:
            return True
        if reply.error_code == ERR_UNSUPPORTED_VERSION:
            supported = get_path(reply.error.data if reply.error else None, "supported")
            if isinstance(supported, list) and PROTOCOL_EXTENSION not in supported:
                # A server that knows the 2026-07-28 error but not our version.
                self._note(f"server/discover answered -32022; the server supports {supported}")
                return False
        return reply.error_code in BASE_2026_ERROR_CODES

    # -- the 2025-11-25 era -------------------------------------------------------------------

    async def _legacy_handshake(self, *, fresh: bool = False) -> None:
        assert self.transport is not None
        if fresh or (self.peer is not None and self.peer.closed is not None):
            # Either the process died on the era probe (some legacy servers exit on an unknown
            # first request) or its era is already fixed: start it again for the handshake.
            if not fresh and self.peer is not None:
                self._note(f"the server closed after the era probe ({self.peer.closed}); restarted")
            try:
                await self._reopen()
            except ConnectFailed as exc:
                self._learn(connection_problem=str(exc), connection_problem_kind=exc.kind or CauseKind.UNREACHABLE)
                return
        assert self.transport is not None and self.peer is not None
        session = LegacySession(self.transport, self.peer, capabilities=client_capabilities(self.config))
        self._legacy = session
        reply = await session.initialize(timeout_s=self.config.startup_timeout_s)
        self._learn(initialize_reply=reply)
        self.session = session
        if not reply.ok:
            if reply.answered:
                self._learn(protocol_version=None)
                self._looked_for(f"2025-11-25: initialize gave {reply.describe()}")
            else:
                self._handshake_failed(reply)
            return
        self._read_initialize(reply.result)
        await self._list_tools(session, declare_tasks=False)

    def _read_initialize(self, result: dict[str, Any]) -> None:
        version = str(result.get("protocolVersion") or PROTOCOL_LEGACY)
        caps = result.get("capabilities")
        caps = caps if isinstance(caps, dict) else None
        info = result.get("serverInfo")
        self._learn(protocol_version=version, server_capabilities=caps,
                    server_info=info if isinstance(info, dict) else None)
        if version != PROTOCOL_LEGACY:
            self._looked_for(f"2025-11-25: initialize negotiated {version!r} instead of 2025-11-25")
        elif get_path(caps, "tasks", "requests", "tools", "call") is not None:
            self._learn(wire=Wire.LEGACY, legacy_placement="capabilities.tasks")
        elif get_path(caps, "experimental", "tasks", "requests", "tools", "call") is not None:
            self._learn(wire=Wire.LEGACY, legacy_placement="capabilities.experimental.tasks")
        else:
            self._looked_for("2025-11-25: initialize capabilities.tasks.requests.tools.call is absent")

    async def _list_tools(self, session: Session, *, declare_tasks: bool) -> None:
        cursor: Any = None
        for _ in range(MAX_TOOL_PAGES):  # bounded pagination
            params: dict[str, Any] = {"cursor": cursor} if cursor is not None else {}
            reply = await session.request("tools/list", params, declare_tasks=declare_tasks, purpose="discovery",
                                          tag=FrameTag(Purpose.DISCOVERY))
            self._learn(tools_replies=(*self.discovery.tools_replies, reply))
            if not reply.ok:
                return
            tools = reply.result.get("tools")
            if isinstance(tools, list):
                page = tuple(t for t in tools[:MAX_TOOLS] if isinstance(t, dict) and isinstance(t.get("name"), str))
                unreadable = min(len(tools), MAX_TOOLS) - len(page)
                self._learn(tools=(*self.discovery.tools, *page),
                            tools_unreadable=self.discovery.tools_unreadable + unreadable)
            else:
                self._learn(tools_unreadable=self.discovery.tools_unreadable + 1)
            cursor = reply.result.get("nextCursor")
            if not isinstance(cursor, str) or not cursor:
                return

    async def aclose(self) -> None:
        if self.session is not None:
            with contextlib.suppress(Exception):
                await self.session.aclose()
        await self._stack.aclose()
