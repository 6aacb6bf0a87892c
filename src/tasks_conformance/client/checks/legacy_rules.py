"""Client checks of the 2025-11-25 wire judged from the traffic every legacy scenario already
produces: the nested CreateTaskResult read as a task (not taken as the call's result), and a task
followed until it ends while the scripted server sends no notifications/tasks/status (it never
does: a server need not); a tasks/list cursor sent back as it came; and the capabilities.tasks a
client declares served when the server asks (tasks-client-legacy-hosted). They judge the
tasks-client-legacy-* runs only.

https://modelcontextprotocol.io/specification/2025-11-25/basic/utilities/tasks
"""

from __future__ import annotations

from tasks_conformance.client.checks.cadence import status_of
from tasks_conformance.client.checks.registry import client_check
from tasks_conformance.client.evidence import Exchange, ScenarioRun
from tasks_conformance.client.scenarios import scenario_names
from tasks_conformance.core.protocol import ERR_INVALID_PARAMS, ERR_METHOD_NOT_FOUND, TERMINAL_STATUSES, get_path
from tasks_conformance.core.result import CheckWarning
from tasks_conformance.core.text import shown
from tasks_conformance.core.verdict import Verdict, failed, not_applicable, passed, warn
from tasks_conformance.core.wires import CreatedTask, Wire
from tasks_conformance.core.wires.base import has_task_param

LEGACY_RUNS = scenario_names(Wire.LEGACY)
REQUIRED = "tasks-client-legacy-required"  # the required tool's task: every legal client creates it
# The scenarios whose task ends by itself, without the client's cancel or its ttl running out: there
# a client that keeps polling reads its end.
ENDING = ("tasks-client-legacy-lifecycle", REQUIRED, "tasks-client-legacy-failed", "tasks-client-legacy-tool-error",
          "tasks-client-legacy-input", "tasks-client-legacy-cancel-undeclared")
TASK_METHODS = ("tasks/get", "tasks/result", "tasks/cancel")
STATUS_NOTIFICATION = "notifications/tasks/status"
SHOWN = 3
MAX_EVIDENCE = 40


def _creates(run: ScenarioRun) -> list[tuple[str, Exchange]]:
    """(task id, the tools/call) for each nested CreateTaskResult on one connection's view."""
    out: dict[str, Exchange] = {}
    for e in run.sent("tools/call"):
        created = CreatedTask.read(e.result)
        if e.is_request and created.task_id is not None and created.shape == "nested":
            out.setdefault(created.task_id, e)
    return list(out.items())


def _naming(run: ScenarioRun, task_id: str, after: float) -> list[Exchange]:
    """The client's tasks/* requests naming the task, sent once its CreateTaskResult had come."""
    return [e for e in run.sent(*TASK_METHODS) if e.is_request and e.task_id == task_id and e.time >= after]


def took_create_as_result(run: ScenarioRun, task_id: str, create: Exchange) -> bool:
    """The client never named the task, on its connection or another (a request there is P-47's, the
    cancel check's), and its outcome line reports the call ended: it took the CreateTaskResult for
    the call's result (policy P-53)."""
    said = run.client.outcome
    reported = said.get("status") if isinstance(said, dict) else None
    named = _naming(run, task_id, create.reply_time or create.time) or run.elsewhere(task_id, *TASK_METHODS)
    # "cancelled" is a client that believes it cancelled the task (the cancel check's), not one that
    # took the CreateTaskResult for the call's result.
    return not named and reported in ("completed", "failed")


