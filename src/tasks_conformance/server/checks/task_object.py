"""The task object: its TTL fields in the era's names and types, and every tasks/get a
well-formed task for its status."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tasks_conformance.core.causes import unmet
from tasks_conformance.core.protocol import TASK_STATUSES
from tasks_conformance.core.verdict import Verdict, could_not_run, failed, passed
from tasks_conformance.core.wires import Wire
from tasks_conformance.server.checks.engine.common import unrun
from tasks_conformance.server.checks.engine.registry import check
from tasks_conformance.server.checks.engine.shapes import (
    TaskFrame,
    describe_value,
    is_int,
    result_of,
    status_problem,
    task_frames,
    timestamp_problem,
)
from tasks_conformance.server.evidence import Cancel, DeclaredCall, Evidence, Listen, Poll

# Every task frame the run can see: creation, polling, cancel and the subscription's notifications.
TASK_FRAME_PROBES = (DeclaredCall, Poll, Cancel, Listen)
# Spellings of "cancelled" that are not the enum value: a cancelled task reads as such (S-EXT-MUST-11,
# judged by the cancel check), so they are not read as a word for "working".
_CANCEL_SPELLINGS = frozenset({"canceled", "Cancelled", "CANCELLED"})
TTL_REQUIREMENTS = {Wire.EXTENSION: ("S-EXT-MUST-06",), Wire.LEGACY: ("S-LEG-MUST-09",)}

TTL_SHAPE = check(
    id="tasks-ttl-shape",
    area="task_object",
    category="lifecycle",
    title="Every task frame names its TTL fields in its own era's form",
    description=(
        "Every task object seen (creation, each tasks/get, cancel, notifications), not only the last: "
        "ttlMs (required) and pollIntervalMs on the extension; ttl (required) and pollInterval on legacy. "
        "The other era's names fail."
    ),
    probes=TASK_FRAME_PROBES,
    needs="task",
    # TTL and poll interval may change, differ from the request, or be absent; only their names and types are judged.
    permits=('S-EXT-MAY-03', 'S-LEG-MAY-02', 'S-LEG-MAY-04'),
    owns=("S-LEG-MUST-09",),
)


@TTL_SHAPE.judge_each(TTL_REQUIREMENTS)
def ttl_shape(ev: Evidence) -> Verdict:
    d = ev.dialect
    frames = task_frames(ev)
    problems: list[str] = []
    for tf in frames:
        wrong = [k for k in d.foreign_fields if k in tf.task]
        if wrong:
            problems.append(f"{tf.where} (frame {tf.seq}) uses {', '.join(wrong)}, the {d.era_of_field(wrong[0])} name")
        if d.ttl_field not in tf.task:
            problems.append(f"{tf.where} (frame {tf.seq}) has no {d.ttl_field}")
    seqs = [tf.seq for tf in frames]
    if problems:
        return failed(
            f"{len(problems)} task frame problem(s): " + "; ".join(problems[:4])
            + f" — the {ev.wire} wire uses {d.ttl_field}/{d.poll_interval_field}",
            broken=tuple(TTL_SHAPE.requirement_ids(ev.wire)), evidence=seqs,
            details={"problems": problems[:20], "expected": [d.ttl_field, d.poll_interval_field],
                                    "actual": problems[:4]},
        )
    return passed(f"all {len(frames)} task frames carry {d.ttl_field} and none uses {'/'.join(d.foreign_fields)}",
                  evidence=seqs)


TTL_INTEGER_SHAPE = check(
    id="tasks-ttl-integer-shape",
    area="task_object",
    category="lifecycle",
    title="TTL and poll interval are integers (TTL may be null for unlimited)",
    description=(
        "Every task frame: the TTL is an integer number of milliseconds or null; the poll interval, when "
        "present, an integer. Zero or negative values warn (policy P-06)."
    ),
    probes=TASK_FRAME_PROBES,
    needs="task",
)


def _integer_problems(tf: TaskFrame, ttl: str, poll: str) -> tuple[list[str], list[str]]:
    """(problems, warnings) of one task frame's TTL and poll interval."""
    problems: list[str] = []
    warnings: list[str] = []
    at = f"{tf.where} (frame {tf.seq})"
    if ttl in tf.task:
        v = tf.task[ttl]
        if v is not None and not is_int(v):
            problems.append(f"{at} {ttl} is {describe_value(v)}")
        elif is_int(v) and v <= 0:
            warnings.append(f"{at} {ttl} is {v}: a task that expires at once")
    if poll in tf.task:
        v = tf.task[poll]
        if not is_int(v):
            problems.append(f"{at} {poll} is {describe_value(v)}")
        elif v <= 0:
            warnings.append(f"{at} {poll} is {v}, not a positive interval")
    return problems, warnings


