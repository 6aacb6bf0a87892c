"""creation: what comes back from tools/call, declared and undeclared."""

from __future__ import annotations

from tasks_conformance.checks.registry import Verdict, check, could_not_run, failed, passed
from tasks_conformance.checks.shapes import draft_code_hint, status_problem
from tasks_conformance.evidence import Evidence
from tasks_conformance.protocol import ERR_INVALID_REQUEST, ERR_METHOD_NOT_FOUND, ERR_MISSING_CAPABILITY, get_path


@check(
    id="tasks-result-type-discipline",
    category="creation",
    title='A created task is a flat CreateTaskResult with resultType "task" (legacy: {task: {...}})',
    description=(
        "Read from the raw inbound frame of the declared tools/call. Extension: a result carrying a taskId "
        'has resultType "task" and is flat, and a result without one never says "task"; a plain '
        "CallToolResult is allowed. Legacy: CreateTaskResult nests the task under `task` with taskId, "
        "status working, createdAt and lastUpdatedAt."
    ),
    requirements={"extension": ("S-EXT-MUST-03", "S-EXT-MUST-04", "S-EXT-MUST-06"),
                  "legacy": ("S-LEG-MUST-04", "S-LEG-MUST-05", "S-LEG-MUST-06")},
    probes=("declared-call",),
    needs="tool",
)
def result_type_discipline(ev: Evidence) -> Verdict:
    rec = ev.probe("declared-call")
    reply = rec.reply("call")
    if reply is None or not reply.answered:
        return could_not_run(
            f"the declared tools/call got {reply.describe() if reply else 'no reply'}",
            evidence=reply.seqs() if reply else [],
        )
    seqs = reply.seqs()
    if reply.error is not None:
        return could_not_run(
            f"the declared tools/call of {ev.tool.name if ev.tool else '?'!r} failed with {reply.describe()}; "
            "check --tool-name/--tool-args",
            evidence=seqs,
        )
    frame = ev.frame(reply.response_seq)
    raw = frame.json() if frame is not None else None
    result = raw.get("result") if isinstance(raw, dict) else None
    if not isinstance(result, dict):
        return failed(f"the tools/call result is {type(result).__name__}, not an object", evidence=seqs)
    tool = ev.tool.name if ev.tool else "?"
    if ev.wire == "extension":
        rtype = result.get("resultType")
        has_flat = "taskId" in result
        nested = isinstance(result.get("task"), dict)
        if nested and not has_flat:
            return failed(
                'the CreateTaskResult nests the task under "task"; on the extension wire it is flat '
                "(taskId, status, ttlMs… at the top level, S-EXT-MUST-06) — the nested form is the 2025-11-25 shape",
                evidence=seqs, details={"expected": "flat", "actual": "nested", "resultType": rtype},
            )
        if has_flat:
            if rtype != "task":
                return failed(
                    f'a result carrying taskId has resultType {rtype!r}; S-EXT-MUST-03 requires "task"',
                    evidence=seqs, details={"expected": "task", "actual": rtype},
                )
            missing = [k for k in ("taskId", "status", "createdAt", "lastUpdatedAt") if k not in result]
            if not isinstance(result.get("taskId"), str):
                missing.append("taskId (a string)")
            problem = status_problem(result)
            if missing or problem:
                return failed(
                    "the CreateTaskResult "
                    + "; ".join([f"lacks {', '.join(missing)}" if missing else "", problem or ""]).strip("; ")
                    + " (S-EXT-MUST-06)",
                    evidence=seqs,
                )
            return passed(
                f'tools/call {tool!r} returned a flat CreateTaskResult with resultType "task" '
                f"(status {result.get('status')!r})",
                evidence=seqs,
            )
        if rtype == "task":
            return failed('a result without a taskId says resultType "task" (S-EXT-MUST-04)', evidence=seqs)
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
    task = result.get("task")
    if not isinstance(task, dict):
        if "taskId" in result:
            return failed(
                "the legacy CreateTaskResult is flat; 2025-11-25 nests the task as {task: {taskId, status, ttl, "
                "createdAt, lastUpdatedAt}} (S-LEG-MUST-04)",
                evidence=seqs, details={"expected": "nested", "actual": "flat"},
            )
        return failed(
            f"tools/call {tool!r} was sent with params.task but returned no CreateTaskResult "
            "({task: {...}}); an accepted augmented request MUST return one (S-LEG-MUST-04)",
            evidence=seqs,
        )
    missing = [k for k in ("taskId", "status", "createdAt", "lastUpdatedAt") if k not in task]
    if missing:
        return failed(f"the CreateTaskResult task lacks {', '.join(missing)} (S-LEG-MUST-04)", evidence=seqs)
    if not isinstance(task.get("taskId"), str):
        return failed(f"taskId is {type(task.get('taskId')).__name__}, not a string (S-LEG-MUST-05)", evidence=seqs)
    if task.get("status") != "working":
        return failed(
            f"a new legacy task starts in status {task.get('status')!r}; it MUST start in working (S-LEG-MUST-06)",
            evidence=seqs,
        )
    warnings = []
    if "resultType" in result:
        warnings.append("the 2025-11-25 result carries resultType, a 2026-07-28 field")
    return passed(f"tools/call {tool!r} returned a nested CreateTaskResult in status working", evidence=seqs,
                  warnings=warnings)


