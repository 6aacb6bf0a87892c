"""Check logic on hand-built Evidence: no server needed to test a verdict."""

from __future__ import annotations

import json
import re
from dataclasses import replace

import pytest
from helpers.evidence import EXT_CAPS, Builder, verdict
from helpers.paths import ROOT

from tasks_conformance.core.requirements import load
from tasks_conformance.core.verdict import Verdict, passed
from tasks_conformance.core.wirelog import FrameFlag, WireLog
from tasks_conformance.core.wires import Wire
from tasks_conformance.server.checks import CHECKS, registry_problems
from tasks_conformance.server.checks.engine import readme_table
from tasks_conformance.server.checks.engine.registry import CheckSpec, check, validate
from tasks_conformance.server.checks.engine.shapes import timestamp_problem
from tasks_conformance.server.evidence import (
    DeclaredCall,
    Discovery,
    Evidence,
    Listen,
    Poll,
    RemovedMethods,
    StopReason,
    TerminalRereads,
    UndeclaredCall,
    UndeclaredProbe,
)
from tasks_conformance.server.fixture_index import BREAKING
from tasks_conformance.server.runner import judge


def test_every_check_cites_known_requirements_and_the_registry_validates() -> None:
    # No count to keep: the registry holds exactly the checks the committed files name, each
    # with its breaking fixture (fixture_index, generated from fixtures/broken_server.py) and its
    # row in the README's table (generated from the registry), so a check that drops out (its
    # module gone from AREAS) or comes without a fixture or docs fails here.
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    table = readme.split(readme_table.START, 1)[1].split(readme_table.END, 1)[0]
    rows = re.findall(r"^\| `([a-z0-9-]+)` \|", table, re.M)
    assert sorted(rows) == sorted(CHECKS) == sorted(BREAKING), (set(CHECKS) ^ set(rows), set(CHECKS) ^ set(BREAKING))
    known = set(load())
    for spec in CHECKS.values():
        for ids in spec.requirements.values():
            assert set(ids) <= known, spec.id
    # The package's own validation, which no import runs any more: every probe a check declares
    # is a typed record of RECORD_TYPES (test_structure.py holds those to the loaded probes, so no
    # list of probe names is kept here), MAYs honoured, categories.
    assert registry_problems() == []


def test_registry_validation_names_unknown_requirements_probes_and_needs() -> None:
    bad = CheckSpec("t-bad", "made_up_area", "lifecycle", "t", "d", probes=("poll", "nope"), judges={},
                    needs="terminal")
    bad.judge(Wire.EXTENSION, requires=("S-EXT-MUST-99",))(lambda ev: passed("x"))
    problems = validate({"t-bad": bad}, {"poll", "declared-call"}, set(load()))
    assert any("unknown probe 'nope'" in p for p in problems)
    assert any("unknown requirement 'S-EXT-MUST-99'" in p for p in problems)
    assert any("does not declare probe 'declared-call'" in p for p in problems)
    assert any("unknown area 'made_up_area'" in p for p in problems)


def test_a_checks_area_is_what_it_declares_not_where_its_code_is() -> None:
    """The area is the check's own field: a judge defined in this module (or moved to any other)
    leaves the check in the area it names, so no JUnit classname or report section moves with it."""
    spec = CheckSpec("t-moved", "cancel", "lifecycle", "t", "d", probes=(), judges={})
    spec.judge(Wire.EXTENSION, requires=("S-EXT-MUST-16",))(lambda ev: passed("x"))
    assert spec.area == "cancel" and __name__ not in spec.area
    from tasks_conformance.client.checks import CLIENT_CHECKS
    from tasks_conformance.client.checks.registry import client_check

    with pytest.raises(ValueError, match="unknown area 'nowhere'"):
        client_check(id="t-client-nowhere", area="nowhere", title="t", description="d", requirements=())(
            lambda runs: passed("x"))
    assert "t-client-nowhere" not in CLIENT_CHECKS


