"""tools/call of the probe tool, with and without the tasks declaration."""

from __future__ import annotations

from tasks_conformance.core.wirelog import FrameTag, Purpose
from tasks_conformance.core.wires import CreatedTask
from tasks_conformance.server.evidence import DeclaredCall, InputTask, Poll, UndeclaredCall
from tasks_conformance.server.probes import probe
from tasks_conformance.server.probes.engine.context import ProbeContext


@probe(DeclaredCall, order=10, needs_tool=True,
       description="call the probe tool declaring tasks support (extension _meta / legacy params.task)")
async def declared_call(ctx: ProbeContext) -> None:
    rec = ctx.record(DeclaredCall)
    params = ctx.tool_params()
    reply = await ctx.session.request("tools/call", params, declare_tasks=True, purpose="declared tools/call",
                                      tag=FrameTag(Purpose.TASK_CREATE))
    rec.call = reply
    rec.created = CreatedTask.read(reply.result if reply.ok else None)
    rec.ran = True


# After the task's own life (its polls, and the input role's task): the same tool run synchronously
# may ask its own elicitation, and one asked while it is outstanding cannot be told from the task's
# (policy P-42), so overlapping them would make the input check's verdict depend on this probe.
@probe(UndeclaredCall, order=30, needs_tool=True, after=(Poll, InputTask),
       description="the same tools/call without declaring tasks support")
async def undeclared_call(ctx: ProbeContext) -> None:
    rec = ctx.record(UndeclaredCall)
    reply = await ctx.session.request(
        "tools/call", ctx.tool_params(), declare_tasks=False, purpose="undeclared tools/call"
    )
    rec.call = reply
    rec.created = CreatedTask.read(reply.result if reply.ok else None)
    rec.ran = True
