"""Client checks of the 2025-11-25 wire (tasks in core): params.task where the server and the tool
allow it, the payload fetched with tasks/result, task input answered on its stream, cancellation
with tasks/cancel, what the server declared, the poll cadence, and nothing of the 2026-07-28
extension on a 2025-11-25 session. They judge the tasks-client-legacy-* runs only.

https://modelcontextprotocol.io/specification/2025-11-25/basic/utilities/tasks
"""

from __future__ import annotations

from typing import Any

from tasks_conformance.client.checks.cadence import Cadence, judge_cadence
from tasks_conformance.client.checks.cancel import judge_cancel
from tasks_conformance.client.checks.exit_status import failed_exits
from tasks_conformance.client.checks.expiry import judge_expiry
from tasks_conformance.client.checks.framing import DESCRIPTION, judge_framing
from tasks_conformance.client.checks.legacy_rules import took_create_as_result
from tasks_conformance.client.checks.registry import client_check
from tasks_conformance.client.evidence import Exchange, ScenarioRun
from tasks_conformance.client.scenarios import LEGACY_TOOLS, scenario_names
from tasks_conformance.core.causes import by_flag
from tasks_conformance.core.protocol import (
    META_CLIENT_CAPS,
    META_RELATED_TASK,
    TERMINAL_STATUSES,
    get_path,
)
from tasks_conformance.core.result import CheckWarning
from tasks_conformance.core.text import shown
from tasks_conformance.core.verdict import Verdict, could_not_run, failed, not_applicable, passed, warn
from tasks_conformance.core.wires import DIALECTS, CreatedTask, Wire
from tasks_conformance.core.wires.base import TASK_CAPABLE, has_task_param, lists_extension

LEGACY_RUNS = scenario_names(Wire.LEGACY)
TASK_METHODS = ("tasks/get", "tasks/result", "tasks/cancel")
CANCEL = "tasks-client-legacy-cancel"  # the harness is asked to cancel, and the server can
CANCEL_UNDECLARED = "tasks-client-legacy-cancel-undeclared"  # asked to cancel, but the server declared no tasks.cancel
INPUT = "tasks-client-legacy-input"  # the task asks for input on the tasks/result stream
EXPIRY = "tasks-client-legacy-ttl-expiry"  # the task's ttl runs out while it works
SHOWN = 3
MAX_EVIDENCE = 40
LEGACY_CADENCE = Cadence(DIALECTS[Wire.LEGACY].poll_interval_field, ("tasks/result",),
                         "C-LEG-SHOULD-02", "C-LEG-SHOULD-02", parallel=True)


def _where(run: ScenarioRun, e: Exchange) -> str:
    return f"{shown(e.method)} (frame #{e.seq}, {run.label})"


def _requests(run: ScenarioRun, *methods: str) -> list[Exchange]:
    return [e for e in run.sent(*methods) if e.is_request]


def _declared(run: ScenarioRun, *path: str) -> bool:
    """Whether the initialize result the client got declares capabilities.tasks.<path> (read on a
    connection's view: each session has its own initialize)."""
    init = next((e for e in _requests(run, "initialize") if isinstance(e.result, dict)), None)
    return init is not None and get_path(init.result, "capabilities", "tasks", *path) is not None


def _creates(run: ScenarioRun) -> dict[str, Exchange]:
    """The tools/call requests that created a task (a nested CreateTaskResult), by task id (on a
    connection's view: a task id names a task of its own connection)."""
    out: dict[str, Exchange] = {}
    for e in _requests(run, "tools/call"):
        created = CreatedTask.read(e.result)
        if created.task_id is not None and created.shape == "nested":
            out.setdefault(created.task_id, e)
    return out


