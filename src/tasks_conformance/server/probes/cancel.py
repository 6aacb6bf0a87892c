"""tasks/cancel: on the probe task (extension), or on a fresh task (legacy, where the probe task
has ended by now and is then asked once more, since cancelling a finished task is an error)."""

from __future__ import annotations

from tasks_conformance.core.causes import reason
from tasks_conformance.core.wires import CreatedTask
from tasks_conformance.server.evidence import Cancel, DeclaredCall, Poll, StopReason, TerminalRereads
from tasks_conformance.server.evidence.reasons import NO_TASK_CREATED
from tasks_conformance.server.probes import probe
from tasks_conformance.server.probes.engine.context import ProbeContext


# After the re-reads of the ended task, so a server that wrongly lets cancel change a terminal
# status fails the cancel check alone, not the immutability check as well.
@probe(Cancel, order=60, needs=(DeclaredCall, Poll), after=(TerminalRereads,), needs_tool=True,
       description="tasks/cancel on a task (extension: the probe task; legacy: a fresh task)")
async def cancel(ctx: ProbeContext) -> None:
    rec = ctx.record(Cancel)
    if not ctx.dialect.can_cancel(ctx.discovery.server_capabilities):
        rec.not_run = reason("the server does not declare capabilities.tasks.cancel",
                             "declare capabilities.tasks.cancel in the server to have tasks/cancel judged")
        rec.no_cancel_capability = True
        return
    tid = await _task_to_cancel(ctx, rec)
    if tid is None:
        return
    poll = ctx.record(Poll)
    rec.task_id = tid
    rec.status_before = poll.final_status
    rec.cancel = await ctx.session.request("tasks/cancel", {"taskId": tid}, purpose="cancel")
    rec.after = await ctx.session.request("tasks/get", {"taskId": tid}, purpose="after cancel")
    probe_task = ctx.created_task_id
    if ctx.dialect.terminal_cancel_error is not None and probe_task and poll.stop is StopReason.TERMINAL:
        rec.cancel_terminal = await ctx.session.request(
            "tasks/cancel", {"taskId": probe_task}, purpose="cancel a terminal task"
        )
    rec.ran = True


async def _task_to_cancel(ctx: ProbeContext, rec: Cancel) -> str | None:
    if ctx.dialect.terminal_cancel_error is None:
        # Cancelling a task that has ended is acked here: the probe task serves, whatever its status.
        tid = ctx.created_task_id
        if tid is None:
            rec.not_run = NO_TASK_CREATED
        return tid
    # The probe task has ended by now, and cancelling an ended task is an error here: a fresh one.
    params = ctx.tool_params()
    rec.create = await ctx.session.request("tools/call", params, purpose="second task, to cancel")
    created = CreatedTask.read(rec.create.result if rec.create.ok else None)
    if created.task_id is None:
        rec.not_run = reason("the second declared tools/call created no task",
                             "name a tool that runs as a task every time with --tool-name")
    return created.task_id
