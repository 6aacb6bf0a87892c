"""Input requests, looked at more closely: a second task whose requests declare no client
capability (so its inputRequests may ask for nothing), and stale answers sent to the probe task
after polling (a key already answered, a key never asked), which must be ignored and acked."""

from __future__ import annotations

from typing import Any

import anyio

from tasks_conformance.core.causes import reason
from tasks_conformance.core.protocol import EXT_TASKS, META_CLIENT_CAPS, TERMINAL_STATUSES, get_path
from tasks_conformance.core.wires import CreatedTask, WireDialect
from tasks_conformance.server.evidence import DeclaredCall, Poll, StaleInput, UndeclaredInput
from tasks_conformance.server.probes import probe
from tasks_conformance.server.probes.engine.context import ProbeContext
from tasks_conformance.server.probes.poll import DEFAULT_POLL_INTERVAL_S, MIN_POLL_INTERVAL_S

# Reads of the second task: enough to see it ask, bounded so a task that never asks costs little.
MAX_READS = 6
MAX_SPACING_S = 0.5
UNKNOWN_KEY = "tasks-conformance-never-asked"


def _answers_by_update(dialect: WireDialect) -> bool:
    # The task lists its inputRequests and tasks/update answers them.
    return dialect.defines("tasks/update")


def _no_input_capabilities() -> dict[str, Any]:
    """The envelope's client capabilities with the extension and nothing else."""
    return {META_CLIENT_CAPS: {"extensions": {EXT_TASKS: {}}}}


@probe(UndeclaredInput, order=13, needs=(DeclaredCall,), applies=_answers_by_update, needs_tool=True, needs_task=True,
       description="a second task whose requests declare no elicitation, sampling or roots, read a few times "
                   "(then cancelled)")
async def undeclared_input(ctx: ProbeContext) -> None:
    rec = ctx.record(UndeclaredInput)
    s, meta = ctx.session, _no_input_capabilities()
    params = ctx.tool_params()
    rec.create = await s.request("tools/call", params, meta=meta, purpose="task without input capabilities")
    created = CreatedTask.read(rec.create.result if rec.create.ok else None)
    rec.task_id = tid = created.task_id
    rec.ran = True
    if tid is None:
        return
    status: Any = created.fields.get("status")
    task: Any = created.fields
    for n in range(MAX_READS):
        if status == "input_required" or status in TERMINAL_STATUSES:
            break
        ms = ctx.dialect.poll_interval_ms(task)
        await anyio.sleep(min(max(ms / 1000 if ms is not None else DEFAULT_POLL_INTERVAL_S, MIN_POLL_INTERVAL_S),
                              MAX_SPACING_S))
        reply = await s.request("tasks/get", {"taskId": tid}, meta=meta, purpose=f"no input capabilities #{n + 1}")
        rec.gets.append(reply)
        if not reply.ok:
            break
        task, status = reply.result, get_path(reply.result, "status")
    if status not in TERMINAL_STATUSES:
        rec.cancel = await s.request("tasks/cancel", {"taskId": tid}, meta=meta,
                                     purpose="cancel the task without input capabilities")


@probe(StaleInput, brief=True, order=56, needs=(DeclaredCall, Poll), applies=_answers_by_update, needs_task=True,
       description="tasks/update after polling with a key already answered and one never asked")
async def stale_input(ctx: ProbeContext) -> None:
    rec = ctx.record(StaleInput)
    poll = ctx.record(Poll)
    answers: dict[str, Any] = {}
    for upd in poll.updates:
        frame = ctx.wire_log.get(upd.reply.request_seq)
        sent = get_path(frame.json() if frame is not None else None, "params", "inputResponses")
        if upd.reply.ok and isinstance(sent, dict):
            answers.update(sent)
    if not answers:
        rec.not_run = reason("the task was never answered any input, so no answer can be stale",
                             "name a tool that asks for input with --tool-name and answer it with --input-responses")
        return
    first = next(iter(answers))
    stale = {first: answers[first], UNKNOWN_KEY: answers[first]}
    rec.task_id, rec.keys = ctx.require_task_id(), list(stale)
    rec.update = await ctx.session.request("tasks/update", {"taskId": rec.task_id, "inputResponses": stale},
                                           purpose="answers the task is not waiting for")
    rec.ran = True