@client_check(
    id="tasks-client-legacy-reads-create-result",
    area="legacy_rules",
    title="The nested CreateTaskResult is read as a task, a plain result as the call's outcome (2025-11-25)",
    description="A task-augmented tools/call answered {task: {taskId, …}} created a task: the client follows it "
                "by its taskId; reporting the call ended without ever naming the task fails (policy P-53). A "
                "plain CallToolResult (the server processed the call normally) is the outcome: an outcome line "
                "that reports it otherwise warns (policy P-53).",
    requirements=("C-LEG-MUST-04",),
    scenarios=LEGACY_RUNS,
    needs=(REQUIRED,),
    ends=True,
)
def reads_create_result(runs: list[ScenarioRun]) -> Verdict:
    taken: list[tuple[ScenarioRun, Exchange]] = []
    tasks = plain = 0
    warnings: list[CheckWarning] = []
    for run in (view for whole in runs for view in whole.by_connection()):
        for task_id, create in _creates(run):
            if took_create_as_result(run, task_id, create):
                taken.append((run, create))
            elif _naming(run, task_id, create.reply_time or create.time):
                tasks += 1  # followed by its taskId (one never named, the call not reported ended, is P-51's)
        for e in run.sent("tools/call"):
            if not e.is_request or not isinstance(e.result, dict) or CreatedTask.read(e.result).task_id is not None:
                continue
            if not has_task_param(e.params) or "content" not in e.result:
                continue  # a plain call's plain answer shows nothing of this rule
            plain += 1
            said = run.client.outcome
            if isinstance(said, dict) and said.get("status") != "completed":
                warnings.append(warn(f"{run.label}: the task-augmented tools/call (frame #{e.seq}) was answered "
                                     f"with a plain CallToolResult, reported as status {shown(said.get('status'))} "
                                     "(C-LEG-MUST-04; policy P-53)", "P-53"))
    if taken:
        run, create = taken[0]
        said = run.client.outcome or {}
        what = (f"{run.label}: the CreateTaskResult of frame #{create.reply_seq} was never followed (no tasks/get, "
                f"tasks/result or tasks/cancel named its taskId), yet the client reported the call "
                f"{shown(said.get('status'))}")
        return failed(f"{len(taken)} CreateTaskResult(s) taken as the call's result: {what}", broken=("C-LEG-MUST-04",),
                      evidence=[s for _r, e in taken for s in e.seqs][:MAX_EVIDENCE], warnings=warnings,
                      policies=("P-53",),
                      details={"expected": "the task followed by its taskId (tasks/get, tasks/result)",
                               "actual": what})
    if not tasks and not plain:
        return not_applicable("no CreateTaskResult was followed or taken for the result, and no task-augmented "
                              "tools/call got a plain result (a task never named: tasks-client-legacy-keeps-polling)")
    return passed(f"{tasks} CreateTaskResult(s) read as tasks, {plain} plain result(s) to an augmented call",
                  warnings=warnings, judged=tasks + plain)


def _left(run: ScenarioRun, task_id: str, create: Exchange) -> str | None:
    """How the client stopped following a live task (None: it followed it to its end). Followed:
    it read a terminal status or input_required (C-LEG-SHOULD-03 polls until then), got the task's
    payload, cancelled it, or the server no longer knew it. A tasks/result whose stream ended
    without the answer (the client may drop it, C-LEG-MAY-04) is no longer a wait."""
    sent = _naming(run, task_id, create.reply_time or create.time)
    if any(e.method == "tasks/cancel" for e in sent):
        return None
    if any(e.method == "tasks/result" and e.reply is not None for e in sent):
        return None
    if any(get_path(e.reply, "error", "code") == ERR_INVALID_PARAMS for e in sent):
        return None  # "task not found": nothing left to follow
    reads = [status_of(e) for e in sent if e.method == "tasks/get" and e.reply is not None]
    if any(s in TERMINAL_STATUSES or s == "input_required" for s in reads):
        return None
    last = sent[-1] if sent else None
    if last is not None and last.method == "tasks/result":
        return (f"its tasks/result (frame #{last.seq}) ended without the answer and no tasks/get followed, though "
                "the task was still working (C-LEG-SHOULD-03)")
    polled = f"after {len(reads)} tasks/get" if reads else "without a single tasks/get"
    return (f"it stopped {polled} while the task was working, and the server sent no {STATUS_NOTIFICATION} "
            f"(C-LEG-MUST-06, C-LEG-SHOULD-03; policy P-51)")


@client_check(
    id="tasks-client-legacy-keeps-polling",
    area="legacy_rules",
    title="A task is polled until it ends; no notifications/tasks/status is waited for (2025-11-25)",
    description="The scripted server sends no notifications/tasks/status, as a server may: a client follows its "
                "task with tasks/get (or a blocked tasks/result) until it reads a terminal status or "
                "input_required. A client that stops while the task works warns: it waited for the notification "
                "or gave up polling, which the wire cannot tell apart (policy P-51). Dropping a tasks/result "
                "stream and polling on is allowed.",
    requirements=("C-LEG-MUST-06", "C-LEG-SHOULD-03"),
    permits=("C-LEG-MAY-04",),
    scenarios=ENDING,
    needs=(REQUIRED,),
    ends=True,
)
def keeps_polling(runs: list[ScenarioRun]) -> Verdict:
    left: list[tuple[ScenarioRun, Exchange, str]] = []
    tasks = 0
    for run in (view for whole in runs for view in whole.by_connection()):
        for task_id, create in _creates(run):
            if took_create_as_result(run, task_id, create):
                continue  # tasks-client-legacy-reads-create-result's to judge (C-LEG-MUST-04)
            tasks += 1
            if (why := _left(run, task_id, create)) is not None:
                left.append((run, create, why))
    if not tasks:
        return not_applicable("no task was created where the scripted server ends it by itself")
    if not left:
        return passed(f"all {tasks} task(s) were followed until they ended", judged=tasks)
    text = "; ".join(f"{run.label}, the task of frame #{create.reply_seq}: {why}" for run, create, why in left[:SHOWN])
    cited = ("P-51",) if any("P-51" in why for _r, _c, why in left) else ()
    return passed(f"{len(left)} of {tasks} task(s) left while working", judged=tasks,
                  evidence=[s for _r, e, _w in left for s in e.seqs][:MAX_EVIDENCE],
                  warnings=[warn(f"a task no longer followed while it worked: {text}", *cited)])


