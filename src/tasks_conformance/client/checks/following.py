"""Client checks of how a task is followed: polymorphic results, polling and its cadence, input,
cancellation, the end of a task, and what the client surfaced (its optional outcome line)."""

from __future__ import annotations

from collections.abc import Iterator

from tasks_conformance.client.checks.cadence import Cadence, judge_cadence, prompt_tasks, read_ended, task_runs
from tasks_conformance.client.checks.cadence import gets_of as _gets
from tasks_conformance.client.checks.cadence import status_of as _status
from tasks_conformance.client.checks.cancel import judge_cancel
from tasks_conformance.client.checks.exit_status import failed_exits
from tasks_conformance.client.checks.expiry import judge_expiry
from tasks_conformance.client.checks.registry import client_check
from tasks_conformance.client.evidence import Exchange, ScenarioRun, said_elsewhere
from tasks_conformance.client.scenarios import scenario_names
from tasks_conformance.core.causes import by_flag
from tasks_conformance.core.protocol import TERMINAL_STATUSES, get_path
from tasks_conformance.core.text import shown
from tasks_conformance.core.verdict import Verdict, could_not_run, failed, not_applicable, passed, warn
from tasks_conformance.core.wires import DIALECTS, Wire

TASK_METHODS = ("tasks/get", "tasks/update", "tasks/cancel")
EXTENSION = scenario_names(Wire.EXTENSION)  # these checks judge the 2026-07-28 runs only
EXPIRY = "tasks-client-ttl-expiry"
SHOWN = 3
MAX_EVIDENCE = 40

# Both end in a result without isError: a non-zero exit after either says the harness failed.
FOLLOWED = ("tasks-client-lifecycle", "tasks-client-sync-result")


@client_check(
    id="tasks-client-follows-task",
    area="following",
    title="A declared tools/call is followed to its end whichever shape it gets",
    description="A CreateTaskResult is followed through tasks/get; a plain CallToolResult is the outcome and is "
                "not followed.",
    requirements=("C-EXT-MUST-02",),
    scenarios=FOLLOWED,
    # A subscription for the task follows it as well as tasks/get does.
    permits=("C-EXT-MAY-02",),
    ends=True,
)
def follows_task(runs: list[ScenarioRun]) -> Verdict:
    judged = 0
    for run in runs:
        if run.name == "tasks-client-sync-result":
            # Judged once the plain result came back to a tools/call.
            judged += any(e.is_request and e.result is not None for e in run.sent("tools/call"))
            stray = [e for e in run.sent(*TASK_METHODS) if e.is_request]
            if stray:
                return failed(f"after a plain CallToolResult the client sent {shown(stray[0].method)} (frame "
                              f"#{stray[0].seq}) although there was no task",
                              evidence=[e.seq for e in stray][:MAX_EVIDENCE],
                              details={"expected": "no tasks/* request: the plain result is the outcome",
                                       "actual": f"{shown(stray[0].method)} (frame #{stray[0].seq})"})
            said = run.client.outcome
            if said is not None and said.get("status") != "completed":
                return failed(f"the plain CallToolResult was not the outcome: the client reported status "
                              f"{str(said.get('status'))[:40]!r}",
                              details={"expected": "status completed",
                                       "actual": f"status {str(said.get('status'))[:40]}"})
    for view, task_id in task_runs([run for run in runs if run.name != "tasks-client-sync-result"]):
        judged += 1
        listened = [e for e in view.sent("subscriptions/listen") if task_id in _listened_ids(e)]
        # A client stopped at --timeout may have followed it later: the runner says it hung.
        if not _gets(view, task_id) and not listened and not view.client.timed_out:
            create = next(e for e in view.exchanges if get_path(e.result, "taskId") == task_id)
            elsewhere = view.elsewhere(task_id, "tasks/get", "subscriptions/listen")
            also = f"; {said_elsewhere(view, elsewhere)}" if elsewhere else ""
            return failed(f"the CreateTaskResult for task {task_id!r} (frame #{create.reply_seq}, {view.label}) was "
                          f"never followed on the {view.connection_kind} that created it: no tasks/get or "
                          f"subscription for it there{also} (policy P-47)", policies=("P-47",),
                          evidence=[*create.seqs, *(e.seq for e in elsewhere)][:MAX_EVIDENCE],
                          details={"expected": f"tasks/get (or a subscription) for the task on its "
                                               f"{view.connection_kind}", "actual": "neither" + also})
    if not judged:
        return not_applicable("no task was created and no plain result was taken: nothing to follow")
    return passed("the task was followed through tasks/get, and the plain result was taken as the outcome",
                  judged=judged, warnings=failed_exits(runs, FOLLOWED, "C-EXT-MUST-02"))


