"""Creation: what tools/call returns — with the declaration, a CreateTaskResult in its era's
shape (or, on the extension, a plain result the server chose); without it, never a task."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tasks_conformance.core.causes import by_flag
from tasks_conformance.core.protocol import (
    ERR_HEADER_MISMATCH,
    ERR_INVALID_REQUEST,
    ERR_METHOD_NOT_FOUND,
    ERR_MISSING_CAPABILITY,
    ERR_UNSUPPORTED_VERSION,
    get_path,
)
from tasks_conformance.core.verdict import Verdict, could_not_run, failed, passed, warn
from tasks_conformance.core.wires import Wire, task_support
from tasks_conformance.server.checks.engine.common import got, unrun
from tasks_conformance.server.checks.engine.registry import check
from tasks_conformance.server.checks.engine.shapes import (
    draft_code_hint,
    missing_task_fields,
    result_of,
    status_problem,
)
from tasks_conformance.server.evidence import DeclaredCall, Evidence, RequiredUndeclared, SyncWithTask, UndeclaredCall

if TYPE_CHECKING:
    from tasks_conformance.core.rpc.peer import Reply

# The codes of the reserved range -32020…-32099 that the 2026-07-28 core defines.
DEFINED_RESERVED_CODES = (ERR_HEADER_MISMATCH, ERR_MISSING_CAPABILITY, ERR_UNSUPPORTED_VERSION)

RESULT_TYPE_DISCIPLINE = check(
    id="tasks-result-type-discipline",
    area="creation",
    category="creation",
    title='A created task is a flat CreateTaskResult with resultType "task" (legacy: {task: {...}})',
    description=(
        "Read from the raw inbound frame of the declared tools/call. Extension: a result carrying a taskId "
        'has resultType "task" and is flat, and a result without one never says "task"; a plain '
        "CallToolResult is allowed. Legacy: CreateTaskResult nests the task under `task` with taskId, "
        "status working, createdAt and lastUpdatedAt."
    ),
    probes=(DeclaredCall,),
    needs="tool",
    # A plain result to a declared call, a new task in another status than working (extension), extra _meta.
    permits=('S-EXT-MAY-01', 'S-EXT-MAY-09', 'S-LEG-MAY-07'),
    owns=("S-EXT-MUST-06",),
)


def _created_result(ev: Evidence, shape_rule: str) -> tuple[Any, list[int], Verdict | None]:
    """The declared call's result as sent, its frames, or the verdict when there is none."""
    reply = ev.get(DeclaredCall).call
    if reply is None or not reply.answered:
        return None, [], could_not_run(
            got(f"the declared tools/call got {reply.describe() if reply else 'no reply'}", reply,
                fix="check --tool-name and --tool-args: the declared tools/call must be answered"),
            evidence=reply.seqs() if reply else [],
        )
    seqs = reply.seqs()
    if reply.error is not None:
        return None, seqs, could_not_run(
            by_flag(f"the declared tools/call of {ev.tool_name!r} failed with {reply.describe()}",
                    "check --tool-name/--tool-args"),
            evidence=seqs,
        )
    result = result_of(ev, reply)
    if not isinstance(result, dict):
        return None, seqs, failed(f"the tools/call result is {type(result).__name__}, not an object",
                                  broken=(shape_rule,), evidence=seqs,
                                  details={"expected": "an object", "actual": type(result).__name__})
    return result, seqs, None


@RESULT_TYPE_DISCIPLINE.judge(Wire.EXTENSION, requires=("S-EXT-MUST-03", "S-EXT-MUST-04", "S-EXT-MUST-06"))
def extension_creation(ev: Evidence) -> Verdict:
    result, seqs, early = _created_result(ev, "S-EXT-MUST-03")
    if early is not None:
        return early
    rtype = result.get("resultType")
    if isinstance(result.get("task"), dict) and "taskId" not in result:
        return failed(
            'the CreateTaskResult nests the task under "task"; on the extension wire it is flat '
            "(taskId, status, ttlMs… at the top level, S-EXT-MUST-06) — the nested form is the 2025-11-25 shape",
            broken=("S-EXT-MUST-06",),
            evidence=seqs, details={"expected": "flat", "actual": "nested", "resultType": rtype},
        )
    if "taskId" in result:
        return _flat_task(ev, result, seqs)
    tool = ev.tool_name
    if rtype == "task":
        return failed('a result without a taskId says resultType "task" (S-EXT-MUST-04)',
                      broken=("S-EXT-MUST-04",), evidence=seqs,
                      details={"expected": "a resultType other than task, or a taskId", "actual": "task"})
    if rtype == "input_required":
        return passed(
            f"tools/call {tool!r} answered with an InputRequiredResult (a multi round-trip request); "
            "tasks-conformance does not retry it, so no task was created to judge",
            evidence=seqs,
        )
    return passed(
        f"tools/call {tool!r} answered with a plain CallToolResult (resultType {rtype!r}): the server chose "
        "not to create a task, which the extension allows (S-EXT-MAY-01)",
        evidence=seqs,
    )


