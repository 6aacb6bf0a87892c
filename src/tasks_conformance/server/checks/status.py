"""Status: once a task has ended, its status never changes — not on later reads, not in
notifications."""

from __future__ import annotations

from itertools import pairwise
from typing import TYPE_CHECKING, Any

from tasks_conformance.core.protocol import (
    TASK_STATUSES,
    TERMINAL_STATUSES,
    get_path,
)
from tasks_conformance.core.verdict import Verdict, could_not_run, failed, not_applicable, passed, warn
from tasks_conformance.core.wires import Wire
from tasks_conformance.server.checks.engine.common import got, unrun
from tasks_conformance.server.checks.engine.registry import check
from tasks_conformance.server.checks.engine.shapes import instant, reply_seqs, result_of
from tasks_conformance.server.evidence import (
    Cancel,
    DeclaredCall,
    Evidence,
    Poll,
)

if TYPE_CHECKING:
    pass



from tasks_conformance.server.evidence import Listen, TaskListing, TerminalRereads
from tasks_conformance.server.evidence.expiry import deleted_after_ttl, not_found, task_expiry

TERMINAL_STATUS_IMMUTABLE = check(
    id="tasks-terminal-status-immutable",
    area="status",
    category="lifecycle",
    title="A task that has ended keeps its terminal status",
    description=(
        "Once completed, failed or cancelled is seen (by polling, or first by a notification about the "
        "task), two later tasks/get (spaced by its poll interval) and every later notifications/tasks about "
        "it (on a notification's own stream from that notification on) are looked at: none may show "
        "another status. Order holds within a stream only: a notification that arrives after the terminal "
        "read but whose lastUpdatedAt is not after that read's, before its own stream showed the end, "
        "describes the task before its end (history, not a change)."
    ),
    probes=(DeclaredCall, Poll, TerminalRereads, Listen, TaskListing),
    needs="terminal",
    # A task deleted after its TTL (not found) shows no status at all: it is not judged as a change.
    permits=('S-EXT-MAY-04', 'S-LEG-MAY-03'),
    owns=("S-EXT-MUST-32",),
)


def _later_notifications(ev: Evidence, after_seq: int, task_id: str | None,
                         sighted_seq: int | None) -> list[tuple[int, Any, bool]]:
    """notifications/tasks about the task after frame `after_seq`, and after the notification that
    first showed the end when one did: on its own stream only, since order holds within a stream
    and not across them. Each with its status and whether its own stream had already shown a
    terminal status before it (then any other status is a change, whatever its timestamp)."""
    sighted = ev.wire_log.get(sighted_seq) if sighted_seq else None
    out = []
    ended_on: set[int | None] = set()  # the streams that have shown a terminal status so far
    for seq in ev.get(Listen).frames:
        msg = ev.frame_json(seq)
        if get_path(msg, "method") != "notifications/tasks" or get_path(msg, "params", "taskId") != task_id:
            continue
        status, stream = get_path(msg, "params", "status"), _stream(ev, seq)
        late = not (seq <= after_seq and (sighted is None or seq <= sighted.seq or stream != sighted.reply_to))
        if late:
            out.append((seq, status, stream in ended_on))
        if status in TERMINAL_STATUSES:
            ended_on.add(stream)
    return out


def _is_history(ev: Evidence, seq: int, ended_at: Any, after_end_on_stream: bool) -> bool:
    """A notification that arrived after the terminal read but describes the task as it was before
    it: its lastUpdatedAt precedes (or equals) the terminal read's, and its own stream had not yet
    shown the end. Responses and a subscription's notifications are different streams, even on one
    pipe, so arrival order across them says nothing. Without comparable timestamps, arrival decides."""
    if after_end_on_stream:
        return False
    then = instant(get_path(ev.frame_json(seq), "params", "lastUpdatedAt"))
    end = instant(ended_at)
    return then is not None and end is not None and then <= end


def _stream(ev: Evidence, seq: int) -> int | None:
    """The request a frame came in answer to (None on stdio, one stream)."""
    frame = ev.wire_log.get(seq)
    return frame.reply_to if frame is not None else None


def _reads_after_an_end(ev: Evidence, task_id: str | None) -> list[tuple[str, Any, int]]:
    """The polls and the listing's reads of the task sent after an earlier read's answer showed it
    ended, which say it is not: the end may first show on any tasks/get of the task (the listing
    reads each task of ours, between two polls), and a later poll that says working is the ended
    task's status changing, whichever probe sent it."""
    reads = [g for g in ev.get(Poll).gets if g.ok]
    reads += [g for g in ev.get(TaskListing).reads if g.ok and get_path(result_of(ev, g), "taskId") == task_id]

    def status(reply: Any) -> Any:
        return get_path(result_of(ev, reply), "status")

    ends = [g for g in reads if status(g) in TERMINAL_STATUSES and g.response_seq is not None]
    if not ends:
        return []
    first = min(ends, key=lambda g: g.response_seq or 0)
    return [(f"tasks/get (frame {g.request_seq}), sent after the one whose answer (frame {first.response_seq}) "
             f"showed it {status(first)!r}, says {status(g)!r}", status(g), g.request_seq)
            for g in sorted(reads, key=lambda g: g.request_seq)
            if g.request_seq > (first.response_seq or 0) and status(g) not in TERMINAL_STATUSES]


