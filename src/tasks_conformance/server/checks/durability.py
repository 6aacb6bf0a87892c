"""Durability: a task exists once its CreateTaskResult is sent — straight away, and (HTTP) for any
connection that names its id, since the 2026-07-28 wire keeps no per-connection state. And, only
when asked for (profile durable), the claim of a durable task store: its tasks survive a restart
of the server (S-CLAIM-01, policy P-44)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tasks_conformance.core.causes import by_flag
from tasks_conformance.core.protocol import TASK_STATUSES, TERMINAL_STATUSES, get_path
from tasks_conformance.core.verdict import Verdict, could_not_run, failed, not_applicable, passed
from tasks_conformance.core.wires import Wire, task_object
from tasks_conformance.server.checks.engine.common import PRECONDITIONS, got, unrun
from tasks_conformance.server.checks.engine.registry import check
from tasks_conformance.server.evidence import DeclaredCall, Durability, Evidence, Poll, TaskReads, TaskRestart

if TYPE_CHECKING:
    from tasks_conformance.core.rpc.peer import Reply

TASK_DURABLE = check(
    id="tasks-created-task-durable",
    area="durability",
    category="lifecycle",
    title="A created task can be read at once, and over HTTP from a brand-new connection",
    description=(
        "tasks/get for the new taskId, sent straight after the CreateTaskResult and before any other read, "
        "succeeds (no -32602). Over HTTP the same tasks/get from a brand-new connection (its own connection "
        "pool, no cookies, only the declared credentials and headers) succeeds too: the 2026-07-28 wire is "
        "stateless, so a task is addressed by its id alone (derived, policy P-28). Over stdio, TCP and Unix "
        "sockets the second read does not apply."
    ),
    probes=(DeclaredCall, Durability),
    needs="task",
    owns=("S-EXT-MUST-05",),
)


def _other_task(result: object, task_id: str | None) -> str | None:
    """What is wrong when a successful read is about another task than the one asked for."""
    got = get_path(result, "taskId")
    return None if got == task_id else f"an answer about task {str(got)[:40]!r}, not {str(task_id)[:40]!r}"


@TASK_DURABLE.judge(Wire.EXTENSION, requires=("S-EXT-MUST-05",))
def created_task_durable(ev: Evidence) -> Verdict:
    rec = ev.get(Durability)
    first = rec.immediate
    if first is None:
        return could_not_run(unrun(rec, "the immediate tasks/get was not sent"))
    if not first.answered:
        return could_not_run(got(f"the immediate tasks/get got {first.describe()}", first,
                                 fix="answer tasks/get for the task the server just created"), evidence=first.seqs())
    if not first.ok:
        return failed(
            f"tasks/get sent straight after the CreateTaskResult got {first.describe()}: a server sends "
            "CreateTaskResult only once the task is durable (S-EXT-MUST-05)",
            broken=("S-EXT-MUST-05",), evidence=first.seqs(),
            details={"expected": "the task, straight after its creation", "actual": first.describe()},
        )
    wrong = _other_task(first.result, rec.task_id)
    if wrong:
        return failed(f"tasks/get sent straight after the CreateTaskResult: {wrong} (S-EXT-MUST-05)",
                      broken=("S-EXT-MUST-05",),
                      evidence=first.seqs(), details={"expected": rec.task_id, "actual": wrong})
    seqs = list(first.seqs())
    fresh = rec.fresh
    if fresh is None:
        why = rec.fresh_not_applicable or "no second connection was tried"
        return passed(f"tasks/get straight after the CreateTaskResult found the task; a read from a second "
                      f"connection does not apply: {why}", evidence=seqs)
    seqs += fresh.seqs()
    if not fresh.answered:
        return could_not_run(got(f"the immediate read found the task, but the tasks/get from a brand-new HTTP "
                             f"connection got {fresh.describe()}", fresh,
                             fix="let the server answer a second connection"), evidence=seqs)
    problem = fresh.describe() if not fresh.ok else _other_task(fresh.result, rec.task_id)
    if problem:
        return failed(
            f"the same tasks/get from a brand-new HTTP connection (same credentials and headers, no cookies) got "
            f"{problem}: the 2026-07-28 wire is stateless and a task is addressed by its id alone, so the task "
            "must not be bound to the connection or a cookie (S-EXT-MUST-05, derived; policy P-28)",
            broken=("S-EXT-MUST-05",), policies=("P-28",),
            evidence=seqs, details={"expected": "the task, from any connection", "actual": problem},
        )
    return passed("tasks/get straight after the CreateTaskResult found the task, and so did a brand-new HTTP "
                  "connection", evidence=seqs)


TASK_SURVIVES_RESTART = check(
    id="tasks-task-survives-restart",
    area="durability",
    category="lifecycle",
    title="A durable task store: an ended task and a working one are still there after a restart",
    description=(
        "Opt-in (profile durable, or this --check-id): the claim of a durable task store, not a rule of the "
        "specification (S-CLAIM-01, policy P-44). The probe task, which has ended, and a second task of the same "
        "call, meant to be still working, are read; the server is stopped (SIGTERM to its process group) and "
        "started again with the same command; a new connection reads both again. The ended task must have the same "
        "status and the same inlined result (2025-11-25: the same tasks/result); the working one must be readable "
        "(still working, or ended), never unknown. Only where tasks-conformance starts the server: a stdio command "
        "or --server-command; elsewhere not applicable."
    ),
    probes=(DeclaredCall, Poll, TaskRestart),
)


def _outcome(reads: TaskReads | None, payload_wire: bool) -> dict[str, Any]:
    """What a read showed: the status, and the task's result (inlined, or its tasks/result)."""
    get = reads.get if reads is not None else None
    task = task_object(get.result) if get is not None and get.ok else {}
    out: dict[str, Any] = {"status": task.get("status")}
    if payload_wire:
        pay = reads.payload if reads is not None else None
        if pay is not None:
            out["tasks/result"] = ({k: v for k, v in pay.result.items() if k != "_meta"} if pay.ok
                                   else {"error": _error(pay)})
    else:
        out.update({k: task[k] for k in ("result", "error") if k in task})
    return out