def _flat_task(ev: Evidence, result: dict[str, Any], seqs: list[int]) -> Verdict:
    rtype = result.get("resultType")
    if rtype != "task":
        return failed(f'a result carrying taskId has resultType {rtype!r}; S-EXT-MUST-03 requires "task"',
                      broken=("S-EXT-MUST-03",),
                      evidence=seqs, details={"expected": "task", "actual": rtype})
    missing = missing_task_fields(result)
    if not isinstance(result.get("taskId"), str):
        missing.append("taskId (a string)")
    problem = status_problem(result)
    if missing or problem:
        what = "; ".join(p for p in (f"lacks {', '.join(missing)}" if missing else "", problem or "") if p)
        return failed(f"the CreateTaskResult {what} (S-EXT-MUST-06)", broken=("S-EXT-MUST-06",), evidence=seqs,
                      details={"expected": "taskId, status, createdAt, lastUpdatedAt", "actual": what})
    return passed(
        f'tools/call {ev.tool_name!r} returned a flat CreateTaskResult with resultType "task" '
        f"(status {result.get('status')!r})",
        evidence=seqs,
    )


@RESULT_TYPE_DISCIPLINE.judge(Wire.LEGACY, requires=("S-LEG-MUST-04", "S-LEG-MUST-05", "S-LEG-MUST-06"))
def legacy_creation(ev: Evidence) -> Verdict:
    result, seqs, early = _created_result(ev, "S-LEG-MUST-04")
    if early is not None:
        return early
    task = result.get("task")
    if not isinstance(task, dict):
        if "taskId" in result:
            return failed(
                "the legacy CreateTaskResult is flat; 2025-11-25 nests the task as {task: {taskId, status, ttl, "
                "createdAt, lastUpdatedAt}} (S-LEG-MUST-04)", broken=("S-LEG-MUST-04",),
                evidence=seqs, details={"expected": "nested", "actual": "flat"},
            )
        return failed(
            f"tools/call {ev.tool_name!r} was sent with params.task but returned no CreateTaskResult "
            "({task: {...}}); an accepted augmented request MUST return one (S-LEG-MUST-04)", broken=("S-LEG-MUST-04",),
            evidence=seqs, details={"expected": "{task: {...}}", "actual": sorted(result)[:10]},
        )
    missing = missing_task_fields(task)
    if missing:
        return failed(f"the CreateTaskResult task lacks {', '.join(missing)} (S-LEG-MUST-04)",
                      broken=("S-LEG-MUST-04",), evidence=seqs,
                      details={"expected": "taskId, status, createdAt, lastUpdatedAt", "actual": sorted(task)[:10]})
    if not isinstance(task.get("taskId"), str):
        return failed(f"taskId is {type(task.get('taskId')).__name__}, not a string (S-LEG-MUST-05)",
                      broken=("S-LEG-MUST-05",), evidence=seqs,
                      details={"expected": "string", "actual": type(task.get("taskId")).__name__})
    if task.get("status") != "working":
        return failed(
            f"a new legacy task starts in status {task.get('status')!r}; it MUST start in working (S-LEG-MUST-06)",
            broken=("S-LEG-MUST-06",),
            evidence=seqs, details={"expected": "working", "actual": task.get("status")},
        )
    warnings = ["the 2025-11-25 result carries resultType, a 2026-07-28 field"] if "resultType" in result else []
    return passed(f"tools/call {ev.tool_name!r} returned a nested CreateTaskResult in status working",
                  evidence=seqs, warnings=warnings)


UNDECLARED_CREATION_REFUSED = check(
    id="tasks-undeclared-creation-refused",
    area="creation",
    category="creation",
    title="Without the declaration, tools/call never returns a task",
    description=(
        "Extension: the same tools/call without the extension in _meta must not return a CreateTaskResult; a "
        "normal result or -32021 (HTTP 400) passes, -32003 (the pre-final draft number) fails. Legacy: a "
        "tools/call without params.task gets a normal result, or -32601 for a task-required tool "
        "(-32600 warns, policy P-01)."
    ),
    probes=(UndeclaredCall,),
    needs="tool",
    # A task-capable tool may be refused without params.task (legacy).
    permits=('S-LEG-MAY-01',),
    owns=("S-EXT-MUST-01",),
)


