"""Polling honours pollIntervalMs within a hard --poll-timeout and stops early on parked input."""

from __future__ import annotations

import itertools
import re
from typing import Any

from helpers.paths import BROKEN, REFERENCE
from helpers.processes import http_server
from helpers.runs import run, stdio

from tasks_conformance.core.wirelog import Purpose


def test_poll_timeout_is_a_hard_deadline_even_with_15s_intervals() -> None:
    ex = run(**stdio([*BROKEN, "--break", "slow-poll-interval"]), tool_name="slow_compute",
             poll_timeout_ms=1_000)
    poll = next(c for c in ex.result.checks if c.id == "tasks-inline-result")
    assert poll.bucket == "could-not-run"
    assert "--poll-timeout 1000 ms" in poll.message
    elapsed = int(re.search(r"after (\d+) ms", poll.message).group(1))  # type: ignore[union-attr]
    assert elapsed < 15_000  # the server's 15 s interval was clamped to the deadline
    assert ex.result.outcome == "incomplete"
    # Checks that judge frames we did see still judge them.
    v = {c.id: c.bucket for c in ex.result.checks}
    assert v["tasks-ttl-shape"] == "passed" and v["tasks-status-payload-shape"] == "passed"


def test_parked_input_required_stops_after_three_polls_without_answers() -> None:
    ex = run(**stdio(REFERENCE), tool_name="confirm_action")
    c = {c.id: c for c in ex.result.checks}
    # Without --input-responses the input role has no tool (not applicable under the standard
    # profile); the checks that need the task to end could not run, naming the key to answer.
    assert c["tasks-input-required-update-completes"].bucket == "not-applicable"
    assert c["tasks-inline-result"].bucket == "could-not-run"
    assert "confirm-1" in c["tasks-inline-result"].message and "--input-responses" in c["tasks-inline-result"].message
    gets = [f for f in ex.wire if f.direction == "out" and (f.json() or {}).get("method") == "tasks/get"
            and f.tag is not None and f.tag.purpose is Purpose.POLL]
    assert len(gets) == 3


def test_the_first_tasks_get_follows_creation_immediately() -> None:
    ex = run(**stdio(REFERENCE), tool_name="slow_compute", check_ids=["tasks-status-payload-shape"])
    frames = [f for f in ex.wire if f.direction == "out" and isinstance(f.json(), dict)]
    methods = [f.json()["method"] for f in frames if "method" in f.json()]
    i = methods.index("tools/call")
    assert methods[i + 1] == "tasks/get"


def test_a_poll_refused_as_too_early_is_asked_again_not_judged() -> None:
    # S-EXT-MAY-02: the server may rate-limit reads that come sooner than pollIntervalMs. The refusal
    # is on the wire, the poll after one interval got the task, and no check fails for it.
    # Over HTTP the probes read the task concurrently, more often than the server's bucket allows.
    server = http_server([*BROKEN, "--break", "permits-rate-limited-polls"])
    try:
        ex = run(url=server.url, tool_name="slow_compute")
    finally:
        server.stop()
    refused = [f for f in ex.wire
               if f.direction == "in" and ((f.json() or {}).get("error") or {}).get("code") == -32050]
    assert refused
    shape = next(c for c in ex.result.checks if c.id == "tasks-status-payload-shape")
    assert shape.bucket == "passed"
    assert ex.result.outcome == "passed", {c.id: c.message for c in ex.result.checks if c.bucket == "failed"}


def _gets_of(ex: Any, task_id: str) -> list[Any]:
    return [f for f in ex.wire if f.direction == "out" and (f.json() or {}).get("method") == "tasks/get"
            and ((f.json() or {}).get("params") or {}).get("taskId") == task_id]


def _task_id(ex: Any) -> str:
    return next(str(f.json()["result"]["taskId"]) for f in ex.wire
                if f.direction == "in" and ((f.json() or {}).get("result") or {}).get("resultType") == "task")


def test_a_notification_showing_the_end_first_makes_the_next_poll_the_first_later_read() -> None:
    # The reference server's subscription says "completed" before the next poll is due: that poll
    # is the first of the two reads after the end, and one more follows an interval later.
    ex = run(**stdio(REFERENCE), tool_name="slow_compute", check_ids=["tasks-terminal-status-immutable"])
    c = next(c for c in ex.result.checks if c.id == "tasks-terminal-status-immutable")
    assert c.bucket == "passed" and "after notification frame" in c.message, c.message
    sighted = int(re.search(r"notification frame (\d+)", c.message).group(1))  # type: ignore[union-attr]
    assert (ex.wire.get(sighted).json() or {})["params"]["status"] == "completed"  # type: ignore[union-attr]
    gets = _gets_of(ex, _task_id(ex))
    later = [f for f in gets if f.seq > sighted]
    assert [(f.note or "").split(" #")[0] for f in later] == ["poll", "terminal re-read (2 of 2 after the end)"]
    # Never sooner than the server asked (pollIntervalMs 100): each read is timed from the frame of the
    # one before it (the margin is for float rounding only).
    assert all(b.time - a.time >= 0.0999 for a, b in itertools.pairwise(gets))


def test_without_notifications_the_ended_task_is_read_twice_after_the_poll_that_saw_the_end() -> None:
    ex = run(**stdio([*BROKEN, "--break", "permits-no-notifications"]), tool_name="slow_compute",
             check_ids=["tasks-terminal-status-immutable"])
    c = next(c for c in ex.result.checks if c.id == "tasks-terminal-status-immutable")
    assert c.bucket == "passed" and "notification" not in c.message, c.message
    notes = [(f.note or "") for f in _gets_of(ex, _task_id(ex))]
    assert notes[-2:] == ["terminal re-read (1 of 2 after the end)", "terminal re-read (2 of 2 after the end)"]
