"""Checks of the extension wire's deeper rules, judged on hand-built evidence (no server):
durability of a created task, what a task subscription may carry, how guessable task ids are, and input requests."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from helpers.evidence import Builder, verdict

from tasks_conformance.core.causes import reason
from tasks_conformance.core.rpc.peer import Reply
from tasks_conformance.core.wirelog import HttpMeta
from tasks_conformance.core.wires import Wire
from tasks_conformance.server.checks.security import read_ids
from tasks_conformance.server.evidence import (
    BaseHttp,
    DeclaredCall,
    Durability,
    HttpOutcome,
    LegacyDeclaresExtension,
    Listen,
    Poll,
    StaleInput,
    StopReason,
    TaskIds,
    UndeclaredInput,
    Update,
)

TASK = {"taskId": "t1", "status": "working", "createdAt": "2026-01-01T00:00:00Z",
        "lastUpdatedAt": "2026-01-01T00:00:00Z", "ttlMs": 60000}
UNKNOWN = {"error": {"code": -32602, "message": "Unknown task"}}
FOUND = {"result": {"resultType": "complete", **TASK}}


def _created(b: Builder) -> Durability:
    b.call(DeclaredCall, {"result": {"resultType": "task", **TASK}})
    rec: Durability = b.record(Durability)
    rec.task_id = "t1"
    return rec


def test_an_immediate_read_that_finds_the_task_passes_and_says_the_second_connection_does_not_apply() -> None:
    b = Builder()
    rec = _created(b)
    rec.immediate = b.exchange("tasks/get", {"taskId": "t1"}, FOUND)
    rec.fresh_not_applicable = "over stdio the connection is the session"
    v = verdict("tasks-created-task-durable", b.ev)
    assert v.status == "passed" and "does not apply: over stdio" in v.message


def test_an_immediate_read_that_does_not_find_the_task_fails() -> None:
    b = Builder()
    rec = _created(b)
    rec.immediate = b.exchange("tasks/get", {"taskId": "t1"}, UNKNOWN)
    v = verdict("tasks-created-task-durable", b.ev)
    assert v.status == "failed" and "S-EXT-MUST-05" in v.message and "-32602" in v.message


def test_an_immediate_read_about_another_task_fails() -> None:
    b = Builder()
    rec = _created(b)
    rec.immediate = b.exchange("tasks/get", {"taskId": "t1"}, {"result": {**FOUND["result"], "taskId": "t2"}})
    v = verdict("tasks-created-task-durable", b.ev)
    assert v.status == "failed" and "'t2'" in v.message


def test_a_fresh_connection_that_cannot_find_the_task_fails_as_derived_and_one_that_can_passes() -> None:
    b = Builder()
    rec = _created(b)
    rec.immediate = b.exchange("tasks/get", {"taskId": "t1"}, FOUND)
    rec.fresh = b.exchange("tasks/get", {"taskId": "t1"}, UNKNOWN)
    v = verdict("tasks-created-task-durable", b.ev)
    assert v.status == "failed" and "brand-new HTTP connection" in v.message and "derived" in v.message
    assert "P-28" in v.message
    rec.fresh = b.exchange("tasks/get", {"taskId": "t1"}, FOUND)
    assert verdict("tasks-created-task-durable", b.ev).status == "passed"


def test_a_fresh_connection_without_an_answer_is_could_not_run_not_a_failure() -> None:
    b = Builder()
    rec = _created(b)
    rec.immediate = b.exchange("tasks/get", {"taskId": "t1"}, FOUND)
    rec.fresh = Reply("tasks/get", 9, rec.immediate.request_seq, transport_problem="connection refused")
    v = verdict("tasks-created-task-durable", b.ev)
    assert v.skip_reason == "could-not-run"


def test_durability_is_judged_on_the_extension_only() -> None:
    assert verdict("tasks-created-task-durable", Builder(Wire.LEGACY).ev).skip_reason == "not-applicable"


def _listen(b: Builder, extra: list[dict[str, Any]], *, http: bool = False) -> Listen:
    b.call(DeclaredCall, {"result": {"resultType": "task", **TASK}})
    rec: Listen = b.record(Listen)
    rec.task_id = "t1"
    out = b.log.record("out", "http" if http else "stdio", json.dumps(
        {"jsonrpc": "2.0", "id": 7, "method": "subscriptions/listen",
         "params": {"notifications": {"taskIds": ["t1"]}}}).encode())
    meta = HttpMeta("POST", "http://127.0.0.1/mcp", 200) if http else None
    sub = {"io.modelcontextprotocol/subscriptionId": 7}
    msgs = [{"method": "notifications/subscriptions/acknowledged",
             "params": {"notifications": {"taskIds": ["t1"]}, "_meta": sub}},
            *extra,
            {"method": "notifications/tasks", "params": {**TASK, "status": "completed", "result": {}, "_meta": sub}}]
    for m in msgs:
        f = b.log.record("in", "sse" if http else "stdio", json.dumps({"jsonrpc": "2.0", **m}).encode(),
                         http=meta, reply_to=out.seq if http else None)
        rec.frames.append(f.seq)
    end = b.log.record("in", "sse" if http else "stdio", json.dumps(
        {"jsonrpc": "2.0", "id": 7, "result": {"resultType": "complete", "_meta": sub}}).encode(),
        http=meta, reply_to=out.seq if http else None)
    rec.listen = Reply("subscriptions/listen", 7, out.seq, end.seq, result={"resultType": "complete"})
    return rec


PROGRESS = {"method": "notifications/progress", "params": {"progressToken": "p", "progress": 1}}
LOG = {"method": "notifications/message", "params": {"level": "info", "data": "x"}}


def test_a_clean_subscription_passes() -> None:
    b = Builder()
    _listen(b, [])
    v = verdict("tasks-subscription-no-progress-or-message", b.ev)
    assert v.status == "passed" and not v.warnings


def test_a_tagged_log_message_on_the_subscription_fails() -> None:
    b = Builder()
    tagged = {**LOG, "params": {**LOG["params"], "_meta": {"io.modelcontextprotocol/subscriptionId": 7}}}
    _listen(b, [tagged])
    v = verdict("tasks-subscription-no-progress-or-message", b.ev)
    assert v.status == "failed" and "S-EXT-MUST-21" in v.message and "notifications/message" in v.message


def test_untagged_progress_fails_over_http_and_only_warns_on_a_shared_stream() -> None:
    b = Builder()
    _listen(b, [PROGRESS], http=True)
    v = verdict("tasks-subscription-no-progress-or-message", replace(b.ev, transport="http"))
    assert v.status == "failed" and "notifications/progress" in v.message
    b = Builder()
    _listen(b, [PROGRESS])
    v = verdict("tasks-subscription-no-progress-or-message", b.ev)
    assert v.status == "passed" and any(w.policies == ("P-29",) for w in v.warnings)


def test_an_unimplemented_listen_is_not_applicable() -> None:
    b = Builder()
    rec = _listen(b, [])
    rec.listen = b.exchange("subscriptions/listen", {}, {"error": {"code": -32601, "message": "nope"}})
    assert verdict("tasks-subscription-no-progress-or-message", b.ev).skip_reason == "not-applicable"


def _ids(b: Builder, ids: list[str]) -> None:
    b.call(DeclaredCall, {"result": {"resultType": "task", **{**TASK, "taskId": ids[0]}}})
    rec: TaskIds = b.record(TaskIds)
    rec.ids = list(ids)
    for tid in ids[1:]:
        rec.calls.append(b.exchange("tools/call", {"name": "slow"}, {"result": {"resultType": "task",
                                                                                  **{**TASK, "taskId": tid}}}))


def test_random_ids_pass_without_a_warning() -> None:
    b = Builder()
    _ids(b, ["olBKYEa6H6QClB9FJ92H_mXE", "Zq3-9fJk2LpQw8RtYv1Xn0aB", "c7Hh2Kd9_Pp4Ww1Ee6Rr8Tt0"])
    v = verdict("tasks-task-id-entropy", b.ev)
    assert v.status == "passed" and not v.warnings


def test_uuids_pass_and_their_dashes_are_not_counted_as_entropy() -> None:
    ids = ["3f1c2a9e-7b4d-4e21-9c55-0a8f6d3e2b17", "b8e04d6c-1f3a-4a92-8d7e-5c2b9f0e4a61",
           "6a9d3e1f-c2b8-47f5-a0e3-9d1c7b5f2e08"]
    reading = read_ids(ids)
    assert reading.alphabet == 16 and reading.varying_chars == 32
    b = Builder()
    _ids(b, ids)
    assert verdict("tasks-task-id-entropy", b.ev).status == "passed"


def test_a_counter_after_a_shared_prefix_fails_and_numeric_ids_stepping_by_one_fail() -> None:
    for ids in (["task-1", "task-2", "task-3"], ["41", "42", "44"], ["job-0009", "job-0010", "job-0011"]):
        b = Builder()
        _ids(b, ids)
        v = verdict("tasks-task-id-entropy", b.ev)
        assert v.status == "failed" and "sequential" in v.message and "S-EXT-MUST-22" in v.message, ids


def test_growing_numbers_with_big_steps_and_short_ids_only_warn() -> None:
    b = Builder()
    _ids(b, ["1733044000123", "1733044000457", "1733044000990"])
    v = verdict("tasks-task-id-entropy", b.ev)
    assert v.status == "passed" and any("grows" in w.text and w.policies == ("P-30",) for w in v.warnings)
    assert any("bits" in w.text for w in v.warnings)  # only the last three digits vary
    b = Builder()
    _ids(b, ["ab12", "x9kq", "m3zz"])
    v = verdict("tasks-task-id-entropy", b.ev)
    assert v.status == "passed" and len(v.warnings) == 1 and "bits" in v.warnings[0].text


def test_the_same_id_for_two_tasks_fails() -> None:
    b = Builder()
    _ids(b, ["olBKYEa6H6QClB9FJ92H_mXE", "olBKYEa6H6QClB9FJ92H_mXE"])
    assert verdict("tasks-task-id-entropy", b.ev).status == "failed"


def test_one_task_only_is_could_not_run() -> None:
    b = Builder()
    b.call(DeclaredCall, {"result": {"resultType": "task", **TASK}})
    rec: TaskIds = b.record(TaskIds)
    rec.ids = ["t1"]
    rec.calls.append(b.exchange("tools/call", {"name": "slow"}, {"error": {"code": -32603, "message": "busy"}}))
    v = verdict("tasks-task-id-entropy", b.ev)
    assert v.skip_reason == "could-not-run" and "-32603" in v.message


CONFIRM = {"method": "elicitation/create", "params": {"mode": "form", "message": "ok?", "requestedSchema": {}}}
INPUT_TASK = {**TASK, "resultType": "complete", "status": "input_required"}
FULL_CAPS = {"extensions": {"io.modelcontextprotocol/tasks": {}}, "elicitation": {"form": {}}}
BARE_CAPS = {"extensions": {"io.modelcontextprotocol/tasks": {}}}


def _meta(caps: dict[str, Any]) -> dict[str, Any]:
    return {"_meta": {"io.modelcontextprotocol/clientCapabilities": caps}}


def _polled(b: Builder, tasks: list[dict[str, Any]], caps: dict[str, Any] = FULL_CAPS) -> Poll:
    b.call(DeclaredCall, {"result": {"resultType": "task", **TASK}}, params={"name": "confirm", **_meta(caps)})
    poll: Poll = b.record(Poll)
    for task in tasks:
        poll.gets.append(b.exchange("tasks/get", {"taskId": "t1", **_meta(caps)}, {"result": task}))
        poll.statuses.append(task["status"])
    poll.stop = StopReason.TERMINAL
    return poll


def test_a_key_that_keeps_its_request_passes_and_one_reused_for_another_request_fails() -> None:
    done = {**TASK, "resultType": "complete", "status": "completed", "result": {}}
    b = Builder()
    _polled(b, [{**INPUT_TASK, "inputRequests": {"k": CONFIRM}}, {**INPUT_TASK, "inputRequests": {"k": CONFIRM}},
                done])
    assert verdict("tasks-input-request-keys-unique", b.ev).status == "passed"
    other = {**CONFIRM, "params": {**CONFIRM["params"], "message": "something else?"}}
    b = Builder()
    _polled(b, [{**INPUT_TASK, "inputRequests": {"k": CONFIRM}}, {**INPUT_TASK, "inputRequests": {"k": other}},
                done])
    v = verdict("tasks-input-request-keys-unique", b.ev)
    assert v.status == "failed" and "S-EXT-MUST-14" in v.message and "'k'" in v.message
    b = Builder()
    _polled(b, [done])
    assert verdict("tasks-input-request-keys-unique", b.ev).skip_reason == "not-applicable"


def _bare_task(b: Builder, reads: list[dict[str, Any]]) -> None:
    rec: UndeclaredInput = b.record(UndeclaredInput)
    rec.create = b.exchange("tools/call", {"name": "confirm", **_meta(BARE_CAPS)},
                            {"result": {"resultType": "task", **{**TASK, "taskId": "t2"}}})
    rec.task_id = "t2"
    for task in reads:
        rec.gets.append(b.exchange("tasks/get", {"taskId": "t2", **_meta(BARE_CAPS)}, {"result": task}))


def test_an_elicitation_nobody_declared_fails_and_a_task_that_asks_nothing_passes() -> None:
    failed_task = {**TASK, "resultType": "complete", "status": "failed", "error": {"code": -32021, "message": "x"}}
    b = Builder()
    _polled(b, [{**INPUT_TASK, "inputRequests": {"k": CONFIRM}}])
    _bare_task(b, [failed_task])
    v = verdict("tasks-input-requests-declared-only", b.ev)
    assert v.status == "passed" and not v.warnings
    b = Builder()
    _polled(b, [{**INPUT_TASK, "inputRequests": {"k": CONFIRM}}])
    _bare_task(b, [{**INPUT_TASK, "taskId": "t2", "inputRequests": {"k": CONFIRM}}])
    v = verdict("tasks-input-requests-declared-only", b.ev)
    assert v.status == "failed" and "S-EXT-MUST-34" in v.message and "without input capabilities" in v.message


def test_an_elicitation_declared_on_polls_only_warns_and_sampling_never_declared_fails() -> None:
    b = Builder()
    b.call(DeclaredCall, {"result": {"resultType": "task", **TASK}}, params={"name": "confirm", **_meta(BARE_CAPS)})
    poll: Poll = b.record(Poll)
    poll.gets.append(b.exchange("tasks/get", {"taskId": "t1", **_meta(FULL_CAPS)},
                                {"result": {**INPUT_TASK, "inputRequests": {"k": CONFIRM}}}))
    _bare_task(b, [])
    v = verdict("tasks-input-requests-declared-only", b.ev)
    assert v.status == "passed" and any(w.policies == ("P-08",) for w in v.warnings)
    b = Builder()
    sampling = {"method": "sampling/createMessage", "params": {"messages": [], "maxTokens": 5}}
    _polled(b, [{**INPUT_TASK, "inputRequests": {"s": sampling}}])
    _bare_task(b, [])
    v = verdict("tasks-input-requests-declared-only", b.ev)
    assert v.status == "failed" and "sampling/createMessage" in v.message


def _stale(b: Builder, answer: dict[str, Any]) -> None:
    poll = _polled(b, [{**INPUT_TASK, "inputRequests": {"k": CONFIRM}}])
    poll.updates.append(Update(("k",), b.exchange("tasks/update", {"taskId": "t1"},
                                                  {"result": {"resultType": "complete"}})))
    rec: StaleInput = b.record(StaleInput)
    rec.task_id, rec.keys = "t1", ["k", "tasks-conformance-never-asked"]
    rec.update = b.exchange("tasks/update", {"taskId": "t1"}, answer)


def test_stale_answers_acked_pass_32602_warns_and_32603_fails() -> None:
    b = Builder()
    _stale(b, {"result": {"resultType": "complete"}})
    v = verdict("tasks-input-stale-responses-ignored", b.ev)
    assert v.status == "passed" and not v.warnings
    b = Builder()
    _stale(b, {"error": {"code": -32602, "message": "not outstanding"}})
    v = verdict("tasks-input-stale-responses-ignored", b.ev)
    assert v.status == "passed" and any("S-EXT-SHOULD-03" in w.text for w in v.warnings)
    b = Builder()
    _stale(b, {"error": {"code": -32603, "message": "boom"}})
    v = verdict("tasks-input-stale-responses-ignored", b.ev)
    assert v.status == "failed" and "P-21" in v.message


def test_stale_answers_are_not_applicable_when_the_task_never_asked() -> None:
    b = Builder()
    _polled(b, [{**TASK, "resultType": "complete", "status": "completed", "result": {}}])
    assert verdict("tasks-input-stale-responses-ignored", b.ev).skip_reason == "not-applicable"


def _legacy_session(b: Builder, init: dict[str, Any], call: dict[str, Any] | None) -> None:
    rec: LegacyDeclaresExtension = b.record(LegacyDeclaresExtension)
    rec.initialize = b.exchange("initialize", {"protocolVersion": "2025-11-25"}, init)
    if call is not None:
        rec.call = b.exchange("tools/call", {"name": "slow"}, call)


def test_a_legacy_session_listing_the_extension_must_not_get_a_flat_create_task_result() -> None:
    ok_init = {"result": {"protocolVersion": "2025-11-25", "capabilities": {}}}
    b = Builder()
    _legacy_session(b, ok_init, {"result": {"content": []}})
    assert verdict("tasks-extension-in-initialize-ignored", b.ev).status == "passed"
    b = Builder()
    _legacy_session(b, ok_init, {"result": {"resultType": "task", **TASK}})
    v = verdict("tasks-extension-in-initialize-ignored", b.ev)
    assert v.status == "failed" and "S-EXT-MUST-28" in v.message


def test_a_server_without_the_legacy_era_is_not_applicable() -> None:
    b = Builder()
    _legacy_session(b, {"error": {"code": -32022, "message": "extension only"}}, None)
    assert verdict("tasks-extension-in-initialize-ignored", b.ev).skip_reason == "not-applicable"
    b = Builder()
    rec: LegacyDeclaresExtension = b.record(LegacyDeclaresExtension)
    rec.ran, rec.not_run = False, reason("the stdio transport cannot open a second connection", "use --url")
    rec.no_second_connection = True
    assert verdict("tasks-extension-in-initialize-ignored", b.ev).skip_reason == "not-applicable"
    # Read from the record's field, not its words: a second connection that failed to open is no freedom.
    rec.no_second_connection = False
    assert verdict("tasks-extension-in-initialize-ignored", b.ev).skip_reason == "could-not-run"


def _extension_exchange(b: Builder, answer: dict[str, Any], rid: int) -> None:
    envelope = {"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}
    b.log.record("out", "stdio", json.dumps({"jsonrpc": "2.0", "id": rid, "method": "tools/list",
                                             "params": envelope}).encode())
    b.log.record("in", "stdio", json.dumps({"jsonrpc": "2.0", "id": rid, **answer}).encode())


def test_results_without_server_info_and_reserved_error_codes_only_warn() -> None:
    info = {"io.modelcontextprotocol/serverInfo": {"name": "s", "version": "1"}}
    b = Builder()
    _extension_exchange(b, {"result": {"resultType": "complete", "tools": [], "_meta": info}}, 1)
    v = verdict("tasks-base-result-type-present", b.ev)
    assert v.status == "passed" and not v.warnings
    _extension_exchange(b, {"result": {"resultType": "complete", "tools": []}}, 2)
    _extension_exchange(b, {"error": {"code": -32005, "message": "server busy"}}, 3)
    _extension_exchange(b, {"error": {"code": -32021, "message": "missing capability"}}, 4)  # defined: fine
    v = verdict("tasks-base-result-type-present", b.ev)
    assert v.status == "passed" and len(v.warnings) == 2
    assert "S-CORE-SHOULD-01" in v.warnings[0].text and "1 of 2" in v.warnings[0].text
    assert "S-CORE-SHOULD-03" in v.warnings[1].text and "1 errors" in v.warnings[1].text


def test_the_http_endpoint_checks_are_not_applicable_off_http() -> None:
    b = Builder()
    for check_id in ("tasks-base-unknown-method-not-found", "tasks-base-notification-accepted",
                     "tasks-base-foreign-origin-forbidden", "tasks-base-mcp-name-base64"):
        assert verdict(check_id, b.ev).skip_reason == "not-applicable", check_id


def _endpoint(b: Builder, **outcomes: Any) -> BaseHttp:
    rec: BaseHttp = b.record(BaseHttp)
    for name, value in outcomes.items():
        setattr(rec, name, value)
    return rec


def test_unknown_method_needs_404_and_get_delete_other_than_405_warn() -> None:
    b = Builder()
    reply = b.exchange("x/y", {}, {"error": {"code": -32601, "message": "nope"}})
    reply.http = HttpMeta("POST", "http://h/mcp", 404)
    out = b.log.record("out", "http", b"")
    _endpoint(b, unknown_method=reply, get=HttpOutcome(out.seq, 405), delete=HttpOutcome(out.seq, 200))
    v = verdict("tasks-base-unknown-method-not-found", replace(b.ev, transport="http"))
    assert v.status == "passed" and len(v.warnings) == 1 and "DELETE" in v.warnings[0].text
    reply.http = HttpMeta("POST", "http://h/mcp", 200)
    v = verdict("tasks-base-unknown-method-not-found", replace(b.ev, transport="http"))
    assert v.status == "failed" and "HTTP 200, not 404" in v.message


def test_a_notification_needs_202_without_a_body() -> None:
    b = Builder()
    out = b.log.record("out", "http", b"{}")
    _endpoint(b, notification=HttpOutcome(out.seq, 202))
    assert verdict("tasks-base-notification-accepted", replace(b.ev, transport="http")).status == "passed"
    _endpoint(b, notification=HttpOutcome(out.seq, 200))
    assert verdict("tasks-base-notification-accepted", replace(b.ev, transport="http")).status == "failed"
    _endpoint(b, notification=HttpOutcome(out.seq, 202, body=True))
    assert verdict("tasks-base-notification-accepted", replace(b.ev, transport="http")).status == "failed"
    # A server that cannot accept a notification may answer an HTTP error (the transport says so):
    # a freedom, so the check is not applicable and the run stays complete (issue 23).
    _endpoint(b, notification=HttpOutcome(out.seq, 400))
    v = verdict("tasks-base-notification-accepted", replace(b.ev, transport="http"))
    assert v.skip_reason == "not-applicable" and "which the transport allows" in v.message


def test_an_input_required_result_to_tasks_get_fails_but_one_to_tools_call_passes() -> None:
    b = Builder()
    _extension_exchange(b, {"result": {"resultType": "complete", "tools": []}}, 1)
    envelope = {"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}
    b.log.record("out", "stdio", json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                                             "params": {"name": "x", **envelope}}).encode())
    b.log.record("in", "stdio", json.dumps({"jsonrpc": "2.0", "id": 2, "result": {
        "resultType": "input_required", "inputRequests": {}}}).encode())
    assert verdict("tasks-base-input-required-where-allowed", b.ev).status == "passed"
    b.log.record("out", "stdio", json.dumps({"jsonrpc": "2.0", "id": 3, "method": "tasks/get",
                                             "params": {"taskId": "t1", **envelope}}).encode())
    b.log.record("in", "stdio", json.dumps({"jsonrpc": "2.0", "id": 3, "result": {
        "resultType": "input_required", "inputRequests": {}}}).encode())
    v = verdict("tasks-base-input-required-where-allowed", b.ev)
    assert v.status == "failed" and "tasks/get" in v.message and "S-CORE-MUST-11" in v.message
