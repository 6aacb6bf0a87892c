"""Subscriptions: a task subscription is acknowledged first and tags every notifications/tasks
with its id; each notification is a complete task about a task that was asked for."""

from __future__ import annotations

from typing import Any

from tasks_conformance.checks.registry import Verdict, check, could_not_run, failed, not_applicable, passed
from tasks_conformance.checks.shapes import missing_task_fields, status_problem
from tasks_conformance.evidence import DeclaredCall, Evidence, Listen
from tasks_conformance.protocol import ERR_METHOD_NOT_FOUND, META_SUBSCRIPTION_ID, get_path
from tasks_conformance.wires import Wire

ACK = "notifications/subscriptions/acknowledged"

SUBSCRIPTION_NOTIFICATIONS = check(
    id="tasks-subscription-notifications",
    category="lifecycle",
    title="A task subscription acknowledges first and tags every notifications/tasks with its id",
    description=(
        "subscriptions/listen {notifications: {taskIds}} declaring the extension: the first message is "
        "notifications/subscriptions/acknowledged; every notifications/tasks carries the subscriptionId "
        "_meta, is about a requested task and is a complete task object; a graceful close is "
        '{resultType: "complete"}. Servers need not send task notifications at all: -32601 is not applicable.'
    ),
    probes=(DeclaredCall, Listen),
    needs="task",
)

Message = tuple[int, dict[str, Any]]


def _messages(ev: Evidence, rec: Listen) -> list[Message]:
    out: list[Message] = []
    for seq in rec.frames:
        msg = ev.frame_json(seq)
        if isinstance(msg, dict):
            out.append((seq, msg))
    return out


def _tagged_with(m: dict[str, Any], sub: Any) -> bool:
    return bool(get_path(m, "params", "_meta", META_SUBSCRIPTION_ID) == sub)


def _notification_problems(tagged: list[Message], wanted: str | None) -> list[str]:
    problems: list[str] = []
    for seq, m in tagged:
        if m.get("method") != "notifications/tasks":
            continue
        task = m.get("params") or {}
        if task.get("taskId") != wanted:
            problems.append(f"frame {seq} is about task {str(task.get('taskId'))[:40]!r}, which was not requested")
        # TTL field names in notifications are tasks-ttl-shape's to judge (it reads them too).
        missing = missing_task_fields(task)
        if missing or status_problem(task):
            what = f"lacks {', '.join(missing)}" if missing else str(status_problem(task))
            problems.append(f"frame {seq} is not a complete task: {what}")
    return problems


@SUBSCRIPTION_NOTIFICATIONS.judge(Wire.EXTENSION, requires=("S-EXT-MUST-30", "S-EXT-MUST-31", "S-CORE-MUST-12"))
def subscription_notifications(ev: Evidence) -> Verdict:
    rec = ev.get(Listen)
    reply = rec.listen
    if reply is None:
        return could_not_run(rec.not_run or "subscriptions/listen was not sent")
    if reply.error_code == ERR_METHOD_NOT_FOUND:
        return not_applicable("the server does not implement subscriptions/listen (task notifications are "
                              "optional, S-EXT-MAY-08)", evidence=reply.seqs())
    if reply.error is not None:
        return failed(f"subscriptions/listen for the task, declaring the extension, got {reply.describe()}",
                      evidence=reply.seqs(), details={"expected": "an acknowledged subscription",
                                                      "actual": reply.describe()})
    sub = reply.request_id
    mine = _messages(ev, rec)
    tagged = [(seq, m) for seq, m in mine if _tagged_with(m, sub)]
    untagged = [seq for seq, m in mine if m.get("method") == "notifications/tasks" and not _tagged_with(m, sub)]
    seqs = [*reply.seqs(), *(seq for seq, _ in mine)]
    problems: list[str] = []
    if untagged:
        problems.append(f"{len(untagged)} notifications/tasks lack the subscriptionId _meta "
                        f"{META_SUBSCRIPTION_ID!r} = {sub!r} (frames {', '.join(map(str, untagged[:5]))})")
    if not tagged and not untagged:
        if not reply.answered:
            return could_not_run("no acknowledgement arrived within the listening window "
                                 f"({reply.elapsed_ms} ms); the server may be slow to open the stream", evidence=seqs)
        problems.append("the subscription ended without notifications/subscriptions/acknowledged")
    elif tagged and tagged[0][1].get("method") != ACK:
        problems.append(f"the first message of the subscription is {tagged[0][1].get('method')!r}, not {ACK}")
    problems += _notification_problems(tagged, rec.task_id)
    if reply.answered and get_path(reply.result, "resultType") != "complete":
        problems.append(f"the subscription closed with resultType {get_path(reply.result, 'resultType')!r}, "
                        'not "complete"')
    if problems:
        return failed("; ".join(problems[:4]), evidence=seqs,
                      details={"expected": "acknowledged first, every notification tagged", "actual": problems[:4]})
    count = sum(1 for _, m in tagged if m.get("method") == "notifications/tasks")
    how = "closed gracefully" if reply.answered else f"was still open after {reply.elapsed_ms} ms"
    return passed(f"the subscription was acknowledged first, carried {count} tagged notifications/tasks and {how}",
                  evidence=seqs)