def _augmentation_problem(e: Exchange, declared: bool) -> tuple[str, str] | None:
    """(the rule, what is wrong) with one tools/call's params.task, or None."""
    name = e.params.get("name")
    known = isinstance(name, str) and name in LEGACY_TOOLS
    support = LEGACY_TOOLS.get(name) if isinstance(name, str) else None
    asked = has_task_param(e.params)
    if asked and not declared:
        return "C-LEG-MUST-01", "params.task although the server declared no tasks.requests.tools.call"
    if asked and known and support not in TASK_CAPABLE:
        return "C-LEG-MUST-02", f"params.task for {name}, whose taskSupport is {support or 'absent (forbidden)'}"
    if not asked and declared and support == "required":
        return "C-LEG-MUST-03", f"{name} called without params.task although its taskSupport is required"
    return None


@client_check(
    id="tasks-client-legacy-task-augmentation",
    area="legacy",
    title="params.task only where the server and the tool allow it, and always for a required tool",
    description="A tools/call carries params.task only when the initialize result declared "
                "tasks.requests.tools.call and the tool's execution.taskSupport is optional or required (absent "
                "means forbidden), and always when it is required. params.task on any other request warns.",
    requirements=("C-LEG-MUST-01", "C-LEG-MUST-02", "C-LEG-MUST-03", "C-LEG-SHOULD-01"),
    # An optional tool may be called as a task or plainly: neither is judged.
    permits=("C-LEG-MAY-01",),
    scenarios=LEGACY_RUNS,
    # The scenarios whose server or tool decides params.task; the others only repeat the first.
    needs=("tasks-client-legacy-lifecycle", "tasks-client-legacy-required", "tasks-client-legacy-forbidden",
           "tasks-client-legacy-undeclared"),
)
def task_augmentation(runs: list[ScenarioRun]) -> Verdict:
    problems: list[tuple[ScenarioRun, Exchange, str, str]] = []
    calls = 0
    for run in (view for whole in runs for view in whole.by_connection()):
        declared = _declared(run, "requests", "tools", "call")
        for e in _requests(run, "tools/call"):
            calls += 1
            if (found := _augmentation_problem(e, declared)) is not None:
                problems.append((run, e, *found))
    elsewhere = [(run, e) for run in runs for e in run.exchanges
                 if e.is_request and e.method != "tools/call" and has_task_param(e.params)]
    warnings = [f"params.task on {len(elsewhere)} request(s) other than tools/call, the one request type a "
                "2025-11-25 server may declare (C-LEG-SHOULD-01): "
                + "; ".join(_where(r, e) for r, e in elsewhere[:SHOWN])] if elsewhere else []
    if problems:
        broken = tuple(dict.fromkeys(rule for _r, _e, rule, _what in problems))
        return failed(f"{len(problems)} tools/call with the wrong params.task: "
                      + "; ".join(f"{_where(r, e)}: {what}" for r, e, _rule, what in problems[:SHOWN]),
                      broken=broken, evidence=[e.seq for _r, e, _x, _y in problems][:MAX_EVIDENCE], warnings=warnings,
                      details={"expected": "params.task only where the server and the tool allow it, always for a "
                                           "required tool", "actual": problems[0][3]})
    if not calls:
        return could_not_run(by_flag("the client sent no tools/call in the 2025-11-25 scenarios",
                                     "have the harness call MCP_CONFORMANCE_CONTEXT's toolName"))
    return passed(f"all {calls} tools/call carried params.task exactly where the server and the tool allowed it",
                  warnings=warnings, evidence=[e.seq for _r, e in elsewhere][:MAX_EVIDENCE], judged=calls)


def _payload_answer(run: ScenarioRun, task_id: str) -> Exchange | None:
    """The last tasks/result of a task that was answered (a result or an error)."""
    answered = [e for e in _requests(run, "tasks/result") if e.task_id == task_id and e.reply is not None
                and ("result" in e.reply or "error" in e.reply)]
    return answered[-1] if answered else None


def _outcome_mismatch(said: dict[str, Any], reply: dict[str, Any]) -> str | None:
    """How the harness's outcome line differs from what tasks/result answered, or None."""
    code = get_path(reply, "error", "code")
    if "error" in reply:
        if said.get("status") != "failed" or get_path(said, "error", "code") != code:
            return f"tasks/result answered JSON-RPC error {code!r}, reported as status {shown(said.get('status'))}, " \
                   f"error code {shown(get_path(said, 'error', 'code'))}"
        return None
    if get_path(reply, "result", "isError") is True:
        if said.get("isError") is not True or said.get("error"):
            return f"tasks/result answered a CallToolResult with isError true, reported as status " \
                   f"{shown(said.get('status'))}, isError {shown(said.get('isError'))}"
        return None
    if said.get("status") != "completed":
        return f"tasks/result answered a CallToolResult, reported as status {shown(said.get('status'))}"
    return None