LISTING = "tasks-client-legacy-list"  # the scenario whose harness is asked to list tasks


def _cursor_problems(run: ScenarioRun) -> tuple[int, list[tuple[Exchange, str]]]:
    """The tasks/list requests carrying a cursor, and those whose cursor no earlier tasks/list
    answer of the scenario gave as its nextCursor, byte for byte, each with what it sent."""
    issued: list[str] = []
    judged, bad = 0, []
    for e in sorted(run.sent("tasks/list"), key=lambda x: x.time):
        if not e.is_request:
            continue
        if "cursor" in e.params:
            judged += 1
            cursor = e.params["cursor"]
            if not (isinstance(cursor, str) and cursor in issued):
                bad.append((e, f"cursor {shown(cursor)}"))
        next_cursor = get_path(e.result, "nextCursor")
        if isinstance(next_cursor, str):
            issued.append(next_cursor)
    return judged, bad


@client_check(
    id="tasks-client-legacy-list-cursor",
    area="legacy_rules",
    title="A tasks/list cursor goes back exactly as the server gave it (2025-11-25)",
    description="Cursors are opaque: a tasks/list that carries a cursor sends one an earlier tasks/list answer gave "
                "as its nextCursor, unmodified. The scripted server's cursors are base64 of JSON, as many servers' "
                "are; one decoded and encoded again, trimmed or made up fails. A client that lists no tasks, or "
                "does not page on, is not judged (the harness of tasks-client-legacy-list is asked to list).",
    requirements=("C-LEG-MUST-09",),
    scenarios=LEGACY_RUNS,
    needs=(LISTING,),
)
def list_cursor(runs: list[ScenarioRun]) -> Verdict:
    judged, bad, evidence = 0, [], []
    for run in runs:
        n, problems = _cursor_problems(run)
        judged += n
        bad += [(run, e, what) for e, what in problems]
        evidence += [s for e in run.sent("tasks/list") if "cursor" in e.params for s in e.seqs]
    if not judged:
        return not_applicable("no tasks/list carried a cursor: the client listed no tasks, or not past the first page")
    if bad:
        text = "; ".join(f"{run.label}: tasks/list (frame #{e.seq}) sent {what}" for run, e, what in bad[:SHOWN])
        return failed(f"{len(bad)} of {judged} tasks/list cursor(s) are none the server gave: {text}",
                      broken=("C-LEG-MUST-09",), evidence=[s for _r, e, _w in bad for s in e.seqs][:MAX_EVIDENCE],
                      details={"expected": "the nextCursor of an earlier tasks/list answer, unmodified",
                               "actual": text})
    return passed(f"all {judged} tasks/list cursor(s) were sent back as given", judged=judged,
                  evidence=evidence[:MAX_EVIDENCE])


HOSTED = "tasks-client-legacy-hosted"
HOSTED_METHODS = ("tasks/list", "tasks/cancel")


def _hosted_answers(run: ScenarioRun) -> tuple[int, list[tuple[Exchange, str]], list[str]]:
    """(requests judged, those answered -32601 with why, what only warns) of one run: the scripted
    server's tasks/list and tasks/cancel to a client that declared it serves them."""
    judged, bad, odd = 0, [], []
    for e in run.server_requests:
        if e.method not in HOSTED_METHODS:
            continue
        where = f"{run.label}: {e.method} (frame #{e.seq})"
        if e.reply is None:
            odd.append(f"{where} was never answered (policy P-55)")
            continue
        judged += 1
        if get_path(e.reply, "error", "code") == ERR_METHOD_NOT_FOUND:
            bad.append((e, f"{where} was answered -32601 method not found (frame #{e.reply_seq})"))
        elif e.method == "tasks/list" and "error" not in e.reply and not isinstance(
                get_path(e.reply, "result", "tasks"), list):
            odd.append(f"{where} was answered without a tasks array (frame #{e.reply_seq}; policy P-55)")
    return judged, bad, odd


def _declared_hosting(run: ScenarioRun) -> bool:
    return any(get_path(e.params, "capabilities", "tasks", key) is not None
               for e in run.sent("initialize") for key in ("list", "cancel"))