@TTL_INTEGER_SHAPE.judge_each(TTL_REQUIREMENTS)
def ttl_integer_shape(ev: Evidence) -> Verdict:
    ttl, poll = ev.dialect.ttl_field, ev.dialect.poll_interval_field
    problems: list[str] = []
    warnings: list[str] = []
    judged = [tf for tf in task_frames(ev) if ttl in tf.task or poll in tf.task]
    for tf in judged:
        p, w = _integer_problems(tf, ttl, poll)
        problems += p
        warnings += w
    if not judged:
        return could_not_run(unmet(f"no task frame carried {ttl} or {poll} to judge",
                                   f"give task frames their {ttl} (tasks-ttl-shape says which lack it)"),
                             blocked_by="tasks-ttl-shape")
    seqs = [tf.seq for tf in judged]
    shown = sorted(set(warnings))[:5]
    if problems:
        return failed("; ".join(problems[:4]) + " — they must be integers (or null for an unlimited TTL)",
                      broken=tuple(TTL_INTEGER_SHAPE.requirement_ids(ev.wire)), evidence=seqs, warnings=shown,
                      details={"problems": problems[:20], "expected": "integers (a TTL may be null)",
                               "actual": problems[:4]})
    return passed(f"{ttl}/{poll} are integers in all {len(judged)} task frames", evidence=seqs, warnings=shown)


STATUS_PAYLOAD_SHAPE = check(
    id="tasks-status-payload-shape",
    area="task_object",
    category="lifecycle",
    title="Every tasks/get result is a well-formed task for its status",
    description=(
        "Each tasks/get frame: the requested taskId, a status from the enum, RFC 3339 createdAt and "
        'lastUpdatedAt; on the extension also resultType "complete", inputRequests when input_required and '
        "error when failed."
    ),
    probes=(DeclaredCall, Poll),
    needs="task",
    # Polls refused as too early are retried, not judged; fields may change; any first status is fine.
    permits=('S-EXT-MAY-02', 'S-EXT-MAY-03', 'S-EXT-MAY-09'),
    owns=("S-EXT-MUST-09",),
)


# A problem with the rule it breaks: (requirement id, the sentence).
Problem = tuple[str, str]


def _common_task_problems(ev: Evidence, n: int, task: dict[str, Any], rule: str) -> tuple[list[Problem], list[str]]:
    """(problems, warnings) every era shares for tasks/get number n; `rule` is the wire's rule on
    a task object's fields."""
    problems: list[Problem] = []
    warnings: list[str] = []
    if task.get("taskId") != ev.created_task_id:
        problems.append((rule, f"tasks/get #{n} taskId is {str(task.get('taskId'))[:40]!r}, not the requested id"))
    sp = status_problem(task)
    if sp:
        problems.append((rule, f"tasks/get #{n} {sp}"))
    for key in ("createdAt", "lastUpdatedAt"):
        if key not in task:
            problems.append((rule, f"tasks/get #{n} lacks {key}"))
            continue
        tp = timestamp_problem(task[key])
        if tp is not None:
            if tp[0] == "warn":
                warnings.append(f"tasks/get #{n} {key} {tp[1]}")
            else:
                problems.append((rule, f"tasks/get #{n} {key} {tp[1]}"))
    return problems, warnings


