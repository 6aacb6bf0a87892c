"""Every could-not-run's advice holds: where the cause follows from another finding of the run
the check follows the task another way instead of advising, and where it advises a flag, the flag
applied makes the check run (the --tool-name case of a failed tools/list is in
test_discovery_faults.py)."""

from __future__ import annotations

import pytest
from helpers.paths import BROKEN, REFERENCE
from helpers.runs import run, stdio

PROGRESS = "tasks-legacy-progress-token"


def _verdict(ex: object, check_id: str) -> tuple[str, str, str]:
    c = next(c for c in ex.result.checks if c.id == check_id)  # type: ignore[attr-defined]
    return c.bucket, c.message, c.cause.fix_for(c.id, "") if c.cause is not None else ""


def test_progress_is_followed_through_tasks_get_when_tasks_result_does_not_block() -> None:
    """tasks/result answered while the task worked (tasks-legacy-result-blocks fails that): the
    progress check follows the task with tasks/get until it ends and judges it, instead of saying
    'raise --poll-timeout' about a task that ended within seconds."""
    ex = run(**stdio([*BROKEN, "--break", "legacy-result-early"]), protocol_version="2025-11-25",
             check_ids=[PROGRESS, "tasks-legacy-result-blocks"])
    assert _verdict(ex, "tasks-legacy-result-blocks")[0] == "failed"
    bucket, message, _fix = _verdict(ex, PROGRESS)
    assert bucket in ("passed", "not-applicable"), message


@pytest.mark.parametrize("check_id", ["tasks-inline-result", "tasks-terminal-status-immutable"])
def test_raising_the_poll_timeout_as_advised_lets_the_check_run(check_id: str) -> None:
    """A task that works longer than --poll-timeout: could-not-run advising --poll-timeout; raised
    past the task's length, the same check judges it."""
    slow = {"protocol_version": "2025-11-25", "tool_name": "slow_compute", "tool_args": '{"durationMs": 600}',
            "check_ids": [check_id]}
    bucket, message, fix = _verdict(run(**stdio(REFERENCE), **slow, poll_timeout_ms=300), check_id)
    assert bucket == "could-not-run" and "--poll-timeout" in fix, (bucket, message, fix)
    bucket, message, _fix = _verdict(run(**stdio(REFERENCE), **slow, poll_timeout_ms=10_000), check_id)
    assert bucket in ("passed", "not-applicable"), message


def test_naming_a_role_as_advised_lets_its_check_run() -> None:
    """A role tool metadata cannot infer: could-not-run advising --probe ROLE=TOOL; given, it runs."""
    base = {"protocol_version": "2025-11-25", "check_ids": ["tasks-tool-error-outcome"], "profile": "full"}
    bucket, message, fix = _verdict(run(**stdio(REFERENCE), **base), "tasks-tool-error-outcome")
    assert bucket == "could-not-run" and "--probe tool-error=" in fix, (bucket, message, fix)
    bucket, message, _fix = _verdict(run(**stdio(REFERENCE), **base, probes=["tool-error=tool_error"]),
                                     "tasks-tool-error-outcome")
    assert bucket == "passed", message