@TERMINAL_STATUS_IMMUTABLE.judge(Wire.EXTENSION, requires=("S-EXT-MUST-32",))
@TERMINAL_STATUS_IMMUTABLE.judge(Wire.LEGACY, requires=("S-LEG-MUST-07", "S-LEG-MUST-20"))
def terminal_status_immutable(ev: Evidence) -> Verdict:
    rec = ev.get(TerminalRereads)
    if not rec.ran:
        return could_not_run(unrun(rec, "the task was not read again after it ended"))
    ended = rec.terminal_status
    last = ev.get(Poll).last_get
    ended_at = (last.response_seq or 0) if last is not None else 0
    seqs = sorted({*([rec.sighted_seq] if rec.sighted_seq else []), *(last.seqs() if last is not None else []),
                   *reply_seqs(*rec.gets)})
    if rec.sighted_status is not None and rec.sighted_status != ended:
        shown = f"notifications/tasks (frame {rec.sighted_seq}) showed the task {rec.sighted_status!r}"
        return failed(f"{shown}, then a tasks/get sent after it says {ended!r} — a terminal status never changes",
                      broken=_immutability_rules(ev, rec.sighted_status), evidence=seqs,
                      details={"expected": rec.sighted_status, "actual": [f"tasks/get says {ended!r}"]})
    seen: list[tuple[str, Any]] = []
    for n, reply in enumerate(rec.gets, start=1):
        status = get_path(result_of(ev, reply), "status") if reply.ok else None
        if not reply.ok:
            seen.append((f"tasks/get #{n} after the end got {reply.describe()}", None))
        elif status != ended:
            seen.append((f"tasks/get #{n} after the end says {status!r}", status))
    for text, status, seq in _reads_after_an_end(ev, rec.task_id):
        seen.append((text, status))
        seqs.append(seq)
    end_stamp = get_path(last.result, "lastUpdatedAt") if last is not None and last.ok else None
    history: list[int] = []
    for seq, status, after_end in _later_notifications(ev, ended_at, rec.task_id, rec.sighted_seq):
        if status == ended:
            continue
        if _is_history(ev, seq, end_stamp, after_end):
            history.append(seq)
            continue
        seen.append((f"notifications/tasks (frame {seq}) says {status!r}", status))
        seqs.append(seq)
    changed = [text for text, status in seen if status is not None]
    if changed:
        return failed(f"the task ended {ended!r}, then " + "; ".join(changed[:3]) + " — a terminal status never "
                      "changes", broken=_immutability_rules(ev, ended), evidence=sorted(seqs),
                      details={"expected": ended, "actual": changed[:3]})
    if seen:
        return _vanished(ev, rec, ended, seqs)
    seen_by = f" after notification frame {rec.sighted_seq} showed it end" if rec.gets and rec.gets[0] is last else ""
    stale = (f"; {len(history)} notifications/tasks that arrived later (frames "
             f"{', '.join(map(str, history[:5]))}) describe it before its end (lastUpdatedAt not after the terminal "
             "read's), which is history, not a change" if history else "")
    return passed(f"the task stayed {ended!r} on {len(rec.gets)} later reads{seen_by}{stale}",
                  evidence=sorted({*seqs, *history}))


def _immutability_rules(ev: Evidence, ended: object) -> tuple[str, ...]:
    """The rule a changed terminal status breaks on this wire (legacy: a cancelled task staying
    cancelled is a rule of its own)."""
    rules = TERMINAL_STATUS_IMMUTABLE.requirement_ids(ev.wire)
    return tuple(r for r in rules if r != "S-LEG-MUST-20" or ended == "cancelled")


