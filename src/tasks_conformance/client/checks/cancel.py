"""The cancel judgement both eras' client checks share: a task is cancelled with tasks/cancel,
never with notifications/cancelled naming the tools/call that created it (policy P-35). What
differs by era is only how a created task is recognised and what the check defers to when the
client never got far enough to cancel."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from tasks_conformance.client.evidence import Exchange, ScenarioRun, id_key
from tasks_conformance.core.causes import setting
from tasks_conformance.core.result import CheckWarning
from tasks_conformance.core.verdict import Verdict, could_not_run, failed, not_applicable, passed, warn


def judge_cancel(runs: list[ScenarioRun], *, rule: str, scenario: str,
                 creates: Callable[[ScenarioRun], Iterable[Exchange]],
                 unstarted: Callable[[ScenarioRun], Verdict | None]) -> Verdict:
    """`creates`: the tools/call exchanges of a run that created a task; `unstarted`: the verdict
    when the client never got to the point of cancelling (or None when it did)."""
    warnings: list[CheckWarning] = []
    for run in runs:
        # Keyed by the id's JSON text: a client may send any JSON value as an id (an array, an object).
        by_id = {id_key(e.message.get("id")): e for e in creates(run)}
        for n in run.sent("notifications/cancelled"):
            create = by_id.get(id_key(n.params["requestId"])) if "requestId" in n.params else None
            if create is not None and create.reply_time is not None and n.time >= create.reply_time:
                return failed(f"notifications/cancelled (frame #{n.seq}, {run.name}) names the tools/call that "
                              "created a task: a task is cancelled with tasks/cancel", broken=(rule,),
                              evidence=(*create.seqs, n.seq),
                              details={"expected": "tasks/cancel for the task",
                                       "actual": f"notifications/cancelled for the tools/call (frame #{n.seq})"})
            warnings.append(warn(f"a notifications/cancelled in {run.name} (frame #{n.seq}) names no task's tools/call "
                                 "(request-level cancellation, policy P-35)", "P-35"))
    asked = [run for run in runs if run.name == scenario]
    cancels: list[int] = []
    for run in asked:
        sent = [e for e in run.sent("tasks/cancel") if e.is_request]
        cancels += [s for e in sent for s in e.seqs]
        if not sent:
            early = unstarted(run)
            if early is not None:
                return early
            return could_not_run(setting("asked to cancel (MCP_CONFORMANCE_CONTEXT cancel: true), the client sent no "
                                         "tasks/cancel (policy P-35)",
                                         "have the harness cancel the task once it reads working when the context "
                                         "says cancel: true"), policies=("P-35",))
    if not asked:
        return not_applicable("the cancel scenario did not run")
    return passed("the task was cancelled with tasks/cancel", warnings=warnings, evidence=cancels)
