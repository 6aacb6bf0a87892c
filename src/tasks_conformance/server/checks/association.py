"""Associating messages with a task (2025-11-25): params.taskId picks the task, and results and
status notifications of the tasks/* methods carry no related-task _meta."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tasks_conformance.core.causes import unmet
from tasks_conformance.core.protocol import (
    META_RELATED_TASK,
    TASK_STATUSES,
    get_path,
)
from tasks_conformance.core.result import CheckWarning
from tasks_conformance.core.verdict import Verdict, could_not_run, failed, passed, warn
from tasks_conformance.core.wires import Wire
from tasks_conformance.server.checks.engine.common import got, unrun
from tasks_conformance.server.checks.engine.registry import check
from tasks_conformance.server.checks.engine.shapes import reply_seqs, result_of
from tasks_conformance.server.evidence import (
    Cancel,
    DeclaredCall,
    Evidence,
    Poll,
    RelatedMetaOverride,
    TaskListing,
)

if TYPE_CHECKING:
    from tasks_conformance.core.rpc.peer import Reply


STATUS_NOTIFICATION = "notifications/tasks/status"

TASK_ID_WINS = check(
    id="tasks-legacy-task-id-wins",
    area="association",
    category="lifecycle",
    title="params.taskId, not a related-task _meta, picks the task",
    description=(
        "tasks/get of our task whose related-task _meta names a made-up task must answer our task; tasks/get of a "
        "made-up id whose _meta names our task must not answer our task. Reads only, so the task is undisturbed."
    ),
    probes=(DeclaredCall, Poll, RelatedMetaOverride),
    needs="task",
)


@TASK_ID_WINS.judge(Wire.LEGACY, requires=("S-LEG-MUST-14",))
def task_id_wins(ev: Evidence) -> Verdict:
    rec = ev.get(RelatedMetaOverride)
    ours, other = rec.meta_names_other, rec.params_names_other
    if ours is None or other is None:
        return could_not_run(unrun(rec, "the related-task _meta probe did not run"))
    seqs = reply_seqs(ours, other)
    lost = next((r for r in (ours, other) if not r.answered and not r.timed_out), None)
    if lost is not None:
        return could_not_run(got(f"tasks/get with a related-task _meta got {lost.describe()}", lost,
                                 fix="answer tasks/get that carries a related-task _meta"), evidence=seqs)
    problems: list[str] = []
    if ours.answered and not ours.ok:
        problems.append(f"tasks/get of our task with _meta naming {rec.other_id!r} got {ours.describe()}")
    elif ours.ok and get_path(ours.result, "taskId") != rec.task_id:
        problems.append(f"tasks/get of our task with _meta naming another task answered task "
                        f"{get_path(ours.result, 'taskId')!r}")
    if other.ok and get_path(other.result, "taskId") == rec.task_id:
        problems.append(f"tasks/get of the unknown id {rec.other_id!r} with _meta naming our task answered our task")
    # Any error for the unknown id is right here; which code it must be is judged by
    # tasks-invalid-task-id-rejected.
    unanswered = [r for r in (ours, other) if r.timed_out]
    plain = next((g for g in ev.get(Poll).gets if g.answered), None)
    if unanswered and plain is not None:
        # The same tasks/get without the _meta was answered (polling): the _meta is what the
        # server did not ignore.
        seqs += plain.seqs()
        problems += [f"tasks/get {'of our task' if r is ours else 'of an unknown id'} carrying a related-task _meta "
                     f"got {r.describe()}, while the same request without it is answered" for r in unanswered]
    elif unanswered and not problems:
        return could_not_run(got(f"tasks/get with a related-task _meta got {unanswered[0].describe()}, and no plain "
                             "tasks/get was answered either", unanswered[0],
                             fix="answer tasks/get for the task the server created"), evidence=seqs)
    if problems:
        return failed("; ".join(problems) + " — the server did not ignore the related-task _meta; params.taskId "
                      "must pick the task (S-LEG-MUST-14)", broken=("S-LEG-MUST-14",), evidence=seqs,
                      details={"expected": "the task named by params.taskId", "actual": problems})
    return passed("params.taskId picked the task both times, whatever the related-task _meta named", evidence=seqs)


RELATED_META_ABSENT = check(
    id="tasks-legacy-related-meta-absent",
    area="association",
    category="lifecycle",
    title="tasks/get, tasks/list and tasks/cancel results and status notifications carry no related-task _meta",
    description=(
        "The related-task _meta names the task a message is about; the results of tasks/get, tasks/list and "
        "tasks/cancel and notifications/tasks/status already carry the task, so they should not add it "
        "(a SHOULD NOT: warns). Status notifications, when sent (they are optional), must carry a task "
        "with taskId and a known status; a malformed one warns too."
    ),
    probes=(DeclaredCall, Poll, Cancel, TaskListing),
    needs="task",
    # Status notifications are optional, and may cover only some changes.
    permits=('S-LEG-MAY-05',),
)


def _related_meta_frames(ev: Evidence) -> tuple[list[tuple[str, int]], int]:
    """(where the related-task _meta was found, with its frame), and how many frames were read."""
    replies: list[tuple[str, Reply | None]] = [(f"tasks/get #{n}", g) for n, g in enumerate(ev.get(Poll).gets, 1)]
    replies += [(f"tasks/list page {n}", p) for n, p in enumerate(ev.get(TaskListing).pages, 1)]
    cancel = ev.get(Cancel)
    replies += [("tasks/cancel", cancel.cancel), ("tasks/get after cancel", cancel.after)]
    found: list[tuple[str, int]] = []
    read = 0
    for where, reply in replies:
        if reply is None or not reply.ok:
            continue
        read += 1
        if get_path(result_of(ev, reply), "_meta", META_RELATED_TASK) is not None:
            found.append((where, reply.response_seq or 0))
    for f in ev.notifications:
        msg = f.json()
        if get_path(msg, "method") == STATUS_NOTIFICATION:
            read += 1
            if get_path(msg, "params", "_meta", META_RELATED_TASK) is not None:
                found.append((STATUS_NOTIFICATION, f.seq))
    return found, read


def _malformed_notifications(ev: Evidence) -> list[tuple[str, int]]:
    out: list[tuple[str, int]] = []
    for f in ev.notifications:
        msg = f.json()
        if get_path(msg, "method") != STATUS_NOTIFICATION:
            continue
        params = get_path(msg, "params")
        if not isinstance(params, dict) or not isinstance(params.get("taskId"), str):
            out.append(("has no taskId", f.seq))
        elif params.get("status") not in TASK_STATUSES:
            out.append((f"has status {params.get('status')!r}", f.seq))
    return out


@RELATED_META_ABSENT.judge(Wire.LEGACY, requires=("S-LEG-SHOULD-04",))
def related_meta_absent(ev: Evidence) -> Verdict:
    found, read = _related_meta_frames(ev)
    malformed = _malformed_notifications(ev)
    if not read:
        return could_not_run(unmet("no tasks/get, tasks/list or tasks/cancel result was read",
                                   "name a tool that runs as a task with --tool-name"))
    warnings: list[CheckWarning] = []
    if found:
        where = ", ".join(dict.fromkeys(w for w, _ in found))
        warnings.append(warn(f'{len(found)} of {read} results and status notifications carry '
                             f'_meta["{META_RELATED_TASK}"] ({where}); they already carry the task and should not '
                             "(S-LEG-SHOULD-04)"))
    if malformed:
        warnings.append(warn(f"{len(malformed)} {STATUS_NOTIFICATION} " + "; ".join(
            f"(frame {seq}) {why}" for why, seq in malformed[:3]) + ": the notification carries the task itself "
            "(policy P-26)", "P-26"))
    seqs = [seq for _, seq in [*found, *malformed]][:20]
    return passed(f"read {read} results and status notifications for the related-task _meta", evidence=seqs,
                  warnings=warnings)
