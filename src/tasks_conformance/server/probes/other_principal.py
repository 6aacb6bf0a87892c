"""The probe task, asked for by someone else: with --other-access-token / --other-header, the
same task's tasks/get, tasks/update (extension) and tasks/cancel are sent with the second
principal's credentials instead of the main ones, on an HTTP connection of its own. Before them,
one request without any credentials tells whether the server authenticates at all. Sent last:
a server that wrongly obeys could cancel the task under the other probes."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING

from tasks_conformance.core.causes import Reason, by_flag, reason
from tasks_conformance.core.rpc.peer import Peer, Reply
from tasks_conformance.server.evidence import DeclaredCall, OtherPrincipal, Poll
from tasks_conformance.server.evidence.reasons import HTTP_FIX
from tasks_conformance.server.probes import probe
from tasks_conformance.server.probes.engine.context import ProbeContext
from tasks_conformance.server.session.base import Session
from tasks_conformance.server.session.extension import ExtensionSession
from tasks_conformance.server.session.factory import client_capabilities
from tasks_conformance.server.session.handlers import make_handlers
from tasks_conformance.server.session.legacy import LegacySession

if TYPE_CHECKING:
    from tasks_conformance.core.transports.http import HttpTransport

# Request ids of the second principal's connection, apart from the main one's (see Peer).
FIRST_ID = 3_000_001
ANONYMOUS_FIRST_ID = 3_500_001


@probe(OtherPrincipal, order=95, needs=(DeclaredCall, Poll), needs_task=True, last=True,
       description="with --other-access-token/--other-header: the probe task's tasks/get, tasks/update and "
                   "tasks/cancel with the second principal's credentials (HTTP)")
async def other_principal(ctx: ProbeContext) -> None:
    rec = ctx.record(OtherPrincipal)
    if not ctx.config.other_headers:
        rec.not_run = Reason(by_flag("no second principal was given (--other-access-token or --other-header)", "",
                                     "--other-access-token", "--other-header"))
        return
    main = ctx.session.transport
    if main.kind != "http":
        rec.not_run = reason("credentials are HTTP headers; this run is not over HTTP", HTTP_FIX)
        return
    from tasks_conformance.core.transports.http import HttpTransport  # httpx: HTTP runs only

    assert isinstance(main, HttpTransport)
    tid = rec.task_id = ctx.require_task_id()
    rec.anonymous = await _anonymous(ctx, main)
    async with _session_as(ctx, main.with_headers(ctx.config.other_headers), FIRST_ID) as (session, initialize):
        rec.initialize = initialize
        if initialize is None or initialize.ok:
            rec.replies["tasks/get"] = await session.request("tasks/get", {"taskId": tid},
                                                             purpose="second principal")
            if ctx.dialect.defines("tasks/update"):
                rec.replies["tasks/update"] = await session.request(
                    "tasks/update", {"taskId": tid, "inputResponses": {}}, purpose="second principal")
            rec.replies["tasks/cancel"] = await session.request("tasks/cancel", {"taskId": tid},
                                                                purpose="second principal")
    rec.ran = True


async def _anonymous(ctx: ProbeContext, main: HttpTransport) -> Reply:
    """One request with no credentials at all, on a connection of its own: tools/list on
    2026-07-28, initialize on 2025-11-25 (a session needs it before anything else)."""
    async with _session_as(ctx, main.with_headers({}), ANONYMOUS_FIRST_ID) as (session, initialize):
        if initialize is not None:
            return initialize
        return await session.request("tools/list", {}, purpose="no credentials")


@contextlib.asynccontextmanager
async def _session_as(ctx: ProbeContext, transport: HttpTransport,
                      first_id: int) -> AsyncIterator[tuple[Session, Reply | None]]:
    """A session of the run's era over `transport` (other credentials, or none), with its own
    request ids; on 2025-11-25 it is initialized first, and that reply comes with it."""
    await transport.start()
    try:
        async with Peer(transport, timeout_s=ctx.config.timeout_s, handlers=make_handlers(ctx.config),
                        first_id=first_id) as peer:
            session: Session
            initialize: Reply | None = None
            if isinstance(ctx.session, ExtensionSession):
                session = ExtensionSession(transport, peer, version=ctx.session.version,
                                        capabilities=ctx.session.capabilities)
            else:
                legacy = LegacySession(transport, peer, capabilities=client_capabilities(ctx.config))
                initialize = await legacy.initialize()
                session = legacy
            try:
                yield session, initialize
            finally:
                await session.aclose()
    finally:
        await transport.aclose()
