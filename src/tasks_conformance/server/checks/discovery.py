"""Discovery: does the server speak a tasks wire at all, and in its era's place?"""

from __future__ import annotations

from typing import Any

from tasks_conformance.core.causes import Cause, CauseKind
from tasks_conformance.core.protocol import EXT_TASKS
from tasks_conformance.core.verdict import Verdict, could_not_run, failed, passed
from tasks_conformance.core.wires import Wire, dialect_for
from tasks_conformance.server.checks.engine.common import STARTUP_FIX
from tasks_conformance.server.checks.engine.registry import check
from tasks_conformance.server.evidence import Evidence

# The details key holding the HTTP status the handshake got when it got no JSON-RPC answer.
HTTP_STATUS = "httpStatus"

WIRE_RESOLVABLE = check(
    id="tasks-wire-resolvable",
    area="discovery",
    category="dispatch",
    title="The server speaks a tasks wire (legacy 2025-11-25 or the 2026-07-28 extension)",
    description=(
        "Negotiates the era, then looks for capabilities.tasks.requests.tools.call after a 2025-11-25 "
        f'initialize or extensions["{EXT_TASKS}"] in a 2026-07-28 server/discover. A server with '
        "neither fails: a tasks checker must not pass a server without tasks."
    ),
)


def _context(ev: Evidence) -> tuple[list[int], dict[str, Any]]:
    d = ev.discovery
    seqs = [r.response_seq or r.request_seq for r in (d.discover_reply, d.initialize_reply) if r is not None]
    return seqs, {"lookedFor": list(d.looked_for), "negotiation": list(d.negotiation_notes)}


def _unreachable_or_unexpected(ev: Evidence) -> Verdict | None:
    seqs, details = _context(ev)
    d = ev.discovery
    if d.connection_problem is not None:
        # An HTTP status with no JSON-RPC in it: something answered, but not as an MCP endpoint
        # (the incomplete cause's fix says so instead of "nothing answered").
        status = next((r.status for r in (d.initialize_reply, d.discover_reply)
                       if r is not None and not r.answered and r.status is not None), None)
        kind = d.connection_problem_kind
        if status is not None:
            details = {**details, HTTP_STATUS: status}
            if kind is CauseKind.UNREACHABLE:
                kind = CauseKind.HTTP_STATUS
        # A handshake that timed out on a live server: the one setting that changes it.
        fix = STARTUP_FIX if kind is CauseKind.SETTING else ""
        cause = Cause(f"could not talk to the server: {d.connection_problem}", kind, fix=fix, http_status=status)
        return could_not_run(cause, evidence=seqs, details=details)
    if d.wire is not Wire.NONE and ev.expect_wire != "any" and d.wire != ev.expect_wire:
        return failed(
            f"--expect-wire {ev.expect_wire}, but the server speaks the {d.wire} wire (protocol {d.protocol_version})",
            broken=tuple(WIRE_RESOLVABLE.requirement_ids(ev.wire)), evidence=seqs, details=details,
        )
    return None


@WIRE_RESOLVABLE.judge(Wire.NONE, requires=("S-LEG-MUST-01",))
def no_wire(ev: Evidence) -> Verdict:
    seqs, details = _context(ev)
    d = ev.discovery
    if d.other_wire is not Wire.NONE:
        # --expect-wire asked for an era the server does not speak; it speaks the other one.
        asked = dialect_for(Wire(ev.expect_wire))
        return failed(
            f"--expect-wire {ev.expect_wire} (or --era {ev.expect_wire}) asked for the "
            f"{asked.label if asked else ev.expect_wire} wire, but the server speaks the {d.other_wire} wire "
            f"(protocol {d.other_protocol_version}); drop it or point it at {d.other_wire}",
            broken=tuple(WIRE_RESOLVABLE.requirement_ids(ev.wire)),
            evidence=seqs, details={**details, "expected": ev.expect_wire, "actual": d.other_wire.value},
        )
    if d.initialize_reply is None and d.discover_reply is None and not d.looked_for:
        # The handshake asked nothing (a run interrupted before its first request): no era was
        # refused, so there is nothing to fail on. The runner says the run was interrupted.
        return _unreachable_or_unexpected(ev) or could_not_run(
            Cause("the handshake sent no request, so no era was asked", CauseKind.HARNESS), details=details)
    looked = "; ".join(d.looked_for) or "no era answered"
    return _unreachable_or_unexpected(ev) or failed(f"no tasks wire found — {looked}", broken=("S-LEG-MUST-01",),
                                                    evidence=seqs, details=details)


@WIRE_RESOLVABLE.judge(Wire.LEGACY, requires=("S-LEG-MUST-01",))
def legacy_wire(ev: Evidence) -> Verdict:
    seqs, details = _context(ev)
    if ev.discovery.legacy_placement == "capabilities.experimental.tasks":
        return _unreachable_or_unexpected(ev) or failed(
            "the tasks capability is declared under capabilities.experimental.tasks (a pre-2026 placement); "
            "S-LEG-MUST-01 requires capabilities.tasks", broken=("S-LEG-MUST-01",),
            evidence=seqs, details=details,
        )
    return _found(ev)


@WIRE_RESOLVABLE.judge(Wire.EXTENSION, requires=("S-CORE-MUST-08",))
def extension_wire(ev: Evidence) -> Verdict:
    return _found(ev)


def _found(ev: Evidence) -> Verdict:
    seqs, details = _context(ev)
    d = ev.discovery
    return _unreachable_or_unexpected(ev) or passed(
        f"{d.wire} wire on protocol {d.protocol_version} ({ev.dialect.server_declaration})", evidence=seqs,
        details=details,
    )
