"""Base protocol: the 2026-07-28 rules the tasks wire rests on — every result says its
resultType, and an unserved protocol version is refused the way the core defines."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tasks_conformance.core.causes import by_flag, unmet
from tasks_conformance.core.protocol import (
    ERR_INVALID_PARAMS,
    ERR_METHOD_NOT_FOUND,
    ERR_UNSUPPORTED_VERSION,
    META_PROTOCOL_VERSION,
    META_SERVER_INFO,
    get_path,
)
from tasks_conformance.core.verdict import Verdict, could_not_run, failed, not_applicable, passed
from tasks_conformance.core.wires import Wire
from tasks_conformance.server.checks.engine.common import got, unrun
from tasks_conformance.server.checks.engine.registry import check
from tasks_conformance.server.evidence import Base64Name, BaseHttp, BentEnvelope, DeclaredCall, Evidence

if TYPE_CHECKING:
    from tasks_conformance.core.rpc.peer import Reply

RESULT_TYPE_PRESENT = check(
    id="tasks-base-result-type-present",
    area="base",
    category="base",
    title="Every 2026-07-28 result carries resultType",
    description=(
        "Every result the server sent in answer to a request with the 2026-07-28 envelope (discovery, "
        "tools, tasks/*) has a resultType member; error responses and notifications have none to carry. Results "
        'without _meta["io.modelcontextprotocol/serverInfo"], and error codes in -32000..-32019, warn '
        "(S-CORE-SHOULD-01, S-CORE-SHOULD-03)."
    ),
    needs="wire",
)


def _base_2026_request_ids(ev: Evidence, version: str) -> set[str]:
    ids: set[str] = set()
    for f in ev.wire_log:
        msg = f.json() if f.direction == "out" else None
        if isinstance(msg, dict) and "method" in msg and "id" in msg \
                and get_path(msg, "params", "_meta", META_PROTOCOL_VERSION) == version:
            ids.add(repr(msg["id"]))
    return ids


# Implementation-defined server errors the core asks servers not to use (S-CORE-SHOULD-03).
RESERVED_SERVER_ERRORS = range(-32019, -31999)


def _should_warnings(no_info: list[int], reserved: list[int], judged: int) -> list[str]:
    warnings = []
    if no_info:
        warnings.append(f'{len(no_info)} of {judged} results lack _meta["{META_SERVER_INFO}"] (frames '
                        f"{', '.join(map(str, no_info[:5]))}) (S-CORE-SHOULD-01)")
    if reserved:
        warnings.append(f"{len(reserved)} errors use codes in -32000..-32019 (frames "
                        f"{', '.join(map(str, reserved[:5]))}), which carry no meaning a client can rely on "
                        "(S-CORE-SHOULD-03)")
    return warnings


@RESULT_TYPE_PRESENT.judge(Wire.EXTENSION, requires=("S-CORE-MUST-01", "S-CORE-SHOULD-01", "S-CORE-SHOULD-03"))
def result_type_present(ev: Evidence) -> Verdict:
    asked = _base_2026_request_ids(ev, ev.dialect.protocol_version)
    lacking: list[int] = []
    no_info: list[int] = []
    reserved: list[int] = []
    judged = 0
    for f in ev.wire_log:
        msg: Any = f.json() if f.direction == "in" else None
        if not (isinstance(msg, dict) and repr(msg.get("id")) in asked):
            continue
        code = get_path(msg, "error", "code")
        if isinstance(code, int) and code in RESERVED_SERVER_ERRORS:
            reserved.append(f.seq)
        if not isinstance(msg.get("result"), dict):
            continue
        judged += 1
        if "resultType" not in msg["result"]:
            lacking.append(f.seq)
        if not isinstance(get_path(msg["result"], "_meta", META_SERVER_INFO), dict):
            no_info.append(f.seq)
    if not judged:
        return could_not_run(unmet("no result answered a 2026-07-28 request",
                                   "pin the era the server implements with --protocol-version"))
    warnings = _should_warnings(no_info, reserved, judged)
    if lacking:
        return failed(f"{len(lacking)} of {judged} results lack resultType (frames "
                      f"{', '.join(map(str, lacking[:5]))}); the 2026-07-28 core puts it on every result "
                      "(S-CORE-MUST-01)", broken=("S-CORE-MUST-01",), evidence=lacking[:20], warnings=warnings,
                      details={"expected": "resultType on every result", "actual": f"{len(lacking)} without"})
    return passed(f"all {judged} results to 2026-07-28 requests carry resultType",
                  evidence=(no_info + reserved)[:20], warnings=warnings)


UNSUPPORTED_VERSION_REFUSED = check(
    id="tasks-base-unsupported-version",
    area="base",
    category="base",
    title="A request for an unserved protocol version gets -32022 naming what is supported",
    description=(
        "tools/list with protocolVersion 1999-01-01 in its envelope (and header, over HTTP) must be refused "
        "with -32022 whose data lists supported versions and echoes the requested one; HTTP 400."
    ),
    probes=(BentEnvelope,),
    needs="wire",
)


def _version_error_problems(reply: Any, requested: str | None) -> list[str]:
    if reply.error_code != ERR_UNSUPPORTED_VERSION:
        return [f"got {reply.describe()}, not -32022"]
    problems = []
    data = reply.error.data if reply.error is not None and reply.error.has_data else None
    if not isinstance(get_path(data, "supported"), list):
        problems.append("the -32022 error has no data.supported list")
    if get_path(data, "requested") != requested:
        problems.append(f"data.requested is {get_path(data, 'requested')!r}, not {requested!r}")
    if reply.status is not None and reply.status != 400:
        problems.append(f"-32022 came with HTTP {reply.status}, not 400")
    return problems


def _answered(rec: BentEnvelope, reply: Reply | None, what: str) -> Reply | Verdict:
    """The bent request's answer, or the could-not-run verdict when it was not sent or not answered."""
    if reply is None:
        return could_not_run(unrun(rec, f"{what} was not sent"))
    if not reply.answered:
        return could_not_run(got(f"{what} got {reply.describe()}", reply, fix=f"answer {what}"), evidence=reply.seqs())
    return reply


