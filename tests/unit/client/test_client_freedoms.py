"""The client checks' rules resolve in the requirements registry (a report shows each one's level,
text and link), and the checks honour the freedoms they declare: for each MAY client rule a check
lists in `permits`, a client that uses the freedom (hand-built exchanges, no process) passes that
check with no warning, and every declaration here is tested. The rule a check judges beside them
(C-EXT-SHOULD-07 in tasks-client-keeps-observing) is named in its warning."""

from __future__ import annotations

from typing import Any

import pytest
from helpers.client_runs import TASK, Played

from tasks_conformance.client.checks import CLIENT_CHECKS
from tasks_conformance.client.evidence import Exchange, ScenarioRun
from tasks_conformance.client.launch import ClientRun
from tasks_conformance.core.result import rule_refs


def _subscribes_instead_of_polling() -> list[ScenarioRun]:
    listen = {"notifications": {"taskIds": [TASK]}}
    return [Played("tasks-client-lifecycle").create().send("subscriptions/listen", listen, None, at=0.1).done(),
            Played("tasks-client-sync-result").send("tools/call", {"name": "scripted_task"},
                                                  {"resultType": "complete", "content": []}, at=0.0).done()]


def _cancels_and_forgets() -> list[ScenarioRun]:
    return [Played("tasks-client-cancel").create().get("working", at=0.3).send("tasks/cancel", {"taskId": TASK}, {},
                                                                               at=0.4).done()]


def _takes_completed_after_cancel() -> list[ScenarioRun]:
    run = Played("tasks-client-cancel").create().get("working", at=0.3).send("tasks/cancel", {"taskId": TASK}, {},
                                                                          at=0.4)
    return [run.get("completed", at=0.7, result={"content": [], "isError": False}).done()]


def _answers_a_part_at_a_time() -> list[ScenarioRun]:
    asks = {"k1": {"method": "elicitation/create", "params": {}}, "k2": {"method": "elicitation/create", "params": {}}}
    run = Played("tasks-client-input").create().get("input_required", at=0.3, inputRequests=asks)
    run.send("tasks/update", {"taskId": TASK, "inputResponses": {"k1": {"action": "accept"}}}, {}, at=0.4)
    run.send("tasks/update", {"taskId": TASK, "inputResponses": {"k2": {"action": "accept"}}}, {}, at=0.5)
    return [run.get("completed", at=0.8, result={"content": [], "isError": False}).done()]


def _discovers_first() -> list[ScenarioRun]:
    run = Played("tasks-client-lifecycle").send("server/discover", {}, {"resultType": "complete"}, at=0.0)
    return [run.create(at=0.1).get("completed", at=0.4, result={"content": [], "isError": False}).done()]


def _calls_an_optional_tool_plainly() -> list[ScenarioRun]:
    # 2025-11-25: the server declares tasks.requests.tools.call and the tool is optional; the client
    # calls it without params.task (C-LEG-MAY-01) and takes the plain result.
    caps = {"capabilities": {"tasks": {"requests": {"tools": {"call": {}}}}}, "protocolVersion": "2025-11-25"}
    run = Played("tasks-client-legacy-lifecycle").send("initialize", {"protocolVersion": "2025-11-25"}, caps, at=0.0)
    run.send("tools/call", {"name": "scripted_task", "arguments": {}}, {"content": [], "isError": False}, at=0.1)
    done = run.done()
    return [ScenarioRun(done.scenario, "legacy", done.client, done.exchanges, reached=True)]


def _stops_at_the_ttl() -> list[ScenarioRun]:
    # The task's ttlMs is 1000: the client stops polling once createdAt + ttlMs has passed
    # (C-EXT-MAY-01), before the server has said the task is gone.
    run = Played("tasks-client-ttl-expiry").create().get("working", at=0.3, ttlMs=1000)
    return [run.get("working", at=0.6, ttlMs=1000).get("working", at=0.9, ttlMs=1000).done()]


