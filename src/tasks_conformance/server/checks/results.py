"""Results: the task's outcome is retrievable — inlined in tasks/get on the extension, through
tasks/result with the related-task _meta on legacy."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tasks_conformance.core.causes import by_flag, unmet
from tasks_conformance.core.protocol import (
    META_RELATED_TASK,
    TERMINAL_STATUSES,
    get_path,
)
from tasks_conformance.core.result import CheckWarning
from tasks_conformance.core.verdict import Verdict, could_not_run, failed, not_applicable, passed, warn
from tasks_conformance.core.wires import Wire
from tasks_conformance.server.checks.engine.common import got, unrun
from tasks_conformance.server.checks.engine.registry import check
from tasks_conformance.server.checks.engine.shapes import reply_seqs, result_of
from tasks_conformance.server.evidence import (
    DeclaredCall,
    Evidence,
    Poll,
    RelatedMetaOverride,
    ResultWhileRunning,
    TaskListing,
)

if TYPE_CHECKING:
    from tasks_conformance.core.rpc.peer import Reply



from tasks_conformance.server.checks.engine.role_tasks import role_terminal, terminal_read
from tasks_conformance.server.checks.engine.shapes import is_int
from tasks_conformance.server.evidence import FaultTask, ToolErrorTask, UndeclaredCall

INLINE_RESULT = check(
    id="tasks-inline-result",
    area="results",
    category="lifecycle",
    title="The task's outcome is retrievable: inlined on the extension, tasks/result on legacy",
    description=(
        "Extension: a completed task's tasks/get carries result (the CallToolResult), a failed one error "
        "{code, message}. Legacy: tasks/result returns the underlying result, or the same JSON-RPC error, "
        f'with _meta["{META_RELATED_TASK}"].'
    ),
    # The undeclared call shows what the same request returns without a task: the outcome the
    # task must report (S-EXT-MUST-13). Declared, so the verdict never depends on what else
    # was selected.
    probes=(DeclaredCall, Poll, UndeclaredCall),
    needs="terminal",
    owns=("S-LEG-MUST-10", "S-EXT-MUST-10"),
)


@INLINE_RESULT.judge(Wire.EXTENSION, requires=("S-EXT-MUST-10", "S-EXT-MUST-12", "S-EXT-MUST-13"))
def extension_inline_result(ev: Evidence) -> Verdict:
    last = ev.get(Poll).last_get
    assert last is not None  # the terminal precondition saw it
    task, seqs = last.result, last.seqs()
    status = task.get("status")
    if status == "completed":
        return _completed(task.get("result"), seqs)
    if status == "failed":
        return _failed(ev, task.get("error"), seqs)
    return not_applicable("the task ended cancelled, so there is no result to inline", evidence=seqs)


def _completed(result: Any, seqs: list[int]) -> Verdict:
    if not isinstance(result, dict):
        return failed("the completed task's tasks/get has no result object (S-EXT-MUST-10)",
                      broken=("S-EXT-MUST-10",), evidence=seqs,
                      details={"expected": "result: a CallToolResult", "actual": type(result).__name__})
    inner = result.get("resultType")
    if inner in ("task", "input_required"):
        return failed(f"the inlined result says resultType {inner!r}; a final result cannot",
                      broken=("S-EXT-MUST-10",), evidence=seqs,
                      details={"expected": "complete or absent", "actual": inner})
    warnings: list[CheckWarning] = []
    if inner is None:
        warnings.append(warn('the inlined result has no resultType; accepted, but some clients expect "complete" '
                             "(policy P-04)", "P-04"))
    if not isinstance(result.get("content"), list):
        return failed("the inlined result has no content array, so it is not a CallToolResult",
                      broken=("S-EXT-MUST-10",), evidence=seqs,
                      details={"expected": "content: [...]", "actual": sorted(result)[:10]})
    if META_RELATED_TASK in (get_path(result, "_meta") or {}):
        warnings.append(warn("the inlined result carries the legacy related-task _meta"))
    note = " (a tool isError result, correctly kept completed)" if result.get("isError") else ""
    return passed(f"the completed task inlines its CallToolResult{note}", evidence=seqs, warnings=warnings)


def _failed(ev: Evidence, err: Any, seqs: list[int]) -> Verdict:
    if not (isinstance(err, dict) and is_int(err.get("code")) and isinstance(err.get("message"), str)):
        return failed(
            f"the failed task's error is {str(err)[:80]}, not a JSON-RPC error object {{code, message}} "
            "(S-EXT-MUST-12)", broken=("S-EXT-MUST-12",),
            evidence=seqs, details={"expected": "{code, message}", "actual": str(err)[:80]},
        )
    warnings = []
    undeclared = ev.get(UndeclaredCall)
    sync = undeclared.call
    if sync is not None and sync.ok and sync.result.get("isError") is True and undeclared.created.task_id is None:
        # Ambiguous from outside: either the server turned a tool isError result into a
        # failure (S-EXT-MUST-13 forbids that), or the tool raised a protocol error that the
        # synchronous path reports as isError (allowed). Say so; do not fail.
        warnings.append(
            "the task ended failed, but the same tools/call without the extension returned a "
            "CallToolResult with isError: true; if the tool reported isError (rather than raising a "
            "protocol error) the task MUST be completed with that result (S-EXT-MUST-13)"
        )
        seqs = seqs + sync.seqs()
    return passed(f"the failed task carries error {err.get('code')}", evidence=seqs, warnings=warnings)


@INLINE_RESULT.judge(Wire.LEGACY, requires=("S-LEG-MUST-10", "S-LEG-MUST-12"))
def legacy_result_method(ev: Evidence) -> Verdict:
    poll = ev.get(Poll)
    status = poll.final_status
    reply = poll.result
    if reply is None:
        return could_not_run(unmet("tasks/result was not called", "let polling see the end: raise --poll-timeout "
                                   "or pick a quicker tool"))
    seqs = reply.seqs()
    if not reply.answered:
        return failed(f"tasks/result on the {status} task got {reply.describe()}", broken=("S-LEG-MUST-10",),
                      evidence=seqs, details={"expected": "an answer", "actual": reply.describe()})
    if reply.error is not None:
        if status == "failed":
            return passed(f"tasks/result returned the task's JSON-RPC error {reply.error_code}", evidence=seqs)
        return failed(f"tasks/result on a {status} task answered {reply.describe()} instead of the underlying "
                      "result (S-LEG-MUST-10)", broken=("S-LEG-MUST-10",), evidence=seqs,
                      details={"expected": "the underlying result", "actual": reply.describe()})
    related = get_path(reply.result, "_meta", META_RELATED_TASK)
    if not isinstance(related, dict) or related.get("taskId") != ev.created_task_id:
        return failed(
            f'the tasks/result response lacks _meta["{META_RELATED_TASK}"] = {{taskId}} (S-LEG-MUST-12); '
            f"found {str(related)[:60]}", broken=("S-LEG-MUST-12",),
            evidence=seqs, details={"expected": {"taskId": ev.created_task_id}, "actual": str(related)[:60]},
        )
    if not isinstance(reply.result.get("content"), list):
        return failed("tasks/result returned no CallToolResult (no content array)", broken=("S-LEG-MUST-10",),
                      evidence=seqs,
                      details={"expected": "content: [...]", "actual": sorted(reply.result)[:10]})
    warnings: list[CheckWarning] = []
    if reply.result.get("isError") is True and status == "completed":
        warnings.append(warn(
            "the tool result has isError: true but the task ended completed; on 2025-11-25 it should be "
            "failed (a SHOULD; the extension later reversed this rule — policy P-17)", "P-17",
        ))
    return passed(f"tasks/result returned the CallToolResult with the related-task _meta ({status})",
                  evidence=seqs, warnings=warnings)


# ---------------------------------------------------------------------------------------------
# Probe roles (roles.py): the outcome of a tool that ends with isError: true, and of one that
# fails with a JSON-RPC error.

TOOL_ERROR_OUTCOME = check(
    id="tasks-tool-error-outcome",
    area="results",
    category="lifecycle",
    title="A tool result with isError: true ends the task by its era's rule",
    description=(
        "The tool-error role's tool (--probe tool-error=TOOL) run as a task. Extension: the task ends completed "
        "with that CallToolResult inlined in result, never failed. Legacy: tasks/result returns the "
        "CallToolResult itself, not a JSON-RPC error; the task should end failed with a statusMessage "
        "(completed warns, policy P-17)."
    ),
    probes=(ToolErrorTask,),
    needs="wire",
    role="tool-error",
    owns=("S-EXT-MUST-13", "S-LEG-SHOULD-07",),
)


def _status_message_warning(task: Any, rule: str) -> list[str]:
    message = task.get("statusMessage") if isinstance(task, dict) else None
    if isinstance(message, str) and message.strip():
        return []
    return [f"the failed task has no statusMessage; a failed task should carry a diagnostic one ({rule})"]


def _not_an_error_tool(rec: ToolErrorTask, what: str) -> Verdict:
    return could_not_run(
        by_flag(f"the tool-error tool {rec.tool!r} {what}, so it is not a tool that ends with isError: true",
                "pass --probe tool-error=TOOL naming one"),
        evidence=rec.poll.last_get.seqs() if rec.poll.last_get else ())


@TOOL_ERROR_OUTCOME.judge(Wire.EXTENSION, requires=("S-EXT-MUST-13", "S-EXT-MUST-10"))
def extension_tool_error_outcome(ev: Evidence) -> Verdict:
    rec, early = role_terminal(ev, ToolErrorTask, "tool-error")
    if early is not None:
        return early
    task, seqs = terminal_read(rec)
    status = task.get("status")
    if status == "failed":
        return failed(f"the task of the tool-error tool {rec.tool!r} ended failed; a tool result with isError: true "
                      "makes the task completed with that result, and failed is only for JSON-RPC errors "
                      "(S-EXT-MUST-13). If this tool raises a JSON-RPC error instead, it is the fault role's",
                      broken=("S-EXT-MUST-13",),
                      evidence=seqs, details={"expected": "status completed, result.isError true",
                                              "actual": f"status failed, error {str(task.get('error'))[:60]}"})
    if status != "completed":
        return could_not_run(by_flag(f"the task of the tool-error tool ended {status!r}, so it has no outcome to "
                                     "judge", "name a tool that ends with isError: true with --probe tool-error=TOOL"),
                             evidence=seqs)
    result = task.get("result")
    if not isinstance(result, dict):
        # A completed task with nothing inlined breaks the inlining rule, whatever its tool (S-EXT-MUST-10).
        return failed("the completed task of the tool-error tool inlines no result object; the CallToolResult with "
                      "isError: true belongs in result (S-EXT-MUST-10, S-EXT-MUST-13)", broken=("S-EXT-MUST-10",),
                      evidence=seqs,
                      details={"expected": "result: a CallToolResult", "actual": type(result).__name__})
    if result.get("isError") is not True:
        return _not_an_error_tool(rec, "completed with a result that has no isError: true")
    return passed(f"the task of the tool-error tool {rec.tool!r} ended completed with its isError result inlined",
                  evidence=seqs)


@TOOL_ERROR_OUTCOME.judge(Wire.LEGACY, requires=("S-LEG-MUST-10", "S-LEG-SHOULD-07"))
def legacy_tool_error_outcome(ev: Evidence) -> Verdict:
    rec, early = role_terminal(ev, ToolErrorTask, "tool-error")
    if early is not None:
        return early
    poll = rec.poll
    status, reply = poll.final_status, poll.result
    if status not in ("completed", "failed"):
        return could_not_run(by_flag(f"the task of the tool-error tool ended {status!r}, so it has no outcome to "
                                     "judge", "name a tool that ends with isError: true with --probe tool-error=TOOL"))
    if reply is None:
        return could_not_run(unmet("tasks/result was not called for the tool-error tool's task",
                                   "let polling see the end: raise --poll-timeout"))
    seqs = reply.seqs()
    if not reply.answered:
        return failed(f"tasks/result on the {status} task got {reply.describe()}", broken=("S-LEG-MUST-10",),
                      evidence=seqs, details={"expected": "the CallToolResult", "actual": reply.describe()})
    if reply.error is not None:
        return failed(f"tasks/result of the tool-error tool's {status} task answered {reply.describe()}; it returns "
                      "exactly the tool's CallToolResult, isError: true included (S-LEG-MUST-10). If this tool "
                      "raises a JSON-RPC error instead, it is the fault role's",
                      broken=("S-LEG-MUST-10",), evidence=seqs,
                      details={"expected": "the CallToolResult with isError: true",
                               "actual": f"error.code {reply.error_code}"})
    if reply.result.get("isError") is not True:
        return _not_an_error_tool(rec, f"ended {status} with a result that has no isError: true")
    if status == "completed":
        return passed("tasks/result returned the tool's isError result", evidence=seqs,
                      warnings=[warn("the tool result has isError: true but the task ended completed; on "
                                     "2025-11-25 it should be failed (S-LEG-SHOULD-07; the extension later "
                                     "reversed this rule — policy P-17)", "P-17")])
    last = poll.last_get
    return passed("the tool-error task ended failed and tasks/result returned its isError result", evidence=seqs,
                  warnings=_status_message_warning(last.result if last else None, "S-LEG-SHOULD-07"))


FAULT_OUTCOME = check(
    id="tasks-fault-outcome",
    area="results",
    category="lifecycle",
    title="A tool that fails with a JSON-RPC error ends its task failed, with that error",
    description=(
        "The fault role's tool (--probe fault=TOOL) run as a task. Extension: the failed task's tasks/get "
        "carries error, a JSON-RPC error object, and should carry a statusMessage. Legacy: tasks/result returns "
        "the same JSON-RPC error, and the failed task should carry a statusMessage. A task that ends completed "
        "passes with a warning (policy P-25)."
    ),
    probes=(FaultTask,),
    needs="wire",
    role="fault",
    owns=("S-EXT-MUST-12",),
)

_FAULT_COMPLETED = warn(
    "the fault tool's task ended completed: either the tool did not fail this time, or the server reported "
    "its JSON-RPC error as a result; from outside the two look alike (policy P-25)", "P-25",
)


@FAULT_OUTCOME.judge(Wire.EXTENSION, requires=("S-EXT-MUST-12", "S-EXT-SHOULD-04"))
def extension_fault_outcome(ev: Evidence) -> Verdict:
    rec, early = role_terminal(ev, FaultTask, "fault")
    if early is not None:
        return early
    task, seqs = terminal_read(rec)
    status = task.get("status")
    if status == "completed":
        return passed(f"the task of the fault tool {rec.tool!r} ended completed", evidence=seqs,
                      warnings=[_FAULT_COMPLETED])
    if status != "failed":
        return could_not_run(by_flag(f"the task of the fault tool ended {status!r}, so it has no outcome to judge",
                                     "name a tool whose task fails with --probe fault=TOOL"),
                             evidence=seqs)
    err = task.get("error")
    if not (isinstance(err, dict) and is_int(err.get("code")) and isinstance(err.get("message"), str)):
        return failed(f"the failed task of the fault tool {rec.tool!r} carries error {str(err)[:80]}, not a JSON-RPC "
                      "error object {code, message} (S-EXT-MUST-12)", broken=("S-EXT-MUST-12",), evidence=seqs,
                      details={"expected": "error: {code, message}", "actual": str(err)[:80]})
    return passed(f"the fault tool's task ended failed with error {err.get('code')}", evidence=seqs,
                  warnings=_status_message_warning(task, "S-EXT-SHOULD-04"))


@FAULT_OUTCOME.judge(Wire.LEGACY, requires=("S-LEG-MUST-10", "S-LEG-SHOULD-07"))
def legacy_fault_outcome(ev: Evidence) -> Verdict:
    rec, early = role_terminal(ev, FaultTask, "fault")
    if early is not None:
        return early
    poll = rec.poll
    status, reply = poll.final_status, poll.result
    if status == "completed":
        return passed(f"the task of the fault tool {rec.tool!r} ended completed",
                      evidence=reply.seqs() if reply else (), warnings=[_FAULT_COMPLETED])
    if status != "failed":
        return could_not_run(by_flag(f"the task of the fault tool ended {status!r}, so it has no outcome to judge",
                                     "name a tool whose task fails with --probe fault=TOOL"))
    if reply is None:
        return could_not_run(unmet("tasks/result was not called for the fault tool's task",
                                   "let polling see the end: raise --poll-timeout"))
    seqs = reply.seqs()
    if not reply.answered:
        return failed(f"tasks/result on the failed task got {reply.describe()}", broken=("S-LEG-MUST-10",),
                      evidence=seqs,
                      details={"expected": "the tool's JSON-RPC error", "actual": reply.describe()})
    if reply.error is None:
        return failed("tasks/result of the fault tool's failed task returned a result; it returns the same JSON-RPC "
                      "error the tool failed with (S-LEG-MUST-10)", broken=("S-LEG-MUST-10",), evidence=seqs,
                      details={"expected": "a JSON-RPC error", "actual": f"result {sorted(reply.result)[:6]}"})
    last = poll.last_get
    return passed(f"the fault tool's task ended failed and tasks/result returned error {reply.error_code}",
                  evidence=seqs, warnings=_status_message_warning(last.result if last else None, "S-LEG-SHOULD-07"))


RESULT_BLOCKS = check(
    id="tasks-legacy-result-blocks",
    area="results",
    category="lifecycle",
    title="tasks/result on a running task answers only once the task has ended",
    description=(
        "tasks/result is sent as soon as the task is created, while it still runs, alongside the polls. "
        "Judged by the order of frames, never by time: no tasks/get sent after its answer may still show the "
        "task running, and the answer must be the task's final outcome (the same as tasks/result once it ended)."
    ),
    probes=(DeclaredCall, Poll, ResultWhileRunning, TaskListing, RelatedMetaOverride),
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
        return could_not_run(unrun(rec, "tasks/result was not sent while the task ran"))
    poll = ev.get(Poll)
    sent = reply.request_seq
    reads = [(g, get_path(g.result, "status")) for g in poll.gets if g.ok]
    ended_at = next((g.response_seq or 0 for g, st in reads if st in TERMINAL_STATUSES), None)
    seqs = [*reply.seqs(), *reply_seqs(*(g for g, _ in reads))][:20]
    if ended_at is not None and ended_at < sent:
        return could_not_run(by_flag("the task had already been seen to end when tasks/result was sent, so nothing "
                                     "shows whether it blocks", "use a longer-running tool (--tool-name/--tool-args)"),
                             evidence=seqs)
    if not reply.answered:
        if reply.timed_out:
            return failed(f"tasks/result sent while the task ran was not answered ({reply.describe()}), though "
                          f"polling saw the task end {poll.final_status}; it must answer once the task is terminal "
                          "(S-LEG-MUST-11)", broken=("S-LEG-MUST-11",), evidence=seqs,
                          details={"expected": "an answer once the task ended", "actual": reply.describe()})
        return could_not_run(got(f"tasks/result sent while the task ran got {reply.describe()}", reply,
                                 fix="answer tasks/result once the task ends"), evidence=seqs)
    answered = reply.response_seq or 0
    # A read after one that showed the end is not the task still running but an ended task's
    # status changing, which tasks-terminal-status-immutable owns (S-LEG-MUST-07): only the reads
    # before the first end count here, the first end any tasks/get of the task showed: polling's,
    # the listing's read of each task of ours, or the related-meta probe's read of it, either of
    # which may come between two polls (CI#31: the related-meta read showed the end first).
    others = [*ev.get(TaskListing).reads, ev.get(RelatedMetaOverride).meta_names_other]
    other_reads = [g for g in others if g is not None and g.ok and get_path(g.result, "taskId") == rec.task_id]
    first_end = min((g.request_seq for g in [*(g for g, _ in reads), *other_reads]
                     if get_path(g.result, "status") in TERMINAL_STATUSES), default=None)
    still_running = [(g, st) for g, st in reads if g.request_seq > answered and st not in TERMINAL_STATUSES
                     and (first_end is None or g.request_seq < first_end)]
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
