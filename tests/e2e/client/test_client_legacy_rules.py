"""The 2025-11-25 client rules read from the traffic every legacy scenario makes
(client/checks/legacy_rules.py), on hand-built evidence: a nested CreateTaskResult followed, or
taken for the call's result (C-LEG-MUST-04, policy P-53); a plain result to an augmented call
reported as something else (P-53); a task left while it works, waiting for a status notification
the server never sends (C-LEG-MUST-06) or after a tasks/result stream ended (C-LEG-SHOULD-03,
policy P-51); the freedoms both accept. The real clients of fixtures/broken_client.py for these
rules are run by tests/e2e/client/test_client_legacy.py; the freedoms as processes here."""

from __future__ import annotations

import dataclasses
import sys
from typing import Any

import anyio
import pytest
from helpers.paths import FIXTURES
from helpers.zygote import forked

from tasks_conformance.client.checks import CLIENT_CHECKS
from tasks_conformance.client.evidence import Exchange, ScenarioRun
from tasks_conformance.client.launch import ClientRun
from tasks_conformance.client.runner import ClientConfig, execute_client
from tasks_conformance.client.scenarios import BY_NAME
from tasks_conformance.core.protocol import ERR_INVALID_PARAMS
from tasks_conformance.core.wirelog import HttpMeta

JSON = dict[str, Any]
BROKEN = FIXTURES / "broken_client.py"
TASK = "t-1"
DECLARED: JSON = {"tasks": {"requests": {"tools": {"call": {}}}, "cancel": {}, "list": {}}}
REQUIRED = "tasks-client-legacy-required"
READS, KEEPS = "tasks-client-legacy-reads-create-result", "tasks-client-legacy-keeps-polling"
GET_STREAM_CHECK = "tasks-client-legacy-get-stream"
COMPLETED: JSON = {"status": "completed", "isError": False, "error": None}
WORKING: JSON = {"status": "working", "isError": False, "error": None}


def _task(status: str) -> JSON:
    return {"result": {"taskId": TASK, "status": status, "ttl": 600_000, "pollInterval": 200}}


def _run(scenario: str, *steps: tuple[str, JSON, JSON | None], outcome: JSON | None = None) -> ScenarioRun:
    """initialize, then each (method, params, the answer's result/error object or None: none came),
    300 ms apart."""
    init: tuple[str, JSON, JSON | None] = (
        "initialize", {"protocolVersion": "2025-11-25", "capabilities": {}},
        {"result": {"protocolVersion": "2025-11-25", "capabilities": DECLARED}})
    out = []
    for i, (method, params, reply) in enumerate((init, *steps)):
        message = {"jsonrpc": "2.0", "id": i, "method": method, "params": params}
        body = None if reply is None else {"jsonrpc": "2.0", "id": i, **reply}
        out.append(Exchange(2 * i + 1, 0.3 * i, message, None, 2 * i + 2 if body else None,
                            0.3 * i + 0.01 if body else None, body))
    client = ClientRun((), True, 0, False, 1.0, "", "", outcome)
    return ScenarioRun(BY_NAME[scenario], "legacy", client, tuple(out), reached=True)


def _create() -> tuple[str, JSON, JSON | None]:
    return ("tools/call", {"name": "required_task", "arguments": {}, "task": {}},
            {"result": {"task": _task("working")["result"]}})


def _get(status: str) -> tuple[str, JSON, JSON | None]:
    return ("tasks/get", {"taskId": TASK}, _task(status))


def _result(answered: bool = True) -> tuple[str, JSON, JSON | None]:
    return ("tasks/result", {"taskId": TASK}, {"result": {"content": [], "isError": False}} if answered else None)


def _judge(check_id: str, *runs: ScenarioRun) -> Any:
    return CLIENT_CHECKS[check_id].judge(list(runs))


# -- C-LEG-MUST-04 --------------------------------------------------------------------------


def test_a_followed_create_result_passes_and_one_taken_for_the_result_fails_must_04() -> None:
    followed = _run(REQUIRED, _create(), _get("completed"), _result(), outcome=COMPLETED)
    verdict = _judge(READS, followed)
    assert verdict.status == "passed" and not verdict.warnings
    taken = _run(REQUIRED, _create(), outcome=COMPLETED)
    verdict = _judge(READS, taken)
    assert verdict.status == "failed" and verdict.broken == ("C-LEG-MUST-04",) and verdict.evidence
    assert verdict.details["expected"] and verdict.details["actual"] and "P-53" in verdict.message_policies