def _listened_ids(e: Exchange) -> list[str]:
    ids = get_path(e.params, "notifications", "taskIds")
    return [i for i in ids if isinstance(i, str)] if isinstance(ids, list) else []


@client_check(
    id="tasks-client-no-task-on-other-methods",
    area="following",
    title="A task reply to a method other than tools/call is invalid and is not followed",
    description="In 2026-07-28 only tools/call may create a task: a resultType \"task\" reply to prompts/get is an "
                "invalid response, surfaced as an error (the outcome line judged when the prompts/get was the "
                "client's last request, not a tools/call), and no tasks/* is sent for its taskId.",
    requirements=("C-EXT-MUST-03",),
    scenarios=("tasks-client-task-on-prompt",),
    ends=True,
)
def no_task_on_other_methods(runs: list[ScenarioRun]) -> Verdict:
    for run in runs:
        asked = [e for e in run.sent("prompts/get") if e.is_request]
        if not asked:
            return could_not_run(by_flag(f"the client sent no prompts/get in {run.name}",
                                         "have the harness send MCP_CONFORMANCE_CONTEXT's `request` instead of "
                                         "tools/call"))
        named = prompt_tasks(run)
        followed = [e for e in run.sent(*TASK_METHODS) if e.task_id in named]
        if followed:
            return failed(f"the client sent {shown(followed[0].method)} for the task a prompts/get reply named "
                          f"(frame #{followed[0].seq}): only tools/call creates tasks",
                          evidence=[asked[0].seq, *(e.seq for e in followed)][:MAX_EVIDENCE],
                          details={"expected": "no tasks/* for a task a prompts/get reply named",
                                   "actual": f"{shown(followed[0].method)} (frame #{followed[0].seq})"})
        said = run.client.outcome
        # The outcome line is about the request the client made last: a client that also called the
        # context's toolName after its prompts/get reported that call, not the prompt.
        last = max((e for e in run.exchanges if e.is_request and e.method in ("prompts/get", "tools/call")),
                   key=lambda e: e.time)
        if said is not None and last.method == "prompts/get" and not said.get("error"):
            return failed("the client reported the prompts/get as a success although its reply was an invalid "
                          "task result", evidence=asked[0].seqs,
                          details={"expected": "an error for the invalid reply", "actual": "reported as a success"})
    return passed("the task reply to prompts/get was not followed",
                  evidence=[s for run in runs for e in run.sent("prompts/get") if e.is_request for s in e.seqs])


@client_check(
    id="tasks-client-cancels-with-tasks-cancel",
    area="following",
    title="A task is cancelled with tasks/cancel, never with notifications/cancelled",
    description="Asked to cancel, the client sends tasks/cancel for the task; no notifications/cancelled names "
                "the creating tools/call once the CreateTaskResult has arrived.",
    requirements=("C-EXT-MUST-06",),
    # Once tasks/cancel is sent the check is satisfied: no poll until cancelled is asked for.
    permits=("C-EXT-MAY-03",),
    scenarios=EXTENSION,
    needs=("tasks-client-cancel",),
    ends=True,
)
def cancels_with_tasks_cancel(runs: list[ScenarioRun]) -> Verdict:
    def unstarted(run: ScenarioRun) -> Verdict | None:
        if any(_status(e) == "working" for e in run.sent("tasks/get")):
            return None
        return could_not_run(by_flag("the client never read the cancel scenario's task working, so it had nothing "
                                     "to cancel", "see tasks-client-follows-task"),
                             blocked_by="tasks-client-follows-task")

    def creates(run: ScenarioRun) -> Iterator[Exchange]:
        return (e for e in run.sent("tools/call") if get_path(e.result, "resultType") == "task")

    return judge_cancel(runs, rule="C-EXT-MUST-06", scenario="tasks-client-cancel", unstarted=unstarted,
                        creates=creates, request_level="tasks-client-request-cancellation")