@UNSUPPORTED_VERSION_REFUSED.judge(Wire.EXTENSION, requires=("S-CORE-MUST-03",))
def unsupported_version_refused(ev: Evidence) -> Verdict:
    rec = ev.get(BentEnvelope)
    reply = _answered(rec, rec.unserved, "the request for an unserved version")
    if isinstance(reply, Verdict):
        return reply
    problems = _version_error_problems(reply, rec.requested)
    if problems:
        return failed(f"a request for protocol version {rec.requested}: " + "; ".join(problems) + " (S-CORE-MUST-03)",
                      broken=("S-CORE-MUST-03",),
                      evidence=reply.seqs(),
                      details={"expected": "-32022 with data.supported and data.requested", "actual": problems})
    return passed(f"protocol version {rec.requested} was refused with -32022 naming the supported versions",
                  evidence=reply.seqs())


ENVELOPE_REQUIRED = check(
    id="tasks-base-capabilities-required",
    area="base",
    category="base",
    title="A 2026-07-28 request without client capabilities is malformed: -32602",
    description=(
        "tools/list whose _meta names the protocol version but carries no clientCapabilities must be "
        "refused with -32602 (HTTP 400): capabilities are per request, and {} is how a client declares none."
    ),
    probes=(BentEnvelope,),
    needs="wire",
)


@ENVELOPE_REQUIRED.judge(Wire.EXTENSION, requires=("S-CORE-MUST-02",))
def capabilities_required(ev: Evidence) -> Verdict:
    rec = ev.get(BentEnvelope)
    reply = _answered(rec, rec.no_capabilities, "the request without capabilities")
    if isinstance(reply, Verdict):
        return reply
    if reply.error_code != ERR_INVALID_PARAMS:
        return failed(f"tools/list without _meta clientCapabilities got {reply.describe()}, not -32602 "
                      "(S-CORE-MUST-02)", broken=("S-CORE-MUST-02",), evidence=reply.seqs(),
                      details={"expected": ERR_INVALID_PARAMS, "actual": reply.describe()})
    if reply.status is not None and reply.status != 400:
        return failed(f"-32602 for the missing capabilities came with HTTP {reply.status}, not 400 (S-CORE-MUST-02)",
                      broken=("S-CORE-MUST-02",),
                      evidence=reply.seqs(), details={"expected": "HTTP 400", "actual": f"HTTP {reply.status}"})
    return passed("a request without client capabilities was refused with -32602", evidence=reply.seqs())


