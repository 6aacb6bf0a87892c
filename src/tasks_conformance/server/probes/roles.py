"""Traffic on the probe roles' tools (roles.py): a task-required tool called without a task, a
never-task tool called with one, and the tasks of the tool-error, fault and input tools, each
polled to its end."""

from __future__ import annotations

import time

from tasks_conformance.core.wires import CreatedTask, WireDialect
from tasks_conformance.server.evidence import (
    DeclaredCall,
    FaultTask,
    InputTask,
    Poll,
    RequiredUndeclared,
    RoleTask,
    StopReason,
    SyncWithTask,
    ToolErrorTask,
)
from tasks_conformance.server.evidence.reasons import NO_TASK_CREATED
from tasks_conformance.server.probes import probe
from tasks_conformance.server.probes.engine.context import ProbeContext
from tasks_conformance.server.probes.poll import Poller


def _negotiated_per_tool(dialect: WireDialect) -> bool:
    """Only a wire whose tools say whether they run as tasks has a never-task tool to refuse a task
    (2025-11-25's params.task; the extension ignores that param, S-EXT-MUST-25)."""
    return dialect.task_capable_tools(()) is not None


@probe(RequiredUndeclared, order=30, role="required",
       description="call the task-required tool without a task (legacy: no params.task; extension: undeclared)")
async def required_undeclared(ctx: ProbeContext) -> None:
    rec = ctx.record(RequiredUndeclared)
    params = ctx.role_params("required")
    rec.tool = str(params["name"])
    reply = await ctx.session.request("tools/call", params, declare_tasks=False,
                                      purpose="tools/call of the required tool without a task")
    rec.call = reply
    rec.created = CreatedTask.read(reply.result if reply.ok else None)
    rec.ran = True


@probe(SyncWithTask, order=30, role="sync", applies=_negotiated_per_tool,
       description="call the never-task tool with params.task")
async def sync_with_task(ctx: ProbeContext) -> None:
    rec = ctx.record(SyncWithTask)
    params = ctx.role_params("sync")
    rec.tool = str(params["name"])
    reply = await ctx.session.request("tools/call", params, declare_tasks=True,
                                      purpose="tools/call of the never-task tool with params.task")
    rec.call = reply
    rec.created = CreatedTask.read(reply.result if reply.ok else None)
    rec.ran = True


async def run_role_task(ctx: ProbeContext, rec: RoleTask, role: str) -> None:
    """Call the role's tool as a task and follow the task to its end, as the task tool's own
    call and poll do (legacy: tasks/result once it ended)."""
    params = ctx.role_params(role)
    rec.tool = str(params["name"])
    reply = await ctx.session.request("tools/call", params, declare_tasks=True,
                                      purpose=f"declared tools/call of the {role} tool")
    rec.call = reply
    rec.created = CreatedTask.read(reply.result if reply.ok else None)
    rec.ran = True
    task_id = rec.created.task_id
    if task_id is None:
        rec.poll.not_run = NO_TASK_CREATED
        return
    poll = rec.poll
    poll.ran = True
    poller = Poller(ctx, poll, task_id, rec.created.fields)
    poll.stop = await poller.run()
    poll.elapsed_ms = int((time.monotonic() - poller.started) * 1000)
    # Where tasks/result exists, it carries the ended task's outcome.
    if ctx.dialect.defines("tasks/result") and poll.stop is StopReason.TERMINAL and not poller.asked_result:
        await poller.ask_result()
    poller.tie_input_requests(reply.response_seq)


def _reuse_task_tool(ctx: ProbeContext, rec: RoleTask, role: str) -> bool:
    """When the role's tool and arguments are the task tool's and that tool already ran as a task
    and was polled, its traffic is this role's too: the same tool is not run twice (`demo` and
    --input-responses with --tool-name name one tool for both). The probe runs after those two
    whenever they are planned, so whether it reuses them never depends on timing."""
    choice, task = ctx.roles.get(role), ctx.tool
    declared, poll = ctx.records.get(DeclaredCall.probe), ctx.records.get(Poll.probe)
    if choice is None or task is None or choice.name != task.name or dict(choice.arguments) != dict(task.arguments):
        return False
    if not (isinstance(declared, DeclaredCall) and declared.ran and isinstance(poll, Poll) and poll.ran):
        return False
    rec.tool, rec.call, rec.created, rec.poll, rec.ran = choice.name, declared.call, declared.created, poll, True
    return True


@probe(ToolErrorTask, order=20, role="tool-error",
       description="run the tool-error tool as a task and follow it to its end")
async def tool_error_task(ctx: ProbeContext) -> None:
    await run_role_task(ctx, ctx.record(ToolErrorTask), "tool-error")


@probe(FaultTask, order=20, role="fault", description="run the fault tool as a task and follow it to its end")
async def fault_task(ctx: ProbeContext) -> None:
    await run_role_task(ctx, ctx.record(FaultTask), "fault")


@probe(InputTask, order=20, role="input", after=(DeclaredCall, Poll),
       description="run the input tool as a task, answer its input, and follow it to its end")
async def input_task(ctx: ProbeContext) -> None:
    rec = ctx.record(InputTask)
    if not _reuse_task_tool(ctx, rec, "input"):
        await run_role_task(ctx, rec, "input")
