"""What the client checks of following a task share: each task on the connection that created it
(a task a prompts/get reply named left out), its reads, and the poll cadence both eras judge
(policies P-33, P-48)."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass

from tasks_conformance.client.evidence import Exchange, ScenarioRun
from tasks_conformance.core.protocol import TERMINAL_STATUSES, get_path
from tasks_conformance.core.verdict import Verdict, not_applicable, passed, warn
from tasks_conformance.core.wires import CreatedTask, task_object

SHOWN = 3
MAX_EVIDENCE = 40
# A poll this much earlier than the interval is still on time (policy P-33): max(50 ms, 10 %).
EARLY_SLACK_S, EARLY_SLACK_SHARE = 0.050, 0.10
# A tasks/get arriving this soon after the previous one was sent with it, not after its answer (P-52):
# far below any poll a client times (a client polling every 20 ms is still judged).
PARALLEL_S = 0.010


def gets_of(run: ScenarioRun, task_id: str) -> list[Exchange]:
    return [e for e in run.sent("tasks/get") if e.is_request and e.task_id == task_id]


def status_of(e: Exchange) -> str | None:
    value = get_path(e.result, "status")
    return value if isinstance(value, str) else None


def read_ended(run: ScenarioRun) -> bool:
    """Did the client read a task's end (a tasks/get answered with a terminal status)?"""
    return any(status_of(e) in TERMINAL_STATUSES for e in run.sent("tasks/get"))


def task_runs(runs: list[ScenarioRun]) -> Iterator[tuple[ScenarioRun, str]]:
    """Each task a run's client created, with the view of the connection that created it, where it
    is judged (policy P-47)."""
    for run in runs:
        for view in run.by_connection():
            for task_id in dict.fromkeys(view.created_task_ids()):
                if task_id not in prompt_tasks(view):
                    yield view, task_id


def prompt_tasks(run: ScenarioRun) -> set[str]:
    """The ids of the tasks a reply to prompts/get named (which no 2026-07-28 method but tools/call may create)."""
    return {task_id for e in run.sent("prompts/get") if (task_id := CreatedTask.read(e.result).task_id) is not None}


@dataclass(frozen=True)
class Cadence:
    """How one wire's polls are judged: the interval's field, the requests after which the next
    poll is not judged (P-33), and the rules an early poll breaks (still on a changed value: the
    second)."""

    field: str
    between: tuple[str, ...]
    rule: str
    changed_rule: str
    # A tasks/get sent before the previous one was answered is a parallel poll, which the wire allows
    # (2025-11-25: C-LEG-MAY-05): it is not measured against that answer (policy P-52).
    parallel: bool = False


def poll_gaps(run: ScenarioRun, task_id: str,
              cadence: Cadence) -> Iterator[tuple[Exchange, Exchange, float, int, int | None]]:
    """(previous answer, next read, gap s, interval in force ms, the interval before it) for the first
    tasks/get of a task after its CreateTaskResult, against the interval that gave (policy P-48),
    and for each pair of tasks/get, where the previous answer said how long to wait and no request
    of `cadence.between` (an answer, a result fetch) came between (P-33)."""
    gets = [e for e in gets_of(run, task_id) if e.reply_time is not None]
    create = next((e for e in run.exchanges if CreatedTask.read(e.result).task_id == task_id), None)
    before = get_path(task_object(create.result), cadence.field) if create is not None else None
    between = [e.time for e in run.sent(*cadence.between)]
    if create is not None and create.reply_time is not None and gets and isinstance(before, int) and before > 0:
        first = gets[0]
        if not any(create.reply_time <= t <= first.time for t in between):
            yield create, first, first.time - create.reply_time, before, None
    for prev, nxt in itertools.pairwise(gets):
        interval = get_path(prev.result, cadence.field)
        assert prev.reply_time is not None
        if status_of(prev) in TERMINAL_STATUSES or not isinstance(interval, int) or interval <= 0:
            before = interval
            continue
        if cadence.parallel and (nxt.time < prev.reply_time or nxt.time - prev.time < PARALLEL_S):
            before = interval
            continue  # sent with the previous poll, not after its answer: a parallel poll (P-52)
        if not any(prev.reply_time <= t <= nxt.time for t in between):  # after an answer: not judged (P-33)
            yield prev, nxt, nxt.time - prev.reply_time, interval, before if isinstance(before, int) else None
        before = interval


def judge_cadence(runs: list[ScenarioRun], cadence: Cadence) -> Verdict:
    """Early polls warn (SHOULD; policy P-33), naming the changed-value rule when the gaps still
    follow the interval before the latest."""
    early: list[tuple[ScenarioRun, Exchange, float, int, bool, bool]] = []
    judged = 0
    name = cadence.field
    for run, task_id in task_runs(runs):
        for prev, nxt, gap, interval, before in poll_gaps(run, task_id, cadence):
            judged += 1
            if gap < interval / 1000 - max(EARLY_SLACK_S, EARLY_SLACK_SHARE * interval / 1000):
                stale = before is not None and before != interval and gap >= before / 1000 - EARLY_SLACK_S
                early.append((run, nxt, gap, interval, stale, prev.method != "tasks/get"))
    if not judged:
        return not_applicable(f"no tasks/get of a task after an answer with a {name} to judge")
    if not early:
        return passed(f"all {judged} polls waited the latest {name}", judged=judged)
    changed = any(e[4] for e in early)
    first = any(e[5] for e in early)
    rule = cadence.changed_rule if changed else cadence.rule
    text = "; ".join(f"{r.label} frame #{e.seq}: {gap * 1000:.0f} ms after "
                     f"{'the CreateTaskResult' if at_first else 'the last answer'}, {name} {iv}"
                     for r, e, gap, iv, _s, at_first in early[:SHOWN])
    policies = ("P-33", "P-48") if first else ("P-33",)
    return passed(f"{len(early)} of {judged} polls came early", evidence=[e[1].seq for e in early][:MAX_EVIDENCE],
                  judged=judged, warnings=[warn(f"polls sooner than {name} ({rule}"
                                                f"{', still on the old value' if changed else ''}; policy "
                                                f"{' and '.join(policies)}): {text}", *policies)])