@client_check(
    id="tasks-client-legacy-fetches-result",
    area="legacy",
    title="A task's payload is fetched with tasks/result, and that answer is the call's outcome",
    description="tasks/get carries no payload: a task that ends is followed by tasks/result, whose answer (the "
                "CallToolResult, isError included, or the same JSON-RPC error) is the call's outcome. The rule is "
                "derived, so a missing fetch or an outcome line that differs from the answer warns (policy P-38).",
    requirements=("C-LEG-MUST-05",),
    scenarios=("tasks-client-legacy-lifecycle", "tasks-client-legacy-required", "tasks-client-legacy-failed",
               "tasks-client-legacy-tool-error", "tasks-client-legacy-cancel-undeclared", INPUT),
    ends=True,
)
def fetches_result(runs: list[ScenarioRun]) -> Verdict:
    unfetched: list[str] = []
    differs: list[str] = []
    tasks = 0
    for run in (view for whole in runs for view in whole.by_connection()):
        cancelled = {e.task_id for e in _requests(run, "tasks/cancel")}
        for task_id, create in _creates(run).items():
            if task_id in cancelled:
                continue
            tasks += 1
            answer = _payload_answer(run, task_id)
            if answer is None:
                unfetched.append(f"{run.label}: the task tools/call frame #{create.seq} created")
                continue
            said = run.client.outcome
            mismatch = _outcome_mismatch(said, answer.reply or {}) if said is not None else None
            if mismatch is not None:
                differs.append(f"{run.label} (frame #{answer.reply_seq}): {mismatch}")
    if not tasks:
        return not_applicable("no task was created (tasks-client-legacy-task-augmentation judges params.task)")
    warnings: list[CheckWarning] = []
    if unfetched:
        warnings.append(warn(f"{len(unfetched)} task(s) never fetched with tasks/result, so their outcome was lost "
                             f"(C-LEG-MUST-05; policy P-38): " + "; ".join(unfetched[:SHOWN]), "P-38"))
    if differs:
        warnings.append(warn("the outcome the client reported is not what tasks/result answered (C-LEG-MUST-05; "
                             "policy P-38): " + "; ".join(differs[:SHOWN]), "P-38"))
    # The lifecycle tasks complete without isError: a harness exiting non-zero there says it failed.
    exits = failed_exits(runs, ("tasks-client-legacy-lifecycle", "tasks-client-legacy-required"), "C-LEG-MUST-05")
    if warnings:
        return passed(f"{len(unfetched) + len(differs)} of {tasks} tasks' payloads not taken from tasks/result",
                      warnings=[*warnings, *exits], judged=tasks)
    if exits:
        return passed(f"all {tasks} tasks' payloads were fetched with tasks/result", warnings=exits, judged=tasks)
    return passed(f"all {tasks} tasks' payloads were fetched with tasks/result", judged=tasks)


@client_check(
    id="tasks-client-legacy-cancels-with-tasks-cancel",
    area="legacy",
    title="A task is cancelled with tasks/cancel, never with notifications/cancelled (2025-11-25)",
    description="Asked to cancel, the client sends tasks/cancel for the task; no notifications/cancelled names "
                "the creating tools/call once the CreateTaskResult has arrived (policy P-35).",
    requirements=("C-LEG-MUST-07",),
    scenarios=LEGACY_RUNS,
    needs=(CANCEL,),
    ends=True,
)
def cancels_with_tasks_cancel(runs: list[ScenarioRun]) -> Verdict:
    # A created task is working from its CreateTaskResult on: the client had its task to cancel,
    # unless it took the CreateTaskResult for the call's result (C-LEG-MUST-04 is another check's).
    return judge_cancel(runs, rule="C-LEG-MUST-07", scenario=CANCEL, unstarted=_never_followed,
                        creates=lambda run: _creates(run).values())