# ---------------------------------------------------------------------------------------------
# The HTTP endpoint beyond the requests it serves (2026-07-28 Streamable HTTP).

UNKNOWN_METHOD_NOT_FOUND = check(
    id="tasks-base-unknown-method-not-found",
    area="base",
    category="base",
    title="Over HTTP a method nobody implements gets 404 with -32601; GET and DELETE should get 405",
    description=(
        "A request for tasks-conformance/no-such-method with the 2026-07-28 envelope must get -32601 with HTTP 404. "
        "On a connection of its own, GET and DELETE on the endpoint should get 405, and no response should mint "
        "an Mcp-Session-Id (S-CORE-SHOULD-02: warnings; they ride on this check because a rule that only warns "
        "has no failure of its own to show)."
    ),
    probes=(BaseHttp,),
    transports=("http",),
    needs="wire",
    owns=("S-CORE-MUST-09",),
)


def _minted_session_ids(ev: Evidence, rec: BaseHttp) -> list[int]:
    """Frames whose response headers carry an Mcp-Session-Id (answers to 2026-07-28 requests)."""
    asked = _base_2026_request_ids(ev, ev.dialect.protocol_version)
    seqs = []
    for f in ev.wire_log:
        msg: Any = f.json() if f.direction == "in" and f.http is not None else None
        if isinstance(msg, dict) and repr(msg.get("id")) in asked and f.http is not None \
                and f.http.header("mcp-session-id", response=True):
            seqs.append(f.seq)
    return seqs + [o.request_seq for o in (rec.notification, rec.get, rec.delete) if o is not None and o.session_id]


def _endpoint_warnings(ev: Evidence, rec: BaseHttp) -> list[str]:
    warnings = []
    for name, outcome in (("GET", rec.get), ("DELETE", rec.delete)):
        if outcome is not None and outcome.status != 405:
            got = f"HTTP {outcome.status}" if outcome.status is not None else (outcome.problem or "no answer")
            warnings.append(f"{name} on the endpoint got {got}, not 405 (S-CORE-SHOULD-02)")
    minted = _minted_session_ids(ev, rec)
    if minted:
        warnings.append(f"{len(minted)} responses carry an Mcp-Session-Id header (frames "
                        f"{', '.join(map(str, minted[:5]))}); the 2026-07-28 wire has no sessions to mint "
                        "(S-CORE-SHOULD-02)")
    return warnings


@UNKNOWN_METHOD_NOT_FOUND.judge(Wire.EXTENSION, requires=("S-CORE-MUST-09", "S-CORE-SHOULD-02"))
def unknown_method_not_found(ev: Evidence) -> Verdict:
    rec = ev.get(BaseHttp)
    reply = rec.unknown_method
    if reply is None:
        return could_not_run(unrun(rec, "the unknown method was not sent"))
    seqs = [*reply.seqs(), *(o.request_seq for o in (rec.get, rec.delete) if o is not None)]
    warnings = _endpoint_warnings(ev, rec)
    if not reply.answered and reply.status is None:
        return could_not_run(got(f"the unknown method got {reply.describe()}", reply,
                                 fix="answer an unknown method with a JSON-RPC error"), evidence=seqs)
    problems = []
    if reply.error_code != ERR_METHOD_NOT_FOUND:
        problems.append(f"got {reply.describe()}, not -32601")
    if reply.status != 404:
        problems.append(f"came with HTTP {reply.status}, not 404")
    if problems:
        return failed("a method nobody implements " + " and ".join(problems) + " (S-CORE-MUST-09)",
                      broken=("S-CORE-MUST-09",), evidence=seqs,
                      warnings=warnings, details={"expected": "-32601 with HTTP 404", "actual": problems})
    return passed("a method nobody implements got -32601 with HTTP 404", evidence=seqs, warnings=warnings)


NOTIFICATION_ACCEPTED = check(
    id="tasks-base-notification-accepted",
    area="base",
    category="base",
    title="Over HTTP an accepted notification gets 202 with no body",
    description=(
        "A POST of notifications/cancelled (for a request id never sent, which a server ignores) with the "
        "2026-07-28 envelope and headers must be answered 202 Accepted with an empty body."
    ),
    probes=(BaseHttp,),
    transports=("http",),
    needs="wire",
)