def _extension_findings(n: int, task: dict[str, Any]) -> tuple[list[Problem], list[str]]:
    problems: list[Problem] = []
    rtype = task.get("resultType")
    if rtype != "complete":
        history = (' (the Final SEP-2663 examples showed "task" here; the normative text requires "complete")'
                   if rtype == "task" else "")
        rule = "S-EXT-MUST-33" if rtype == "input_required" else "S-EXT-MUST-07"
        problems.append((rule, f'tasks/get #{n} resultType is {rtype!r}, not "complete"{history}'))
    status = task.get("status")
    if isinstance(status, str) and status not in TASK_STATUSES and status not in _CANCEL_SPELLINGS:
        # A word of the server's own for "still running" ("running", "pending", "in_progress"…).
        problems.append(("S-EXT-MUST-08",
                         f'tasks/get #{n}: a task still at work reads as "working", not {status!r} (S-EXT-MUST-08)'))
    ir = task.get("inputRequests")
    if status == "input_required" and (not isinstance(ir, dict) or not ir):
        problems.append(("S-EXT-MUST-09", f"tasks/get #{n} is input_required without a non-empty inputRequests"))
    if status == "failed" and not isinstance(task.get("error"), dict):
        problems.append(("S-EXT-MUST-12", f"tasks/get #{n} is failed without an error object"))
    return problems, []


def _legacy_findings(n: int, task: dict[str, Any]) -> tuple[list[Problem], list[str]]:
    if "resultType" in task and task.get("resultType") != "complete":
        return [], [f"tasks/get #{n} carries resultType {task.get('resultType')!r} on 2025-11-25"]
    return [], []


Findings = Callable[[int, dict[str, Any]], tuple[list[Problem], list[str]]]


def _status_payload(ev: Evidence, durable: tuple[str, str], shape_rule: str, era_findings: Findings) -> Verdict:
    """`durable`: (the id of the rule that the created task is readable at once, how to cite it);
    `shape_rule`: the rule on a task object's fields."""
    durable_id, durable_rule = durable
    poll = ev.get(Poll)
    if not poll.gets:
        return could_not_run(unrun(poll, "no tasks/get was sent"))
    first = poll.gets[0]
    if not first.ok:
        return failed(f"the first tasks/get right after creation got {first.describe()} ({durable_rule})",
                      broken=(durable_id,), evidence=first.seqs(),
                      details={"expected": "the task", "actual": first.describe()})
    problems: list[Problem] = []
    warnings: list[str] = []
    seqs: list[int] = []
    for n, reply in enumerate(poll.gets, start=1):
        seqs.extend(reply.seqs())
        task = result_of(ev, reply) if reply.ok else None
        if not reply.ok:
            # A task once readable must stay readable while it lives (the durability rule).
            problems.append((durable_id, f"tasks/get #{n} got {reply.describe()}"))
        elif not isinstance(task, dict):
            problems.append((shape_rule, f"tasks/get #{n} result is not an object"))
        else:
            for p, w in (_common_task_problems(ev, n, task, shape_rule), era_findings(n, task)):
                problems += p
                warnings += w
    shown = sorted(set(warnings))[:5]
    if problems:
        texts = [text for _rule, text in problems]
        return failed("; ".join(texts[:4]), broken=tuple(dict.fromkeys(rule for rule, _text in problems)),
                      evidence=seqs, warnings=shown,
                      details={"problems": texts[:20], "expected": "a well-formed task", "actual": texts[:4]})
    retried = (f"; {len(poll.rate_limited)} tasks/get refused as too early were asked again after the poll "
               "interval (S-EXT-MAY-02)") if poll.rate_limited else ""
    return passed(
        f"all {len(poll.gets)} tasks/get results are well-formed (statuses seen: "
        f"{', '.join(dict.fromkeys(poll.statuses))}){retried}",
        evidence=seqs, warnings=shown,
    )


@STATUS_PAYLOAD_SHAPE.judge(Wire.EXTENSION, requires=("S-EXT-MUST-05", "S-EXT-MUST-06", "S-EXT-MUST-07",
                                                      "S-EXT-MUST-08", "S-EXT-MUST-09", "S-EXT-MUST-12",
                                                      "S-EXT-MUST-33"))
def extension_status_payload(ev: Evidence) -> Verdict:
    return _status_payload(ev, ("S-EXT-MUST-05", "S-EXT-MUST-05: a CreateTaskResult must be durable"),
                           "S-EXT-MUST-06", _extension_findings)


@STATUS_PAYLOAD_SHAPE.judge(Wire.LEGACY, requires=("S-LEG-MUST-08", "S-LEG-MUST-15"))
def legacy_status_payload(ev: Evidence) -> Verdict:
    return _status_payload(ev, ("S-LEG-MUST-15", "S-LEG-MUST-15"), "S-LEG-MUST-08", _legacy_findings)