def test_a_task_never_named_without_an_ended_outcome_is_left_to_keeps_polling() -> None:
    """No outcome line (or one that says working): it may be waiting for a notification (P-51),
    so reads-create-result does not judge it, and keeps-polling warns."""
    for outcome in (None, WORKING):
        run = _run(REQUIRED, _create(), outcome=outcome)
        assert _judge(READS, run).skip_reason == "not-applicable"
        verdict = _judge(KEEPS, run)
        assert verdict.status == "passed" and "C-LEG-MUST-06" in str(verdict.warnings[0])
    # Taken for the result: keeps-polling leaves it to reads-create-result.
    assert _judge(KEEPS, _run(REQUIRED, _create(), outcome=COMPLETED)).skip_reason == "not-applicable"


def test_a_plain_result_to_an_augmented_call_reported_otherwise_warns_p58() -> None:
    plain = ("tools/call", {"name": "scripted_task", "arguments": {}, "task": {}},
             {"result": {"content": [], "isError": False}})
    run = _run("tasks-client-legacy-undeclared", plain, outcome={"status": "unknown", "isError": False, "error": None})
    verdict = _judge(READS, run)
    assert verdict.status == "passed" and len(verdict.warnings) == 1
    assert "C-LEG-MUST-04" in str(verdict.warnings[0]) and verdict.warnings[0].policies == ("P-53",)
    verdict = _judge(READS, _run("tasks-client-legacy-undeclared", plain, outcome=COMPLETED))
    assert verdict.status == "passed" and not verdict.warnings


def test_the_cancel_check_is_not_applicable_for_a_client_that_took_the_create_result() -> None:
    run = _run("tasks-client-legacy-cancel", _create(), outcome=COMPLETED)
    verdict = _judge("tasks-client-legacy-cancels-with-tasks-cancel", run)
    assert verdict.skip_reason == "not-applicable" and "C-LEG-MUST-04" in verdict.message


# -- C-LEG-MUST-06, C-LEG-SHOULD-03 -----------------------------------------------------------


@pytest.mark.parametrize("steps", [
    (_create(), _get("working"), _get("completed"), _result()),
    (_create(), _get("working"), _get("input_required")),  # polls until input_required
    (_create(), ("tasks/cancel", {"taskId": TASK}, _task("cancelled"))),
    (_create(), ("tasks/get", {"taskId": TASK}, {"error": {"code": ERR_INVALID_PARAMS, "message": "not found"}})),
    (_create(), _result()),  # blocked in tasks/result until the task ended
    (_create(), _result(answered=False), _get("working"), _get("completed"), _result()),  # C-LEG-MAY-04
], ids=["polled-to-the-end", "input-required", "cancelled", "gone", "blocked-result", "dropped-stream"])
def test_a_task_followed_until_it_ends_passes(steps: tuple[tuple[str, JSON, JSON | None], ...]) -> None:
    verdict = _judge(KEEPS, _run(REQUIRED, *steps, outcome=COMPLETED))
    assert verdict.status == "passed" and not verdict.warnings, verdict.warnings


def test_a_task_left_working_warns_must_06_with_p56() -> None:
    verdict = _judge(KEEPS, _run(REQUIRED, _create(), _get("working"), outcome=WORKING))
    assert verdict.status == "passed" and len(verdict.warnings) == 1
    said = verdict.warnings[0]
    assert "C-LEG-MUST-06" in str(said) and "C-LEG-SHOULD-03" in str(said) and said.policies == ("P-51",)


def test_a_task_left_after_its_result_stream_ended_warns_should_03_only() -> None:
    verdict = _judge(KEEPS, _run(REQUIRED, _create(), _get("working"), _result(answered=False), outcome=WORKING))
    assert verdict.status == "passed" and len(verdict.warnings) == 1
    said = verdict.warnings[0]
    assert "C-LEG-SHOULD-03" in str(said) and "C-LEG-MUST-06" not in str(said) and said.policies == ()


def test_keeps_polling_without_a_task_is_not_applicable() -> None:
    plain = ("tools/call", {"name": "required_task", "arguments": {}}, {"result": {"content": [], "isError": False}})
    assert _judge(KEEPS, _run(REQUIRED, plain, outcome=COMPLETED)).skip_reason == "not-applicable"


# -- the freedoms, as processes ----------------------------------------------------------------


