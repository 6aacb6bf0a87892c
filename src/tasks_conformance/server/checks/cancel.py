"""Cancel: tasks/cancel answers in its era's shape, and a terminal task stays terminal."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tasks_conformance.core.protocol import ERR_INVALID_PARAMS, TASK_STATUSES, TERMINAL_STATUSES, get_path
from tasks_conformance.core.verdict import Verdict, could_not_run, failed, not_applicable, passed, warn
from tasks_conformance.core.wires import Wire
from tasks_conformance.server.checks.engine.common import unrun
from tasks_conformance.server.checks.engine.registry import check
from tasks_conformance.server.checks.engine.shapes import reply_seqs, result_of
from tasks_conformance.server.evidence import Cancel, DeclaredCall, Evidence, Poll
from tasks_conformance.server.evidence.expiry import deleted_after_ttl, task_expiry

if TYPE_CHECKING:
    from tasks_conformance.core.rpc.peer import Reply

CANCEL_ACK_SHAPE = check(
    id="tasks-cancel-ack-shape",
    area="cancel",
    category="lifecycle",
    title="tasks/cancel answers with its era's shape",
    description=(
        'Extension: an empty ack {resultType: "complete"} (cancelling a terminal task is not an error, and '
        "does not change its status). Legacy: the running task comes back already cancelled, and "
        "cancelling a finished task gets -32602 (judged when the wire last showed that task terminal "
        "before the cancel was sent)."
    ),
    probes=(DeclaredCall, Poll, Cancel),
    needs="task",
    # A cancel ack promises nothing about the outcome: the task may run on, or end completed or failed;
    # a cancelled legacy task may be deleted at once (the read after the cancel is not judged), and an
    # ended one once its TTL has run out.
    permits=("S-EXT-MAY-04", "S-EXT-MAY-07", "S-LEG-MAY-06"),
)


def _sent_cancel(ev: Evidence, rule: str) -> tuple[Cancel, list[int], Verdict | None]:
    rec = ev.get(Cancel)
    if rec.no_cancel_capability:
        return rec, [], not_applicable(
            "the server does not declare capabilities.tasks.cancel (optional on 2025-11-25)")
    if rec.cancel is None:
        return rec, [], could_not_run(unrun(rec, "tasks/cancel was not sent"))
    seqs = reply_seqs(rec.create, rec.cancel, rec.after)
    if not rec.cancel.answered:
        return rec, seqs, failed(f"tasks/cancel got {rec.cancel.describe()}", broken=(rule,), evidence=seqs,
                                 details={"expected": "an answer", "actual": rec.cancel.describe()})
    return rec, seqs, None


def _status_after(rec: Cancel) -> object:
    return get_path(rec.after.result, "status") if rec.after is not None and rec.after.ok else None


@CANCEL_ACK_SHAPE.judge(Wire.EXTENSION, requires=("S-EXT-MUST-16", "S-EXT-MUST-32", "S-EXT-MUST-11"))
def extension_cancel(ev: Evidence) -> Verdict:
    rec, seqs, early = _sent_cancel(ev, "S-EXT-MUST-16")
    if early is not None:
        return early
    assert rec.cancel is not None
    gone = rec.after is not None and rec.after.error_code == ERR_INVALID_PARAMS
    if rec.cancel.error_code == ERR_INVALID_PARAMS and rec.status_before in TERMINAL_STATUSES and gone:
        # An ended task may be deleted once its TTL has run out (S-EXT-MAY-04): "not found", to the
        # cancel and to the tasks/get after it, is then the right answer, and there is no ack to judge.
        # (A task still found afterwards was refused, not deleted: that fails below.)
        expiry = task_expiry(ev.wire_log, ev.dialect, ev.get(DeclaredCall).call, ev.get(Poll).gets)
        gone_text = (f"the task had ended ({rec.status_before}) and tasks/cancel found it no longer "
                     f"({rec.cancel.describe()})")
        if deleted_after_ttl(ev.wire_log, expiry, rec.cancel):
            return not_applicable(f"{gone_text}, sent once its TTL had run out ({expiry.describe(ev.dialect)} from "
                                  "creation): a server may delete a task then (S-EXT-MAY-04), so there is no ack "
                                  "to judge", evidence=seqs)
        return not_applicable(f"{gone_text}, so there is no ack to judge", evidence=seqs, warnings=[warn(
            f"the task was deleted before its TTL had run out ({expiry.describe(ev.dialect)} from creation): the "
            "spec grants deletion only after the TTL (policy P-41)", "P-41")])
    if rec.cancel.error is not None:
        return failed(f"tasks/cancel on a known task got {rec.cancel.describe()}; it MUST ack (S-EXT-MUST-16)",
                      broken=("S-EXT-MUST-16",),
                      evidence=seqs, details={"expected": {"resultType": "complete"}, "actual": rec.cancel.describe()})
    result = result_of(ev, rec.cancel)
    extra = sorted(k for k in result if k not in ("resultType", "_meta")) if isinstance(result, dict) else []
    if not isinstance(result, dict) or result.get("resultType") != "complete" or extra:
        return failed(
            f'tasks/cancel must answer an empty ack {{"resultType": "complete"}}; got resultType '
            f"{get_path(result, 'resultType')!r}" + (f" and extra fields {', '.join(extra[:6])}" if extra else ""),
            broken=("S-EXT-MUST-16",),
            evidence=seqs, details={"expected": {"resultType": "complete"}, "actual": str(result)[:200]},
        )
    before, now = rec.status_before, _status_after(rec)
    if before in TERMINAL_STATUSES and now is not None and now != before:
        return failed(
            f"the task was already {before} when tasks/cancel arrived, and afterwards tasks/get says {now!r}; "
            "a terminal status never changes (S-EXT-MUST-32, derived from the state diagram)",
            broken=("S-EXT-MUST-32",),
            evidence=seqs, details={"expected": before, "actual": now},
        )
    if before not in TERMINAL_STATUSES and isinstance(now, str) and now not in TASK_STATUSES:
        # The task was running when cancelled; it may still be running or have ended otherwise
        # (S-EXT-MAY-07), but a status outside the enum ("canceled") is no status at all.
        return failed(
            f'after tasks/cancel of the running task, tasks/get says {now!r}; a cancelled task reads as "cancelled" '
            f"(S-EXT-MUST-11), and any status is one of {', '.join(TASK_STATUSES)}", broken=("S-EXT-MUST-11",),
            evidence=seqs, details={"expected": "cancelled (or, per S-EXT-MAY-07, still working or ended)",
                                    "actual": now},
        )
    note = ""
    if before not in TERMINAL_STATUSES and now in ("working", "input_required", "completed", "failed"):
        note = f"; the task reads {now} afterwards, which a cancel ack allows (S-EXT-MAY-07)"
    return passed('tasks/cancel answered the empty ack {"resultType": "complete"}' + note, evidence=seqs)


@CANCEL_ACK_SHAPE.judge(Wire.LEGACY, requires=("S-LEG-MUST-18", "S-LEG-MUST-19"))
def legacy_cancel(ev: Evidence) -> Verdict:
    rec, seqs, early = _sent_cancel(ev, "S-LEG-MUST-19")
    if early is not None:
        return early
    assert rec.cancel is not None
    if rec.cancel.error is not None:
        st = _status_after(rec)
        if rec.cancel.error_code == ERR_INVALID_PARAMS and st in ("completed", "failed"):
            return not_applicable(f"the task was already {st} when tasks/cancel arrived (-32602 is right then); "
                                  "use a longer running tool to test cancel", evidence=seqs)
        return failed(f"tasks/cancel on a running task got {rec.cancel.describe()}", broken=("S-LEG-MUST-19",),
                      evidence=seqs,
                      details={"expected": "the task, cancelled", "actual": rec.cancel.describe()})
    result = rec.cancel.result
    if result.get("status") != "cancelled":
        return failed(f"tasks/cancel returned status {result.get('status')!r}; the task MUST be cancelled before "
                      "the response (S-LEG-MUST-19)", broken=("S-LEG-MUST-19",), evidence=seqs,
                      details={"expected": "cancelled", "actual": result.get("status")})
    if result.get("taskId") != rec.task_id:
        return failed("tasks/cancel returned a different taskId", broken=("S-LEG-MUST-19",), evidence=seqs,
                      details={"expected": rec.task_id, "actual": result.get("taskId")})
    terminal = rec.cancel_terminal
    if terminal is None:
        return passed("tasks/cancel returned the task in status cancelled", evidence=seqs)
    seqs += terminal.seqs()
    shown_seq, shown = _status_shown_before(ev, terminal)
    if shown not in TERMINAL_STATUSES:
        # S-LEG-MUST-18 is about a task in a terminal status: judged on what the wire last showed of
        # it before the request, never on an older belief (a task that later read as working again
        # is tasks-terminal-status-immutable's finding).
        return passed("tasks/cancel returned the running task in status cancelled; the ended task last read as "
                      f"{shown!r} (frame {shown_seq}) before it was cancelled again, so the rule on cancelling a "
                      "terminal task (S-LEG-MUST-18) does not apply to that cancel",
                      evidence=seqs + ([shown_seq] if shown_seq else []))
    if terminal.error_code != ERR_INVALID_PARAMS:
        return failed(f"tasks/cancel of the task that had already ended got {terminal.describe()}; 2025-11-25 "
                      "requires -32602 (S-LEG-MUST-18)", broken=("S-LEG-MUST-18",), evidence=seqs,
                      details={"expected": ERR_INVALID_PARAMS, "actual": terminal.describe()})
    return passed("tasks/cancel returned the running task in status cancelled and refused the finished one "
                  "with -32602", evidence=seqs)


def _status_shown_before(ev: Evidence, reply: Reply) -> tuple[int | None, object]:
    """The status the wire last showed for the task `reply`'s request names, before that request
    was sent: the latest answer or notification about it (by taskId), and its frame."""
    task_id = get_path(ev.frame_json(reply.request_seq), "params", "taskId")
    shown: tuple[int | None, object] = (None, None)
    for frame in ev.wire_log:
        if frame.seq >= reply.request_seq:
            break
        msg = frame.json() if frame.direction == "in" else None
        if not isinstance(msg, dict):
            continue
        body = msg.get("result") if "result" in msg else msg.get("params")
        task = body.get("task") if isinstance(body, dict) and isinstance(body.get("task"), dict) else body
        if get_path(task, "taskId") == task_id and isinstance(get_path(task, "status"), str):
            shown = (frame.seq, get_path(task, "status"))
    return shown
