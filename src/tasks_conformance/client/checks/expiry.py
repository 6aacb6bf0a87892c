"""The expiry judgement both eras' client checks share (policy P-45): a task whose ttl runs out
while it is working is deleted by the scripted server, and every request naming it from then on
gets -32602 "task not found". No rule says what a client does then: the checks expect it to stop
following the task (a retry or two aside) and to surface an error, and warn otherwise. Stopping at
createdAt + ttl before the server says so, or polling until it does, is never judged.
"""

from __future__ import annotations

from tasks_conformance.client.evidence import Exchange, ScenarioRun
from tasks_conformance.core.text import shown
from tasks_conformance.core.verdict import Verdict, not_applicable, passed, warn

# Requests naming a task after the server first said it was not found that still pass: a client
# may retry once or twice in case the error was passing (policy P-45).
RETRIES = 2
SHOWN = 3
MAX_EVIDENCE = 40


def _gone(e: Exchange) -> bool:
    return e.reply is not None and "error" in e.reply


def judge_expiry(runs: list[ScenarioRun], *, scenario: str, methods: tuple[str, ...]) -> Verdict:
    """`methods`: the requests that name a task on the run's wire."""
    mine = [run for run in runs if run.name == scenario]
    if not mine:
        return not_applicable("the expiry scenario did not run")
    warnings = []
    judged = followed = 0
    evidence: list[int] = []
    gone: list[int] = []  # the tasks/get the server answered "not found", and that answer
    views = [(view, task_id) for whole in mine for view in whole.by_connection()
             for task_id in dict.fromkeys(view.created_task_ids())]  # each task on its own connection (P-47)
    for run, task_id in views:
        naming = [e for e in run.sent(*methods) if e.is_request and e.task_id == task_id]
        followed += any(e.method == "tasks/get" for e in naming)
        first = next((i for i, e in enumerate(naming) if e.method == "tasks/get" and _gone(e)), None)
        if first is None:
            continue  # it stopped before the server said the task was gone: not judged (P-45)
        judged += 1
        gone += naming[first].seqs
        after = naming[first + 1:]
        if len(after) > RETRIES:
            evidence += [e.seq for e in after]
            warnings.append(warn(
                f"{run.label}: after tasks/get answered task {task_id!r} not found (frame #{naming[first].seq}) "
                f"the client sent {len(after)} more request(s) naming it: "
                + ", ".join(f"{shown(e.method)} #{e.seq}" for e in after[:SHOWN]) + " (policy P-45)", "P-45"))
        said = run.client.outcome
        if said is not None and not said.get("error") and said.get("status") != "abandoned":
            warnings.append(warn(f"{run.label}: the expired task was reported as status "
                                 f"{str(said.get('status'))[:40]!r} with no error (policy P-45)", "P-45"))
    if not followed:
        return not_applicable("the client never read the task with tasks/get, so how it let the task go cannot be "
                              "judged")
    if not judged:
        return passed("the client stopped following the task before the server reported it gone (createdAt + ttl "
                      "as a backstop is not judged; policy P-45)", judged=followed, policies=("P-45",))
    if warnings:
        return passed("the client went on with a task the server no longer knew", warnings=warnings,
                      evidence=evidence[:MAX_EVIDENCE])
    return passed("the client stopped following the task once the server reported it not found", judged=judged,
                  evidence=gone[:MAX_EVIDENCE])
