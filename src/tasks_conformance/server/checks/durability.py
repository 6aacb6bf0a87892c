"""Durability: a task exists once its CreateTaskResult is sent — straight away, and (HTTP) for any
connection that names its id, since the 2026-07-28 wire keeps no per-connection state."""

from __future__ import annotations

from tasks_conformance.core.protocol import get_path
from tasks_conformance.core.verdict import Verdict, could_not_run, failed, passed
from tasks_conformance.core.wires import Wire
from tasks_conformance.server.checks.common import got
from tasks_conformance.server.checks.registry import check
from tasks_conformance.server.evidence import DeclaredCall, Durability, Evidence

TASK_DURABLE = check(
    id="tasks-created-task-durable",
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
        return could_not_run(rec.not_run or rec.harness_problem or "the immediate tasks/get was not sent")
    if not first.answered:
        return could_not_run(got(f"the immediate tasks/get got {first.describe()}", first), evidence=first.seqs())
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
                             f"connection got {fresh.describe()}", fresh), evidence=seqs)
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
