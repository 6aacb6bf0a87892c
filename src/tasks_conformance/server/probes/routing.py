"""Routing headers that disagree with the body (HTTP): Mcp-Name, then Mcp-Method."""

from __future__ import annotations

from tasks_conformance.core.causes import reason
from tasks_conformance.core.protocol import HEADER_METHOD, HEADER_NAME, encode_header_value
from tasks_conformance.core.wirelog import FrameTag, Purpose
from tasks_conformance.core.wires import WireDialect
from tasks_conformance.server.evidence import DeclaredCall, NameRouting
from tasks_conformance.server.evidence.reasons import HTTP_FIX
from tasks_conformance.server.probes import probe
from tasks_conformance.server.probes.engine.context import ProbeContext
from tasks_conformance.server.session.base import UnsupportedOverride


def _routes_by_headers(dialect: WireDialect) -> bool:
    # A self-contained request names its method and target in the Mcp-Method/Mcp-Name headers.
    return dialect.self_contained("tasks/get")


@probe(NameRouting, order=50, needs=(DeclaredCall,), applies=_routes_by_headers, needs_task=True,
       description="tasks/get whose Mcp-Name (then Mcp-Method) header disagrees with the body (HTTP)")
async def name_routing(ctx: ProbeContext) -> None:
    rec = ctx.record(NameRouting)
    if not ctx.session.transport.uses_headers:
        rec.not_run = reason(f"the {ctx.session.transport.kind} transport has no headers", HTTP_FIX)
        return
    tid = ctx.require_task_id()
    wrong = "not-" + tid
    rec.task_id, rec.sent_name = tid, wrong
    try:
        rec.name_mismatch = await ctx.session.request(
            "tasks/get", {"taskId": tid}, headers={HEADER_NAME: encode_header_value(wrong)},
            purpose="Mcp-Name mismatch", tag=FrameTag(Purpose.HEADER_MISMATCH),
        )
        # A method name no server serves, so a server that routes by the header cannot act on it.
        rec.method_mismatch = await ctx.session.request(
            "tasks/get", {"taskId": tid}, headers={HEADER_METHOD: "tasks/conformance-mismatch"},
            purpose="Mcp-Method mismatch", tag=FrameTag(Purpose.HEADER_MISMATCH),
        )
    except UnsupportedOverride as exc:
        rec.harness_problem = str(exc)
        return
    rec.ran = True