@NOTIFICATION_ACCEPTED.judge(Wire.EXTENSION, requires=("S-CORE-MUST-10",))
def notification_accepted(ev: Evidence) -> Verdict:
    rec = ev.get(BaseHttp)
    out = rec.notification
    if out is None:
        return could_not_run(unrun(rec, "the notification was not sent"))
    seqs = [out.request_seq, *out.messages]
    if out.status is None:
        return could_not_run(by_flag(f"the notification got no HTTP answer ({out.problem or 'none'})",
                                     "check that the server stays reachable, or raise --timeout"), evidence=seqs)
    if out.status >= 400:
        # The transport lets a server that cannot accept a message answer an HTTP error; the rule is
        # about an accepted one, so there is nothing to judge, and nothing the user could change.
        return not_applicable(f"the server did not accept the notification (HTTP {out.status}), which the "
                              "transport allows; the rule is about how an accepted one is answered", evidence=seqs)
    if out.status != 202 or out.body:
        what = f"HTTP {out.status}" + (" with a body" if out.body else "")
        return failed(f"an accepted notification got {what}; it must be 202 with no body (S-CORE-MUST-10)",
                      broken=("S-CORE-MUST-10",),
                      evidence=seqs, details={"expected": "HTTP 202, empty body", "actual": what})
    return passed("the notification got HTTP 202 with no body", evidence=seqs)


FOREIGN_ORIGIN_FORBIDDEN = check(
    id="tasks-base-foreign-origin-forbidden",
    area="base",
    category="base",
    title="Over HTTP a request from an invalid Origin gets 403",
    description=(
        "tools/list with the header Origin: http://tasks-conformance.invalid (a host no deployment can own) must "
        "be refused with HTTP 403."
    ),
    probes=(BaseHttp,),
    transports=("http",),
    needs="wire",
)


@FOREIGN_ORIGIN_FORBIDDEN.judge(Wire.EXTENSION, requires=("S-CORE-MUST-14",))
def foreign_origin_forbidden(ev: Evidence) -> Verdict:
    rec = ev.get(BaseHttp)
    reply = rec.foreign_origin
    if reply is None:
        return could_not_run(unrun(rec, "the request with a foreign Origin was not sent"))
    if reply.status is None:
        return could_not_run(got(f"the request with a foreign Origin got {reply.describe()}", reply,
                                 fix="answer a request with a foreign Origin (HTTP 403, or a JSON-RPC answer)"),
                             evidence=reply.seqs())
    if reply.status != 403:
        return failed(f"tools/list with Origin: http://tasks-conformance.invalid got {reply.describe()} "
                      f"(HTTP {reply.status}); a present but invalid Origin must get 403 (S-CORE-MUST-14)",
                      broken=("S-CORE-MUST-14",),
                      evidence=reply.seqs(), details={"expected": "HTTP 403", "actual": f"HTTP {reply.status}"})
    return passed("a request with a foreign Origin got HTTP 403", evidence=reply.seqs())


MCP_NAME_BASE64 = check(
    id="tasks-base-mcp-name-base64",
    area="base",
    category="base",
    title="Over HTTP a base64-wrapped Mcp-Name is decoded before it is compared",
    description=(
        "tasks/get for the probe task whose Mcp-Name header is the task id as =?base64?<base64 of UTF-8>?= must "
        "be served like the plain form (no -32020 header mismatch). After an error the same tasks/get is sent "
        "with the plain Mcp-Name, the control: an error both get is about the request, not decoding (not "
        "applicable). A -32602 (task not found) passed the header comparison: where the task is visible is "
        "tasks-created-task-durable's to judge."
    ),
    probes=(DeclaredCall, Base64Name),
    transports=("http",),
    needs="task",
)


