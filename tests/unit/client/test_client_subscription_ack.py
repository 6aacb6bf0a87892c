"""tasks-client-subscription-ack (C-EXT-SHOULD-11) on hand-built evidence: a task the subscription's
acknowledgement leaves out (taskIds without it, or no taskIds at all, P-22) is polled to its end
after the acknowledgement, or the check warns; a client that does not subscribe, or whose
acknowledgement covered its task, is not judged. The reference client and its breaking variant
run as processes in the client-mode tests."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from tasks_conformance.client.checks import CLIENT_CHECKS
from tasks_conformance.client.evidence import Exchange, ScenarioRun
from tasks_conformance.client.launch import ClientRun
from tasks_conformance.client.scenarios import BY_NAME

JSON = dict[str, Any]
CHECK = SCENARIO = "tasks-client-subscription-ack"
TASK = "task-1"
LISTEN_ID = 9


def _request(seq: int, at: float, method: str, params: JSON, result: JSON | None) -> Exchange:
    rid = seq
    reply = None if result is None else {"jsonrpc": "2.0", "id": rid, "result": result}
    return Exchange(seq, at, {"jsonrpc": "2.0", "id": rid, "method": method, "params": params}, None,
                    seq + 100 if reply else None, at + 0.01 if reply else None, reply)


def _get(seq: int, at: float, status: str) -> Exchange:
    return _request(seq, at, "tasks/get", {"taskId": TASK}, {"resultType": "complete", "taskId": TASK,
                                                             "status": status})


def _run(*after_ack: Exchange, agreed: list[str] | None = None, listen: bool = True,
         timed_out: bool = False) -> ScenarioRun:
    """tools/call (a task), the listen for it at 0.1 s and its acknowledgement at 0.11 s (agreeing
    to `agreed`; None: an acknowledgement with no taskIds), then `after_ack`."""
    create = _request(1, 0.0, "tools/call", {"name": "scripted_task"},
                      {"resultType": "task", "taskId": TASK, "status": "working", "pollIntervalMs": 200})
    out = [create]
    acks: list[Exchange] = []
    if listen:
        out.append(Exchange(LISTEN_ID, 0.1, {"jsonrpc": "2.0", "id": LISTEN_ID, "method": "subscriptions/listen",
                                             "params": {"notifications": {"taskIds": [TASK]}}}, None))
        notifications: JSON = {} if agreed is None else {"taskIds": agreed}
        acks.append(Exchange(50, 0.11, {"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged",
                                        "params": {"notifications": notifications,
                                                   "_meta": {"io.modelcontextprotocol/subscriptionId": LISTEN_ID}}},
                             None))
    client = ClientRun(("client",), True, 0, timed_out, 1.0, "", "", None)
    run = ScenarioRun(BY_NAME[SCENARIO], "extension", client, (*out, *after_ack), reached=True)
    return dataclasses.replace(run, server_requests=tuple(acks))


def _judge(run: ScenarioRun) -> Any:
    return CLIENT_CHECKS[CHECK].judge([run])


@pytest.mark.parametrize("agreed", [[], None], ids=["taskIds-without-it", "no-taskIds"])
def test_a_task_left_out_and_polled_to_its_end_passes(agreed: list[str] | None) -> None:
    verdict = _judge(_run(_get(10, 0.3, "working"), _get(11, 0.5, "completed"), agreed=agreed))
    assert verdict.status == "passed" and not verdict.warnings and 50 in verdict.evidence


def test_a_task_left_out_and_not_polled_on_warns_should_11() -> None:
    verdict = _judge(_run(_get(10, 0.05, "working")))  # its one poll came before the acknowledgement
    assert verdict.status == "passed" and len(verdict.warnings) == 1
    assert "C-EXT-SHOULD-11" in str(verdict.warnings[0]) and "frame #50" in str(verdict.warnings[0])


def test_a_client_stopped_at_its_timeout_is_not_warned() -> None:
    assert not _judge(_run(timed_out=True)).warnings


def test_a_client_that_does_not_subscribe_or_whose_task_was_covered_is_not_judged() -> None:
    assert _judge(_run(_get(10, 0.3, "completed"), listen=False)).skip_reason == "not-applicable"
    assert _judge(_run(agreed=[TASK])).skip_reason == "not-applicable"