def _asks_a_ttl_and_gets_another() -> list[ScenarioRun]:
    # 2025-11-25: the client asks for a ttl of a minute (C-LEG-MAY-02), the server grants a second;
    # the client follows the task until the server says it is gone, and stops.
    caps = {"capabilities": {"tasks": {"requests": {"tools": {"call": {}}}}}, "protocolVersion": "2025-11-25"}
    run = Played("tasks-client-legacy-ttl-expiry").send("initialize", {"protocolVersion": "2025-11-25"}, caps, at=0.0)
    task = {"taskId": TASK, "status": "working", "ttl": 1000, "pollInterval": 200}
    run.send("tools/call", {"name": "scripted_task", "arguments": {}, "task": {"ttl": 60_000}}, {"task": task}, at=0.1)
    run.send("tasks/get", {"taskId": TASK}, task, at=0.4)
    gone = run.send("tasks/get", {"taskId": TASK}, None, at=1.2).exchanges[-1]
    reply = {"jsonrpc": "2.0", "id": gone.seq, "error": {"code": -32602, "message": "task not found"}}
    run.exchanges[-1] = Exchange(gone.seq, gone.time, gone.message, gone.http, gone.seq + 1, gone.time + 0.01, reply)
    done = run.done()
    return [ScenarioRun(done.scenario, "legacy", done.client, done.exchanges, reached=True)]


def _legacy_run(scenario: str, *steps: tuple[str, dict[str, Any], dict[str, Any] | None, float]) -> list[ScenarioRun]:
    """A 2025-11-25 run: initialize, then (method, params, result or None for no answer, time) each."""
    caps = {"capabilities": {"tasks": {"requests": {"tools": {"call": {}}}}}, "protocolVersion": "2025-11-25"}
    run = Played(scenario).send("initialize", {"protocolVersion": "2025-11-25"}, caps, at=0.0)
    for method, params, result, at in steps:
        run.send(method, params, result, at=at)
    done = run.done()
    return [ScenarioRun(done.scenario, "legacy", done.client, done.exchanges, reached=True)]


def _legacy_task(status: str) -> dict[str, Any]:
    return {"taskId": TASK, "status": status, "ttl": 600_000, "pollInterval": 200}


def _drops_the_result_stream() -> list[ScenarioRun]:
    # 2025-11-25: a tasks/result on the working task whose stream the client drops (no answer,
    # C-LEG-MAY-04); it polls on, reads the end and fetches the payload.
    call = {"name": "required_task", "arguments": {}, "task": {}}
    return _legacy_run("tasks-client-legacy-required",
                       ("tools/call", call, {"task": _legacy_task("working")}, 0.1),
                       ("tasks/result", {"taskId": TASK}, None, 0.2),
                       ("tasks/get", {"taskId": TASK}, _legacy_task("working"), 0.6),
                       ("tasks/get", {"taskId": TASK}, _legacy_task("completed"), 0.9),
                       ("tasks/result", {"taskId": TASK}, {"content": [], "isError": False}, 1.0))


def _polls_in_parallel() -> list[ScenarioRun]:
    # 2025-11-25: two tasks/get sent together, the second before the first was answered
    # (C-LEG-MAY-05); the next poll waits the pollInterval after the last answer.
    call = {"name": "required_task", "arguments": {}, "task": {}}
    runs = _legacy_run("tasks-client-legacy-required",
                       ("tools/call", call, {"task": _legacy_task("working")}, 0.1),
                       ("tasks/get", {"taskId": TASK}, _legacy_task("working"), 0.4),
                       ("tasks/get", {"taskId": TASK}, _legacy_task("working"), 0.401),
                       ("tasks/get", {"taskId": TASK}, _legacy_task("completed"), 0.7),
                       ("tasks/result", {"taskId": TASK}, {"content": [], "isError": False}, 0.8))
    assert runs[0].exchanges[3].time < runs[0].exchanges[2].reply_time  # type: ignore[operator]
    return runs