def _never_followed(run: ScenarioRun) -> Verdict | None:
    """Not applicable when the client never followed its task, having taken the CreateTaskResult for
    the call's result: tasks-client-legacy-reads-create-result judges that (C-LEG-MUST-04)."""
    taken = [v for v in run.by_connection() for task_id, e in _creates(v).items()
             if took_create_as_result(v, task_id, e)]
    if taken:
        return not_applicable("the client took the CreateTaskResult for the call's result, so it never had a task to "
                              "cancel (tasks-client-legacy-reads-create-result judges C-LEG-MUST-04)")
    return None


@client_check(
    id="tasks-client-legacy-declared-methods",
    area="legacy",
    title="tasks/cancel and tasks/list only where the server declared them",
    description="On 2025-11-25 tasks/cancel and tasks/list are optional: the client sends them only when the "
                "initialize result declared tasks.cancel or tasks.list; otherwise it warns (SHOULD).",
    requirements=("C-LEG-SHOULD-07",),
    scenarios=LEGACY_RUNS,
    # Where the harness is asked to cancel and the server declared no tasks.cancel.
    needs=(CANCEL_UNDECLARED,),
)
def declared_methods(runs: list[ScenarioRun]) -> Verdict:
    optional = (("tasks/cancel", "cancel"), ("tasks/list", "list"))
    judged = [e for run in runs for e in _requests(run, "tasks/cancel", "tasks/list")]
    # Asked to cancel where the server declared no tasks.cancel: judged once there was a task to cancel.
    undeclared_asked = sum(run.name == CANCEL_UNDECLARED and any(_creates(v) for v in run.by_connection())
                           for run in runs)
    if not judged and not undeclared_asked:
        return not_applicable("the client sent no tasks/cancel or tasks/list, and created no task to cancel where the "
                              "server declared none")
    views = [view for run in runs for view in run.by_connection()]
    undeclared = [(run, e) for run in views for method, capability in optional
                  if not _declared(run, capability) for e in _requests(run, method)]
    if undeclared:
        return passed(f"{len(undeclared)} request(s) to a method the server did not declare",
                      evidence=[e.seq for _r, e in undeclared][:MAX_EVIDENCE], warnings=[
                          "tasks/cancel or tasks/list sent although the server declared no tasks.cancel or tasks.list "
                          "(C-LEG-SHOULD-07): " + "; ".join(_where(r, e) for r, e in undeclared[:SHOWN])])
    # Judged: each tasks/cancel or tasks/list, and the run asked to cancel where none was declared.
    return passed("tasks/cancel and tasks/list were sent only where the server declared them",
                  judged=len(judged) + undeclared_asked)


@client_check(
    id="tasks-client-legacy-no-extension-wire",
    area="legacy",
    title="No 2026-07-28 extension wire on a 2025-11-25 session",
    description="On 2025-11-25 the client sends no tasks/update and no per-request declaration of "
                "io.modelcontextprotocol/tasks in _meta clientCapabilities; listing the extension in "
                "initialize's capabilities warns (policy P-39).",
    requirements=("C-LEG-MUST-10", "C-EXT-SHOULD-12"),
    scenarios=LEGACY_RUNS,
    needs=(),
)
def no_extension_wire(runs: list[ScenarioRun]) -> Verdict:
    wrong = [(run, e, "tasks/update does not exist on 2025-11-25") for run in runs
             for e in _requests(run, "tasks/update")]
    wrong += [(run, e, "declares io.modelcontextprotocol/tasks in its _meta clientCapabilities") for run in runs
              for e in run.exchanges if e.is_request and lists_extension(e.params, "_meta", META_CLIENT_CAPS)]
    listed = [(run, e) for run in runs for e in _requests(run, "initialize")
              if lists_extension(e.params, "capabilities")]
    warnings = [warn("initialize lists io.modelcontextprotocol/tasks in capabilities.extensions, which 2025-11-25 "
                     "does not define (C-EXT-SHOULD-12; policy P-39): "
                     + "; ".join(_where(r, e) for r, e in listed[:SHOWN]), "P-39")] if listed else []
    if wrong:
        return failed(f"{len(wrong)} request(s) use the 2026-07-28 extension on a 2025-11-25 session (policy P-39): "
                      + "; ".join(f"{_where(r, e)}: {what}" for r, e, what in wrong[:SHOWN]),
                      broken=("C-LEG-MUST-10",), evidence=[e.seq for _r, e, _w in wrong][:MAX_EVIDENCE],
                      warnings=warnings, policies=("P-39",),
                      details={"expected": "no 2026-07-28 extension wire on 2025-11-25", "actual": wrong[0][2]})
    return passed("no extension wire was sent on 2025-11-25", warnings=warnings,
                  evidence=[e.seq for _r, e in listed][:MAX_EVIDENCE],
                  judged=sum(e.is_request for run in runs for e in run.exchanges))


