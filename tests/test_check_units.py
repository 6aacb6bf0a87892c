"""Check logic on hand-built Evidence: no server needed to test a verdict."""

from __future__ import annotations

import json
from typing import Any

from tasks_conformance.checks import CHECKS
from tasks_conformance.checks.shapes import timestamp_problem
from tasks_conformance.evidence import Evidence, ProbeRecord, ToolChoice
from tasks_conformance.requirements import REQUIREMENTS
from tasks_conformance.rpc.peer import Reply, RpcError
from tasks_conformance.session.base import Intent
from tasks_conformance.session.connect import Discovered
from tasks_conformance.wirelog import WireLog


class Builder:
    def __init__(self, wire: str = "extension") -> None:
        self.log = WireLog()
        self.d = Discovered(era="2026-07-28" if wire == "extension" else "2025-11-25", wire=wire,
                            server_capabilities={"extensions": {"io.modelcontextprotocol/tasks": {}}})
        self.ev = Evidence(wire_log=self.log, discovered=self.d, transport="stdio",
                           tool=ToolChoice("slow", "test"))

    def exchange(self, probe: str, label: str, method: str, params: Any, answer: dict[str, Any],
                 declared: bool = True, status: int | None = None) -> Reply:
        out = self.log.record("out", "stdio", json.dumps({"jsonrpc": "2.0", "id": 1, "method": method,
                                                            "params": params}).encode())
        inn = self.log.record("in", "stdio", json.dumps({"jsonrpc": "2.0", "id": 1, **answer}).encode())
        reply = Reply(method, 1, out.seq, inn.seq)
        if "result" in answer:
            reply.result = answer["result"]
        else:
            e = answer["error"]
            reply.error = RpcError(e.get("code"), e.get("message"), e.get("data"), "data" in e)
        rec = self.ev.probes.setdefault(probe, ProbeRecord(name=probe))
        rec.ran = True
        rec.replies[label] = reply
        self.ev.intents.append(Intent(out.seq, method, self.d.era or "", declared, ""))
        return reply


def verdict(check_id: str, ev: Evidence):  # type: ignore[no-untyped-def]
    from tasks_conformance.runner import judge

    return judge(CHECKS[check_id], ev, interrupted=False)


def test_every_check_cites_known_requirements_and_has_unique_ids() -> None:
    assert len(CHECKS) == 16
    for spec in CHECKS.values():
        for ids in spec.requirements.values():
            for rid in ids:
                assert rid in REQUIREMENTS, (spec.id, rid)


def test_our_own_wrong_declaration_is_a_harness_fault_not_a_server_failure() -> None:
    b = Builder()
    caps = {"io.modelcontextprotocol/clientCapabilities": {"extensions": {"io.modelcontextprotocol/tasks": {}}}}
    # The probe meant NOT to declare, but the bytes carry the declaration.
    b.exchange("declared-call", "call", "tools/call", {"name": "slow", "_meta": caps},
               {"result": {"resultType": "complete", "content": []}}, declared=False)
    v = verdict("tasks-declaration-hygiene", b.ev)
    assert v.status == "skipped" and v.skip_reason == "could-not-run" and "harness" in v.message


def test_legacy_capability_in_discover_fails_hygiene() -> None:
    b = Builder()
    b.d.server_capabilities = {"extensions": {"io.modelcontextprotocol/tasks": {}}, "tasks": {"list": {}}}
    assert verdict("tasks-declaration-hygiene", b.ev).status == "failed"
    b.d.wire = "none"  # the precondition (a wire) falls: could-not-run pointing at wire-resolvable
    v = verdict("tasks-declaration-hygiene", b.ev)
    assert v.skip_reason == "could-not-run" and v.blocked_by == "tasks-wire-resolvable"
    b.d.wire = "extension"
    v = verdict("tasks-declaration-hygiene", b.ev)
    assert v.status == "failed" and "S-EXT-MUST-26" in v.message


def test_nonempty_extension_value_only_warns() -> None:
    b = Builder()
    b.d.server_capabilities = {"extensions": {"io.modelcontextprotocol/tasks": {"x": 1}}}
    v = verdict("tasks-declaration-hygiene", b.ev)
    assert v.status == "passed" and v.warnings


def test_draft_code_on_undeclared_call_fails_with_the_renumbering_hint() -> None:
    b = Builder()
    b.exchange("undeclared-call", "call", "tools/call", {"name": "slow"},
               {"error": {"code": -32003, "message": "missing capability"}}, declared=False)
    v = verdict("tasks-undeclared-creation-refused", b.ev)
    assert v.status == "failed" and "-32021" in v.message and "draft" in v.message


