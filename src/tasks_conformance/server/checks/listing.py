"""Listing tasks (2025-11-25, tasks/list): a created task is listed, and a made-up cursor is refused."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tasks_conformance.core.causes import unmet
from tasks_conformance.core.protocol import (
    ERR_INVALID_PARAMS,
    get_path,
)
from tasks_conformance.core.verdict import Verdict, could_not_run, failed, not_applicable, passed, warn
from tasks_conformance.core.wires import Wire
from tasks_conformance.server.checks.engine.common import got, unrun
from tasks_conformance.server.checks.engine.registry import check
from tasks_conformance.server.checks.engine.shapes import reply_seqs
from tasks_conformance.server.evidence import (
    DeclaredCall,
    Evidence,
    ListBadCursor,
    TaskListing,
)
from tasks_conformance.server.evidence.legacy_records import LIST_EXTRA_TASKS, MAX_LIST_PAGES, MAX_LISTED_TASKS

if TYPE_CHECKING:
    from tasks_conformance.core.rpc.peer import Reply


LIST_INCLUDES_TASK = check(
    id="tasks-legacy-list-includes-task",
    area="listing",
    category="lifecycle",
    title="tasks/list shows every task of ours that tasks/get reads, page after page to the end",
    description=(
        "When the server declares capabilities.tasks.list: tasks/list is read from the first page, following "
        f"nextCursor to the end (at most {MAX_LIST_PAGES} pages or {MAX_LISTED_TASKS} tasks). When it all fits "
        f"on one page, {LIST_EXTRA_TASKS} more tasks of the task tool are created and the list read again, so "
        "that a server paging at a small size has to page. Every task of ours that tasks/get then reads must be "
        "on a page: a page without nextCursor while tasks remain unlisted fails (S-LEG-MUST-16, S-LEG-MUST-17). "
        "A server that lists them all on one page passes (policy P-27). Not applicable when tasks.list is not "
        "declared."
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
        return could_not_run(unrun(rec, "tasks/list was not asked"))
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


def _bad_page(pages: list[Reply], seqs: list[int]) -> Verdict | None:
    for n, page in enumerate(pages, start=1):
        if not page.answered:
            return could_not_run(got(f"tasks/list page {n} got {page.describe()}", page,
                                     fix="answer every tasks/list page the server's nextCursor points to"),
                                 evidence=seqs)
        if page.error is not None:
            why = ("the server declares tasks.list" if n == 1
                   else "the cursor was the server's own nextCursor (S-LEG-MUST-16)")
            return failed(f"tasks/list page {n} got {page.describe()}; {why}", broken=("S-LEG-MUST-17",), evidence=seqs,
                          details={"expected": "a page of tasks", "actual": page.describe()})
        if not isinstance(page.result.get("tasks"), list):
            return failed(f"tasks/list page {n} has no tasks array", broken=("S-LEG-MUST-17",), evidence=seqs,
                          details={"expected": "tasks: [...]", "actual": sorted(page.result)[:10]})
    return None


def _page_len(page: Reply) -> int:
    tasks = page.result.get("tasks") if page.ok else None
    return len(tasks) if isinstance(tasks, list) else 0


@LIST_INCLUDES_TASK.judge(Wire.LEGACY, requires=("S-LEG-MUST-17", "S-LEG-MUST-16"))
def list_includes_task(ev: Evidence) -> Verdict:
    rec = _listing(ev)
    if isinstance(rec, Verdict):
        return rec
    seqs = reply_seqs(*rec.first_pages, *rec.pages)
    bad = _bad_page(rec.first_pages, seqs) or _bad_page(rec.pages, seqs)
    if bad is not None:
        return bad
    ids = listed_ids(rec)
    # Read after the listing: a task the server may legally have deleted meanwhile is not held against it.
    readable = [tid for tid, read in zip(rec.ours, rec.reads, strict=False) if read.ok]
    missing = [tid for tid in readable if tid not in ids]
    seqs += reply_seqs(*rec.reads)
    warnings = ([warn(f"paging stopped before the last page: {rec.stopped} (policy P-27)", "P-27")]
                if rec.stopped else [])
    pages = f"{len(rec.pages)} page(s)"
    if missing:
        if rec.stopped:
            return could_not_run(unmet(f"{len(missing)} of our tasks were not among the {len(ids)} tasks read "
                                       f"before paging stopped ({rec.stopped}; policy P-27)", "run against a server "
                                       "with fewer tasks listed, so that paging reaches the end"),
                                 evidence=seqs, policies=("P-27",))
        last = _page_len(rec.pages[-1]) if rec.pages else 0
        # A full last page without nextCursor while tasks remain unlisted is a dropped cursor.
        full = last > 0 and last >= max(map(_page_len, rec.pages))
        broken = ("S-LEG-MUST-17", "S-LEG-MUST-16") if full else ("S-LEG-MUST-17",)
        cursor = (f"; its last page lists {last} task(s) and has no nextCursor although tasks remain (S-LEG-MUST-16)"
                  if full else "")
        return failed(f"tasks/get reads {len(readable)} task(s) of ours, but {len(missing)} of them (first "
                      f"{missing[0]}) are not among the {len(ids)} tasks of tasks/list ({pages}, read to the end"
                      f"{cursor}): a task the requestor can fetch must be listed (S-LEG-MUST-17)",
                      broken=broken, evidence=seqs, details={"expected": missing[:10], "actual": ids[:10]})
    if not readable:
        # Deleted or expired (a freedom the server has): nothing of ours is readable, so nothing must be listed.
        return not_applicable("tasks/get read none of our tasks once the list was read, so none had to be listed",
                              evidence=seqs)
    paged = "" if len(rec.pages) > 1 else " (the server did not page at this size)"
    return passed(f"every task of ours that tasks/get reads is listed: {len(readable)} of {len(ids)} task(s) on "
                  f"{pages}{paged}", evidence=seqs, warnings=warnings)


LIST_INVALID_CURSOR = check(
    id="tasks-legacy-list-invalid-cursor",
    area="listing",
    category="lifecycle",
    title="tasks/list with a cursor the server never issued gets -32602",
    description=(
        "When the server declares capabilities.tasks.list: tasks/list with a made-up cursor must be refused "
        "with -32602 (Invalid params). Not applicable when tasks.list is not declared."
    ),
    probes=(ListBadCursor,),
    needs="wire",
)


@LIST_INVALID_CURSOR.judge(Wire.LEGACY, requires=("S-LEG-MUST-16",))
def list_invalid_cursor(ev: Evidence) -> Verdict:
    rec = ev.get(ListBadCursor)
    if rec.no_list_capability:
        return not_applicable("the server does not declare capabilities.tasks.list (optional on 2025-11-25)")
    if not rec.ran:
        return could_not_run(unrun(rec, "tasks/list with a made-up cursor was not asked"))
    reply = rec.bad_cursor_reply
    if reply is None or not reply.answered:
        answer = reply.describe() if reply else "no answer"
        return could_not_run(got(f"tasks/list with a made-up cursor got {answer}", reply,
                                 fix="answer tasks/list with an unknown cursor (an error or a page)"),
                             evidence=reply_seqs(reply))
    if reply.error_code != ERR_INVALID_PARAMS:
        return failed(f"tasks/list with the made-up cursor {rec.bad_cursor!r} got {reply.describe()}, not -32602 "
                      "(S-LEG-MUST-16)", broken=("S-LEG-MUST-16",), evidence=reply.seqs(),
                      details={"expected": ERR_INVALID_PARAMS, "actual": reply.describe()})
    return passed("tasks/list with a made-up cursor got -32602", evidence=reply.seqs())
