"""Listing tasks (2025-11-25, tasks/list): a created task is listed, and a made-up cursor is refused."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tasks_conformance.core.protocol import (
    ERR_INVALID_PARAMS,
    get_path,
)
from tasks_conformance.core.verdict import Verdict, could_not_run, failed, not_applicable, passed, warn
from tasks_conformance.core.wires import Wire
from tasks_conformance.server.checks.common import got
from tasks_conformance.server.checks.registry import check
from tasks_conformance.server.checks.shapes import reply_seqs
from tasks_conformance.server.evidence import (
    DeclaredCall,
    Evidence,
    TaskListing,
)

if TYPE_CHECKING:
    pass


LIST_INCLUDES_TASK = check(
    id="tasks-legacy-list-includes-task",
    category="lifecycle",
    title="tasks/list shows our task, page after page to the end",
    description=(
        "When the server declares capabilities.tasks.list: tasks/list is read from the first page, following "
        "nextCursor to the end (at most 20 pages or 2000 tasks), and the task the run created must be listed. "
        "Not applicable when tasks.list is not declared."
    ),
    probes=(DeclaredCall, TaskListing),
    needs="task",
    owns=("S-LEG-MUST-16",),
)


def _listing(ev: Evidence) -> TaskListing | Verdict:
    rec = ev.get(TaskListing)
    if rec.no_list_capability:
        return not_applicable("the server does not declare capabilities.tasks.list (optional on 2025-11-25)")
    if not rec.ran:
        return could_not_run(rec.not_run or rec.harness_problem or "tasks/list was not asked")
    return rec


def listed_ids(rec: TaskListing) -> list[str]:
    """The taskIds of every listed task, page after page."""
    out: list[str] = []
    for page in rec.pages:
        tasks = page.result.get("tasks") if page.ok else None
        for t in tasks if isinstance(tasks, list) else []:
            tid = get_path(t, "taskId")
            if isinstance(tid, str):
                out.append(tid)
    return out


@LIST_INCLUDES_TASK.judge(Wire.LEGACY, requires=("S-LEG-MUST-17", "S-LEG-MUST-16"))
def list_includes_task(ev: Evidence) -> Verdict:
    rec = _listing(ev)
    if isinstance(rec, Verdict):
        return rec
    seqs = reply_seqs(*rec.pages)
    for n, page in enumerate(rec.pages, start=1):
        if not page.answered:
            return could_not_run(got(f"tasks/list page {n} got {page.describe()}", page), evidence=seqs)
        if page.error is not None:
            why = ("the server declares tasks.list" if n == 1
                   else "the cursor was the server's own nextCursor (S-LEG-MUST-16)")
            return failed(f"tasks/list page {n} got {page.describe()}; {why}", broken=("S-LEG-MUST-17",), evidence=seqs,
                          details={"expected": "a page of tasks", "actual": page.describe()})
        if not isinstance(page.result.get("tasks"), list):
            return failed(f"tasks/list page {n} has no tasks array", broken=("S-LEG-MUST-17",), evidence=seqs,
                          details={"expected": "tasks: [...]", "actual": sorted(page.result)[:10]})
    ids = listed_ids(rec)
    warnings = ([warn(f"paging stopped before the last page: {rec.stopped} (policy P-27)", "P-27")]
                if rec.stopped else [])
    if rec.task_id not in ids:
        if rec.stopped:
            return could_not_run(f"our task was not among the {len(ids)} tasks read before paging stopped "
                                 f"({rec.stopped}; policy P-27)", evidence=seqs, policies=("P-27",))
        return failed(f"tasks/get reads our task {rec.task_id}, but it is not among the {len(ids)} tasks of "
                      f"tasks/list ({len(rec.pages)} page(s), read to the end): a task the requestor can fetch "
                      "must be listed (S-LEG-MUST-17)", broken=("S-LEG-MUST-17",), evidence=seqs,
                      details={"expected": rec.task_id, "actual": ids[:10]})
    return passed(f"our task is listed ({len(ids)} task(s) on {len(rec.pages)} page(s))", evidence=seqs,
                  warnings=warnings)


LIST_INVALID_CURSOR = check(
    id="tasks-legacy-list-invalid-cursor",
    category="lifecycle",
    title="tasks/list with a cursor the server never issued gets -32602",
    description=(
        "When the server declares capabilities.tasks.list: tasks/list with a made-up cursor must be refused "
        "with -32602 (Invalid params). Not applicable when tasks.list is not declared."
    ),
    probes=(TaskListing,),
    needs="wire",
)


@LIST_INVALID_CURSOR.judge(Wire.LEGACY, requires=("S-LEG-MUST-16",))
def list_invalid_cursor(ev: Evidence) -> Verdict:
    rec = _listing(ev)
    if isinstance(rec, Verdict):
        return rec
    reply = rec.bad_cursor_reply
    if reply is None or not reply.answered:
        answer = reply.describe() if reply else "no answer"
        return could_not_run(got(f"tasks/list with a made-up cursor got {answer}", reply),
                             evidence=reply_seqs(reply))
    if reply.error_code != ERR_INVALID_PARAMS:
        return failed(f"tasks/list with the made-up cursor {rec.bad_cursor!r} got {reply.describe()}, not -32602 "
                      "(S-LEG-MUST-16)", broken=("S-LEG-MUST-16",), evidence=reply.seqs(),
                      details={"expected": ERR_INVALID_PARAMS, "actual": reply.describe()})
    return passed("tasks/list with a made-up cursor got -32602", evidence=reply.seqs())