def test_registry_validation_refuses_permits_that_are_unknown_or_not_a_may() -> None:
    spec = CheckSpec("t-permits", "cancel", "lifecycle", "t", "d", probes=(), judges={},
                     permits=("S-EXT-MAY-07", "S-EXT-MAY-99", "S-EXT-MUST-08"))
    spec.judge(Wire.EXTENSION, requires=("S-EXT-MUST-16",))(lambda ev: passed("x"))
    registry = load()
    mays = {r.id for r in registry.values() if r.level == "MAY"}
    problems = validate({"t-permits": spec}, set(), set(registry), mays)
    assert any("permits unknown requirement 'S-EXT-MAY-99'" in p for p in problems)
    assert any("permits 'S-EXT-MUST-08', which is not a MAY" in p for p in problems)
    assert not any("S-EXT-MAY-07" in p for p in problems)
    # The packaged checks permit only MAYs.
    assert validate(CHECKS, {p for c in CHECKS.values() for p in c.probes}, set(registry), mays) == []


def test_registering_a_check_id_twice_is_refused() -> None:
    with pytest.raises(ValueError, match="registered twice"):
        check(id="tasks-wire-resolvable", area="discovery", category="dispatch", title="t", description="d")


def test_a_check_reading_a_probe_it_did_not_declare_is_our_bug() -> None:
    b = Builder()
    b.call(DeclaredCall, {"result": {"resultType": "complete", "content": []}})
    with pytest.raises(UndeclaredProbe):
        b.ev.restricted_to(("undeclared-call",)).get(DeclaredCall)
    spec = CheckSpec("t-sneaky", "cancel", "lifecycle", "t", "d", probes=("undeclared-call",), judges={})
    spec.judge(Wire.EXTENSION, requires=("S-EXT-MUST-01",))(lambda ev: passed(str(ev.get(Poll).ran)))
    v = judge(spec, b.ev, interrupted=False)
    assert v.skip_reason == "could-not-run" and "UndeclaredProbe" in v.message
    assert v.details["origin"] == "harness"


def test_our_own_wrong_declaration_is_a_harness_fault_not_a_server_failure() -> None:
    b = Builder()
    caps = {"io.modelcontextprotocol/clientCapabilities": {"extensions": {"io.modelcontextprotocol/tasks": {}}}}
    # The probe meant NOT to declare, but the bytes carry the declaration.
    b.call(DeclaredCall, {"result": {"resultType": "complete", "content": []}},
           params={"name": "slow", "_meta": caps}, declared=False)
    v = verdict("tasks-declaration-hygiene", b.ev)
    assert v.status == "skipped" and v.skip_reason == "could-not-run" and "harness" in v.message


def test_legacy_capability_in_discover_fails_hygiene() -> None:
    b = Builder()
    b.discovery = replace(b.discovery, server_capabilities={**EXT_CAPS, "tasks": {"list": {}}})
    assert verdict("tasks-declaration-hygiene", b.ev).status == "failed"
    b.discovery = replace(b.discovery, wire=Wire.NONE)  # no wire: could-not-run pointing at wire-resolvable
    v = verdict("tasks-declaration-hygiene", b.ev)
    assert v.skip_reason == "could-not-run" and v.blocked_by == "tasks-wire-resolvable"
    b.discovery = replace(b.discovery, wire=Wire.EXTENSION)
    v = verdict("tasks-declaration-hygiene", b.ev)
    assert v.status == "failed" and "S-EXT-MUST-26" in v.message
    assert v.details["actual"] == "capabilities.tasks"


def test_nonempty_extension_value_only_warns_citing_its_policy() -> None:
    b = Builder()
    b.discovery = replace(b.discovery, server_capabilities={"extensions": {"io.modelcontextprotocol/tasks": {"x": 1}}})
    v = verdict("tasks-declaration-hygiene", b.ev)
    assert v.status == "passed" and v.warnings and v.warnings[0].policies == ("P-15",)


def test_draft_code_on_undeclared_call_fails_with_the_renumbering_hint() -> None:
    b = Builder()
    b.call(UndeclaredCall, {"error": {"code": -32003, "message": "missing capability"}}, declared=False)
    v = verdict("tasks-undeclared-creation-refused", b.ev)
    assert v.status == "failed" and "-32021" in v.message and "draft" in v.message
    assert v.details == {"expected": -32021, "actual": -32003}


