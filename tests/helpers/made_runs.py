"""Made-up results for the reporters: passed, failed, incomplete, interrupted, deferred and
other runs, built from checks with hostile strings in every field a server controls."""

from __future__ import annotations

import io
import re
from typing import Any

from tasks_conformance.core.causes import Cause, CauseKind, by_flag
from tasks_conformance.core.result import (
    CheckResult,
    CheckWarning,
    Discovery,
    RunResult,
    decide_outcome,
    incomplete_reason,
)
from tasks_conformance.reporters import (
    ReportOptions,
    render,
)

MARKUP = "[bold red]x[/]"
LINK = "[link=file:///etc/passwd]click me[/link]"
ANSI = "\x1b[31mred\x1b[0m"
OSC8 = "\x1b]8;;http://evil\x07evil link\x1b]8;;\x07"
OSC52 = "\x1b]52;c;ZXZpbA==\x07"
NUL = "nul\x00byte"
BELL = "bell\x07"
CDATA_END = "]]></failure><testcase name='injected'/>"
SCRIPT = "<script>alert(1)</script>"
PIPE_NL = "a | b\nnew line\r\n| c |"
BIDI = "abc\u202edcba"
C1_CSI = "c1\x9b31mcsi"
SURROGATE = "lone\ud800surrogate"
EMOJI_CODE = ":warning: :smile:"
TAG_CHARS = "tag\U000e0041\U000e0042"
NONCHAR = "non\ufffechar"
BACKTICK = "`rm -rf /` and ![img](http://evil/x.png) @someone"
HOSTILE = [
    MARKUP, LINK, ANSI, OSC8, OSC52, NUL, BELL, CDATA_END, SCRIPT, PIPE_NL, BIDI, C1_CSI,
    SURROGATE, EMOJI_CODE, TAG_CHARS, NONCHAR, BACKTICK,
]  # fmt: skip
HOSTILE_TEXT = " ".join(HOSTILE)
# Raw characters that must never reach output un-escaped (tab/LF/CR are checked separately).
RAW_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u202e\ud800\ufffe\U000e0041]")


def a_check(
    check_id: str,
    status: str,
    *,
    category: str = "dispatch",
    skip: str | None = None,
    message: str = "",
    warnings: list[str] | None = None,
    requirements: list[str] | None = None,
    evidence: list[int] | None = None,
    frames: list[str] | None = None,
    details: dict[str, Any] | None = None,
    duration: int = 12,
    broken: list[str] | None = None,
    cause: Cause | None = None,
    deferred_to: str | None = None,
) -> CheckResult:
    return CheckResult(
        id=check_id,
        category=category,
        title=f"title of {check_id}",
        description=f"description of {check_id}",
        requirements=requirements if requirements is not None else ["S-EXT-MUST-01"],
        status=status,  # type: ignore[arg-type]
        skipReason=skip,  # type: ignore[arg-type]
        message=message or (cause.message if cause is not None else f"{check_id} message"),
        warnings=[CheckWarning(w) for w in warnings or []],
        evidence=evidence or [],
        details=details or {},
        durationMs=duration,
        frames=frames or [],
        broken=broken or [],
        cause=cause,
        deferredTo=deferred_to,
    )


def a_run(
    checks: list[CheckResult],
    *,
    interrupted: bool = False,
    discovery: Discovery | None = None,
    target: str = "http://127.0.0.1:8765/mcp",
) -> RunResult:
    return RunResult(
        outcome=decide_outcome(checks, interrupted),
        target=target,
        durationMs=1234,
        discovery=discovery
        or Discovery(
            protocolVersion="2026-07-28",
            wire="extension",
            toolCount=4,
            taskCapableToolCount=2,
            probedTool="slow_task",
            createdTaskId="task-7f3a",
            serverInfo={"name": "reference", "version": "1.0"},
        ),
        checks=checks,
        incompleteReason=incomplete_reason(checks, interrupted),
        interrupted=interrupted,
        toolVersion="0.1.0",
    )