EXTENSION_CADENCE = Cadence(DIALECTS[Wire.EXTENSION].poll_interval_field, ("tasks/update",),
                            "C-EXT-SHOULD-01", "C-EXT-SHOULD-02")


@client_check(
    id="tasks-client-poll-interval",
    area="following",
    title="tasks/get polls wait at least the latest pollIntervalMs",
    description="Between a tasks/get answer and the next tasks/get of the same task the client waits the "
                "pollIntervalMs of the most recent snapshot, and follows a changed value; the first tasks/get "
                "waits the CreateTaskResult's (policy P-48). Early polls warn (SHOULD; policy P-33: measured "
                "answer to request, max(50 ms, 10 %) slack, a poll after tasks/update not judged).",
    requirements=("C-EXT-SHOULD-01", "C-EXT-SHOULD-02"),
    scenarios=("tasks-client-lifecycle", "tasks-client-interval-change"),
)
def poll_interval(runs: list[ScenarioRun]) -> Verdict:
    return judge_cadence(runs, EXTENSION_CADENCE)


@client_check(
    id="tasks-client-stops-at-terminal",
    area="following",
    title="Polling stops once a terminal status was read",
    description="Terminal statuses never change, so a tasks/get after one read completed, failed or cancelled is "
                "wasted; it warns (SHOULD).",
    requirements=("C-EXT-SHOULD-04",),
    scenarios=EXTENSION,
    needs=(),
)
def stops_at_terminal(runs: list[ScenarioRun]) -> Verdict:
    extra: list[tuple[ScenarioRun, Exchange]] = []
    judged = 0
    for run, task_id in task_runs(runs):
        gets = _gets(run, task_id)
        ended = next((i for i, e in enumerate(gets) if _status(e) in TERMINAL_STATUSES), None)
        if ended is not None:
            judged += 1
            extra += [(run, e) for e in gets[ended + 1:]]
    if not judged:
        return not_applicable("the client never read a task's terminal status, so no poll after one to judge")
    if extra:
        shown = "; ".join(f"{r.label} frame #{e.seq}" for r, e in extra[:SHOWN])
        said = warn(f"{len(extra)} tasks/get after the task was read terminal (C-EXT-SHOULD-04; policy P-34): "
                    f"{shown}", "P-34")
        return passed(f"{len(extra)} tasks/get after a terminal status",
                      evidence=[e.seq for _r, e in extra][:MAX_EVIDENCE], warnings=[said])
    return passed("no task was polled after a terminal status", judged=judged)


@client_check(
    id="tasks-client-keeps-observing",
    area="following",
    title="A live task is observed to its end or cancelled, never abandoned",
    description="The client keeps polling (or listening) until the task is completed, failed or cancelled, or it "
                "sends tasks/cancel, and after answering the task's input too; a client that exits while its task "
                "was last read live warns (SHOULD).",
    requirements=("C-EXT-SHOULD-03", "C-EXT-SHOULD-07"),
    # After tasks/cancel nothing more is asked; any terminal status read ends the task, not only cancelled.
    permits=("C-EXT-MAY-03", "C-EXT-MAY-04"),
    # A task that expires ends without a terminal status: tasks-client-task-expiry judges that run; one
    # left to a subscription that did not cover it, tasks-client-subscription-ack.
    scenarios=tuple(name for name in EXTENSION if name not in (EXPIRY, "tasks-client-subscription-ack")),
    # A client stopped at --timeout did not leave its task by itself (the runner warns that it hung).
    needs=(),
)
def keeps_observing(runs: list[ScenarioRun]) -> Verdict:
    abandoned = []
    rules: dict[str, None] = {}
    seqs: list[int] = []
    policies: set[str] = set()
    tasks = list(task_runs(runs))
    if not tasks:
        return not_applicable("no task was created, so none could be left live")
    for run, task_id in tasks:
        reads = [e for e in _gets(run, task_id) if _status(e) is not None]
        cancelled = any(e.task_id == task_id for e in run.sent("tasks/cancel"))
        last = _status(reads[-1]) if reads else "working"
        if last not in TERMINAL_STATUSES and not cancelled and not run.client.timed_out:
            answered = any(e.task_id == task_id for e in run.sent("tasks/update"))
            rules["C-EXT-SHOULD-07" if answered else "C-EXT-SHOULD-03"] = None
            elsewhere = run.elsewhere(task_id, *TASK_METHODS)
            seqs += [e.seq for e in elsewhere]
            abandoned.append(f"{run.label}: task {task_id!r} last read {last}"
                             + (" after the client answered its input" if answered else "")
                             + (f" ({said_elsewhere(run, elsewhere)}; policy P-47)" if elsewhere else ""))
            policies.update(("P-47",) if elsewhere else ())
    if abandoned:
        return passed("a live task was left", judged=len(tasks), evidence=seqs[:MAX_EVIDENCE], warnings=[warn(
            f"the client ended while a task was live, without tasks/cancel ({', '.join(sorted(rules))}): "
            + "; ".join(abandoned[:SHOWN]), *sorted(policies))])
    return passed("every task was followed to a terminal status or cancelled", judged=len(tasks))


