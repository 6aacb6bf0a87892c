"""The other era, declared wrongly: on a second connection, a 2025-11-25 initialize that lists
the tasks extension (which exists only on 2026-07-28), then the probe tool called the 2025-11-25
way. A server of both eras must not switch extension behaviour on for that session."""

from __future__ import annotations

import contextlib

from tasks_conformance.core.causes import Reason, by_flag, reason
from tasks_conformance.core.errors import ConnectFailed
from tasks_conformance.core.protocol import EXT_TASKS
from tasks_conformance.core.rpc.peer import Peer
from tasks_conformance.core.wires import WireDialect
from tasks_conformance.server.evidence import LegacyDeclaresExtension
from tasks_conformance.server.probes import probe
from tasks_conformance.server.probes.engine.context import ProbeContext
from tasks_conformance.server.session.factory import client_capabilities
from tasks_conformance.server.session.handlers import make_handlers
from tasks_conformance.server.session.legacy import LegacySession

# Request ids of the second connection, apart from the main one's (see Peer).
FIRST_ID = 2_000_001


def _extension(dialect: WireDialect) -> bool:
    # Where every request declares the extension itself, a session that lists it at initialize
    # must not switch it on.
    return dialect.self_contained("tools/call")


@probe(LegacyDeclaresExtension, order=14, applies=_extension, needs_tool=True,
       description="second connection: 2025-11-25 initialize listing the tasks extension, then the tool without "
                   "params.task")
async def legacy_declares_extension(ctx: ProbeContext) -> None:
    rec = ctx.record(LegacyDeclaresExtension)
    fresh = ctx.session.transport.fresh()
    if fresh is None:
        rec.no_second_connection = True
        rec.not_run = reason(f"the {ctx.session.transport.kind} transport cannot open a second connection",
                             "run against an endpoint that takes several connections (--url, --tcp or --unix)")
        return
    caps = client_capabilities(ctx.config)
    caps["extensions"] = {**dict(caps.get("extensions") or {}), EXT_TASKS: {}}
    try:
        try:
            await fresh.start()
        except ConnectFailed as exc:
            rec.not_run = Reason(by_flag(f"could not open a second connection: {exc}",
                                         "let the server accept a second connection, or raise --timeout"))
            return
        sessions: list[LegacySession] = []

        def response_headers() -> dict[str, str]:
            # Answers to the server's own requests (a tool asking for input) name the session too.
            return sessions[0].response_headers() if sessions else {}

        async with Peer(fresh, timeout_s=ctx.config.timeout_s, handlers=make_handlers(ctx.config),
                        response_headers=response_headers, first_id=FIRST_ID) as peer:
            session = LegacySession(fresh, peer, capabilities=caps)
            sessions.append(session)
            # A second server process starts cold, as the first did: its handshake gets the same wait.
            rec.fresh_process = fresh.starts_process
            rec.initialize = await session.initialize(
                timeout_s=ctx.config.startup_timeout_s if fresh.starts_process else None)
            if rec.initialize.ok:
                rec.call = await session.request("tools/call", ctx.tool_params(), declare_tasks=False,
                                                 purpose="2025-11-25 session that listed the extension")
            with contextlib.suppress(Exception):
                await session.aclose()  # over HTTP: DELETE the session it opened
    finally:
        await fresh.aclose()
    rec.ran = True
