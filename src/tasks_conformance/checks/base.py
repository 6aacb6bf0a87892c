"""Base protocol: the 2026-07-28 rules the tasks wire rests on — every result says its
resultType, and an unserved protocol version is refused the way the core defines."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tasks_conformance.checks.registry import Verdict, check, could_not_run, failed, passed
from tasks_conformance.evidence import BentEnvelope, Evidence
from tasks_conformance.protocol import ERR_INVALID_PARAMS, ERR_UNSUPPORTED_VERSION, META_PROTOCOL_VERSION, get_path
from tasks_conformance.wires import Wire

if TYPE_CHECKING:
    from tasks_conformance.rpc.peer import Reply

RESULT_TYPE_PRESENT = check(
    id="tasks-base-result-type-present",
    category="base",
    title="Every 2026-07-28 result carries resultType",
    description=(
        "Every result the server sent in answer to a request with the 2026-07-28 envelope (discovery, "
        "tools, tasks/*) has a resultType member; error responses and notifications have none to carry."
    ),
    needs="wire",
)


def _modern_request_ids(ev: Evidence, version: str) -> set[str]:
    ids: set[str] = set()
    for f in ev.wire_log:
        msg = f.json() if f.direction == "out" else None
        if isinstance(msg, dict) and "method" in msg and "id" in msg \
                and get_path(msg, "params", "_meta", META_PROTOCOL_VERSION) == version:
            ids.add(repr(msg["id"]))
    return ids


@RESULT_TYPE_PRESENT.judge(Wire.EXTENSION, requires=("S-CORE-MUST-01",))
def result_type_present(ev: Evidence) -> Verdict:
    asked = _modern_request_ids(ev, ev.dialect.protocol_version)
    lacking: list[int] = []
    judged = 0
    for f in ev.wire_log:
        msg: Any = f.json() if f.direction == "in" else None
        if not (isinstance(msg, dict) and isinstance(msg.get("result"), dict) and repr(msg.get("id")) in asked):
            continue
        judged += 1
        if "resultType" not in msg["result"]:
            lacking.append(f.seq)
    if not judged:
        return could_not_run("no result answered a 2026-07-28 request")
    if lacking:
        return failed(f"{len(lacking)} of {judged} results lack resultType (frames "
                      f"{', '.join(map(str, lacking[:5]))}); the 2026-07-28 core puts it on every result "
                      "(S-CORE-MUST-01)", evidence=lacking[:20],
                      details={"expected": "resultType on every result", "actual": f"{len(lacking)} without"})
    return passed(f"all {judged} results to 2026-07-28 requests carry resultType")


UNSUPPORTED_VERSION_REFUSED = check(
    id="tasks-base-unsupported-version",
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
        return could_not_run(rec.not_run or rec.harness_problem or f"{what} was not sent")
    if not reply.answered:
        return could_not_run(f"{what} got {reply.describe()}", evidence=reply.seqs())
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
                      evidence=reply.seqs(),
                      details={"expected": "-32022 with data.supported and data.requested", "actual": problems})
    return passed(f"protocol version {rec.requested} was refused with -32022 naming the supported versions",
                  evidence=reply.seqs())


ENVELOPE_REQUIRED = check(
    id="tasks-base-capabilities-required",
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
                      "(S-CORE-MUST-02)", evidence=reply.seqs(),
                      details={"expected": ERR_INVALID_PARAMS, "actual": reply.describe()})
    if reply.status is not None and reply.status != 400:
        return failed(f"-32602 for the missing capabilities came with HTTP {reply.status}, not 400 (S-CORE-MUST-02)",
                      evidence=reply.seqs(), details={"expected": "HTTP 400", "actual": f"HTTP {reply.status}"})
    return passed("a request without client capabilities was refused with -32602", evidence=reply.seqs())