@check(
    id="tasks-undeclared-creation-refused",
    category="creation",
    title="Without the declaration, tools/call never returns a task",
    description=(
        "Extension: the same tools/call without the extension in _meta must not return a CreateTaskResult; a "
        "normal result or -32021 (HTTP 400) passes, -32003 (the pre-final draft number) fails. Legacy: a "
        "tools/call without params.task gets a normal result, or -32601 for a task-required tool "
        "(-32600 warns, spec-digest §6 Q1)."
    ),
    requirements={"extension": ("S-EXT-MUST-01", "S-EXT-MUST-02", "S-CORE-MUST-13"), "legacy": ("S-LEG-MUST-02",)},
    probes=("undeclared-call",),
    needs="tool",
)
def undeclared_creation_refused(ev: Evidence) -> Verdict:
    rec = ev.probe("undeclared-call")
    reply = rec.reply("call")
    if reply is None:
        return could_not_run(rec.not_run or "the undeclared tools/call did not run")
    seqs = reply.seqs()
    tool = ev.tool.name if ev.tool else "?"
    if not reply.answered:
        # A synchronous run of a slow tool is allowed (S-EXT-MAY-01); from outside a slow answer
        # and a hung one look alike, so this cannot be a failure.
        return could_not_run(
            f"the undeclared tools/call of {tool!r} got {reply.describe()}; a synchronous run may simply "
            "take longer: raise --timeout, or name a quicker task-capable tool",
            evidence=seqs,
        )
    if reply.error is not None:
        code = reply.error_code
        hint = draft_code_hint(code)
        if hint:
            return failed(f"the undeclared tools/call got {code}: {hint}", evidence=seqs,
                          details={"expected": ERR_MISSING_CAPABILITY, "actual": code})
        if ev.wire == "extension":
            if code == ERR_MISSING_CAPABILITY:
                if reply.status is not None and reply.status != 400:
                    return failed(
                        f"-32021 came with HTTP {reply.status}; the core requires HTTP 400 for it (S-EXT-MUST-02)",
                        evidence=seqs,
                    )
                return passed(f"the undeclared tools/call of {tool!r} was refused with -32021", evidence=seqs)
            if code is not None and -32099 <= code <= -32020 and code not in (-32020, -32021, -32022):
                return failed(
                    f"the undeclared tools/call got error {code}, an undefined code in the range -32020…-32099 "
                    "that the spec reserves (S-CORE-MUST-13); a refusal for the missing declaration is -32021",
                    evidence=seqs,
                )
            return passed(
                f"the undeclared tools/call of {tool!r} returned no task (error {code})",
                evidence=seqs,
                warnings=[f"error {code} {str(reply.error.message)[:80]!r}: if the refusal is because the "
                          "extension was not declared, the code must be -32021 (S-EXT-MUST-02)"],
            )
        support = _task_support(ev)
        if code == ERR_METHOD_NOT_FOUND:
            return passed(f"tools/call of the {support or '?'} tool {tool!r} without params.task got -32601",
                          evidence=seqs)
        if code == ERR_INVALID_REQUEST:
            return passed(
                "tools/call without params.task got -32600", evidence=seqs,
                warnings=["-32600 is allowed by the error-handling text but the tool-level rule says -32601 "
                          "(spec-digest §6 Q1)"],
            )
        if support == "required":
            return failed(
                f"the task-required tool {tool!r} called without params.task got {code}; S-LEG-MUST-02 requires "
                "-32601",
                evidence=seqs, details={"expected": ERR_METHOD_NOT_FOUND, "actual": code},
            )
        return passed(f"tools/call of {tool!r} without params.task returned no task (error {code})", evidence=seqs)
    result = reply.result
    if rec.data.get("task_id") is not None or get_path(result, "resultType") == "task":
        rule = "S-EXT-MUST-01" if ev.wire == "extension" else "S-LEG-MUST-02/03"
        return failed(
            f"tools/call of {tool!r} without the tasks declaration returned a task ({rule})",
            evidence=seqs,
        )
    if ev.wire == "legacy" and _task_support(ev) == "required":
        how = (
            "answered with a CallToolResult (isError: true)" if get_path(result, "isError") is True
            else "ran synchronously"
        )
        return failed(
            f"the task-required tool {tool!r} called without params.task {how}; S-LEG-MUST-02 requires the "
            "JSON-RPC error -32601",
            evidence=seqs,
        )
    return passed(f"without the declaration tools/call {tool!r} answered normally, with no task", evidence=seqs)


def _task_support(ev: Evidence) -> str | None:
    name = ev.tool.name if ev.tool else None
    for t in ev.discovered.tools:
        if t.get("name") == name:
            value = get_path(t, "execution", "taskSupport")
            return value if isinstance(value, str) else "forbidden"
    return None


