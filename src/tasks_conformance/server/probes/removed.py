"""Methods a wire removed, asked anyway: they must be unknown to the server now."""

from __future__ import annotations

from tasks_conformance.core.wires import WireDialect
from tasks_conformance.server.evidence import RemovedMethods
from tasks_conformance.server.probes import probe
from tasks_conformance.server.probes.engine.context import ProbeContext
from tasks_conformance.server.probes.unknown_ids import unknown_task_id


def _removed_any(dialect: WireDialect) -> bool:
    return bool(dialect.removed_methods)


@probe(RemovedMethods, brief=True, order=45, applies=_removed_any,
       description="methods the wire removed (tasks/result, tasks/list on the extension), asked anyway")
async def removed_methods(ctx: ProbeContext) -> None:
    rec = ctx.record(RemovedMethods)
    for method in ctx.dialect.removed_methods:
        # An id the server never issued: a server that still serves the method answers -32602
        # or a result, never -32601, whatever state the probe task is in.
        params = {"taskId": unknown_task_id()} if method == "tasks/result" else {}
        rec.answers[method] = await ctx.session.request(method, params, purpose="removed method")
    rec.ran = True
