"""Rules only the 2025-11-25 wire has: tasks/result blocks until the task ends, tasks/list shows
the task and refuses a made-up cursor, params.taskId wins over a related-task _meta, and status
changes follow the allowed paths (a cancelled task stays cancelled), and a task's progress keeps its
token and stops at the end; two SHOULD-level rules warn (no related-task _meta on task results, no
SSE for tasks/get)."""

from __future__ import annotations

from itertools import pairwise
from typing import TYPE_CHECKING, Any

from tasks_conformance.causes import setting
from tasks_conformance.checks.common import got
from tasks_conformance.checks.registry import Verdict, check, could_not_run, failed, not_applicable, passed
from tasks_conformance.checks.shapes import reply_seqs, result_of
from tasks_conformance.evidence import (
    Cancel,
    DeclaredCall,
    Evidence,
    Poll,
    RelatedMetaOverride,
    ResultWhileRunning,
    TaskListing,
    TaskProgress,
)
from tasks_conformance.protocol import (
    ERR_INVALID_PARAMS,
    META_RELATED_TASK,
    TASK_STATUSES,
    TERMINAL_STATUSES,
    get_path,
)
from tasks_conformance.wires import Wire

if TYPE_CHECKING:
    from tasks_conformance.rpc.peer import Reply

STATUS_NOTIFICATION = "notifications/tasks/status"

RESULT_BLOCKS = check(
    id="tasks-legacy-result-blocks",
    category="lifecycle",
    title="tasks/result on a running task answers only once the task has ended",
    description=(
        "tasks/result is sent as soon as the task is created, while it still runs, alongside the polls. "
        "Judged by the order of frames, never by time: no tasks/get sent after its answer may still show the "
        "task running, and the answer must be the task's final outcome (the same as tasks/result once it ended)."
    ),
    probes=(DeclaredCall, Poll, ResultWhileRunning),
    needs="terminal",
)


def _without_meta(result: Any) -> Any:
    return {k: v for k, v in result.items() if k != "_meta"} if isinstance(result, dict) else result


def _outcome(ev: Evidence, reply: Reply) -> tuple[str, Any]:
    """What a tasks/result answer says, comparable between two answers (_meta aside)."""
    if reply.error is not None:
        return "error", (reply.error_code, reply.error.message)
    return "result", _without_meta(result_of(ev, reply))