def _undeclared_reply(
    ev: Evidence, task_rule: str, task_rule_ids: tuple[str, ...], refusal_rule: str,
) -> tuple[Reply | None, Verdict | None]:
    """The undeclared call's reply, or the verdict when it is already decided: nothing to judge,
    a draft-era error code, or a task returned (which `task_rule` forbids)."""
    rec = ev.get(UndeclaredCall)
    reply = rec.call
    if reply is None:
        return None, could_not_run(unrun(rec, "the undeclared tools/call did not run"))
    if not reply.answered:
        # A synchronous run of a slow tool is allowed (S-EXT-MAY-01); from outside a slow answer
        # and a hung one look alike, so this cannot be a failure.
        return None, could_not_run(
            by_flag(f"the undeclared tools/call of {ev.tool_name!r} got {reply.describe()}",
                    "a synchronous run may simply take longer: raise --timeout, or name a quicker task-capable tool"),
            evidence=reply.seqs(),
        )
    hint = draft_code_hint(reply.error_code)
    if hint:
        return None, failed(f"the undeclared tools/call got {reply.error_code}: {hint}", broken=(refusal_rule,),
                            evidence=reply.seqs(),
                            details={"expected": ev.dialect.undeclared_refusal_code, "actual": reply.error_code})
    returned_task = ev.get(UndeclaredCall).created.task_id is not None or get_path(reply.result, "resultType") == "task"
    if reply.ok and returned_task:
        return None, failed(
            f"tools/call of {ev.tool_name!r} without the tasks declaration returned a task "
            f"({task_rule})",
            broken=task_rule_ids, evidence=reply.seqs(),
            details={"expected": "no task", "actual": "a CreateTaskResult"},
        )
    return reply, None


@UNDECLARED_CREATION_REFUSED.judge(Wire.EXTENSION, requires=("S-EXT-MUST-01", "S-EXT-MUST-02", "S-CORE-MUST-13"))
def extension_undeclared_creation(ev: Evidence) -> Verdict:
    reply, early = _undeclared_reply(ev, "S-EXT-MUST-01", ("S-EXT-MUST-01",), "S-EXT-MUST-02")
    if reply is None:
        assert early is not None
        return early
    seqs, tool, code = reply.seqs(), ev.tool_name, reply.error_code
    if reply.error is None:
        return passed(f"without the declaration tools/call {tool!r} answered normally, with no task", evidence=seqs)
    if code == ERR_MISSING_CAPABILITY:
        if reply.status is not None and reply.status != 400:
            return failed(f"-32021 came with HTTP {reply.status}; the core requires HTTP 400 for it (S-EXT-MUST-02)",
                          broken=("S-EXT-MUST-02",),
                          evidence=seqs, details={"expected": "HTTP 400", "actual": f"HTTP {reply.status}"})
        return passed(f"the undeclared tools/call of {tool!r} was refused with -32021", evidence=seqs)
    if code is not None and -32099 <= code <= -32020 and code not in DEFINED_RESERVED_CODES:
        return failed(
            f"the undeclared tools/call got error {code}, an undefined code in the range -32020…-32099 "
            "that the spec reserves (S-CORE-MUST-13); a refusal for the missing declaration is -32021",
            broken=("S-CORE-MUST-13",),
            evidence=seqs, details={"expected": ERR_MISSING_CAPABILITY, "actual": code},
        )
    return passed(
        f"the undeclared tools/call of {tool!r} returned no task (error {code})", evidence=seqs,
        warnings=[f"error {code} {str(reply.error.message)[:80]!r}: if the refusal is because the "
                  "extension was not declared, the code must be -32021 (S-EXT-MUST-02)"],
    )