@client_check(
    id="tasks-client-input-answered",
    area="following",
    title="Task input is answered through tasks/update, once per key",
    description="An input_required task's inputRequests are answered with tasks/update inputResponses under the "
                "same keys, never by re-sending tools/call with inputResponses (that is MRTR), and a key already "
                "answered is not answered again when a stale snapshot lists it (policy P-37).",
    requirements=("C-EXT-MUST-09", "C-EXT-SHOULD-06", "C-EXT-SHOULD-08"),
    scenarios=("tasks-client-input",),
    # Keys are collected over every tasks/update, so answering them a part at a time is accepted.
    permits=("C-EXT-MAY-07",),
    ends=True,
)
def input_answered(runs: list[ScenarioRun]) -> Verdict:
    judged = 0
    for run in runs:
        retried = [e for e in run.sent("tools/call") if "inputResponses" in e.params or "requestState" in e.params]
        if retried:
            return failed(f"the client re-sent tools/call with inputResponses (frame #{retried[0].seq}) to answer a "
                          "task's input: task input goes through tasks/update", broken=("C-EXT-MUST-09",),
                          evidence=[e.seq for e in retried][:MAX_EVIDENCE],
                          details={"expected": "tasks/update inputResponses",
                                   "actual": f"tools/call with inputResponses (frame #{retried[0].seq})"})
        answers = [(e, k) for e in run.sent("tasks/update")
                   for k in (e.params.get("inputResponses") or {}) if isinstance(e.params.get("inputResponses"), dict)]
        keys = [k for _e, k in answers]
        asked = any("k1" in (get_path(e.result, "inputRequests") or {}) for e in run.sent("tasks/get"))
        judged += asked or bool(keys)
        if asked and "k1" not in keys:
            return passed("the input request was not answered", judged=1, warnings=[
                "the task's input request k1 got no tasks/update inputResponses (C-EXT-SHOULD-06)"])
        if keys.count("k1") > 1:
            again = [e.seq for e, k in answers if k == "k1"]
            return passed("k1 was answered more than once", evidence=again, warnings=[warn(
                f"the key k1 was answered {keys.count('k1')} times (frames {', '.join(f'#{s}' for s in again)}); "
                "an answered key is not answered again (C-EXT-SHOULD-08; policy P-37)", "P-37")])
    if not judged:
        return not_applicable("the client never read the task's input request (input_required), so there was "
                              "nothing to answer")
    return passed("the input request was answered once, through tasks/update", judged=judged)


FAILED_TASK, DIRECT_ERROR = "tasks-client-failed", "tasks-client-direct-error"


def _control(runs: list[ScenarioRun]) -> dict[str, object] | None:
    """The outcome line of the direct call that failed with the failed task's error, when it shows an
    error at all (a client that shows none for it has no measure to offer)."""
    for run in runs:
        said = run.client.outcome
        if run.name == DIRECT_ERROR and said is not None and (said.get("error") or said.get("status") == "failed"):
            return said
    return None


def _shown_alike(said: dict[str, object], control: dict[str, object]) -> bool:
    return all(said.get(key) == control.get(key) for key in ("status", "isError", "error"))