def test_a_plain_call_tool_result_passes_result_type_discipline_and_says_so() -> None:
    b = Builder()
    b.call(DeclaredCall, {"result": {"resultType": "complete", "content": []}})
    v = verdict("tasks-result-type-discipline", b.ev)
    assert v.status == "passed" and "chose not to create a task" in v.message


def test_result_type_is_read_from_the_raw_frame_not_a_parsed_copy() -> None:
    b = Builder()
    reply = b.call(DeclaredCall, {"result": {"resultType": "complete", "taskId": "t1", "status": "working"}})
    reply.result = {"resultType": "task", "taskId": "t1"}  # a parsed view that lies
    v = verdict("tasks-result-type-discipline", b.ev)
    assert v.status == "failed" and "'complete'" in v.message


def test_missing_ttl_blocks_integer_shape_instead_of_failing_it_twice() -> None:
    b = Builder()
    b.call(DeclaredCall, {"result": {"resultType": "task", "taskId": "t1", "status": "working",
                                     "createdAt": "2026-01-01T00:00:00Z", "lastUpdatedAt": "2026-01-01T00:00:00Z"}})
    assert verdict("tasks-ttl-shape", b.ev).status == "failed"
    v = verdict("tasks-ttl-integer-shape", b.ev)
    assert v.skip_reason == "could-not-run" and v.blocked_by == "tasks-ttl-shape"


def test_ttl_names_come_from_the_wire_in_use() -> None:
    task = {"taskId": "t1", "status": "working", "createdAt": "2026-01-01T00:00:00Z",
            "lastUpdatedAt": "2026-01-01T00:00:00Z", "ttl": 1000}
    b = Builder(Wire.LEGACY)
    b.call(DeclaredCall, {"result": {"task": task}})
    assert verdict("tasks-ttl-shape", b.ev).status == "passed"
    b = Builder(Wire.EXTENSION)
    b.call(DeclaredCall, {"result": {"resultType": "task", **task}})
    v = verdict("tasks-ttl-shape", b.ev)
    assert v.status == "failed" and "ttl, the 2025-11-25 legacy name" in v.message


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
    def boom(ev: Evidence) -> Verdict:
        raise KeyError("x")

    spec = CheckSpec("t-boom", "cancel", "lifecycle", "t", "d", probes=(), judges={})
    spec.judge(Wire.EXTENSION, requires=("S-EXT-MUST-01",))(boom)
    v = judge(spec, Builder().ev, interrupted=False)
    assert v.skip_reason == "could-not-run" and "tasks-conformance bug" in v.message
    assert v.details["origin"] == "harness"


def test_a_check_without_a_judge_for_the_wire_is_not_applicable() -> None:
    v = verdict("tasks-subscription-notifications", Builder(Wire.LEGACY).ev)
    assert v.skip_reason == "not-applicable" and "extension wire, not legacy" in v.message


def test_wire_framing_accepts_an_id_null_error_but_not_a_stray_response() -> None:
    b = Builder()
    b.call(DeclaredCall, {"result": {"content": []}})
    id_null = b'{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}}'
    b.unmatched.append(b.log.record("in", "stdio", id_null))
    assert verdict("tasks-wire-framing", b.ev).status == "passed"
    b.unmatched.append(b.log.record("in", "stdio", b'{"jsonrpc":"2.0","id":4242,"result":{}}',
                                    flags=[FrameFlag.STRAY_RESPONSE]))
    b.unmatched.append(b.log.record("in", "stdio", b"DEBUG: starting up", flags=[FrameFlag.NOT_JSON]))
    v = verdict("tasks-wire-framing", b.ev)
    assert v.status == "failed" and "1 response to an id never sent" in v.message
    assert "1 line of output that is not JSON" in v.message


def test_a_failure_whose_frames_were_not_kept_becomes_could_not_run() -> None:
    b = Builder()
    reply = b.call(UndeclaredCall, {"error": {"code": -32003, "message": "missing capability"}}, declared=False)
    assert verdict("tasks-undeclared-creation-refused", b.ev).status == "failed"
    reply.response_seq = 99_999  # a frame past the log's bounds
    v = verdict("tasks-undeclared-creation-refused", b.ev)
    assert v.skip_reason == "could-not-run" and "not kept" in v.message