def _vanished(ev: Evidence, rec: TerminalRereads, ended: str | None, seqs: list[int]) -> Verdict:
    """Later reads that found the task no longer. A task deleted (expired, purged) says nothing about
    its status, so it is not this rule; after its TTL that is a freedom the spec grants, before it a
    reading of ours that warns (policy P-41). Any other unanswered read leaves the rule unjudged."""
    expiry = task_expiry(ev.wire_log, ev.dialect, ev.get(DeclaredCall).call, ev.get(Poll).gets)
    missing = [(n, reply) for n, reply in enumerate(rec.gets, start=1) if not reply.ok]
    unanswered = [f"tasks/get #{n} after the end got {reply.describe()}" for n, reply in missing
                  if not not_found(reply)]
    if unanswered:
        return could_not_run(got("; ".join(unanswered[:2]), *(r for _, r in missing),
                                 fix="answer tasks/get for an ended task with its status"), evidence=seqs)
    stayed = len(rec.gets) - len(missing)
    early = [n for n, reply in missing if not deleted_after_ttl(ev.wire_log, expiry, reply)]
    gone = f"tasks/get #{missing[0][0]} after the end found the task no longer ({missing[0][1].describe()})"
    so_far = f"the task stayed {ended!r} on {stayed} later read(s); then " if stayed else ""
    if not early:
        text = (f"{so_far}{gone}, sent once its TTL had run out ({expiry.describe(ev.dialect)} from creation): a "
                "server may delete a task then (S-EXT-MAY-04, S-LEG-MAY-03)")
        return passed(text, evidence=seqs) if stayed else not_applicable(
            text + ", so there is no later status to judge", evidence=seqs)
    warning = warn(f"{gone} before its TTL had run out ({expiry.describe(ev.dialect)} from creation): the spec "
                   "grants deletion only after the TTL (policy P-41)", "P-41")
    if stayed:
        return passed(f"the task stayed {ended!r} on {stayed} later read(s)", evidence=seqs, warnings=[warning])
    return not_applicable(f"{gone}, so there is no later status to judge", evidence=seqs, warnings=[warning])


STATUS_TRANSITIONS = check(
    id="tasks-legacy-status-transitions",
    area="status",
    category="lifecycle",
    title="Status changes follow the allowed paths; a cancelled task stays cancelled",
    description=(
        "Across the CreateTaskResult and every poll of the task, each change of status is an allowed one "
        "(working to input_required or a terminal status, input_required back to working or to a terminal "
        "status). The task cancelled by the cancel probe must still read cancelled afterwards (or be gone)."
    ),
    probes=(DeclaredCall, Poll, Cancel),
    needs="task",
    owns=("S-LEG-MUST-07", "S-LEG-MUST-20",),
)

ALLOWED = {
    "working": {"input_required", *TERMINAL_STATUSES},
    "input_required": {"working", *TERMINAL_STATUSES},
}


def _illegal_changes(chain: list[tuple[int, Any]]) -> list[str]:
    out: list[str] = []
    valid = [(seq, st) for seq, st in chain if isinstance(st, str) and st in TASK_STATUSES]
    for (_, a), (seq, b) in pairwise(valid):
        if a != b and b not in ALLOWED.get(a, set()):
            out.append(f"{a} → {b} (frame {seq})")
    return out


@STATUS_TRANSITIONS.judge(Wire.LEGACY, requires=("S-LEG-MUST-07", "S-LEG-MUST-20"))
def status_transitions(ev: Evidence) -> Verdict:
    created = ev.get(DeclaredCall)
    poll = ev.get(Poll)
    first = created.call.response_seq if created.call is not None else None
    # Only sequential request/response pairs: a notification on another stream may overtake them.
    chain = [(first or 0, created.created.fields.get("status"))]
    chain += [(g.response_seq or 0, get_path(g.result, "status")) for g in poll.gets if g.ok]
    problems = [f"the task went {p}" for p in _illegal_changes(chain)]
    broken = ["S-LEG-MUST-07"] if problems else []
    seqs = [seq for seq, _ in chain if seq]
    cancel = ev.get(Cancel)
    said = get_path(cancel.cancel.result, "status") if cancel.cancel is not None and cancel.cancel.ok else None
    after = cancel.after
    cancel_note = ""
    if said == "cancelled" and after is not None and after.answered:
        seqs += reply_seqs(cancel.cancel, after)
        now = get_path(after.result, "status") if after.ok else None
        if after.ok and now != "cancelled":
            problems.append(f"tasks/cancel answered the task cancelled, then tasks/get says {now!r}: a cancelled "
                            "task stays cancelled (S-LEG-MUST-20)")
            broken.append("S-LEG-MUST-20")
        cancel_note = "; the cancelled task stayed cancelled" if after.ok else "; the cancelled task was then gone"
    if problems:
        return failed("; ".join(problems[:3]) + (" — only the allowed transitions may occur (S-LEG-MUST-07)"
                                                 if not problems[0].startswith("tasks/cancel") else ""),
                      broken=tuple(broken), evidence=seqs,
                      details={"expected": "allowed transitions only", "actual": problems[:5]})
    path = " → ".join(str(st) for n, (_, st) in enumerate(chain) if n == 0 or chain[n - 1][1] != st)
    return passed(f"every status change was allowed ({path}){cancel_note}", evidence=seqs)