@UNDECLARED_CREATION_REFUSED.judge(Wire.LEGACY, requires=("S-LEG-MUST-02",))
def legacy_undeclared_creation(ev: Evidence) -> Verdict:
    reply, early = _undeclared_reply(ev, "S-LEG-MUST-02/03", ("S-LEG-MUST-02", "S-LEG-MUST-03"), "S-LEG-MUST-02")
    if reply is None:
        assert early is not None
        return early
    seqs, tool, code = reply.seqs(), ev.tool_name, reply.error_code
    support = _task_support(ev)
    if reply.error is None:
        if support == "required":
            how = ("answered with a CallToolResult (isError: true)" if get_path(reply.result, "isError") is True
                   else "ran synchronously")
            return failed(f"the task-required tool {tool!r} called without params.task {how}; S-LEG-MUST-02 "
                          "requires the JSON-RPC error -32601", broken=("S-LEG-MUST-02",), evidence=seqs,
                          details={"expected": ERR_METHOD_NOT_FOUND, "actual": "a result"})
        return passed(f"without the declaration tools/call {tool!r} answered normally, with no task", evidence=seqs)
    if code == ERR_METHOD_NOT_FOUND:
        return passed(f"tools/call of the {support or '?'} tool {tool!r} without params.task got -32601", evidence=seqs)
    if code == ERR_INVALID_REQUEST and support != "required":
        # A tool that may run as a task may be refused without params.task (S-LEG-MAY-01, whose
        # example is -32600); P-01's contradiction is only about task-required tools.
        return passed(f"tools/call of the {support or '?'} tool {tool!r} without params.task got -32600, which "
                      "S-LEG-MAY-01 allows", evidence=seqs)
    if code == ERR_INVALID_REQUEST:
        return passed("tools/call without params.task got -32600", evidence=seqs,
                      warnings=[warn("-32600 is allowed by the error-handling text but the tool-level rule says "
                                     "-32601 (policy P-01)", "P-01")])
    if support == "required":
        return failed(f"the task-required tool {tool!r} called without params.task got {code}; S-LEG-MUST-02 "
                      "requires -32601",
                      broken=("S-LEG-MUST-02",), evidence=seqs,
                      details={"expected": ERR_METHOD_NOT_FOUND, "actual": code})
    return passed(f"tools/call of {tool!r} without params.task returned no task (error {code})", evidence=seqs)


def _task_support(ev: Evidence) -> str | None:
    named = ev.discovery.tool_named(ev.tool.name if ev.tool else None)
    if named is None:
        return None
    support = task_support(named)
    return support if support is not None else "forbidden"


# ---------------------------------------------------------------------------------------------
# Probe roles (roles.py): the task-required tool without a task, the never-task tool with one.

REQUIRED_TOOL_NEEDS_TASK = check(
    id="tasks-required-tool-needs-task",
    area="creation",
    category="creation",
    title="A task-required tool called without a task is refused",
    description=(
        "The required role's tool (execution.taskSupport required, or --probe required=TOOL) called without a "
        "task. Legacy: without params.task it gets -32601 (-32600 warns, policy P-01); a result or another code "
        "fails. Extension: without the declaration it gets -32021 (HTTP 400); a task, a synchronous result or "
        "another code fails."
    ),
    probes=(RequiredUndeclared,),
    needs="wire",
    role="required",
    owns=("S-EXT-MUST-02", "S-LEG-MUST-02",),
)


def _required_reply(ev: Evidence) -> tuple[Reply | None, Verdict | None]:
    rec = ev.get(RequiredUndeclared)
    reply = rec.call
    if reply is None:
        return None, could_not_run(unrun(rec, "the required tool's tools/call did not run"))
    if not reply.answered:
        return None, could_not_run(got(f"the tools/call of the required tool {rec.tool!r} without a task got "
                                   f"{reply.describe()}", reply, fix="answer the tools/call of a required tool"),
                                   evidence=reply.seqs())
    if reply.ok and (rec.created.task_id is not None or get_path(reply.result, "resultType") == "task"):
        return None, failed(f"the required tool {rec.tool!r} called without a task returned a task; a task exists "
                            "only when the request asks for one (S-LEG-MUST-02, S-EXT-MUST-01)",
                            broken=("S-LEG-MUST-02", "S-EXT-MUST-01"),
                            evidence=reply.seqs(), details={"expected": "a refusal", "actual": "a CreateTaskResult"})
    return reply, None


@REQUIRED_TOOL_NEEDS_TASK.judge(Wire.LEGACY, requires=("S-LEG-MUST-02",))
def legacy_required_needs_task(ev: Evidence) -> Verdict:
    reply, early = _required_reply(ev)
    if reply is None:
        assert early is not None
        return early
    seqs, tool, code = reply.seqs(), ev.get(RequiredUndeclared).tool, reply.error_code
    if reply.error is None:
        how = ("answered with a CallToolResult (isError: true)" if get_path(reply.result, "isError") is True
               else "ran synchronously")
        return failed(f"the task-required tool {tool!r} called without params.task {how}; S-LEG-MUST-02 requires "
                      "the JSON-RPC error -32601", broken=("S-LEG-MUST-02",), evidence=seqs,
                      details={"expected": f"error.code {ERR_METHOD_NOT_FOUND}", "actual": "a result"})
    if code == ERR_METHOD_NOT_FOUND:
        return passed(f"the task-required tool {tool!r} called without params.task got -32601", evidence=seqs)
    if code == ERR_INVALID_REQUEST:
        return passed(f"the task-required tool {tool!r} called without params.task got -32600", evidence=seqs,
                      warnings=[warn("-32600 is allowed by the error-handling text but the tool-level rule says "
                                     "-32601 (policy P-01)", "P-01")])
    return failed(f"the task-required tool {tool!r} called without params.task got {code}; S-LEG-MUST-02 requires "
                  "-32601", broken=("S-LEG-MUST-02",), evidence=seqs,
                  details={"expected": f"error.code {ERR_METHOD_NOT_FOUND}", "actual": f"error.code {code}"})


