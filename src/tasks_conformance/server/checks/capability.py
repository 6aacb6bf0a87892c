"""Capability: requests that need the tasks extension and do not declare it get -32021, and the
error names what is missing."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tasks_conformance.core.causes import unmet
from tasks_conformance.core.protocol import ERR_METHOD_NOT_FOUND, ERR_MISSING_CAPABILITY, EXT_TASKS, get_path
from tasks_conformance.core.verdict import Verdict, could_not_run, failed, passed
from tasks_conformance.core.wires import Wire
from tasks_conformance.server.checks.engine.common import unrun
from tasks_conformance.server.checks.engine.registry import check
from tasks_conformance.server.checks.engine.shapes import draft_code_hint, reply_seqs
from tasks_conformance.server.evidence import DeclaredCall, Evidence, UndeclaredCall, UndeclaredTasks

if TYPE_CHECKING:
    from tasks_conformance.core.rpc.peer import Reply

UNDECLARED_CAPABILITY_REJECTED = check(
    id="tasks-undeclared-capability-rejected",
    area="capability",
    category="lifecycle",
    title="tasks/* and task subscriptions without the extension declaration get -32021",
    description=(
        "Run last on the live task: tasks/get, tasks/update, subscriptions/listen {notifications: {taskIds}} "
        "and tasks/cancel without the extension in _meta each get -32021 (HTTP 400), and so does a tasks/get "
        "declaring only the 2025-11-25 capabilities.tasks; -32601 on subscriptions/listen warns."
    ),
    probes=(DeclaredCall, UndeclaredTasks),
    needs="task",
)


def _refusal_problem(method: str, reply: Reply, rec: UndeclaredTasks) -> str | None:
    code = reply.error_code
    if code == ERR_MISSING_CAPABILITY:
        return None if reply.status in (None, 400) else f"{method}: -32021 came with HTTP {reply.status}, not 400"
    hint = draft_code_hint(code)
    if hint:
        return f"{method}: {hint}"
    if method == "subscriptions/listen" and rec.listen_acks:
        return f"{method}: the server opened the subscription without the declaration"
    return f"{method} without the declaration got {reply.describe()}"


@UNDECLARED_CAPABILITY_REJECTED.judge(Wire.EXTENSION,
                                     requires=("S-EXT-MUST-18", "S-EXT-MUST-19", "S-EXT-MUST-27", "S-CORE-MUST-05"))
def undeclared_capability_rejected(ev: Evidence) -> Verdict:
    rec = ev.get(UndeclaredTasks)
    if not rec.ran:
        return could_not_run(unrun(rec, "the undeclared probes did not run"))
    problems: list[str] = []
    warnings: list[str] = []
    for method, reply in rec.replies.items():
        if method == "subscriptions/listen" and reply.error_code == ERR_METHOD_NOT_FOUND:
            warnings.append("subscriptions/listen is not implemented (-32601); the -32021 rule could not be seen")
            continue
        problem = _refusal_problem(method, reply, rec)
        if problem:
            problems.append(problem)
    seqs = reply_seqs(*rec.replies.values())
    if problems:
        return failed("; ".join(problems) + " — each must get -32021 (S-EXT-MUST-18/19)",
                      broken=("S-EXT-MUST-18", "S-EXT-MUST-19"), evidence=seqs,
                      warnings=warnings, details={"expected": ERR_MISSING_CAPABILITY, "actual": problems})
    return passed("each undeclared tasks/* request was refused with -32021", evidence=seqs, warnings=warnings)


UNDECLARED_CAPABILITY_NAMES_REQUIREMENTS = check(
    id="tasks-undeclared-capability-names-requirements",
    area="capability",
    category="lifecycle",
    title="Every -32021 names the missing extension in data.requiredCapabilities",
    description=(
        f'Each -32021 seen carries data.requiredCapabilities.extensions["{EXT_TASKS}"]. A missing data fails '
        "(policy P-13); requiredCapabilities that do not mention the extension warn."
    ),
    probes=(DeclaredCall, UndeclaredCall, UndeclaredTasks),
    needs="wire",
)


@UNDECLARED_CAPABILITY_NAMES_REQUIREMENTS.judge(Wire.EXTENSION, requires=("S-EXT-MUST-02", "S-CORE-MUST-04"))
def undeclared_capability_names_requirements(ev: Evidence) -> Verdict:
    replies = [*ev.get(UndeclaredCall).all_replies(), *ev.get(UndeclaredTasks).all_replies()]
    errors = [r for r in replies if r.error_code == ERR_MISSING_CAPABILITY]
    if not errors:
        return could_not_run(unmet("no -32021 error was seen to inspect",
                                   "refuse an undeclared task request with -32021 "
                                   "(tasks-undeclared-capability-rejected says what came)"),
                             blocked_by="tasks-undeclared-capability-rejected")
    problems: list[str] = []
    warnings: list[str] = []
    for r in errors:
        assert r.error is not None
        data = r.error.data if r.error.has_data else None
        if not isinstance(data, dict):
            problems.append(f"{r.method}: the -32021 error has no data object")
        elif not isinstance(data.get("requiredCapabilities"), dict):
            problems.append(f"{r.method}: data.requiredCapabilities is missing")
        elif get_path(data["requiredCapabilities"], "extensions", EXT_TASKS) is None:
            warnings.append(f"{r.method}: data.requiredCapabilities does not mention {EXT_TASKS}")
    seqs = reply_seqs(*errors)
    if problems:
        return failed("; ".join(problems) + " (S-EXT-MUST-02)",
                      broken=("S-EXT-MUST-02",), evidence=seqs, warnings=warnings,
                      details={"expected": "data.requiredCapabilities", "actual": problems})
    return passed(f"all {len(errors)} -32021 errors name the extension in data.requiredCapabilities",
                  evidence=seqs, warnings=warnings)
