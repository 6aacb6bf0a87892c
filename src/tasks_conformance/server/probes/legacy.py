"""Traffic only the 2025-11-25 wire has: tasks/result sent while the task runs, tasks/list paged
to its end, a related-task _meta that disagrees with params.taskId, and a task created with a
progressToken. Each applies only where
its dialect says the wire has it, so nothing is sent on the extension."""

from __future__ import annotations

import secrets

import anyio

from tasks_conformance.core.causes import reason
from tasks_conformance.core.protocol import TERMINAL_STATUSES, get_path
from tasks_conformance.core.rpc.peer import Reply
from tasks_conformance.core.wires import CreatedTask, WireDialect
from tasks_conformance.server.evidence import (
    DeclaredCall,
    ListBadCursor,
    RelatedMetaOverride,
    ResultWhileRunning,
    TaskListing,
    TaskProgress,
)
from tasks_conformance.server.evidence.legacy_records import (
    LIST_EXTRA_TASKS,
    MAX_LIST_PAGES,
    MAX_LISTED_TASKS,
    MAX_PROGRESS_FRAMES,
    MAX_PROGRESS_POLLS,
)
from tasks_conformance.server.probes import probe
from tasks_conformance.server.probes.engine.context import ProbeContext
from tasks_conformance.server.probes.poll import DEFAULT_POLL_INTERVAL_S, MIN_POLL_INTERVAL_S
from tasks_conformance.server.probes.rereads import MAX_SPACING_S


def _result_blocks(dialect: WireDialect) -> bool:
    return dialect.defines("tasks/result")


def _lists_tasks(dialect: WireDialect) -> bool:
    return dialect.defines("tasks/list")


def _has_related_meta(dialect: WireDialect) -> bool:
    return dialect.related_task_meta is not None


def made_up_id(kind: str) -> str:
    return f"tasks-conformance-{kind}-" + secrets.token_hex(8)


# Needs only the task, so the schedule sends it as soon as the CreateTaskResult is in: it
# overlaps the task's run and the polls, whose answers show in which order things happened.
@probe(ResultWhileRunning, order=21, needs=(DeclaredCall,), applies=_result_blocks, needs_task=True,
       description="tasks/result on the task while it still runs (it must block until the task ends)")
async def result_while_running(ctx: ProbeContext) -> None:
    rec = ctx.record(ResultWhileRunning)
    rec.task_id = ctx.require_task_id()
    # It blocks for as long as the task runs: allow the whole polling budget, plus one request's.
    wait_s = ctx.config.poll_timeout_s + ctx.config.timeout_s
    rec.result = await ctx.session.request("tasks/result", {"taskId": rec.task_id}, timeout_s=wait_s,
                                           purpose="tasks/result while the task runs")
    rec.ran = True


async def _read_list(ctx: ProbeContext, rec: TaskListing, label: str) -> list[Reply]:
    """tasks/list from its first page, following nextCursor to the end (bounded)."""
    pages: list[Reply] = []
    cursor: str | None = None
    seen_cursors: set[str] = set()
    listed = 0
    rec.stopped = None
    for n in range(MAX_LIST_PAGES):
        reply = await ctx.session.request("tasks/list", {"cursor": cursor} if cursor is not None else {},
                                          purpose=f"tasks/list{label} page {n + 1}")
        pages.append(reply)
        if not reply.ok:
            break
        tasks = reply.result.get("tasks")
        listed += len(tasks) if isinstance(tasks, list) else 0
        nxt = reply.result.get("nextCursor")
        if not isinstance(nxt, str):
            break
        if nxt in seen_cursors:
            rec.stopped = f"page {n + 1} repeats an earlier nextCursor"
            break
        if listed >= MAX_LISTED_TASKS:
            rec.stopped = f"{listed} tasks listed, the most tasks-conformance reads"
            break
        seen_cursors.add(nxt)
        cursor = nxt
    else:
        rec.stopped = f"{MAX_LIST_PAGES} pages read, the most tasks-conformance follows"
    return pages


# Not brief: it creates tasks and reads them, beside the probe task's polls.
@probe(TaskListing, order=22, needs=(DeclaredCall,), applies=_lists_tasks, needs_task=True,
       description=f"tasks/list to the end; if it fit one page, {LIST_EXTRA_TASKS} more tasks and again to the "
                   "end; tasks/get of each of ours")
async def task_listing(ctx: ProbeContext) -> None:
    rec = ctx.record(TaskListing)
    if not ctx.dialect.can_list(ctx.discovery.server_capabilities):
        rec.not_run = reason("the server does not declare capabilities.tasks.list",
                             "declare capabilities.tasks.list in the server to have tasks/list judged")
        rec.no_list_capability = True
        return
    rec.task_id = ctx.require_task_id()
    rec.ours = [rec.task_id]
    rec.pages = await _read_list(ctx, rec, "")
    if len(rec.pages) == 1 and rec.pages[0].ok:
        # One page held everything: with a few more tasks a server that pages at a small size must
        # page, and what it lists then is judged the same way.
        rec.first_pages = rec.pages
        for n in range(LIST_EXTRA_TASKS):
            call = await ctx.session.request("tools/call", ctx.tool_params(),
                                             purpose=f"an extra task for tasks/list ({n + 1}/{LIST_EXTRA_TASKS})")
            rec.extra_calls.append(call)
            extra = CreatedTask.read(call.result if call.ok else None).task_id
            if extra is not None:
                rec.ours.append(extra)
        rec.pages = await _read_list(ctx, rec, " again")
    for tid in rec.ours:
        rec.reads.append(await ctx.session.request("tasks/get", {"taskId": tid}, purpose="is it readable?"))
    rec.ran = True