@pytest.mark.matrix
@pytest.mark.parametrize("freedom", ["legacy-drops-result-stream", "legacy-parallel-polls", "legacy-no-get-stream"])
def test_a_client_taking_the_freedom_passes_every_legacy_scenario_with_no_warning(freedom: str) -> None:
    """C-LEG-MAY-04 (an early tasks/result's stream dropped after 100 ms, over HTTP), C-LEG-MAY-05
    (the first poll sent twice at once) and no GET stream opened (it is optional; the GET-stream
    scenario's elicitation then comes on the tasks/result stream): never counted against the client."""
    config = ClientConfig(command=forked((sys.executable, str(BROKEN), "--freedom", freedom)), eras=("legacy",),
                          timeout_s=20, jobs=4)
    result = anyio.run(execute_client, config).result
    assert result.outcome == "passed", [(c.id, c.bucket, c.message) for c in result.checks if c.bucket != "passed"]
    # On a loaded machine the second of two polls sent at once may reach the scripted server after the
    # first's answer and 10 ms later, where the wire cannot tell it from a fast poll (P-52): the
    # process run is held to no warning elsewhere, and the cadence's reading of a parallel poll is
    # judged on hand-built times below (seen in a fresh-clone CI run).
    timing = {"tasks-client-legacy-poll-interval"} if freedom == "legacy-parallel-polls" else set()
    assert [(c.id, [str(w) for w in c.warnings]) for c in result.checks if c.warnings and c.id not in timing] == []


# -- C-LEG-MAY-05, on hand-built times (the process test above depends on the machine's load) ----


def _exchanges(*steps: tuple[float, str, JSON, float, JSON]) -> ScenarioRun:
    """initialize, then each (sent at, method, params, answered at, the answer's result)."""
    init = (0.0, "initialize", {"protocolVersion": "2025-11-25", "capabilities": {}}, 0.01,
            {"protocolVersion": "2025-11-25", "capabilities": DECLARED})
    out = []
    for i, (sent, method, params, answered, result) in enumerate((init, *steps)):
        message = {"jsonrpc": "2.0", "id": i, "method": method, "params": params}
        out.append(Exchange(2 * i + 1, sent, message, None, 2 * i + 2, answered,
                            {"jsonrpc": "2.0", "id": i, "result": result}))
    client = ClientRun((), True, 0, False, 1.0, "", "", COMPLETED)
    return ScenarioRun(BY_NAME[REQUIRED], "legacy", client, tuple(out), reached=True)


def _polls(*gets: tuple[float, float, str]) -> ScenarioRun:
    create = (0.02, "tools/call", {"name": "required_task", "arguments": {}, "task": {}}, 0.03,
              {"task": _task("working")["result"]})
    return _exchanges(create, *((sent, "tasks/get", {"taskId": TASK}, answered, _task(status)["result"])
                                for sent, answered, status in gets))


@pytest.mark.parametrize("second_sent_at", [0.2505, 0.258])  # before the first's answer; 8 ms after it was sent
def test_a_poll_sent_with_the_previous_one_is_parallel_and_never_warns_may_05(second_sent_at: float) -> None:
    run = _polls((0.25, 0.252, "working"), (second_sent_at, second_sent_at + 0.002, "working"),
                 (0.47, 0.472, "completed"))
    verdict = _judge("tasks-client-legacy-poll-interval", run)
    assert verdict.warnings == () and verdict.skip_reason is None and "all 2 polls" in verdict.message, verdict


def test_a_poll_sent_after_the_previous_answer_is_measured_and_warns() -> None:
    run = _polls((0.25, 0.252, "working"), (0.30, 0.302, "working"), (0.52, 0.522, "completed"))
    verdict = _judge("tasks-client-legacy-poll-interval", run)
    assert any("C-LEG-SHOULD-02" in str(w) for w in verdict.warnings), verdict


# -- C-LEG-MUST-12 --------------------------------------------------------------------------

HOSTED, HOSTS = "tasks-client-legacy-hosted", "tasks-client-legacy-hosted-capabilities"


def _hosted(declared: JSON, *answers: tuple[str, JSON | None]) -> ScenarioRun:
    """The hosted scenario: an initialize declaring `declared` as capabilities.tasks, and each
    (method, the client's answer object or None: never answered) the scripted server asked."""
    init = ("initialize", {"protocolVersion": "2025-11-25", "capabilities": {"tasks": declared} if declared else {}},
            {"result": {"protocolVersion": "2025-11-25", "capabilities": DECLARED}})
    run = _run(HOSTED, ("tools/call", {"name": "plain_tool", "arguments": {}}, {"result": {"content": []}}))
    asked = []
    for i, (method, answer) in enumerate(answers):
        rid = "hosted-" + method
        body = None if answer is None else {"jsonrpc": "2.0", "id": rid, **answer}
        asked.append(Exchange(100 + 2 * i, 0.5 + i, {"jsonrpc": "2.0", "id": rid, "method": method, "params": {}},
                              None, 101 + 2 * i if body else None, 0.51 + i if body else None, body))
    first = Exchange(1, 0.0, {"jsonrpc": "2.0", "id": 0, "method": init[0], "params": init[1]}, None, 2, 0.01,
                     {"jsonrpc": "2.0", "id": 0, **init[2]})
    return dataclasses.replace(run, exchanges=(first, *run.exchanges[1:]), server_requests=tuple(asked))