@client_check(
    id="tasks-client-legacy-no-related-meta",
    area="legacy",
    title="No related-task _meta on tasks/get, tasks/result or tasks/cancel",
    description="params.taskId identifies the task of a tasks/get, tasks/result or tasks/cancel; the related-task "
                "_meta on them is ignored by the server, and sending it warns (SHOULD NOT).",
    requirements=("C-LEG-SHOULD-05",),
    scenarios=LEGACY_RUNS,
    needs=(),
)
def no_related_meta(runs: list[ScenarioRun]) -> Verdict:
    if not any(True for run in runs for _e in _requests(run, *TASK_METHODS)):
        return not_applicable("the client sent no tasks/get, tasks/result or tasks/cancel to judge")
    tagged = [(run, e) for run in runs for e in _requests(run, *TASK_METHODS)
              if get_path(e.params, "_meta", META_RELATED_TASK) is not None]
    if tagged:
        return passed(f"{len(tagged)} tasks/* request(s) carried the related-task _meta",
                      evidence=[e.seq for _r, e in tagged][:MAX_EVIDENCE], warnings=[
                          f"the related-task _meta on {len(tagged)} tasks/* request(s), whose params.taskId already "
                          f"names the task (C-LEG-SHOULD-05): " + "; ".join(_where(r, e) for r, e in tagged[:SHOWN])])
    return passed("no tasks/get, tasks/result or tasks/cancel carried the related-task _meta",
                  judged=sum(len(_requests(run, *TASK_METHODS)) for run in runs))


@client_check(
    id="tasks-client-legacy-poll-interval",
    area="legacy",
    title="tasks/get polls wait at least the latest pollInterval (2025-11-25)",
    description="Between a tasks/get answer and the next tasks/get of the same task the client waits the "
                "pollInterval of the CreateTaskResult or the latest tasks/get, the first tasks/get that of the "
                "CreateTaskResult (policy P-48). Early polls warn (SHOULD; policy P-33, and a poll after a "
                "tasks/result is not judged); a tasks/get sent while another was in flight is a parallel poll, "
                "allowed (policy P-52).",
    requirements=("C-LEG-SHOULD-02",),
    permits=("C-LEG-MAY-05",),
    scenarios=("tasks-client-legacy-lifecycle", "tasks-client-legacy-required",
               "tasks-client-legacy-cancel-undeclared"),
)
def poll_interval(runs: list[ScenarioRun]) -> Verdict:
    return judge_cadence(runs, LEGACY_CADENCE)