# (check, the freedom, a client that uses it)
FREEDOMS = [
    ("tasks-client-task-expiry", "C-EXT-MAY-01", _stops_at_the_ttl),
    ("tasks-client-legacy-task-expiry", "C-LEG-MAY-02", _asks_a_ttl_and_gets_another),
    ("tasks-client-legacy-task-augmentation", "C-LEG-MAY-01", _calls_an_optional_tool_plainly),
    ("tasks-client-follows-task", "C-EXT-MAY-02", _subscribes_instead_of_polling),
    ("tasks-client-cancels-with-tasks-cancel", "C-EXT-MAY-03", _cancels_and_forgets),
    ("tasks-client-keeps-observing", "C-EXT-MAY-03", _cancels_and_forgets),
    ("tasks-client-keeps-observing", "C-EXT-MAY-04", _takes_completed_after_cancel),
    ("tasks-client-input-answered", "C-EXT-MAY-07", _answers_a_part_at_a_time),
    ("tasks-client-core-meta", "C-CORE-MAY-01", _discovers_first),
    ("tasks-client-legacy-keeps-polling", "C-LEG-MAY-04", _drops_the_result_stream),
    ("tasks-client-legacy-poll-interval", "C-LEG-MAY-05", _polls_in_parallel),
]


@pytest.mark.parametrize("check_id", sorted(CLIENT_CHECKS))
def test_every_rule_a_client_check_cites_resolves_in_the_registry(check_id: str) -> None:
    check = CLIENT_CHECKS[check_id]
    refs = rule_refs([*check.requirements, *check.permits])
    assert refs and all(ref.level != "unknown" and ref.url.startswith("https://") for ref in refs), refs
    assert all(ref.level == "MAY" for ref in refs[len(check.requirements):]), check_id


def test_every_declared_freedom_is_exercised_here() -> None:
    declared = {(c.id, rid) for c in CLIENT_CHECKS.values() for rid in c.permits}
    assert declared == {(check, rid) for check, rid, _runs in FREEDOMS}


@pytest.mark.parametrize(("check_id", "rule", "runs"), FREEDOMS, ids=[f"{c}-{r}" for c, r, _x in FREEDOMS])
def test_a_client_using_the_freedom_passes_with_no_warning(check_id: str, rule: str, runs: Any) -> None:
    check = CLIENT_CHECKS[check_id]
    assert rule in check.permits
    verdict = check.judge([r for r in runs() if check.reads(r.name)])
    assert verdict.status == "passed" and not verdict.warnings, (verdict.message, verdict.warnings)


def test_keeps_observing_names_should_07_for_a_task_left_after_its_input_was_answered() -> None:
    asks = {"k1": {"method": "elicitation/create", "params": {}}}
    run = Played("tasks-client-input").create().get("input_required", at=0.3, inputRequests=asks)
    run.send("tasks/update", {"taskId": TASK, "inputResponses": {"k1": {"action": "accept"}}}, {}, at=0.4)
    verdict = CLIENT_CHECKS["tasks-client-keeps-observing"].judge([run.done()])
    assert verdict.status == "passed" and len(verdict.warnings) == 1
    said = str(verdict.warnings[0])
    assert "C-EXT-SHOULD-07" in said and "C-EXT-SHOULD-03" not in said and "after the client answered" in said
    left = Played("tasks-client-lifecycle").create().get("working", at=0.3)
    said = str(CLIENT_CHECKS["tasks-client-keeps-observing"].judge([left.done()]).warnings[0])
    assert "C-EXT-SHOULD-03" in said and "C-EXT-SHOULD-07" not in said


def _prompt_then(*, call_after: bool) -> ScenarioRun:
    prompt = {"resultType": "task", "taskId": "prompt-task-x", "status": "working", "pollIntervalMs": 200}
    run = Played("tasks-client-task-on-prompt").send("prompts/get", {"name": "scripted_prompt"}, prompt, at=0.0)
    if call_after:
        run.send("tools/call", {"name": "scripted_task", "arguments": {}},
                 {"resultType": "complete", "content": [], "isError": False}, at=0.1)
    done = run.done()
    said = {"status": "completed", "isError": False, "error": None}
    client = ClientRun(("client",), True, 0, False, 1.0, "", "", said)
    return ScenarioRun(done.scenario, "extension", client, done.exchanges, reached=True)


def test_the_prompt_scenarios_outcome_line_is_judged_against_the_request_made_last() -> None:
    """The context has both toolName and request: a client that sent the prompts/get, then called the
    tool and reported that call's success, did not report the prompt as a success."""
    check = CLIENT_CHECKS["tasks-client-no-task-on-other-methods"]
    assert check.judge([_prompt_then(call_after=True)]).status == "passed"
    assert check.judge([_prompt_then(call_after=False)]).status == "failed"
