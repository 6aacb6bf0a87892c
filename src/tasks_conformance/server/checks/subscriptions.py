"""Subscriptions: a task subscription is acknowledged first and tags every notifications/tasks
with its id; each notification is a complete task about a task that was asked for."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tasks_conformance.core.causes import by_flag
from tasks_conformance.core.protocol import ERR_METHOD_NOT_FOUND, META_SUBSCRIPTION_ID, get_path
from tasks_conformance.core.verdict import Verdict, could_not_run, failed, not_applicable, passed, warn
from tasks_conformance.core.wires import Wire
from tasks_conformance.server.checks.engine.common import got, unrun
from tasks_conformance.server.checks.engine.registry import check
from tasks_conformance.server.checks.engine.shapes import missing_task_fields, status_problem
from tasks_conformance.server.evidence import DeclaredCall, Evidence, Listen

if TYPE_CHECKING:
    # Annotations only: listing the checks must not import the JSON-RPC layer.
    from tasks_conformance.core.rpc.peer import Reply

ACK = "notifications/subscriptions/acknowledged"

SUBSCRIPTION_NOTIFICATIONS = check(
    id="tasks-subscription-notifications",
    area="subscriptions",
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
    # A subscription that carries no notifications/tasks at all is allowed.
    permits=('S-EXT-MAY-08',),
    owns=("S-EXT-MUST-30",),
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


def _notification_problems(tagged: list[Message], wanted: str | None) -> list[tuple[str, str]]:
    """Each problem with the rule it breaks."""
    problems: list[tuple[str, str]] = []
    for seq, m in tagged:
        if m.get("method") != "notifications/tasks":
            continue
        task = m.get("params") or {}
        if task.get("taskId") != wanted:
            problems.append(("S-EXT-MUST-30",
                             f"frame {seq} is about task {str(task.get('taskId'))[:40]!r}, which was not requested"))
        # TTL field names in notifications are tasks-ttl-shape's to judge (it reads them too).
        missing = missing_task_fields(task)
        if missing or status_problem(task):
            what = f"lacks {', '.join(missing)}" if missing else str(status_problem(task))
            problems.append(("S-EXT-MUST-31", f"frame {seq} is not a complete task: {what}"))
    return problems


def _listen_reply(rec: Listen) -> Reply | Verdict:
    """The answer to our subscriptions/listen, or the verdict when there is none to judge: not
    sent (could not run), or not implemented (task notifications are optional)."""
    reply = rec.listen
    if reply is None:
        return could_not_run(unrun(rec, "subscriptions/listen was not sent"))
    if reply.error_code == ERR_METHOD_NOT_FOUND:
        return not_applicable("the server does not implement subscriptions/listen (task notifications are "
                              "optional, S-EXT-MAY-08)", evidence=reply.seqs())
    return reply


@SUBSCRIPTION_NOTIFICATIONS.judge(Wire.EXTENSION, requires=("S-EXT-MUST-30", "S-EXT-MUST-31", "S-CORE-MUST-12"))
def subscription_notifications(ev: Evidence) -> Verdict:
    rec = ev.get(Listen)
    reply = _listen_reply(rec)
    if isinstance(reply, Verdict):
        return reply
    if reply.error is not None:
        return failed(f"subscriptions/listen for the task, declaring the extension, got {reply.describe()}",
                      broken=("S-EXT-MUST-30",), evidence=reply.seqs(),
                      details={"expected": "an acknowledged subscription", "actual": reply.describe()})
    sub = reply.request_id
    mine = _messages(ev, rec)
    tagged = [(seq, m) for seq, m in mine if _tagged_with(m, sub)]
    untagged = [seq for seq, m in mine if m.get("method") == "notifications/tasks" and not _tagged_with(m, sub)]
    seqs = [*reply.seqs(), *(seq for seq, _ in mine)]
    problems: list[tuple[str, str]] = []
    if untagged:
        problems.append(("S-EXT-MUST-30", f"{len(untagged)} notifications/tasks lack the subscriptionId _meta "
                        f"{META_SUBSCRIPTION_ID!r} = {sub!r} (frames {', '.join(map(str, untagged[:5]))})"))
    if not tagged and not untagged:
        if not reply.answered:
            return could_not_run(by_flag("no acknowledgement arrived within the listening window "
                                         f"({reply.elapsed_ms} ms); the server may be slow to open the stream",
                                         "raise --timeout", "--timeout"), evidence=seqs)
        problems.append(("S-EXT-MUST-30", "the subscription ended without notifications/subscriptions/acknowledged"))
    elif tagged and tagged[0][1].get("method") != ACK:
        problems.append(("S-EXT-MUST-30",
                         f"the first message of the subscription is {tagged[0][1].get('method')!r}, not {ACK}"))
    problems += _notification_problems(tagged, rec.task_id)
    if reply.answered and get_path(reply.result, "resultType") != "complete":
        problems.append(("S-EXT-MUST-30", f"the subscription closed with resultType "
                         f"{get_path(reply.result, 'resultType')!r}, not \"complete\""))
    if problems:
        texts = [text for _rule, text in problems]
        return failed("; ".join(texts[:4]), broken=tuple(dict.fromkeys(rule for rule, _text in problems)),
                      evidence=seqs,
                      details={"expected": "acknowledged first, every notification tagged", "actual": texts[:4]})
    count = sum(1 for _, m in tagged if m.get("method") == "notifications/tasks")
    how = "closed gracefully" if reply.answered else f"was still open after {reply.elapsed_ms} ms"
    return passed(f"the subscription was acknowledged first, carried {count} tagged notifications/tasks and {how}",
                  evidence=seqs)


STREAM_METHODS = ("notifications/progress", "notifications/message")

SUBSCRIPTION_STREAM_CLEAN = check(
    id="tasks-subscription-no-progress-or-message",
    area="subscriptions",
    category="lifecycle",
    title="A task subscription carries no notifications/progress or notifications/message",
    description=(
        "On the subscriptions/listen stream for a task (the same listen as tasks-subscription-notifications), "
        "no notifications/progress or notifications/message arrives. Over HTTP the stream is the listen "
        "request's own response; on stdio, TCP and Unix sockets it is the messages tagged with the "
        "subscriptionId, and an untagged one seen while listening only warns (policy P-29)."
    ),
    probes=(DeclaredCall, Listen),
    needs="task",
)


def _on_the_stream(ev: Evidence, seq: int, msg: dict[str, Any], listen_seq: int, sub: Any) -> bool | None:
    """True when the frame is on the listen stream, None when a shared stream cannot tell."""
    if _tagged_with(msg, sub):
        return True
    frame = ev.frame(seq)
    if frame is not None and frame.http is not None:
        return frame.reply_to == listen_seq
    return None


@SUBSCRIPTION_STREAM_CLEAN.judge(Wire.EXTENSION, requires=("S-EXT-MUST-21",))
def subscription_stream_clean(ev: Evidence) -> Verdict:
    rec = ev.get(Listen)
    reply = _listen_reply(rec)
    if isinstance(reply, Verdict):
        return reply
    if reply.error is not None:
        return could_not_run(got(f"subscriptions/listen got {reply.describe()}", reply,
                                 fix="answer subscriptions/listen (an error is judged by its own rule)"),
                             blocked_by="tasks-subscription-notifications", evidence=reply.seqs())
    on_stream: list[int] = []
    unsure: list[int] = []
    for seq, msg in _messages(ev, rec):
        if msg.get("method") not in STREAM_METHODS:
            continue
        where = _on_the_stream(ev, seq, msg, reply.request_seq, reply.request_id)
        if where:
            on_stream.append(seq)
        elif where is None:
            unsure.append(seq)
    seqs = [*reply.seqs(), *on_stream, *unsure]
    if on_stream:
        methods = sorted({str(get_path(ev.frame_json(s), "method")) for s in on_stream})
        return failed(f"the task subscription carried {len(on_stream)} {' and '.join(methods)} (frames "
                      f"{', '.join(map(str, on_stream[:5]))}); a task's listen stream has only task status "
                      "notifications (S-EXT-MUST-21)", broken=("S-EXT-MUST-21",), evidence=seqs,
                      details={"expected": "no notifications/progress or notifications/message",
                               "actual": f"{len(on_stream)} on the stream"})
    warnings = []
    if unsure:
        warnings.append(warn(f"{len(unsure)} untagged notifications/progress or notifications/message arrived on "
                             f"the shared stream while the task subscription was open (frames "
                             f"{', '.join(map(str, unsure[:5]))}); they may belong to it (S-EXT-MUST-21, "
                             "policy P-29)", "P-29"))
    how = "until it closed" if reply.answered else f"for {reply.elapsed_ms} ms"
    return passed(f"no notifications/progress or notifications/message on the task subscription {how}",
                  evidence=seqs, warnings=warnings)
