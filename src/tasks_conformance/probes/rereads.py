"""The probe task read again after it ended: a terminal status must stay as it was."""

from __future__ import annotations

import anyio

from tasks_conformance.evidence import DeclaredCall, Poll, StopReason, TerminalRereads
from tasks_conformance.probes import probe
from tasks_conformance.probes.context import ProbeContext
from tasks_conformance.probes.poll import DEFAULT_POLL_INTERVAL_S, MIN_POLL_INTERVAL_S

REREADS = 2
# Spaced by the server's poll interval, but a slow one must not stretch the run without bound.
MAX_SPACING_S = 1.0


@probe(TerminalRereads, order=55, needs=(DeclaredCall, Poll), needs_task=True,
       description="tasks/get twice more after the task ended, spaced by its poll interval")
async def terminal_rereads(ctx: ProbeContext) -> None:
    rec = ctx.record(TerminalRereads)
    poll = ctx.record(Poll)
    if poll.stop is not StopReason.TERMINAL or poll.last_get is None:
        rec.not_run = "the task was not seen to end"
        return
    rec.task_id, rec.terminal_status = ctx.require_task_id(), poll.final_status
    ms = ctx.dialect.poll_interval_ms(poll.last_get.result)
    spacing = min(max(ms / 1000 if ms is not None else DEFAULT_POLL_INTERVAL_S, MIN_POLL_INTERVAL_S), MAX_SPACING_S)
    for n in range(REREADS):
        await anyio.sleep(spacing)
        rec.gets.append(await ctx.session.request("tasks/get", {"taskId": rec.task_id},
                                                  purpose=f"terminal re-read #{n + 1}"))
    rec.ran = True