@MCP_NAME_BASE64.judge(Wire.EXTENSION, requires=("S-CORE-MUST-07",))
def mcp_name_base64(ev: Evidence) -> Verdict:
    rec = ev.get(Base64Name)
    reply = rec.reply
    if reply is None:
        return could_not_run(unrun(rec, "the base64-wrapped tasks/get was not sent"))
    if not reply.answered:
        return could_not_run(got(f"the base64-wrapped tasks/get got {reply.describe()}", reply,
                                 fix="answer tasks/get whose Mcp-Name is base64-wrapped"), evidence=reply.seqs())
    if reply.error_code == ERR_INVALID_PARAMS and reply.status != 400:
        # The header passed the comparison (a failed decode is HTTP 400 with -32020); "task not found"
        # is about where the task is visible (tasks-created-task-durable's rule), not about decoding.
        return passed(f"tasks/get with Mcp-Name {str(rec.sent_name)[:60]!r} (the task id, base64-wrapped) passed the "
                      f"header comparison; its answer, {reply.describe()}, is about finding the task, which "
                      "tasks-created-task-durable judges", evidence=reply.seqs())
    control = rec.control
    if not reply.ok and control is not None and control.answered and not control.ok \
            and (control.error_code, control.status) == (reply.error_code, reply.status):
        # The control: the same request with the plain Mcp-Name got the same answer, so the answer
        # is about the request (the task not visible here, say), not about decoding the header.
        return not_applicable(f"tasks/get with the plain Mcp-Name got {control.describe()} too, so the "
                              f"base64-wrapped one's answer, {reply.describe()}, says nothing about decoding "
                              "(tasks-created-task-durable judges where a task is visible)",
                              evidence=[*control.seqs(), *reply.seqs()])
    if not reply.ok or get_path(reply.result, "taskId") != rec.task_id:
        what = reply.describe() if not reply.ok else f"a result about {get_path(reply.result, 'taskId')!r}"
        return failed(f"tasks/get with Mcp-Name {str(rec.sent_name)[:60]!r} (the task id, base64-wrapped) got {what}; "
                      "the value must be decoded before it is compared (S-CORE-MUST-07)",
                      broken=("S-CORE-MUST-07",), evidence=reply.seqs(),
                      details={"expected": "the task", "actual": what})
    return passed("tasks/get with the task id base64-wrapped in Mcp-Name was served", evidence=reply.seqs())


INPUT_REQUIRED_WHERE_ALLOWED = check(
    id="tasks-base-input-required-where-allowed",
    area="base",
    category="base",
    title="Only tools/call, prompts/get and resources/read are answered with an InputRequiredResult",
    description=(
        'No result to any other 2026-07-28 request the run sent (tasks/get, tasks/update, tasks/cancel, tools/list, '
        'server/discover…) says resultType "input_required": a task asks for input in its inputRequests, never by '
        "turning the poll itself into a multi round-trip request."
    ),
    needs="wire",
)

# The requests a multi round-trip answer may come back to.
MRTR_METHODS = frozenset({"tools/call", "prompts/get", "resources/read"})


@INPUT_REQUIRED_WHERE_ALLOWED.judge(Wire.EXTENSION, requires=("S-CORE-MUST-11",))
def input_required_where_allowed(ev: Evidence) -> Verdict:
    version = ev.dialect.protocol_version
    methods: dict[str, str] = {}
    for f in ev.wire_log:
        msg = f.json() if f.direction == "out" else None
        if isinstance(msg, dict) and isinstance(msg.get("method"), str) and "id" in msg \
                and get_path(msg, "params", "_meta", META_PROTOCOL_VERSION) == version:
            methods[repr(msg["id"])] = msg["method"]
    offending: list[tuple[int, str]] = []
    judged = 0
    for f in ev.wire_log:
        msg = f.json() if f.direction == "in" else None
        method = methods.get(repr(msg.get("id"))) if isinstance(msg, dict) else None
        if method is None or method in MRTR_METHODS or not isinstance(msg, dict) \
                or not isinstance(msg.get("result"), dict):
            continue
        judged += 1
        if msg["result"].get("resultType") == "input_required":
            offending.append((f.seq, method))
    if not judged:
        return could_not_run(unmet("no result answered a 2026-07-28 request other than tools/call",
                                   "pin the era the server implements with --protocol-version"))
    if offending:
        named = sorted({m for _, m in offending})
        return failed(f"{len(offending)} results to {', '.join(named)} say resultType \"input_required\" (frames "
                      f"{', '.join(str(s) for s, _ in offending[:5])}); only tools/call, prompts/get and "
                      "resources/read may be answered with an InputRequiredResult (S-CORE-MUST-11)",
                      broken=("S-CORE-MUST-11",),
                      evidence=[s for s, _ in offending][:20],
                      details={"expected": "no InputRequiredResult outside tools/call, prompts/get, resources/read",
                               "actual": named})
    return passed(f"none of the {judged} results to other 2026-07-28 requests is an InputRequiredResult",
                  judged=judged)