@RESULT_BLOCKS.judge(Wire.LEGACY, requires=("S-LEG-MUST-11",))
def result_blocks(ev: Evidence) -> Verdict:
    rec = ev.get(ResultWhileRunning)
    reply = rec.result
    if reply is None:
        return could_not_run(rec.not_run or rec.harness_problem or "tasks/result was not sent while the task ran")
    poll = ev.get(Poll)
    sent = reply.request_seq
    reads = [(g, get_path(g.result, "status")) for g in poll.gets if g.ok]
    ended_at = next((g.response_seq or 0 for g, st in reads if st in TERMINAL_STATUSES), None)
    seqs = [*reply.seqs(), *reply_seqs(*(g for g, _ in reads))][:20]
    if ended_at is not None and ended_at < sent:
        return could_not_run(setting("the task had already been seen to end when tasks/result was sent, so nothing "
                                     "shows whether it blocks", "use a longer-running tool (--tool-name/--tool-args)"),
                             evidence=seqs)
    if not reply.answered:
        if reply.timed_out:
            return failed(f"tasks/result sent while the task ran was not answered ({reply.describe()}), though "
                          f"polling saw the task end {poll.final_status}; it must answer once the task is terminal "
                          "(S-LEG-MUST-11)", broken=("S-LEG-MUST-11",), evidence=seqs,
                          details={"expected": "an answer once the task ended", "actual": reply.describe()})
        return could_not_run(got(f"tasks/result sent while the task ran got {reply.describe()}", reply), evidence=seqs)
    answered = reply.response_seq or 0
    still_running = [(g, st) for g, st in reads if g.request_seq > answered and st not in TERMINAL_STATUSES]
    if still_running:
        g, st = still_running[0]
        return failed(
            f"tasks/result sent while the task ran was answered (frame {answered}: {reply.describe()}), and the "
            f"tasks/get sent after that answer (frame {g.request_seq}) still says {st!r}: it answered before the "
            "task ended instead of waiting (S-LEG-MUST-11)", broken=("S-LEG-MUST-11",), evidence=seqs,
            details={"expected": "the answer only once the task is terminal", "actual": f"answered while {st}"},
        )
    final = poll.result
    if final is not None and final.answered and _outcome(ev, final) != _outcome(ev, reply):
        return failed(
            f"tasks/result sent while the task ran answered {reply.describe()}, but once the task had ended "
            f"tasks/result answered {final.describe()} with other content: the early answer is not the task's "
            "outcome, so it did not wait for the end (S-LEG-MUST-11)",
            broken=("S-LEG-MUST-11",), evidence=[*seqs, *final.seqs()],
            details={"expected": str(_outcome(ev, final))[:200], "actual": str(_outcome(ev, reply))[:200]},
        )
    ran_after = any(g.request_seq > sent and st not in TERMINAL_STATUSES for g, st in reads)
    how = ("a tasks/get sent after it still showed the task running" if ran_after
           else "the task was last seen running when it was sent")
    return passed(f"tasks/result sent while the task ran ({how}) answered only once the task had ended "
                  f"{poll.final_status}, with its final outcome", evidence=seqs)


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
            return failed(f"tasks/list page {n} got {page.describe()}; {why}", evidence=seqs,
                          details={"expected": "a page of tasks", "actual": page.describe()})
        if not isinstance(page.result.get("tasks"), list):
            return failed(f"tasks/list page {n} has no tasks array", evidence=seqs,
                          details={"expected": "tasks: [...]", "actual": sorted(page.result)[:10]})
    ids = listed_ids(rec)
    warnings = [f"paging stopped before the last page: {rec.stopped} (policy P-27)"] if rec.stopped else []
    if rec.task_id not in ids:
        if rec.stopped:
            return could_not_run(f"our task was not among the {len(ids)} tasks read before paging stopped "
                                 f"({rec.stopped}; policy P-27)", evidence=seqs)
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


TASK_ID_WINS = check(
    id="tasks-legacy-task-id-wins",
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
        return could_not_run(rec.not_run or rec.harness_problem or "the related-task _meta probe did not run")
    seqs = reply_seqs(ours, other)
    lost = next((r for r in (ours, other) if not r.answered and not r.timed_out), None)
    if lost is not None:
        return could_not_run(got(f"tasks/get with a related-task _meta got {lost.describe()}", lost), evidence=seqs)
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
                             "tasks/get was answered either", unanswered[0]), evidence=seqs)
    if problems:
        return failed("; ".join(problems) + " — the server did not ignore the related-task _meta; params.taskId "
                      "must pick the task (S-LEG-MUST-14)", broken=("S-LEG-MUST-14",), evidence=seqs,
                      details={"expected": "the task named by params.taskId", "actual": problems})
    return passed("params.taskId picked the task both times, whatever the related-task _meta named", evidence=seqs)


STATUS_TRANSITIONS = check(
    id="tasks-legacy-status-transitions",
    category="lifecycle",
    title="Status changes follow the allowed paths; a cancelled task stays cancelled",
    description=(
        "Across the CreateTaskResult and every poll of the task, each change of status is an allowed one "
        "(working to input_required or a terminal status, input_required back to working or to a terminal "
        "status). The task cancelled by the cancel probe must still read cancelled afterwards (or be gone)."
    ),
    probes=(DeclaredCall, Poll, Cancel),
    needs="task",
)

ALLOWED = {
    "working": {"input_required", *TERMINAL_STATUSES},
    "input_required": {"working", *TERMINAL_STATUSES},
}