# Needs no task: a made-up cursor is refused whatever the server holds, so a run whose tool made no
# task still has it judged.
@probe(ListBadCursor, brief=True, order=22, applies=_lists_tasks, description="tasks/list with a made-up cursor")
async def list_bad_cursor(ctx: ProbeContext) -> None:
    rec = ctx.record(ListBadCursor)
    if not ctx.dialect.can_list(ctx.discovery.server_capabilities):
        rec.not_run = reason("the server does not declare capabilities.tasks.list",
                             "declare capabilities.tasks.list in the server to have tasks/list judged")
        rec.no_list_capability = True
        return
    rec.bad_cursor = made_up_id("cursor")
    rec.bad_cursor_reply = await ctx.session.request("tasks/list", {"cursor": rec.bad_cursor},
                                                     purpose="tasks/list with a made-up cursor")
    rec.ran = True


# A server that does not ignore the _meta may never answer (one SDK parks the response in the
# task's message queue): a short wait is enough for a tasks/get.
META_PROBE_TIMEOUT_S = 3.0


# Reads only: a server that wrongly obeys the _meta answers about another task (or none), and
# nothing it does can change the probe task.
@probe(RelatedMetaOverride, order=23, needs=(DeclaredCall,), applies=_has_related_meta, needs_task=True,
       description="tasks/get whose related-task _meta names another task than params.taskId")
async def related_meta_override(ctx: ProbeContext) -> None:
    rec = ctx.record(RelatedMetaOverride)
    rec.task_id, rec.other_id = ctx.require_task_id(), made_up_id("other-task")
    key = ctx.dialect.related_task_meta
    assert key is not None  # the probe applies only where the wire has the key
    wait_s = min(ctx.config.timeout_s, META_PROBE_TIMEOUT_S)

    async def meta_names_other() -> None:
        rec.meta_names_other = await ctx.session.request(
            "tasks/get", {"taskId": rec.task_id}, meta={key: {"taskId": rec.other_id}},
            timeout_s=wait_s, purpose="tasks/get, _meta naming another task",
        )

    async def params_names_other() -> None:
        rec.params_names_other = await ctx.session.request(
            "tasks/get", {"taskId": rec.other_id}, meta={key: {"taskId": rec.task_id}},
            timeout_s=wait_s, purpose="tasks/get of an unknown id, _meta naming our task",
        )

    # Side by side: on a server that leaves both unanswered, the run waits once, not twice.
    async with anyio.create_task_group() as tg:
        tg.start_soon(meta_names_other)
        tg.start_soon(params_names_other)
    rec.ran = True



def _spacing(ctx: ProbeContext, read: Reply) -> float:
    """The wait before the next read: the task's poll interval, within bounds."""
    ms = ctx.dialect.poll_interval_ms(read.result if read.ok else None)
    return min(max(ms / 1000 if ms is not None else DEFAULT_POLL_INTERVAL_S, MIN_POLL_INTERVAL_S), MAX_SPACING_S)


def _task_progress(dialect: WireDialect) -> bool:
    return dialect.task_progress_meta is not None


# Its own task, so that the progressToken is carried by no other probe's request: without this
# check selected, nothing sent differs. Started once the probe task exists, beside its polls.
@probe(TaskProgress, order=24, needs=(DeclaredCall,), applies=_task_progress, needs_tool=True, needs_task=True,
       description="a second task with a progressToken: tasks/result, then tasks/get twice, watching progress")
async def task_progress(ctx: ProbeContext) -> None:
    rec = ctx.record(TaskProgress)
    peer = ctx.session.peer
    first = len(peer.notifications)
    rec.token = made_up_id("progress")
    key = ctx.dialect.task_progress_meta
    assert key is not None  # the probe applies only where tasks report progress
    params = ctx.tool_params()
    rec.create = await ctx.session.request("tools/call", params, meta={key: rec.token},
                                           purpose="a task with a progressToken")
    rec.task_id = CreatedTask.read(rec.create.result if rec.create.ok else None).task_id
    if rec.task_id is None:
        rec.not_run = reason("the tools/call with a progressToken created no task",
                             "name a tool that runs as a task with --tool-name")
        return
    wait_s = ctx.config.poll_timeout_s + ctx.config.timeout_s
    rec.result = await ctx.session.request("tasks/result", {"taskId": rec.task_id}, timeout_s=wait_s,
                                           purpose="tasks/result of the task with a progressToken")
    rec.ended = await ctx.session.request("tasks/get", {"taskId": rec.task_id}, purpose="after its result")
    # A tasks/result that answered before the task ended (tasks-legacy-result-blocks judges that):
    # the task is followed through tasks/get instead, paced by its poll interval, until it ends.
    deadline = anyio.current_time() + ctx.config.poll_timeout_s
    while (rec.ended.ok and get_path(rec.ended.result, "status") not in TERMINAL_STATUSES
           and len(rec.polls) < MAX_PROGRESS_POLLS and anyio.current_time() < deadline):
        rec.polls.append(rec.ended)
        await anyio.sleep(_spacing(ctx, rec.ended))
        rec.ended = await ctx.session.request("tasks/get", {"taskId": rec.task_id}, purpose="until it ends")
    await anyio.sleep(_spacing(ctx, rec.ended))
    rec.later = await ctx.session.request("tasks/get", {"taskId": rec.task_id}, purpose="a poll interval later")
    rec.frames = [f.seq for f in peer.notifications[first:]
                  if get_path(f.json(), "method") == "notifications/progress"][:MAX_PROGRESS_FRAMES]
    rec.ran = True