def test_an_undefined_reserved_code_fails_but_another_error_only_warns() -> None:
    b = Builder()
    b.call(UndeclaredCall, {"error": {"code": -32050, "message": "nope"}}, declared=False)
    v = verdict("tasks-undeclared-creation-refused", b.ev)
    assert v.status == "failed" and "S-CORE-MUST-13" in v.message
    b = Builder()
    b.call(UndeclaredCall, {"error": {"code": -32602, "message": "bad args"}}, declared=False)
    v = verdict("tasks-undeclared-creation-refused", b.ev)
    assert v.status == "passed" and v.warnings


def _terminal_run(b: Builder, later_statuses: list[str]) -> None:
    task = {"taskId": "t1", "status": "working", "createdAt": "2026-01-01T00:00:00Z",
            "lastUpdatedAt": "2026-01-01T00:00:00Z", "ttlMs": 60000}
    b.call(DeclaredCall, {"result": {"resultType": "task", **task}})
    poll = b.record(Poll)
    done = {**task, "resultType": "complete", "status": "completed", "result": {"content": []}}
    poll.gets.append(b.exchange("tasks/get", {"taskId": "t1"}, {"result": done}))
    poll.statuses.append("completed")
    poll.stop = StopReason.TERMINAL
    rereads = b.record(TerminalRereads)
    rereads.task_id, rereads.terminal_status = "t1", "completed"
    for status in later_statuses:
        rereads.gets.append(b.exchange("tasks/get", {"taskId": "t1"}, {"result": {**done, "status": status}}))


def test_a_terminal_status_that_changes_later_fails_and_one_that_stays_passes() -> None:
    b = Builder()
    _terminal_run(b, ["completed", "completed"])
    assert verdict("tasks-terminal-status-immutable", b.ev).status == "passed"
    b = Builder()
    _terminal_run(b, ["completed", "working"])
    v = verdict("tasks-terminal-status-immutable", b.ev)
    assert v.status == "failed" and "'working'" in v.message and v.details["expected"] == "completed"


def _status_notification(b: Builder, status: str, stream: int | None = None, task_id: str = "t1",
                         method: str = "notifications/tasks") -> int:
    """A notification about the task; `stream`: the listen request it came on (HTTP), None on stdio."""
    frame = b.log.record("in", "stdio" if stream is None else "http", json.dumps({
        "jsonrpc": "2.0", "method": method, "params": {"taskId": task_id, "status": status}}).encode(),
        reply_to=stream)
    b.record(Listen).frames.append(frame.seq)
    return frame.seq


def _sighted(b: Builder, status: str, stream: int | None = None) -> int:
    """The subscription showed the end first: polling's last read (sent after it) is the first later read."""
    sighted = _status_notification(b, status, stream)
    _terminal_run(b, ["completed"])
    rereads = b.records[TerminalRereads.probe]
    rereads.sighted_seq, rereads.sighted_status = sighted, status
    if status == "completed":
        rereads.gets.insert(0, b.records[Poll.probe].last_get)
    return sighted


def test_a_notification_that_showed_the_end_first_makes_the_next_poll_the_first_later_read() -> None:
    b = Builder()
    sighted = _sighted(b, "completed")
    v = verdict("tasks-terminal-status-immutable", b.ev)
    assert v.status == "passed" and f"2 later reads after notification frame {sighted}" in v.message
    assert sighted in v.evidence


def test_a_notification_of_another_end_than_the_poll_after_it_is_a_change() -> None:
    b = Builder()
    sighted = _sighted(b, "failed")
    v = verdict("tasks-terminal-status-immutable", b.ev)
    assert v.status == "failed" and f"frame {sighted}) showed the task 'failed'" in v.message
    assert "says 'completed'" in v.message


def _working_after_the_sighting(stream: int) -> Verdict:
    """The subscription (stream 7) showed the end, then a "working" came on `stream` before polling read it."""
    b = Builder()
    sighted = _status_notification(b, "completed", stream=7)
    _status_notification(b, "working", stream=stream)
    _terminal_run(b, ["completed"])
    rereads = b.records[TerminalRereads.probe]
    rereads.sighted_seq, rereads.sighted_status = sighted, "completed"
    return verdict("tasks-terminal-status-immutable", b.ev)