def _illegal_changes(chain: list[tuple[int, Any]]) -> list[str]:
    out: list[str] = []
    valid = [(seq, st) for seq, st in chain if isinstance(st, str) and st in TASK_STATUSES]
    for (_, a), (seq, b) in pairwise(valid):
        if a != b and b not in ALLOWED.get(a, set()):
            out.append(f"{a} → {b} (frame {seq})")
    return out


@STATUS_TRANSITIONS.judge(Wire.LEGACY, requires=("S-LEG-MUST-07", "S-LEG-MUST-20"))
def status_transitions(ev: Evidence) -> Verdict:
    created = ev.get(DeclaredCall)
    poll = ev.get(Poll)
    first = created.call.response_seq if created.call is not None else None
    # Only sequential request/response pairs: a notification on another stream may overtake them.
    chain = [(first or 0, created.created.fields.get("status"))]
    chain += [(g.response_seq or 0, get_path(g.result, "status")) for g in poll.gets if g.ok]
    problems = [f"the task went {p}" for p in _illegal_changes(chain)]
    broken = ["S-LEG-MUST-07"] if problems else []
    seqs = [seq for seq, _ in chain if seq]
    cancel = ev.get(Cancel)
    said = get_path(cancel.cancel.result, "status") if cancel.cancel is not None and cancel.cancel.ok else None
    after = cancel.after
    cancel_note = ""
    if said == "cancelled" and after is not None and after.answered:
        seqs += reply_seqs(cancel.cancel, after)
        now = get_path(after.result, "status") if after.ok else None
        if after.ok and now != "cancelled":
            problems.append(f"tasks/cancel answered the task cancelled, then tasks/get says {now!r}: a cancelled "
                            "task stays cancelled (S-LEG-MUST-20)")
            broken.append("S-LEG-MUST-20")
        cancel_note = "; the cancelled task stayed cancelled" if after.ok else "; the cancelled task was then gone"
    if problems:
        return failed("; ".join(problems[:3]) + (" — only the allowed transitions may occur (S-LEG-MUST-07)"
                                                 if not problems[0].startswith("tasks/cancel") else ""),
                      broken=tuple(broken), evidence=seqs,
                      details={"expected": "allowed transitions only", "actual": problems[:5]})
    path = " → ".join(str(st) for n, (_, st) in enumerate(chain) if n == 0 or chain[n - 1][1] != st)
    return passed(f"every status change was allowed ({path}){cancel_note}", evidence=seqs)


