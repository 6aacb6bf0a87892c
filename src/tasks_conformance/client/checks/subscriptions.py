"""Client check of a 2026-07-28 task subscription: a client that subscribes to its task's
notifications with subscriptions/listen compares the acknowledged `notifications.taskIds` with the
ids it asked for, and keeps polling a task left out (tasks-client-subscription-ack, whose server
acknowledges none of them and never sends notifications/tasks).

https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/subscriptions#acknowledgment
"""

from __future__ import annotations

from tasks_conformance.client.checks.registry import client_check
from tasks_conformance.client.evidence import Exchange, ScenarioRun
from tasks_conformance.client.jsonrpc import id_key
from tasks_conformance.core.protocol import (
    META_SUBSCRIPTION_ID,
    METHOD_ACKNOWLEDGED,
    METHOD_LISTEN,
    TERMINAL_STATUSES,
    get_path,
)
from tasks_conformance.core.text import shown
from tasks_conformance.core.verdict import Verdict, not_applicable, passed

SUBSCRIBE = "tasks-client-subscription-ack"
SHOWN = 3
MAX_EVIDENCE = 40


def _asked(e: Exchange) -> list[str]:
    ids = get_path(e.params, "notifications", "taskIds")
    return [t for t in ids if isinstance(t, str)] if isinstance(ids, list) else []


def _ack(view: ScenarioRun, listen: Exchange) -> Exchange | None:
    """The acknowledgement of one subscriptions/listen: the server's first notification naming it."""
    key = id_key(listen.message.get("id"))
    return next((s for s in view.server_requests if s.method == METHOD_ACKNOWLEDGED
                 and id_key(get_path(s.params, "_meta", META_SUBSCRIPTION_ID)) == key), None)


def _left_out(view: ScenarioRun) -> list[tuple[str, Exchange, Exchange]]:
    """(task id, the subscriptions/listen, its acknowledgement) for each task of this connection
    the client asked to be notified of and the server's acknowledgement left out."""
    out: list[tuple[str, Exchange, Exchange]] = []
    created = set(view.created_task_ids())
    for listen in view.sent(METHOD_LISTEN):
        ack = _ack(view, listen) if listen.is_request else None
        if ack is None:
            continue
        agreed = get_path(ack.params, "notifications", "taskIds")
        agreed = agreed if isinstance(agreed, list) else []
        out += [(t, listen, ack) for t in dict.fromkeys(_asked(listen)) if t not in agreed and t in created]
    return out


def _followed(view: ScenarioRun, task_id: str, since: float) -> bool:
    """Whether, after `since`, the client read the task's terminal status or cancelled it."""
    for e in view.sent("tasks/get", "tasks/cancel"):
        if e.task_id != task_id or e.time < since:
            continue
        if e.method == "tasks/cancel" or get_path(e.result, "status") in TERMINAL_STATUSES:
            return True
    return False


@client_check(
    id="tasks-client-subscription-ack",
    area="subscriptions",
    title="A task the subscription acknowledgement leaves out is still polled",
    description="A client that subscribes to its task with subscriptions/listen (it may: it may also just poll) "
                "compares the acknowledged notifications.taskIds with those it asked for, and keeps polling a task "
                "left out. The scripted server of tasks-client-subscription-ack acknowledges none and never sends "
                "notifications/tasks: a client that stops polling before the task's end warns (SHOULD). A client "
                "that does not subscribe is not judged.",
    requirements=("C-EXT-SHOULD-11",),
    scenarios=(SUBSCRIBE,),
)
def subscription_ack(runs: list[ScenarioRun]) -> Verdict:
    judged, evidence, left = 0, [], []
    for run in runs:
        for view in run.by_connection():
            for task_id, listen, ack in _left_out(view):
                judged += 1
                evidence += [*listen.seqs, ack.seq]
                # Its end read any time after it subscribed (a poll may cross the acknowledgement).
                if not _followed(view, task_id, listen.time) and not run.client.timed_out:
                    left.append(f"{view.label}: task {shown(task_id)}, left out of the acknowledgement (frame "
                                f"#{ack.seq}), was not polled to its end")
    if not judged:
        return not_applicable("the client subscribed to no task with subscriptions/listen (it need not: it may poll "
                              "alone), or no acknowledgement left one out")
    if left:
        return passed(f"{len(left)} of {judged} task(s) left out of a subscription were not polled on",
                      evidence=evidence[:MAX_EVIDENCE],
                      warnings=["the client relied on a subscription that did not cover its task (C-EXT-SHOULD-11): "
                                + "; ".join(left[:SHOWN])])
    return passed(f"the {judged} task(s) left out of a subscription were polled to their end", judged=judged,
                  evidence=evidence[:MAX_EVIDENCE])