def _input_problems(run: ScenarioRun) -> tuple[bool, list[str], list[CheckWarning]]:
    """(whether the task asked for input, SHOULD warnings, policy warnings) of one input run."""
    reads = [e for e in _requests(run, "tasks/get") if get_path(e.result, "status") == "input_required"]
    asked = [e for e in run.server_requests if e.method == "elicitation/create"]
    if not reads and not asked:
        return False, [], []
    first = min(e.time for e in reads) if reads else 0.0
    # A tasks/result sent once the client had read the task's end fetches the payload, not the input.
    ended = min((e.reply_time for e in _requests(run, "tasks/get") if e.reply_time is not None
                 and get_path(e.result, "status") in TERMINAL_STATUSES), default=float("inf"))
    plain: list[str] = []
    if reads and not asked and not [e for e in _requests(run, "tasks/result") if first <= e.time < ended]:
        plain.append(f"{run.name}: the task read input_required (frame #{reads[0].seq}) but no tasks/result followed, "
                     "the stream its elicitation comes on (C-LEG-SHOULD-04)")
    cited: list[CheckWarning] = []
    for e in asked:
        task_id = get_path(e.params, "_meta", META_RELATED_TASK, "taskId")
        where = f"the elicitation/create of frame #{e.seq} ({run.name})"
        if e.reply is None:
            cited.append(warn(f"{where} was never answered (C-LEG-MUST-13; policy P-40)", "P-40"))
        elif "error" in e.reply:
            cited.append(warn(f"{where} was answered with JSON-RPC error {shown(get_path(e.reply, 'error', 'code'))} "
                              "although the client declared elicitation (C-LEG-MUST-13; policy P-40)", "P-40"))
        elif get_path(e.reply, "result", "_meta", META_RELATED_TASK, "taskId") != task_id:
            cited.append(warn(f"the response to {where} (frame #{e.reply_seq}) does not carry the related-task _meta "
                              "of its task (C-LEG-MUST-08; policy P-40)", "P-40"))
    return True, plain, cited


@client_check(
    id="tasks-client-legacy-input-answered",
    area="legacy",
    title="Task input: tasks/result on input_required, and the elicitation answered, tagged with its task",
    description="On input_required the client calls tasks/result (SHOULD), on whose stream the server sends its "
                "elicitation/create with the related-task _meta; the client answers it as the ordinary request it "
                "is, and its response carries the same related-task _meta. Those two rules are derived or read "
                "from text no client follows yet, so they warn (policy P-40).",
    requirements=("C-LEG-MUST-08", "C-LEG-MUST-13", "C-LEG-SHOULD-04"),
    scenarios=(INPUT,),
    ends=True,
)
def input_answered(runs: list[ScenarioRun]) -> Verdict:
    judged = 0
    plain: list[str] = []
    cited: list[CheckWarning] = []
    for run in runs:
        asked, should, policy = _input_problems(run)
        judged, plain, cited = judged + asked, plain + should, cited + policy
    if not judged:
        return not_applicable("the client never saw the task ask for input (it created no task, or never read it)")
    warnings: list[str | CheckWarning] = [*plain, *cited]
    if warnings:
        return passed("the task's input was not asked for and answered as 2025-11-25 says", warnings=warnings,
                      judged=judged)
    return passed("tasks/result was called on input_required and the elicitation answered with its task's _meta",
                  judged=judged)


@client_check(
    id="tasks-client-legacy-task-expiry",
    area="legacy",
    title="A task whose ttl runs out while working is let go once the server no longer knows it (2025-11-25)",
    description="The scripted server grants a one-second ttl whatever the client asked for, deletes the task when "
                "it has passed while the task still works, and answers -32602 task not found from then on. No rule "
                "says what the client does: more than two further requests naming the task, or an outcome line "
                "without an error, warn (policy P-45).",
    requirements=(),
    # The client may ask for a ttl; the server granting another is never held against it.
    permits=("C-LEG-MAY-02",),
    scenarios=(EXPIRY,),
    ends=True,
)
def task_expiry(runs: list[ScenarioRun]) -> Verdict:
    return judge_expiry(runs, scenario=EXPIRY, methods=TASK_METHODS)


@client_check(
    id="tasks-client-legacy-wire-framing",
    area="legacy",
    title="Every message the client sent is JSON-RPC 2.0, and no two requests in flight share an id (2025-11-25)",
    description=DESCRIPTION,
    requirements=("C-LEG-MUST-14", "C-LEG-MUST-15"),
    scenarios=LEGACY_RUNS,
    needs=(),
    every_run=True,
)
def wire_framing(runs: list[ScenarioRun]) -> Verdict:
    return judge_framing(runs, framing="C-LEG-MUST-14", id_rule="C-LEG-MUST-15")