RELATED_META_ABSENT = check(
    id="tasks-legacy-related-meta-absent",
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
        return could_not_run("no tasks/get, tasks/list or tasks/cancel result was read")
    warnings = []
    if found:
        where = ", ".join(dict.fromkeys(w for w, _ in found))
        warnings.append(f'{len(found)} of {read} results and status notifications carry _meta["{META_RELATED_TASK}"] '
                        f"({where}); they already carry the task and should not (S-LEG-SHOULD-04)")
    if malformed:
        warnings.append(f"{len(malformed)} {STATUS_NOTIFICATION} " + "; ".join(
            f"(frame {seq}) {why}" for why, seq in malformed[:3]) + ": the notification carries the task itself "
            "(policy P-26)")
    seqs = [seq for _, seq in [*found, *malformed]][:20]
    return passed(f"read {read} results and status notifications for the related-task _meta", evidence=seqs,
                  warnings=warnings)


GET_PLAIN_JSON = check(
    id="tasks-legacy-get-plain-json",
    category="lifecycle",
    title="Over HTTP, tasks/get is answered with plain JSON, not an SSE stream",
    description=(
        "A tasks/get response should not be turned into an SSE stream where that can be avoided (a SHOULD NOT: "
        "an SSE answer warns). Every poll's response Content-Type is read. HTTP only."
    ),
    probes=(DeclaredCall, Poll),
    transports=("http",),
    needs="task",
)


def _came_as_sse(ev: Evidence, reply: Reply) -> bool:
    frame = ev.frame(reply.response_seq)
    if frame is None or frame.http is None:
        return False
    ctype = frame.http.header("content-type", response=True) or ""
    return frame.channel == "sse" or ctype.split(";")[0].strip().lower() == "text/event-stream"


@GET_PLAIN_JSON.judge(Wire.LEGACY, requires=("S-LEG-SHOULD-08",))
def get_plain_json(ev: Evidence) -> Verdict:
    gets = [g for g in ev.get(Poll).gets if g.answered]
    if not gets:
        return could_not_run("no tasks/get was answered")
    streamed = [g for g in gets if _came_as_sse(ev, g)]
    seqs = reply_seqs(*(streamed or gets))[:20]
    if streamed:
        return passed(f"tasks/get was answered on all {len(gets)} polls, as SSE (see the warning)", evidence=seqs,
                      warnings=[
            f"{len(streamed)} of {len(gets)} tasks/get responses came as an SSE stream (text/event-stream) rather "
            "than plain JSON; a tasks/get response should not be upgraded to SSE where it can be avoided "
            "(S-LEG-SHOULD-08)"])
    return passed(f"all {len(gets)} tasks/get responses were plain JSON", evidence=seqs)


PROGRESS_TOKEN = check(
    id="tasks-legacy-progress-token",
    category="lifecycle",
    title="Task progress keeps the creating request's progressToken and stops once the task has ended",
    description=(
        "A second task is created with a progressToken and waited for with tasks/result, then read twice, a "
        "poll interval apart. Every notifications/progress must carry that token (no request carried another), "
        "and none may arrive after a tasks/get, sent once tasks/result answered, showed the task ended. Not "
        "applicable when the server sends no progress (progress is optional)."
    ),
    probes=(DeclaredCall, TaskProgress),
    needs="task",
)


@PROGRESS_TOKEN.judge(Wire.LEGACY, requires=("S-LEG-MUST-23",))
def progress_token(ev: Evidence) -> Verdict:
    rec = ev.get(TaskProgress)
    if not rec.ran:
        return could_not_run(rec.not_run or rec.harness_problem or "no task was created with a progressToken")
    seqs = reply_seqs(rec.create, rec.result, rec.ended, rec.later)
    ended = rec.ended
    if rec.result is None or not rec.result.answered or ended is None or not ended.ok \
            or get_path(ended.result, "status") not in TERMINAL_STATUSES:
        return could_not_run(got("the task with a progressToken was not seen to end (tasks/result: "
                             f"{rec.result.describe() if rec.result else 'not sent'})", rec.result), evidence=seqs)
    tokens = [(seq, get_path(ev.frame_json(seq), "params", "progressToken")) for seq in rec.frames]
    ours = [seq for seq, token in tokens if token == rec.token]
    foreign = [(seq, token) for seq, token in tokens if token != rec.token]
    seqs = [*seqs, *rec.frames][:20]
    if not tokens:
        return not_applicable("the server sent no notifications/progress for the task created with a progressToken "
                              "(progress is optional)", evidence=seqs)
    problems: list[str] = []
    if foreign:
        problems.append(f"{len(foreign)} notifications/progress carry progressToken {foreign[0][1]!r} (frame "
                        f"{foreign[0][0]}), which no request carried; the task's progress keeps the token of the "
                        "request that created it")
    ended_at = ended.response_seq or 0
    late = [seq for seq in ours if seq > ended_at]
    if late:
        status = get_path(ended.result, "status")
        problems.append(f"{len(late)} notifications/progress with the task's token arrived after tasks/get showed it "
                        f"{status} (frame {ended_at}), the first at frame {late[0]}; progress stops once the task "
                        "is terminal")
    if problems:
        return failed("; ".join(problems) + " (S-LEG-MUST-23)", broken=("S-LEG-MUST-23",), evidence=seqs,
                      details={"expected": "progress with the original token, none after the end", "actual": problems})
    return passed(f"{len(ours)} notifications/progress carried the creating request's progressToken, none after the "
                  "task ended", evidence=seqs)