def _error(reply: Reply) -> dict[str, Any]:
    return {"code": reply.error_code, "message": reply.error.message if reply.error is not None else None}


def _lost(name: str, before: TaskReads | None, after: TaskReads | None, payload_wire: bool,
          ended: bool) -> str | None:
    """What the restart lost of one task (None: nothing)."""
    get = after.get if after is not None else None
    if get is None:
        return f"the {name} task was not read after the restart"
    if not get.ok:
        return f"the {name} task is unknown after the restart: tasks/get got {get.describe()}"
    was, now = _outcome(before, payload_wire), _outcome(after, payload_wire)
    if not ended:
        status = now["status"]
        return None if status in TASK_STATUSES else f"the {name} task came back with no valid status ({status!r})"
    lost = [f"{key} {was.get(key)!r} became {now.get(key)!r}" for key in sorted(set(was) | set(now))
            if was.get(key) != now.get(key)]
    return f"the {name} task changed: {'; '.join(lost)}"[:600] if lost else None


def _seen(reads: TaskReads | None, payload_wire: bool) -> Any:
    """What a read after the restart showed: the task's status and result, or why there was none."""
    get = reads.get if reads is not None else None
    if get is None:
        return "not read"
    return _outcome(reads, payload_wire) if get.ok else f"unknown: tasks/get got {get.describe()}"


def _status(reads: TaskReads | None) -> Any:
    get = reads.get if reads is not None else None
    return task_object(get.result).get("status") if get is not None and get.ok else None


@TASK_SURVIVES_RESTART.judge(Wire.EXTENSION, Wire.LEGACY, requires=("S-CLAIM-01",))
def task_survives_restart(ev: Evidence) -> Verdict:
    rec = ev.get(TaskRestart)
    if rec.not_applicable is not None:
        return not_applicable(rec.not_applicable)
    pre = PRECONDITIONS["terminal"](ev)
    if pre is not None:
        return pre
    if not rec.ran:
        return could_not_run(unrun(rec, "the restart probe did not run"))
    seqs = [s for r in (rec.working_call,) if r is not None for s in r.seqs()]
    seqs += [s for reads in (rec.before_ended, rec.before_working, rec.after_ended, rec.after_working)
             if reads is not None for s in reads.seqs()]
    before = rec.before_ended.get if rec.before_ended is not None else None
    if before is None or not before.ok or _status(rec.before_ended) not in TERMINAL_STATUSES:
        what = before.describe() if before is not None and not before.ok else f"status {_status(rec.before_ended)!r}"
        return could_not_run(got(f"the probe task could not be read as ended before the restart ({what})", before,
                                 fix="answer tasks/get for the ended task"), evidence=seqs)
    if rec.restart_problem is not None:
        return could_not_run(by_flag(rec.restart_problem, "make the server command start again the same way "
                                     "(a fixed port free again, --timeout long enough)", "--timeout"), evidence=seqs)
    payload_wire = ev.dialect.defines("tasks/result")
    notes: list[str] = []
    lost = [_lost("ended", rec.before_ended, rec.after_ended, payload_wire, ended=True)]
    working_status = _status(rec.before_working)
    if rec.working_id is None:
        notes.append(f"no second task was created ({rec.working_call.describe() if rec.working_call else 'not sent'})"
                     ", so only the ended task was tested")
    elif working_status in TERMINAL_STATUSES:
        notes.append(f"the second task had already ended ({working_status}) when the server stopped, so it was "
                     "judged as an ended task; give --tool-args that keep the task tool running for longer to test "
                     "a working one")
        lost.append(_lost("second", rec.before_working, rec.after_working, payload_wire, ended=True))
    else:
        lost.append(_lost("working", rec.before_working, rec.after_working, payload_wire, ended=False))
    problems = [p for p in lost if p is not None]
    expected: dict[str, Any] = {"ended task": _outcome(rec.before_ended, payload_wire)}
    actual: dict[str, Any] = {"ended task": _seen(rec.after_ended, payload_wire)}
    if rec.working_id is not None:
        expected["working task"] = (_outcome(rec.before_working, payload_wire) if working_status in TERMINAL_STATUSES
                                    else {"status": f"{working_status} or a later status, never unknown"})
        actual["working task"] = _seen(rec.after_working, payload_wire)
    if problems:
        return failed(f"the server claims a durable task store, but a restart lost: {'; '.join(problems)} "
                      "(S-CLAIM-01, a claim; policy P-44)", broken=("S-CLAIM-01",), evidence=seqs, policies=("P-44",),
                      details={"expected": expected, "actual": actual})
    kept = "the ended task kept its status and result" + (
        f", and the working task was readable (now {_status(rec.after_working)!r})"
        if rec.working_id is not None and working_status not in TERMINAL_STATUSES else "")
    return passed(f"after the server was stopped (SIGTERM, {rec.stopped_ms} ms) and started again, {kept}"
                  + (f"; {'; '.join(notes)}" if notes else ""), evidence=seqs, details={"after": actual})