def test_a_plain_call_tool_result_passes_result_type_discipline_and_says_so() -> None:
    b = Builder()
    b.exchange("declared-call", "call", "tools/call", {"name": "slow"},
               {"result": {"resultType": "complete", "content": []}})
    v = verdict("tasks-result-type-discipline", b.ev)
    assert v.status == "passed" and "chose not to create a task" in v.message


def test_result_type_is_read_from_the_raw_frame_not_a_parsed_copy() -> None:
    b = Builder()
    reply = b.exchange("declared-call", "call", "tools/call", {"name": "slow"},
                       {"result": {"resultType": "complete", "taskId": "t1", "status": "working"}})
    reply.result = {"resultType": "task", "taskId": "t1"}  # a parsed view that lies
    b.ev.probes["declared-call"].data["task_id"] = "t1"
    v = verdict("tasks-result-type-discipline", b.ev)
    assert v.status == "failed" and "'complete'" in v.message


def test_missing_ttl_blocks_integer_shape_instead_of_failing_it_twice() -> None:
    b = Builder()
    b.exchange("declared-call", "call", "tools/call", {"name": "slow"},
               {"result": {"resultType": "task", "taskId": "t1", "status": "working",
                           "createdAt": "2026-01-01T00:00:00Z", "lastUpdatedAt": "2026-01-01T00:00:00Z"}})
    b.ev.probes["declared-call"].data["task_id"] = "t1"
    assert verdict("tasks-ttl-shape", b.ev).status == "failed"
    v = verdict("tasks-ttl-integer-shape", b.ev)
    assert v.skip_reason == "could-not-run" and v.blocked_by == "tasks-ttl-shape"


def test_timestamps_rfc3339_pass_iso_warns_garbage_fails() -> None:
    assert timestamp_problem("2026-11-29T15:20:37.123Z") is None
    assert timestamp_problem("2026-11-29T15:20:37+01:00") is None
    warn = timestamp_problem("2026-11-29T15:20:37")
    assert warn is not None and warn[0] == "warn"
    bad = timestamp_problem("yesterday")
    assert bad is not None and bad[0] == "fail"
    bad = timestamp_problem(1700000000)
    assert bad is not None and bad[0] == "fail"


def test_a_crashing_check_is_reported_as_our_bug() -> None:
    from tasks_conformance.checks.registry import CheckSpec
    from tasks_conformance.runner import judge

    def boom(ev: Evidence):  # type: ignore[no-untyped-def]
        raise KeyError("x")

    spec = CheckSpec("t-boom", "lifecycle", "t", "d", frozenset({"extension"}), {}, (), False, boom)
    v = judge(spec, Builder().ev, interrupted=False)
    assert v.skip_reason == "could-not-run" and "tasks-conformance bug" in v.message
    assert v.details["origin"] == "harness"


def test_wire_framing_accepts_an_id_null_error_but_not_a_stray_response() -> None:
    b = Builder()
    b.exchange("declared-call", "call", "tools/call", {"name": "slow"}, {"result": {"content": []}})
    stray = b.log.record("in", "stdio", b'{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}}')
    b.ev.unmatched = [stray]
    assert verdict("tasks-wire-framing", b.ev).status == "passed"
    b.ev.unmatched.append(b.log.record("in", "stdio", b'{"jsonrpc":"2.0","id":4242,"result":{}}'))
    b.ev.unmatched.append(b.log.record("in", "stdio", b"DEBUG: starting up"))
    v = verdict("tasks-wire-framing", b.ev)
    assert v.status == "failed" and "ids never sent" in v.message and "not JSON" in v.message


def test_a_failure_whose_frames_were_not_kept_becomes_could_not_run() -> None:
    b = Builder()
    b.exchange("undeclared-call", "call", "tools/call", {"name": "slow"},
               {"error": {"code": -32003, "message": "missing capability"}}, declared=False)
    assert verdict("tasks-undeclared-creation-refused", b.ev).status == "failed"
    b.ev.probes["undeclared-call"].replies["call"].response_seq = 99_999  # a frame past the log's bounds
    v = verdict("tasks-undeclared-creation-refused", b.ev)
    assert v.skip_reason == "could-not-run" and "not kept" in v.message


def test_an_undefined_reserved_code_fails_but_another_error_only_warns() -> None:
    b = Builder()
    b.exchange("undeclared-call", "call", "tools/call", {"name": "slow"},
               {"error": {"code": -32050, "message": "nope"}}, declared=False)
    v = verdict("tasks-undeclared-creation-refused", b.ev)
    assert v.status == "failed" and "S-CORE-MUST-13" in v.message
    b = Builder()
    b.exchange("undeclared-call", "call", "tools/call", {"name": "slow"},
               {"error": {"code": -32602, "message": "bad args"}}, declared=False)
    v = verdict("tasks-undeclared-creation-refused", b.ev)
    assert v.status == "passed" and v.warnings
