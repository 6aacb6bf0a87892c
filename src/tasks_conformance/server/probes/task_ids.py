"""More tasks, for their ids: the same declared tools/call as the probe task, twice more, while
the probe task runs; each extra task is cancelled once created, since only its id matters."""

from __future__ import annotations

from tasks_conformance.core.wires import CreatedTask, WireDialect
from tasks_conformance.server.evidence import DeclaredCall, TaskIds
from tasks_conformance.server.probes import probe
from tasks_conformance.server.probes.engine.context import ProbeContext

# Three ids in all (with the probe task's): enough to see a counter, few enough to stay cheap.
EXTRA_TASKS = 2


def _any_wire(dialect: WireDialect) -> bool:
    # Both eras have an id rule (S-EXT-MUST-22; S-LEG-MUST-22 where tasks are not bound to an
    # authorization context), so the ids are sampled on either.
    return True


@probe(TaskIds, brief=True, order=12, needs=(DeclaredCall,), applies=_any_wire, needs_tool=True, needs_task=True,
       description="two more tasks from the same declared tools/call, for the ids the server mints (then cancelled)")
async def task_ids(ctx: ProbeContext) -> None:
    rec = ctx.record(TaskIds)
    rec.ids.append(ctx.require_task_id())
    cfg = ctx.config
    rec.credentials = bool(cfg.access_token or cfg.oauth is not None or cfg.headers)
    params = ctx.tool_params()
    # One after the other, so that the ids are in creation order.
    for n in range(EXTRA_TASKS):
        reply = await ctx.session.request("tools/call", params, purpose=f"task id sample #{n + 1}")
        rec.calls.append(reply)
        created = CreatedTask.read(reply.result if reply.ok else None)
        if created.task_id is not None:
            rec.ids.append(created.task_id)
    # tasks/cancel is optional on 2025-11-25: without it the samples simply run out.
    for tid in rec.ids[1:] if ctx.dialect.can_cancel(ctx.discovery.server_capabilities) else ():
        rec.cancels.append(await ctx.session.request("tasks/cancel", {"taskId": tid},
                                                     purpose="cancel a task id sample"))
    rec.ran = True