def test_after_the_notification_of_the_end_its_own_stream_is_judged_and_no_other() -> None:
    # Order holds within one stream: "working" after "completed" on it is a change. Across streams it
    # does not, so a "working" on another stream before polling read the end is not judged.
    v = _working_after_the_sighting(stream=7)
    assert v.status == "failed" and "'working'" in v.message
    assert _working_after_the_sighting(stream=9).status == "passed"


def test_the_sighting_is_the_first_terminal_notification_about_the_task_inside_the_window() -> None:
    from tasks_conformance.server.probes.rereads import terminal_sighting

    b = Builder()
    early = _status_notification(b, "completed")  # before the previous poll was sent: outside
    other = _status_notification(b, "completed", task_id="t2")  # another task
    working = _status_notification(b, "working")  # not terminal
    legacy = _status_notification(b, "cancelled", method="notifications/tasks/status")
    later = _status_notification(b, "completed")
    frames = [b.log.get(seq) for seq in (early, other, working, legacy, later)]
    assert terminal_sighting(frames, "t1", (early, later + 1)) == (legacy, "cancelled")
    assert terminal_sighting(frames, "t1", (legacy, later + 1)) == (later, "completed")
    assert terminal_sighting(frames, "t1", (legacy, later)) is None  # sent with the last poll: not before it
    assert terminal_sighting(frames, "t2", (0, later + 1)) == (other, "completed")


def test_removed_methods_must_be_unknown_to_the_server() -> None:
    b = Builder()
    rec = b.record(RemovedMethods)
    rec.answers["tasks/result"] = b.exchange("tasks/result", {"taskId": "x"},
                                             {"error": {"code": -32601, "message": "Method not found"}})
    rec.answers["tasks/list"] = b.exchange("tasks/list", {}, {"error": {"code": -32601, "message": "nope"}})
    assert verdict("tasks-removed-methods-not-found", b.ev).status == "passed"
    rec.answers["tasks/list"] = b.exchange("tasks/list", {}, {"result": {"tasks": []}})
    v = verdict("tasks-removed-methods-not-found", b.ev)
    assert v.status == "failed" and "tasks/list" in v.message and "S-EXT-MUST-29" in v.message
    assert verdict("tasks-removed-methods-not-found", Builder(Wire.LEGACY).ev).skip_reason == "not-applicable"


def test_noise_on_stdout_fails_framing_even_without_a_wire() -> None:
    b = Builder(Wire.NONE)
    v = verdict("tasks-wire-framing", b.ev)
    assert v.skip_reason == "could-not-run" and v.blocked_by == "tasks-wire-resolvable"
    b.unmatched.append(b.log.record("in", "stdio", b"hello", flags=[FrameFlag.NOT_JSON]))
    v = verdict("tasks-wire-framing", b.ev)
    assert v.status == "failed" and "not JSON" in v.message


def test_a_handshake_that_asked_nothing_is_no_missing_wire() -> None:
    """An interrupt that lands before the handshake's first request leaves no reply at all:
    tasks-wire-resolvable could not run (the runner says the run was interrupted); it does not fail
    "no era answered" on no frame (an --era both run reported an interrupted era as one without a
    tasks wire)."""
    from tasks_conformance.core.causes import CauseKind

    spec = CHECKS["tasks-wire-resolvable"]
    ev = Evidence(wire_log=WireLog(), discovery=Discovery(wire=Wire.NONE), transport="stdio")
    assert spec.judges[Wire.NONE].fn(ev).skip_reason == "could-not-run"
    verdict = judge(spec, ev, interrupted=True)
    assert verdict.skip_reason == "could-not-run" and verdict.cause is not None
    assert verdict.cause.kind is CauseKind.INTERRUPTED
    # A handshake that asked and was answered without a wire still fails.
    answered = Discovery(wire=Wire.NONE, looked_for=["2025-11-25: no capabilities.tasks"])
    assert spec.judges[Wire.NONE].fn(replace(ev, discovery=answered)).status == "failed"