@client_check(
    id="tasks-client-legacy-hosted-capabilities",
    area="legacy_rules",
    title="A client declares capabilities.tasks only for what it serves (2025-11-25)",
    description="A pure requestor declares no capabilities.tasks. A client that declares tasks.list or tasks.cancel "
                "serves them: the scripted server sends it tasks/list and tasks/cancel (of a task it never had) on its "
                "tools/call's stream, and -32601 method not found to either fails. An unanswered request, or a list "
                "without its tasks array, warns (policy P-55); a client that declared neither is not judged, and "
                "what tasks.requests.* promises is not probed.",
    requirements=("C-LEG-MUST-12",),
    scenarios=(HOSTED,),
)
def hosted_capabilities(runs: list[ScenarioRun]) -> Verdict:
    judged, declared = 0, False
    bad: list[tuple[Exchange, str]] = []
    odd: list[str] = []
    evidence: list[int] = []
    for run in runs:
        declared = declared or _declared_hosting(run)
        n, problems, warned = _hosted_answers(run)
        judged, bad, odd = judged + n, bad + problems, odd + warned
        evidence += [s for e in run.server_requests if e.method in HOSTED_METHODS for s in e.seqs]
    warnings = [warn(text, "P-55") for text in odd[:SHOWN]]
    if not declared:
        return not_applicable("the client declared no capabilities.tasks list or cancel: a pure requestor, "
                              "as it should be unless it hosts tasks")
    if bad:
        text = "; ".join(what for _e, what in bad[:SHOWN])
        return failed(f"the client declared capabilities.tasks it does not serve: {text}", broken=("C-LEG-MUST-12",),
                      evidence=[s for e, _w in bad for s in e.seqs][:MAX_EVIDENCE], warnings=warnings,
                      details={"expected": "a tasks/list result, and a tasks/cancel answer other than -32601, from "
                                           "a client that declared tasks.list and tasks.cancel",
                               "actual": text})
    if not judged:
        return not_applicable("the client answered none of the requests its declaration asked for",
                              evidence=evidence[:MAX_EVIDENCE], warnings=warnings, policies=("P-55",))
    return passed(f"the client served the {judged} task request(s) its capabilities.tasks declared", judged=judged,
                  evidence=evidence[:MAX_EVIDENCE], warnings=warnings)


GET_STREAM = "tasks-client-legacy-get-stream"


def _on_get_stream(run: ScenarioRun) -> list[Exchange]:
    """The scripted server's requests on a session's GET stream (their frames carry the GET)."""
    return [e for e in run.server_requests if e.http is not None and e.http.method == "GET"]


@client_check(
    id="tasks-client-legacy-get-stream",
    area="legacy_rules",
    title="Task messages are taken on any SSE stream, the GET stream too (2025-11-25)",
    description="Over HTTP a server may send a task's messages on any SSE stream, including the session's GET "
                "stream. The scripted server of tasks-client-legacy-get-stream sends the task's elicitation/create "
                "there, where the client opened one before its task needed input: a client that answers it (with a "
                "result) passes; one that leaves it unanswered, or refuses it with an error, warns (SHOULD). A client "
                "that opens no GET stream (it may not) gets the elicitation on its tasks/result stream and is not "
                "judged; over stdio there is no GET stream.",
    requirements=("C-LEG-SHOULD-06",),
    scenarios=(GET_STREAM,),
)
def get_stream(runs: list[ScenarioRun]) -> Verdict:
    if not runs:  # its scenario runs over HTTP only
        return not_applicable("over stdio there is no GET stream: tasks-client-legacy-get-stream runs over HTTP only")
    sent = [(run, e) for run in runs for view in run.by_connection() for e in _on_get_stream(view)]
    if not sent:
        return not_applicable("the scripted server sent nothing on a GET stream: the client opened none before its "
                              "task needed input (it need not), or declared no elicitation")
    unanswered = [(run, e) for run, e in sent if e.reply is None]
    refused = [(run, e) for run, e in sent if e.reply is not None and "result" not in e.reply]
    evidence = [s for _r, e in sent for s in e.seqs][:MAX_EVIDENCE]
    warnings = [f"{run.label}: {shown(e.method)} on the GET stream (frame #{e.seq}) was never answered "
                "(C-LEG-SHOULD-06)" for run, e in unanswered[:SHOWN]]
    warnings += [f"{run.label}: {shown(e.method)} on the GET stream (frame #{e.seq}) was refused with error "
                 f"{shown(get_path(e.reply, 'error', 'code'))} (frame #{e.reply_seq}; C-LEG-SHOULD-06)"
                 for run, e in refused[:SHOWN]]
    if warnings:
        return passed(f"{len(unanswered) + len(refused)} of {len(sent)} request(s) on the GET stream not taken",
                      evidence=evidence, warnings=warnings)
    return passed(f"the client answered the {len(sent)} request(s) the server sent on its GET stream",
                  judged=len(sent), evidence=evidence)