def passed_run() -> RunResult:
    return a_run(
        [
            a_check("tasks-wire-resolvable", "passed", message="the server speaks the extension wire"),
            a_check(
                "tasks-ttl-shape",
                "passed",
                category="creation",
                message="ttl is a positive integer",
                warnings=[f"server said {MARKUP} {ANSI}", "ttl is very short (100 ms)"],
            ),
            a_check("tasks-status-payload-shape", "passed", category="lifecycle", message="ok"),
        ]
    )


def failed_run() -> RunResult:
    big_frame = '{"jsonrpc":"2.0","result":{"x":"' + "A" * 3000 + '"}}'
    return a_run(
        [
            a_check("tasks-wire-resolvable", "passed", message="the server speaks the extension wire"),
            a_check(
                "tasks-result-type-discipline",
                "failed",
                message=f'CreateTaskResult has resultType {HOSTILE_TEXT!r}; S-EXT-MUST-03 requires "task"',
                requirements=["S-EXT-MUST-03", "S-EXT-MUST-04"],
                broken=["S-EXT-MUST-03"],  # the rule the failure is about, of the two the check judges
                warnings=[f"also odd: {OSC8}", SCRIPT],
                evidence=[3, 4],
                frames=[
                    f'>>> #3 out http {{"method":"tools/call","params":{{"name":"{MARKUP}"}}}}',
                    f'<<< #4 in http {{"result":{{"resultType":"{NUL} {CDATA_END} {ANSI}"}}}}',
                ],
                details={"expected": "task", "actual": HOSTILE_TEXT, "nan": float("nan")},
            ),
            a_check(
                "tasks-mcp-name-routing",
                "failed",
                message="Mcp-Name header was ignored",
                requirements=["S-EXT-MUST-09"],
                evidence=list(range(1, 60)),
                frames=[f"<<< #{i} {big_frame}" for i in range(1, 60)],
            ),
            a_check(
                "tasks-inline-result",
                "skipped",
                skip="not-applicable",
                category="creation",
                message=f"the server has no inline-result tools {PIPE_NL}",
            ),
            a_check(
                "tasks-cancel-ack-shape",
                "skipped",
                skip="could-not-run",
                category="lifecycle",
                message=f"no task was created {BIDI} {C1_CSI}",
            ),
        ]
    )


def incomplete_run() -> RunResult:
    return a_run(
        [
            a_check("tasks-wire-resolvable", "passed", message="ok"),
            a_check(
                "tasks-input-required-update-completes",
                "skipped",
                skip="could-not-run",
                category="lifecycle",
                message=f"tool {LINK} never asked for input {SURROGATE} {OSC52}",
            ),
            a_check(
                "tasks-ttl-integer-shape",
                "skipped",
                skip="not-applicable",
                category="creation",
                message="no ttl",
            ),
        ],
        discovery=Discovery(
            protocolVersion="2025-11-25",
            wire="legacy",
            toolCount=1,
            taskCapableToolCount=1,
            probedTool=f"tool{ANSI}{MARKUP}",
            createdTaskId=f"id{OSC8}{NUL}",
            serverInfo={"name": f"evil {MARKUP}", "version": ANSI},
        ),
        target=f"stdio: python evil_server.py --name '{LINK}'",
    )


def interrupted_run() -> RunResult:
    return a_run(
        [
            a_check("tasks-wire-resolvable", "passed", message="ok"),
            a_check(
                "tasks-undeclared-creation-refused",
                "skipped",
                skip="could-not-run",
                category="creation",
                cause=Cause("the run was interrupted before this check ran", CauseKind.INTERRUPTED),
            ),
        ],
        interrupted=True,
    )


def no_wire_run() -> RunResult:
    return a_run(
        [
            a_check(
                "tasks-wire-resolvable",
                "failed",
                message="the server implements neither the legacy tasks capability nor the extension",
                requirements=[],
            )
        ],
        discovery=Discovery(),
    )