LISTED: JSON = {"result": {"tasks": []}}
NOT_FOUND: JSON = {"error": {"code": ERR_INVALID_PARAMS, "message": "task not found"}}
REFUSED: JSON = {"error": {"code": -32601, "message": "method not found"}}


def test_a_client_serving_what_it_declared_passes_and_one_refusing_fails_must_12() -> None:
    both = {"list": {}, "cancel": {}}
    verdict = _judge(HOSTS, _hosted(both, ("tasks/list", LISTED), ("tasks/cancel", NOT_FOUND)))
    assert verdict.status == "passed" and not verdict.warnings and verdict.evidence
    verdict = _judge(HOSTS, _hosted(both, ("tasks/list", REFUSED), ("tasks/cancel", NOT_FOUND)))
    assert verdict.status == "failed" and verdict.broken == ("C-LEG-MUST-12",)
    assert verdict.evidence == (100, 101) and verdict.details["expected"] and "tasks/list" in verdict.details["actual"]


def test_an_unanswered_or_odd_answer_warns_p55_and_a_pure_requestor_is_not_judged() -> None:
    verdict = _judge(HOSTS, _hosted({"list": {}, "cancel": {}}, ("tasks/list", None), ("tasks/cancel", NOT_FOUND)))
    assert verdict.status == "passed" and [w.policies for w in verdict.warnings] == [("P-55",)]
    verdict = _judge(HOSTS, _hosted({"list": {}}, ("tasks/list", {"result": {"items": []}})))
    assert verdict.status == "passed" and "without a tasks array" in verdict.warnings[0].text
    verdict = _judge(HOSTS, _hosted({"list": {}}, ("tasks/list", None)))
    assert verdict.skip_reason == "not-applicable" and verdict.warnings
    assert _judge(HOSTS, _hosted({})).skip_reason == "not-applicable"


# -- C-LEG-SHOULD-06 ------------------------------------------------------------------------

GET_STREAM = "tasks-client-legacy-get-stream"
ELICITED: JSON = {"result": {"action": "decline"}}


def _elicited(*answers: tuple[str, JSON | None]) -> ScenarioRun:
    """The GET-stream scenario: the task created, and each elicitation the server sent, (the
    stream it went on, GET or POST; the client's answer object, or None: never answered)."""
    run = _run(GET_STREAM, _create())
    asked = []
    for i, (stream, answer) in enumerate(answers):
        rid = f"elicitation-{i + 1}"
        body = None if answer is None else {"jsonrpc": "2.0", "id": rid, **answer}
        http = HttpMeta(stream, "http://127.0.0.1/mcp", 200, ())
        asked.append(Exchange(100 + 2 * i, 0.5 + i, {"jsonrpc": "2.0", "id": rid, "method": "elicitation/create",
                                                      "params": {}}, http, 101 + 2 * i if body else None,
                              0.51 + i if body else None, body))
    return dataclasses.replace(run, server_requests=tuple(asked))


def test_an_elicitation_answered_from_the_get_stream_passes_should_06() -> None:
    verdict = _judge(GET_STREAM_CHECK, _elicited(("GET", ELICITED)))
    assert verdict.status == "passed" and not verdict.warnings and verdict.evidence == (100, 101)


@pytest.mark.parametrize("answer", [None, REFUSED], ids=["unanswered", "refused"])
def test_one_left_unanswered_or_refused_on_the_get_stream_warns_should_06(answer: JSON | None) -> None:
    verdict = _judge(GET_STREAM_CHECK, _elicited(("GET", answer)))
    assert verdict.status == "passed" and len(verdict.warnings) == 1
    assert "C-LEG-SHOULD-06" in str(verdict.warnings[0]) and "frame #100" in str(verdict.warnings[0])


def test_without_a_get_stream_the_client_is_not_judged_should_06() -> None:
    """An elicitation on the tasks/result stream (a client that opened no GET stream) is not this rule's."""
    assert _judge(GET_STREAM_CHECK, _elicited(("POST", ELICITED))).skip_reason == "not-applicable"
    assert _judge(GET_STREAM_CHECK, _elicited()).skip_reason == "not-applicable"
