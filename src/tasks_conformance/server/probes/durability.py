"""The new task read at once: tasks/get straight after the CreateTaskResult (before polling
starts), and over HTTP once more from a brand-new connection, which on the stateless
2026-07-28 wire must find the task by its id alone."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tasks_conformance.core.rpc.peer import Peer, Reply
from tasks_conformance.core.wires import WireDialect
from tasks_conformance.server.evidence import DeclaredCall, Durability
from tasks_conformance.server.probes import probe
from tasks_conformance.server.probes.engine.context import ProbeContext
from tasks_conformance.server.session.extension import ExtensionSession
from tasks_conformance.server.session.handlers import make_handlers

if TYPE_CHECKING:
    from tasks_conformance.core.transports.http import HttpTransport


# Request ids of the second connection, apart from the main one's (see Peer).
FIRST_ID = 1_000_001


def _stateless(dialect: WireDialect) -> bool:
    # A self-contained tasks/get needs no session: any connection must find the task by its id.
    return dialect.self_contained("tasks/get")


async def _read_on_fresh_connection(ctx: ProbeContext, session: ExtensionSession, transport: HttpTransport,
                                    task_id: str) -> Reply:
    fresh = transport.fresh()
    await fresh.start()
    try:
        async with Peer(fresh, timeout_s=ctx.config.timeout_s, handlers=make_handlers(ctx.config),
                        first_id=FIRST_ID) as peer:
            other = ExtensionSession(fresh, peer, version=session.version, capabilities=session.capabilities)
            reply = await other.request("tasks/get", {"taskId": task_id}, purpose="durability: fresh connection")
            # Declaration hygiene reads what every request meant to declare, this one included.
            session.intents.extend(other.intents)
            return reply
    finally:
        await fresh.aclose()


@probe(Durability, order=11, needs=(DeclaredCall,), applies=_stateless, needs_task=True,
       description="tasks/get right after the CreateTaskResult, and (HTTP) again from a brand-new connection")
async def durability(ctx: ProbeContext) -> None:
    rec = ctx.record(Durability)
    tid = rec.task_id = ctx.require_task_id()
    rec.immediate = await ctx.session.request("tasks/get", {"taskId": tid}, purpose="durability: immediate read")
    session, transport = ctx.session, ctx.session.transport
    if transport.kind != "http":
        rec.fresh_not_applicable = (f"over {transport.kind} the connection is the session, so there is no second "
                                    "connection to read from")
    else:
        # Imported here: httpx is loaded only by HTTP runs.
        from tasks_conformance.core.transports.http import HttpTransport

        if not isinstance(transport, HttpTransport) or not isinstance(session, ExtensionSession):
            rec.harness_problem = "the HTTP session cannot open a second connection"
        else:
            rec.fresh = await ctx.read_tolerating_rate_limit(
                lambda: _read_on_fresh_connection(ctx, session, transport, tid))
    rec.ran = True