def empty_run() -> RunResult:
    return a_run([], discovery=Discovery())


NO_TOOL_CAUSE = by_flag("on the extension wire tools carry no task metadata, so tasks-conformance cannot guess "
                        "which tool runs as a task", "name one with --tool-name (listed: echo, slow_compute)")
NO_TOOL = NO_TOOL_CAUSE.message
BLOCKED_IDS = ["tasks-ttl-shape", "tasks-inline-result", "tasks-cancel-ack-shape", "tasks-status-payload-shape"]


def no_tool_run() -> RunResult:
    """The extension wire without --tool-name: one cause behind many checks (and one chained check)."""
    blocked = [a_check(i, "skipped", skip="could-not-run", category="lifecycle", cause=NO_TOOL_CAUSE)
               for i in BLOCKED_IDS]
    chained = a_check("tasks-undeclared-capability-names-requirements", "skipped", skip="could-not-run",
                     message="no -32021 error was seen (see tasks-cancel-ack-shape)",
                     details={"blockedBy": "tasks-cancel-ack-shape"})
    return a_run([a_check("tasks-wire-resolvable", "passed", message="ok"), *blocked, chained])


UNREACHABLE = ("could not talk to the server: no answer (could not connect to http://127.0.0.1:9/mcp: "
               "All connection attempts failed)")


def unreachable_run() -> RunResult:
    root = a_check("tasks-wire-resolvable", "skipped", skip="could-not-run",
                  cause=Cause(UNREACHABLE, CauseKind.UNREACHABLE))
    blocked = "could not talk to the server (see tasks-wire-resolvable)"
    rest = [a_check(i, "skipped", skip="could-not-run", message=blocked,
                   cause=Cause("could not talk to the server", CauseKind.UNREACHABLE),
                   details={"blockedBy": "tasks-wire-resolvable"}) for i in BLOCKED_IDS]
    return a_run([root, *rest], discovery=Discovery(), target="http://127.0.0.1:9/mcp")


OWNER, DEFERRING = "tasks-required-tool-needs-task", "tasks-undeclared-creation-refused"


def deferred_run() -> RunResult:
    """One defect seen by two checks: the rule's owner fails, the other defers to it."""
    return a_run([
        a_check("tasks-wire-resolvable", "passed", message="ok"),
        a_check(OWNER, "failed", category="creation", requirements=["S-LEG-MUST-02"], evidence=[6, 8],
               message=f"the task-required tool ran synchronously {MARKUP}"),
        a_check(DEFERRING, "skipped", skip="deferred", category="creation", requirements=["S-LEG-MUST-02"],
               deferred_to=OWNER, evidence=[4], details={"deferredTo": {"S-LEG-MUST-02": OWNER}},
               message=f"S-LEG-MUST-02 is failed by the check that owns it; this check saw: {ANSI} {PIPE_NL}"),
    ])


def nothing_tested_run() -> RunResult:
    """Every selected check did not apply: nothing was tested (policy P-46)."""
    return a_run([
        a_check("tasks-task-survives-restart", "skipped", skip="not-applicable", category="lifecycle",
               cause=by_flag(f"the server at --url is not started by tasks-conformance {BIDI}",
                             "give --server-command to test durability")),
        a_check("tasks-legacy-task-id-wins", "skipped", skip="not-applicable", message="applies to the legacy wire"),
    ])


RUNS = {
    "passed": passed_run,
    "deferred": deferred_run,
    "nothing-tested": nothing_tested_run,
    "failed": failed_run,
    "incomplete": incomplete_run,
    "interrupted": interrupted_run,
    "no-wire": no_wire_run,
    "empty": empty_run,
    "no-tool": no_tool_run,
    "unreachable": unreachable_run,
}


def render_text(name: str, result: RunResult, options: ReportOptions | None = None) -> str:
    out = io.StringIO()
    render(name, result, out, options or ReportOptions())
    return out.getvalue()
