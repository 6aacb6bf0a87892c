"""tasks-client-request-cancellation (C-CORE-MUST-09, policy P-56) on hand-built evidence: a call
cancelled in flight on stdio with notifications/cancelled, over HTTP by closing its stream (no
reply recorded); over HTTP a notification with the stream left open to the answer fails, and in any
scenario one naming an id never sent; one naming a long-answered request or sent over HTTP warns;
one naming a task's creating tools/call is the cancel check's; a client that does not cancel is not
judged. The reference client and its breaking variants run as processes in the client-mode tests."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from tasks_conformance.client.checks import CLIENT_CHECKS
from tasks_conformance.client.evidence import Exchange, ScenarioRun
from tasks_conformance.client.launch import ClientRun
from tasks_conformance.client.scenarios import BY_NAME

JSON = dict[str, Any]
CHECK = "tasks-client-request-cancellation"
SLOW = "tasks-client-request-cancel"
RESULT: JSON = {"resultType": "complete", "content": [], "isError": False}


def _call(rid: int, at: float, answered_at: float | None, result: JSON | None = None) -> Exchange:
    message = {"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": {"name": "scripted_task"}}
    reply = None if answered_at is None else {"jsonrpc": "2.0", "id": rid, "result": result or RESULT}
    return Exchange(2 * rid, at, message, None, 2 * rid + 1 if reply else None, answered_at, reply)


def _cancelled(seq: int, rid: Any, at: float) -> Exchange:
    return Exchange(seq, at, {"jsonrpc": "2.0", "method": "notifications/cancelled",
                              "params": {"requestId": rid, "reason": "user"}}, None)


def _run(*exchanges: Exchange, scenario: str = SLOW, transport: str = "stdio") -> ScenarioRun:
    client = ClientRun(("client",), True, 0, False, 1.0, "", "", {"status": "cancelled"})
    return ScenarioRun(BY_NAME[scenario], "extension", client, tuple(exchanges), reached=True, transport=transport)


def _judge(*runs: ScenarioRun) -> Any:
    return CLIENT_CHECKS[CHECK].judge(list(runs))


def test_a_call_cancelled_in_flight_with_notifications_cancelled_on_stdio_passes() -> None:
    verdict = _judge(_run(_call(1, 0.0, None), _cancelled(10, 1, 0.3)))
    assert verdict.status == "passed" and not verdict.warnings and "1 request" in verdict.message


def test_a_call_whose_http_stream_was_closed_before_its_answer_passes() -> None:
    verdict = _judge(_run(_call(1, 0.0, None), transport="http"))
    assert verdict.status == "passed" and not verdict.warnings


def test_over_http_a_notification_with_the_stream_left_open_fails() -> None:
    verdict = _judge(_run(_call(1, 0.0, 3.0), _cancelled(10, 1, 0.3), transport="http"))
    assert verdict.status == "failed" and verdict.broken == ("C-CORE-MUST-09",)
    assert "stayed open" in verdict.details["actual"] and verdict.details["expected"]


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_a_notification_naming_an_id_never_sent_fails_in_any_scenario(transport: str) -> None:
    run = _run(_call(1, 0.0, 0.1), _cancelled(10, 99, 0.3), scenario="tasks-client-lifecycle", transport=transport)
    verdict = _judge(run)
    assert verdict.status == "failed" and "99" in verdict.message and verdict.evidence == (10,)


def test_a_cancel_of_a_request_answered_long_before_warns_p56_and_is_no_cancel_in_flight() -> None:
    run = _run(_call(1, 0.0, 0.1), _cancelled(10, 1, 2.0), scenario="tasks-client-lifecycle")
    verdict = _judge(run)
    assert verdict.skip_reason == "not-applicable" and [w.policies for w in verdict.warnings] == [("P-56",)]
    assert "no longer in progress" in verdict.warnings[0].text


def test_an_id_used_again_once_answered_names_the_request_sent_before_the_cancel() -> None:
    """A cancel names the latest request of its id sent before it: a later request may reuse the id."""
    verdict = _judge(_run(_call(1, 0.0, None), _cancelled(10, 1, 0.3), _call(1, 0.5, 0.6)))
    assert verdict.status == "passed" and not verdict.warnings, verdict


def test_a_notification_without_a_request_id_fails() -> None:
    bare = Exchange(10, 0.3, {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {}}, None)
    verdict = _judge(_run(_call(1, 0.0, None), bare))
    assert verdict.status == "failed" and "carries no requestId" in verdict.message


def test_an_http_client_that_crashed_before_the_answer_did_not_cancel() -> None:
    run = _run(_call(1, 0.0, None), transport="http")
    crashed = dataclasses.replace(run, client=dataclasses.replace(run.client, exit_code=1))
    assert _judge(crashed).skip_reason == "not-applicable"


def test_a_notification_over_http_besides_the_closed_stream_warns_p56() -> None:
    verdict = _judge(_run(_call(1, 0.0, None), _cancelled(10, 1, 0.3), transport="http"))
    assert verdict.status == "passed" and "no notifications/cancelled is expected" in verdict.warnings[0].text


def test_the_creating_tools_call_of_a_task_is_left_to_the_cancel_check() -> None:
    created = _call(1, 0.0, 0.1, {"resultType": "task", "taskId": "t-1", "status": "working"})
    assert _judge(_run(created, _cancelled(10, 1, 0.5), scenario="tasks-client-cancel")).skip_reason == \
        "not-applicable"


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_a_client_that_lets_the_call_run_is_not_judged(transport: str) -> None:
    verdict = _judge(_run(_call(1, 0.0, 3.0), transport=transport))
    assert verdict.skip_reason == "not-applicable" and "cancelRequest" in verdict.message
