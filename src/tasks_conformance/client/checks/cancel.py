"""The cancel judgement both eras' client checks share: a task is cancelled with tasks/cancel,
never with notifications/cancelled naming the tools/call that created it (policy P-35), and that
tasks/cancel goes to the connection that created the task (policy P-47): one sent to a second
server process, or a second session, which never created it, cancels nothing. What differs by era
is only how a created task is recognised and what the check says when the client never got far
enough to cancel."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from tasks_conformance.client.evidence import Exchange, ScenarioRun, said_elsewhere
from tasks_conformance.client.jsonrpc import id_key
from tasks_conformance.core.causes import by_flag
from tasks_conformance.core.result import CheckWarning
from tasks_conformance.core.text import shown
from tasks_conformance.core.verdict import Verdict, could_not_run, failed, not_applicable, passed, warn
from tasks_conformance.core.wires import CreatedTask

MAX_EVIDENCE = 40


def _tasks(run: ScenarioRun, creates: Callable[[ScenarioRun], Iterable[Exchange]]) -> list[tuple[ScenarioRun, str]]:
    """Each task the run's client created, with the view of the connection that created it."""
    out = []
    for view in run.by_connection():
        created = (CreatedTask.read(e.result).task_id for e in creates(view))
        out += [(view, task_id) for task_id in dict.fromkeys(created) if task_id is not None]
    return out


def judge_cancel(runs: list[ScenarioRun], *, rule: str, scenario: str,
                 creates: Callable[[ScenarioRun], Iterable[Exchange]],
                 unstarted: Callable[[ScenarioRun], Verdict | None], request_level: str | None = None) -> Verdict:
    """`creates`: the tools/call exchanges of a run (or of one connection's view) that created a
    task; `unstarted`: the verdict when the client created a task but never got to the point of
    cancelling it (or None when it did); `request_level`: the check that judges every other
    notifications/cancelled (2026-07-28), where this one warns of none. A scenario in which no
    task was created is not applicable."""
    warnings: list[CheckWarning] = []
    for run in runs:
        for view in run.by_connection():  # a request id names a request of its own connection only
            # Keyed by the id's JSON text: a client may send any JSON value as an id (an array, an object).
            by_id = {id_key(e.message.get("id")): e for e in creates(view)}
            for n in view.sent("notifications/cancelled"):
                create = by_id.get(id_key(n.params["requestId"])) if "requestId" in n.params else None
                if create is not None and create.reply_time is not None and n.time >= create.reply_time:
                    return failed(f"notifications/cancelled (frame #{n.seq}, {view.label}) names the tools/call "
                                  "that created a task: a task is cancelled with tasks/cancel", broken=(rule,),
                                  evidence=(*create.seqs, n.seq),
                                  details={"expected": "tasks/cancel for the task",
                                           "actual": f"notifications/cancelled for the tools/call (frame #{n.seq})"})
                if request_level is None:
                    warnings.append(warn(f"a notifications/cancelled in {view.label} (frame #{n.seq}) names no task's "
                                         "tools/call (request-level cancellation, policy P-35)", "P-35"))
    asked = [run for run in runs if run.name == scenario]
    if not asked:
        return not_applicable("the cancel scenario did not run")
    cancels: list[int] = []
    for run in asked:
        sent = [e for e in run.sent("tasks/cancel") if e.is_request]
        tasks = _tasks(run, creates)
        if not tasks:  # which rule kept the task from being created is another check's to say
            return not_applicable("the client created no task in the cancel scenario (no tools/call of it got a "
                                  "CreateTaskResult), so it had nothing to cancel")
        if not sent:
            early = unstarted(run)
            if early is not None:
                return early
            return could_not_run(by_flag("asked to cancel (MCP_CONFORMANCE_CONTEXT cancel: true), the client sent no "
                                         "tasks/cancel (policy P-35)",
                                         "have the harness cancel the task once it reads working when the context "
                                         "says cancel: true"), policies=("P-35",))
        reached = [e for view, task_id in tasks for e in view.sent("tasks/cancel") if e.is_request
                   and e.task_id == task_id]
        if not reached:
            return _missed(run, rule, tasks, sent)
        cancels += [s for e in reached for s in e.seqs]
    return passed("the task was cancelled with tasks/cancel", warnings=warnings, evidence=cancels[:MAX_EVIDENCE])


def _missed(run: ScenarioRun, rule: str, tasks: list[tuple[ScenarioRun, str]], sent: list[Exchange]) -> Verdict:
    """Asked to cancel, the client sent tasks/cancel, but none reached a task it created on the
    connection that created it: the task was never cancelled."""
    view, task_id = tasks[0]
    elsewhere = view.elsewhere(task_id, "tasks/cancel")
    if elsewhere:
        why = (f"{said_elsewhere(run, elsewhere)}; the task was created on {run.where_is(view.connection or 1)}, "
               "where no tasks/cancel came (policy P-47)")
    else:
        why = (f"it named {shown(sent[0].task_id)} (frame #{sent[0].seq}), not the task {task_id!r} the client "
               "created")
    return failed(f"asked to cancel, the client's tasks/cancel never reached its task: {why}", broken=(rule,),
                  policies=("P-47",) if elsewhere else (),
                  evidence=[s for e in (elsewhere or sent) for s in e.seqs][:MAX_EVIDENCE],
                  details={"expected": f"tasks/cancel for task {task_id!r} on the {view.connection_kind} that "
                                       "created it", "actual": why})