@client_check(
    id="tasks-client-surfaces-outcome",
    area="following",
    title="The client surfaces a task's outcome as the call's: isError stays completed, a failure keeps its error",
    description="From the harness's TASKS-CONFORMANCE-OUTCOME line: a completed task whose result has isError true "
                "is a completed call carrying a tool error, and a failed task's JSON-RPC error reaches the user "
                "as the same error from the call itself would: with its code, or exactly as the client shows that "
                "error from a direct tools/call (the control scenario tasks-client-direct-error). Without the line "
                "these rules are not applicable (could not run under --profile full; policy P-36).",
    requirements=("C-EXT-MUST-15", "C-EXT-MUST-16"),
    scenarios=("tasks-client-tool-error", FAILED_TASK, DIRECT_ERROR),
    # The control is a measure, not a run the rules are judged on.
    needs=("tasks-client-tool-error", FAILED_TASK),
    outcome_line=True,
    ends=True,
)
def surfaces_outcome(runs: list[ScenarioRun]) -> Verdict:
    told = [run for run in runs if run.client.outcome is not None and run.name != DIRECT_ERROR]
    unread = next((run.client.outcome_problem for run in runs if run.client.outcome_problem), None)
    if not told:
        why = f"{unread}, so it cannot be judged" if unread else \
            "the harness printed no TASKS-CONFORMANCE-OUTCOME line"
        return not_applicable(f"{why} (policy P-36)", policies=("P-36",))
    # What a client reports before it read the task's end is not about the end: following the task
    # is tasks-client-follows-task's and tasks-client-keeps-observing's to judge.
    told = [run for run in told if read_ended(run)]
    if not told:
        return not_applicable("the client never read the task's end, so its outcome line is not about it")
    control = _control(runs)
    alike = False
    for run in told:
        said = run.client.outcome or {}
        tool_error_kept = said.get("status") == "completed" and said.get("isError") is True
        if run.name == "tasks-client-tool-error" and not tool_error_kept:
            return failed(f"a completed task whose result has isError true was reported as status "
                          f"{str(said.get('status'))[:40]!r}, isError {shown(said.get('isError'))}",
                          broken=("C-EXT-MUST-15",),
                          details={"expected": "status completed, isError true",
                                   "actual": f"status {str(said.get('status'))[:40]}, "
                                             f"isError {shown(said.get('isError'))}"})
        code = get_path(said, "error", "code")
        if run.name != FAILED_TASK or (said.get("status") == "failed" and code == -32000):
            continue
        if control is not None and _shown_alike(said, control):
            alike = True  # shown as the same error from a direct call is: what the rule asks
            continue
        also = "" if control is None else (
            f", while the same error from a direct tools/call was reported as status "
            f"{str(control.get('status'))[:40]!r}, error {shown(control.get('error'))}")
        return failed(f"a task that failed with JSON-RPC error -32000 was reported as status "
                      f"{str(said.get('status'))[:40]!r}, error code {shown(code)}{also}", broken=("C-EXT-MUST-16",),
                      details={"expected": "status failed, error code -32000, or the error as the client shows it "
                                           "from a direct tools/call",
                               "actual": f"status {str(said.get('status'))[:40]}, error code {shown(code)}{also}"})
    if alike:
        return passed("the outcome the client reported matches the task's; the failed task's error is shown as the "
                      "same error from a direct tools/call is", judged=len(told))
    return passed("the outcome the client reported matches the task's", judged=len(told))


@client_check(
    id="tasks-client-task-expiry",
    area="following",
    title="A task whose ttlMs runs out while working is let go once the server no longer knows it",
    description="The scripted server deletes a working task when its ttlMs (one second) has passed, and answers "
                "-32602 task not found from then on. No rule says what the client does: more than two further "
                "requests naming the task, or an outcome line without an error, warn (policy P-45). Stopping at "
                "createdAt + ttlMs before the server says so is the client's freedom.",
    requirements=(),
    permits=("C-EXT-MAY-01",),
    scenarios=(EXPIRY,),
    ends=True,
)
def task_expiry(runs: list[ScenarioRun]) -> Verdict:
    return judge_expiry(runs, scenario=EXPIRY, methods=TASK_METHODS)
