"""Routing: what a request reaches — routing headers that disagree with the body (HTTP), task
ids the server never issued, and methods the wire removed."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tasks_conformance.core.causes import by_flag, harness
from tasks_conformance.core.protocol import (
    ERR_HEADER_MISMATCH,
    ERR_INVALID_PARAMS,
    ERR_METHOD_NOT_FOUND,
    HEADER_METHOD,
    HEADER_NAME,
    decode_header_value,
    get_path,
    mcp_name_for,
)
from tasks_conformance.core.verdict import Verdict, could_not_run, failed, passed
from tasks_conformance.core.wirelog import Purpose
from tasks_conformance.core.wires import Level, Wire
from tasks_conformance.server.checks.engine.common import unrun
from tasks_conformance.server.checks.engine.registry import check
from tasks_conformance.server.checks.engine.shapes import draft_code_hint, reply_seqs
from tasks_conformance.server.evidence import DeclaredCall, Evidence, InvalidId, NameRouting, RemovedMethods

if TYPE_CHECKING:
    from tasks_conformance.core.rpc.peer import Reply

MCP_NAME_ROUTING = check(
    id="tasks-mcp-name-routing",
    area="routing",
    category="lifecycle",
    title="Over HTTP, a tasks/* request whose routing headers disagree with its body is rejected (400, -32020)",
    description=(
        "Judges the server: a tasks/get whose Mcp-Name header is not the taskId, and one whose Mcp-Method is "
        "not tasks/get, each get HTTP 400 with -32020. "
        "Our own Mcp-Name/Mcp-Method on every tasks/* request are confirmed from the wire log first. "
        "Not applicable on stdio and on the legacy wire."
    ),
    probes=(DeclaredCall, NameRouting),
    transports=("http",),
    needs="task",
)


def _own_routing_header_problems(ev: Evidence) -> list[str]:
    problems: list[str] = []
    for intent in ev.intents:
        if not intent.method.startswith("tasks/"):
            continue
        frame = ev.frame(intent.seq)
        if frame is None or frame.http is None:
            continue
        # The negative header probes change a header on purpose; every other tasks/* must be right.
        if frame.tag is not None and frame.tag.purpose is Purpose.HEADER_MISMATCH:
            continue
        # Only the methods that name a target carry Mcp-Name (a removed tasks/result does not).
        wanted = mcp_name_for(intent.method, get_path(frame.json(), "params"))
        name = frame.http.header(HEADER_NAME)
        method = frame.http.header(HEADER_METHOD)
        if method != intent.method:
            problems.append(f"frame {frame.seq} Mcp-Method {method!r} ≠ {intent.method}")
        if wanted is not None and (name is None or decode_header_value(name) != wanted):
            problems.append(f"frame {frame.seq} Mcp-Name {name!r} ≠ taskId")
    return problems


def _header_mismatch_problem(reply: Reply, what: str) -> str | None:
    if reply.error is not None:
        code = reply.error_code
        if code == ERR_HEADER_MISMATCH and reply.status == 400:
            return None
        if code == ERR_HEADER_MISMATCH:
            return f"{what}: -32020 came with HTTP {reply.status}, not 400"
        hint = draft_code_hint(code)
        return f"{what}: got {reply.describe()}" + (f" ({hint})" if hint else "")
    if reply.ok:
        return f"{what}: the request was served (HTTP {reply.status})"
    return f"{what}: got {reply.describe()}"


@MCP_NAME_ROUTING.judge(Wire.EXTENSION, requires=("S-EXT-MUST-35", "S-CORE-MUST-06"))
def mcp_name_routing(ev: Evidence) -> Verdict:
    own = _own_routing_header_problems(ev)
    if own:
        return could_not_run(harness("tasks-conformance sent wrong routing headers (harness bug): "
                                     + "; ".join(own[:3])))
    rec = ev.get(NameRouting)
    if rec.name_mismatch is None:
        return could_not_run(unrun(rec, "the Mcp-Name probe did not run"))
    asked = [(r, w) for r, w in ((rec.name_mismatch, f"Mcp-Name {rec.sent_name!r} ≠ taskId"),
                                 (rec.method_mismatch, "Mcp-Method ≠ the body's method")) if r is not None]
    for r, _what in asked:
        if not r.answered and r.transport_problem and not r.timed_out:
            # The connection failed under our probe: that judges nothing about the server's routing.
            return could_not_run(by_flag(f"the header probe got no answer: {r.transport_problem}",
                                         "check that the server stays reachable, or raise --timeout"),
                                 evidence=r.seqs())
    problems = [p for r, what in asked if (p := _header_mismatch_problem(r, what))]
    seqs = reply_seqs(*(r for r, _ in asked))
    if problems:
        return failed("; ".join(problems) + " — S-EXT-MUST-35 requires HTTP 400 with -32020",
                      broken=("S-EXT-MUST-35",), evidence=seqs,
                      details={"expected": "HTTP 400 with -32020", "actual": problems})
    return passed(
        "tasks/get with an Mcp-Name that differs from the taskId, and one with a wrong Mcp-Method, were "
        "rejected with HTTP 400 and -32020",
        evidence=seqs,
    )


INVALID_TASK_ID_REJECTED = check(
    id="tasks-invalid-task-id-rejected",
    area="routing",
    category="lifecycle",
    title="An unknown taskId is rejected with -32602",
    description=(
        "Extension: tasks/get on an id the server never issued MUST give -32602; tasks/update and "
        "tasks/cancel SHOULD (another answer warns). Legacy: tasks/get, tasks/result and tasks/cancel MUST."
    ),
    probes=(InvalidId,),
    needs="wire",
    owns=("S-LEG-MUST-15",),
)


def _must_rules(ev: Evidence) -> tuple[str, ...]:
    """The MUST rules among those judged on this wire (the SHOULDs only warn)."""
    return tuple(r for r in INVALID_TASK_ID_REJECTED.requirement_ids(ev.wire) if "-MUST-" in r)


@INVALID_TASK_ID_REJECTED.judge(Wire.EXTENSION, requires=("S-EXT-MUST-17", "S-EXT-SHOULD-01", "S-EXT-SHOULD-02"))
@INVALID_TASK_ID_REJECTED.judge(Wire.LEGACY, requires=("S-LEG-MUST-15",))
def invalid_task_id_rejected(ev: Evidence) -> Verdict:
    rec = ev.get(InvalidId)
    if not rec.ran:
        return could_not_run(unrun(rec, "the unknown-id probe did not run"))
    problems: list[str] = []
    warnings: list[str] = []
    for answer in rec.answers:
        if answer.reply.error_code == ERR_INVALID_PARAMS:
            continue
        text = f"{answer.asked.method} on an unknown id got {answer.reply.describe()}, not -32602"
        (problems if answer.asked.level is Level.MUST else warnings).append(text)
    seqs = reply_seqs(*(a.reply for a in rec.answers))
    if problems:
        return failed("; ".join(problems), broken=_must_rules(ev),
                      evidence=seqs, warnings=warnings,
                      details={"expected": ERR_INVALID_PARAMS, "actual": problems})
    must = [a.asked.method for a in rec.answers if a.asked.level is Level.MUST]
    return passed(f"{', '.join(must)} on an unknown id got -32602", evidence=seqs, warnings=warnings)


REMOVED_METHODS_NOT_FOUND = check(
    id="tasks-removed-methods-not-found",
    area="routing",
    category="lifecycle",
    title="Methods the extension removed (tasks/result, tasks/list) answer -32601",
    description=(
        "tasks/result and tasks/list belong to the 2025-11-25 wire; on the 2026-07-28 extension they are "
        "unknown methods: -32601, and over HTTP status 404. Sent with the declaration, on an id the server "
        "never issued."
    ),
    probes=(RemovedMethods,),
    needs="wire",
)

REMOVED_RULES = {"tasks/result": "S-EXT-MUST-24", "tasks/list": "S-EXT-MUST-29"}


@REMOVED_METHODS_NOT_FOUND.judge(Wire.EXTENSION, requires=("S-EXT-MUST-24", "S-EXT-MUST-29", "S-CORE-MUST-09"))
def removed_methods_not_found(ev: Evidence) -> Verdict:
    rec = ev.get(RemovedMethods)
    if not rec.ran:
        return could_not_run(unrun(rec, "the removed methods were not asked"))
    problems: list[str] = []
    broken: list[str] = []  # the rule of each problem, in order
    for method, reply in rec.answers.items():
        rule = REMOVED_RULES.get(method, "S-CORE-MUST-09")
        if not reply.answered:
            problems.append(f"{method} got {reply.describe()} ({rule})")
        elif reply.error_code != ERR_METHOD_NOT_FOUND:
            problems.append(f"{method} got {reply.describe()}, not -32601: the server still serves it ({rule})")
        elif reply.status is not None and reply.status != 404:
            problems.append(f"{method}: -32601 came with HTTP {reply.status}, not 404 (S-CORE-MUST-09)")
            rule = "S-CORE-MUST-09"
        else:
            continue
        broken.append(rule)
    seqs = reply_seqs(*rec.answers.values())
    if problems:
        return failed("; ".join(problems), broken=tuple(dict.fromkeys(broken)), evidence=seqs,
                      details={"expected": "-32601 (HTTP 404)", "actual": problems})
    return passed(f"{' and '.join(rec.answers)} answered -32601: gone from the extension wire", evidence=seqs)
