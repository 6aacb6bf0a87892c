"""The probe task read again after it ended: a terminal status must stay as it was.

The end is first seen either by polling's last tasks/get or, sooner, by a notification about the
task (its subscription, or a legacy status notification) that arrived while polling waited. Seen
by a notification, polling's last read was sent after it and is already the first later read.
Either way each read here goes out one poll interval (at most MAX_SPACING_S) after the read of
the task before it, and a read refused as too soon (S-EXT-MAY-02) is asked once more.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable

import anyio

from tasks_conformance.core.causes import reason
from tasks_conformance.core.protocol import TERMINAL_STATUSES, get_path
from tasks_conformance.core.wirelog import Frame
from tasks_conformance.server.evidence import DeclaredCall, Poll, StopReason, TerminalRereads
from tasks_conformance.server.evidence.expiry import Expiry, task_expiry
from tasks_conformance.server.probes import probe
from tasks_conformance.server.probes.engine.context import ProbeContext
from tasks_conformance.server.probes.poll import DEFAULT_POLL_INTERVAL_S, MIN_POLL_INTERVAL_S

REREADS = 2
# Spaced by the server's poll interval, but a slow one must not stretch the run without bound.
MAX_SPACING_S = 1.0
STATUS_NOTIFICATIONS = ("notifications/tasks", "notifications/tasks/status")


def terminal_sighting(notifications: Iterable[Frame], task_id: str, window: tuple[int, int]) -> tuple[int, str] | None:
    """The first notification about the task, after frame window[0] and before frame window[1],
    that showed it terminal: (its frame, the status)."""
    after, before = window
    for frame in notifications:
        if frame.seq >= before:
            break
        if frame.seq <= after or task_id.encode() not in frame.data:  # cheap before parsing
            continue
        msg = frame.json()
        status = get_path(msg, "params", "status")
        if get_path(msg, "method") in STATUS_NOTIFICATIONS and get_path(msg, "params", "taskId") == task_id \
                and isinstance(status, str) and status in TERMINAL_STATUSES:
            return frame.seq, status
    return None


@probe(TerminalRereads, order=55, needs=(DeclaredCall, Poll), needs_task=True,
       description="tasks/get twice after the task was seen to end, spaced by its poll interval")
async def terminal_rereads(ctx: ProbeContext) -> None:
    rec = ctx.record(TerminalRereads)
    poll = ctx.record(Poll)
    last = poll.last_get
    if poll.stop is not StopReason.TERMINAL or last is None or poll.final_status is None:
        rec.not_run = reason("the task was not seen to end", "let polling see the end: raise --poll-timeout or pick a "
                             "quicker tool")
        return
    tid = rec.task_id = ctx.require_task_id()
    rec.terminal_status = poll.final_status
    # Only after the previous poll was sent: a poll answered "working" after the notification may
    # have been read before the end, and its answer is not judged here as a change.
    after = poll.gets[-2].request_seq if len(poll.gets) > 1 else 0
    sighting = terminal_sighting(ctx.session.peer.notifications, tid, (after, last.request_seq))
    if sighting is not None:
        rec.sighted_seq, rec.sighted_status = sighting
        if rec.sighted_status == rec.terminal_status:
            rec.gets.append(last)  # sent after the end was seen: the first later read
    ms = ctx.dialect.poll_interval_ms(last.result)
    spacing = min(max(ms / 1000 if ms is not None else DEFAULT_POLL_INTERVAL_S, MIN_POLL_INTERVAL_S), MAX_SPACING_S)
    expiry = task_expiry(ctx.wire_log, ctx.dialect, ctx.record(DeclaredCall).call, poll.gets)
    while len(rec.gets) < REREADS:
        # One interval after the previous read of the task went out (polling's last, at first).
        previous = ctx.wire_log.get((rec.gets[-1] if rec.gets else last).request_seq)
        now = ctx.wire_log.elapsed()
        since = now - previous.time if previous is not None else 0.0
        await anyio.sleep(max(min(spacing - since, _before_expiry(expiry, now, REREADS - len(rec.gets))), 0.0))
        rec.gets.append(await ctx.read_tolerating_rate_limit(functools.partial(
            ctx.session.request, "tasks/get", {"taskId": tid},
            purpose=f"terminal re-read ({len(rec.gets) + 1} of {REREADS} after the end)")))
    rec.ran = True


def _before_expiry(expiry: Expiry, now: float, reads_left: int) -> float:
    """The wait before the next read that leaves every read left inside the task's TTL, with half
    the time that remains to spare: a server may delete the ended task once the TTL has run out
    (S-EXT-MAY-04, S-LEG-MAY-03), and a read after that has nothing to judge. No deadline, or one
    already past: no limit (the reads still go out; their "not found" is then the freedom's)."""
    left = expiry.left_s(now)
    if left is None or left <= 0:
        return float("inf")
    return left / (2 * reads_left)