@REQUIRED_TOOL_NEEDS_TASK.judge(Wire.EXTENSION, requires=("S-EXT-MUST-01", "S-EXT-MUST-02"))
def extension_required_needs_task(ev: Evidence) -> Verdict:
    reply, early = _required_reply(ev)
    if reply is None:
        assert early is not None
        return early
    seqs, tool, code = reply.seqs(), ev.get(RequiredUndeclared).tool, reply.error_code
    expected = f"error.code {ERR_MISSING_CAPABILITY} (HTTP 400)"
    if reply.error is None:
        if get_path(reply.result, "resultType") == "input_required":
            return could_not_run(by_flag(f"the required tool {tool!r} called without the declaration asked for input "
                                         "first (a multi round-trip request, which tasks-conformance does not retry)",
                                         "name a required tool that asks for no input with --probe required=TOOL"),
                                 evidence=seqs)
        return failed(f"the required tool {tool!r} called without the extension declaration ran synchronously; a "
                      "request that cannot be served without a task gets -32021 (S-EXT-MUST-02). If this tool can "
                      "run without a task, it is not task-required: pass another --probe required=TOOL",
                      broken=("S-EXT-MUST-02",),
                      evidence=seqs, details={"expected": expected, "actual": "a result"})
    hint = draft_code_hint(code)
    if code != ERR_MISSING_CAPABILITY:
        return failed(f"the required tool {tool!r} called without the extension declaration got {code}"
                      + (f": {hint}" if hint else "; S-EXT-MUST-02 requires -32021"),
                      broken=("S-EXT-MUST-02",), evidence=seqs,
                      details={"expected": expected, "actual": f"error.code {code}"})
    if reply.status is not None and reply.status != 400:
        return failed(f"-32021 came with HTTP {reply.status}; the core requires HTTP 400 for it (S-EXT-MUST-02)",
                      broken=("S-EXT-MUST-02",),
                      evidence=seqs, details={"expected": "HTTP 400", "actual": f"HTTP {reply.status}"})
    return passed(f"the required tool {tool!r} called without the extension declaration got -32021", evidence=seqs)


FORBIDDEN_TOOL_TASK_REFUSED = check(
    id="tasks-forbidden-tool-task-refused",
    area="creation",
    category="creation",
    title="A tool that never runs as a task, called with params.task, gets -32601 (legacy)",
    description=(
        "The sync role's tool (execution.taskSupport forbidden or absent, or --probe sync=TOOL) called with "
        "params.task on 2025-11-25 should get -32601. A SHOULD: anything else passes with a warning."
    ),
    probes=(SyncWithTask,),
    needs="wire",
    role="sync",
)


@FORBIDDEN_TOOL_TASK_REFUSED.judge(Wire.LEGACY, requires=("S-LEG-SHOULD-01",))
def legacy_forbidden_task_refused(ev: Evidence) -> Verdict:
    rec = ev.get(SyncWithTask)
    reply = rec.call
    if reply is None:
        return could_not_run(unrun(rec, "the sync tool's tools/call did not run"))
    seqs, tool = reply.seqs(), rec.tool
    if not reply.answered:
        answer = reply.describe()
        return could_not_run(got(f"the tools/call of the sync tool {tool!r} with params.task got {answer}", reply,
                                 fix="answer the tools/call of a forbidden tool"),
                             evidence=seqs)
    if reply.error_code == ERR_METHOD_NOT_FOUND:
        return passed(f"the never-task tool {tool!r} called with params.task got -32601", evidence=seqs)
    if reply.error is not None:
        answer = f"error {reply.error_code}"
    elif rec.created.task_id is not None:
        answer = "a task (CreateTaskResult)"
    else:
        answer = "a result (params.task ignored)"
    return passed(f"the never-task tool {tool!r} called with params.task got {answer}", evidence=seqs,
                  warnings=[f"a tool whose execution.taskSupport is forbidden or absent, called with params.task, "
                            f"should get -32601 (S-LEG-SHOULD-01); got {answer}"])
