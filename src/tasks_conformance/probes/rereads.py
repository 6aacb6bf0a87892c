"""The probe task read again after it ended: a terminal status must stay as it was.

The end is first seen either by polling's last tasks/get or, sooner, by a notification about the
task (its subscription, or a legacy status notification) that arrived while polling waited. Seen
by a notification, polling's last read was sent after it and is already one later read; either
way every tasks/get of the task stays at least a poll interval from the one before it.
"""

from __future__ import annotations

import anyio

from tasks_conformance.evidence import DeclaredCall, Poll, StopReason, TerminalRereads
from tasks_conformance.probes import probe
from tasks_conformance.probes.context import ProbeContext
from tasks_conformance.probes.poll import DEFAULT_POLL_INTERVAL_S, MIN_POLL_INTERVAL_S
from tasks_conformance.protocol import get_path

REREADS = 2
# Spaced by the server's poll interval, but a slow one must not stretch the run without bound.
MAX_SPACING_S = 1.0
STATUS_NOTIFICATIONS = ("notifications/tasks", "notifications/tasks/status")


def terminal_sighting(ctx: ProbeContext, task_id: str, status: str, window: tuple[int, int]) -> int | None:
    """The first notification between frames `window` that showed the task `status`."""
    after, before = window
    for frame in ctx.session.peer.notifications:
        if frame.seq >= before:
            break
        if frame.seq <= after or task_id.encode() not in frame.data:  # cheap before parsing
            continue
        msg = frame.json()
        if get_path(msg, "method") in STATUS_NOTIFICATIONS and get_path(msg, "params", "taskId") == task_id \
                and get_path(msg, "params", "status") == status:
            return frame.seq
    return None


@probe(TerminalRereads, order=55, needs=(DeclaredCall, Poll), needs_task=True,
       description="tasks/get twice after the task was seen to end, spaced by its poll interval")
async def terminal_rereads(ctx: ProbeContext) -> None:
    rec = ctx.record(TerminalRereads)
    poll = ctx.record(Poll)
    last = poll.last_get
    if poll.stop is not StopReason.TERMINAL or last is None or poll.final_status is None:
        rec.not_run = "the task was not seen to end"
        return
    rec.task_id, rec.terminal_status = ctx.require_task_id(), poll.final_status
    # Only after the previous poll was sent: a poll answered "working" after the notification may
    # have been read before the end, and its answer is not judged here as a change.
    after = poll.gets[-2].request_seq if len(poll.gets) > 1 else 0
    rec.sighted_seq = terminal_sighting(ctx, rec.task_id, poll.final_status, (after, last.request_seq))
    if rec.sighted_seq is not None:
        rec.gets.append(last)
    ms = ctx.dialect.poll_interval_ms(last.result)
    spacing = min(max(ms / 1000 if ms is not None else DEFAULT_POLL_INTERVAL_S, MIN_POLL_INTERVAL_S), MAX_SPACING_S)
    while len(rec.gets) < REREADS:
        # One interval after the previous read of the task went out (polling's last, at first).
        previous = ctx.wire_log.get((rec.gets[-1] if rec.gets else last).request_seq)
        since = ctx.wire_log.elapsed() - previous.time if previous is not None else 0.0
        await anyio.sleep(max(spacing - since, 0.0))
        rec.gets.append(await ctx.session.request("tasks/get", {"taskId": rec.task_id},
                                                  purpose=f"terminal re-read #{len(rec.gets) + 1}"))
    rec.ran = True
