"""The first poll is judged (policy P-48): the wait between the CreateTaskResult and the first
tasks/get is held to the interval the CreateTaskResult gave, as later polls are held to the
latest snapshot's (P-33), on both eras. Real clients poll 2-20 ms after creation against 150-200 ms;
that was never judged."""

from __future__ import annotations

from helpers.client_runs import TASK, Played

from tasks_conformance.client.checks import CLIENT_CHECKS
from tasks_conformance.client.evidence import ScenarioRun


def _judge(check_id: str, run: ScenarioRun) -> object:
    return CLIENT_CHECKS[check_id].judge([run])


def _extension(first_poll_at: float) -> ScenarioRun:
    # The CreateTaskResult (pollIntervalMs 200) comes back at 0.01 s.
    run = Played("tasks-client-lifecycle").create(at=0.0).get("working", at=first_poll_at)
    return run.get("completed", at=first_poll_at + 0.3, result={"content": [], "isError": False}).done()


def test_a_first_poll_straight_after_the_create_task_result_warns() -> None:
    verdict = CLIENT_CHECKS["tasks-client-poll-interval"].judge([_extension(0.02)])
    assert verdict.status == "passed" and len(verdict.warnings) == 1
    said = verdict.warnings[0]
    assert "C-EXT-SHOULD-01" in said.text and "after the CreateTaskResult" in said.text
    assert said.policies == ("P-33", "P-48")


def test_a_first_poll_that_waits_the_create_task_results_interval_passes() -> None:
    verdict = CLIENT_CHECKS["tasks-client-poll-interval"].judge([_extension(0.21)])
    assert verdict.status == "passed" and verdict.warnings == ()


def test_the_first_poll_alone_is_judged() -> None:
    """One tasks/get after the CreateTaskResult is a poll to judge, not nothing."""
    run = Played("tasks-client-lifecycle").create(at=0.0).get("completed", at=0.02,
                                                            result={"content": [], "isError": False}).done()
    verdict = CLIENT_CHECKS["tasks-client-poll-interval"].judge([run])
    assert verdict.status == "passed" and len(verdict.warnings) == 1


def test_on_2025_11_25_the_create_task_results_poll_interval_counts() -> None:
    caps = {"capabilities": {"tasks": {"requests": {"tools": {"call": {}}}}}, "protocolVersion": "2025-11-25"}
    task = {"taskId": TASK, "status": "working", "ttl": 60_000, "pollInterval": 200}
    run = Played("tasks-client-legacy-required").send("initialize", {"protocolVersion": "2025-11-25"}, caps, at=0.0)
    run.send("tools/call", {"name": "required_task", "arguments": {}, "task": {}}, {"task": task}, at=0.1)
    run.send("tasks/get", {"taskId": TASK}, task, at=0.12)
    done = run.done()
    legacy = ScenarioRun(done.scenario, "legacy", done.client, done.exchanges, reached=True)
    verdict = CLIENT_CHECKS["tasks-client-legacy-poll-interval"].judge([legacy])
    assert verdict.status == "passed" and len(verdict.warnings) == 1
    assert "C-LEG-SHOULD-02" in verdict.warnings[0].text and "P-48" in verdict.warnings[0].policies
