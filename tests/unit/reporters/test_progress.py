"""The live progress line (issue 14): on a terminal it shows the phase, the elapsed time, the
probe task's status and poll count and the time left before --poll-timeout; nothing of it off a
terminal, in CI or with --quiet. Content is read for chosen moments of a fake clock, and from a
pseudo-terminal for the command line; never by waiting."""

from __future__ import annotations

import io
import json
import os
import pty
import select
import subprocess
import sys
from typing import Any

import pytest

from tasks_conformance.core import steps
from tasks_conformance.core.wirelog import FrameTag, Purpose, WireLog
from tasks_conformance.reporters import ProgressLine
from tasks_conformance.reporters.progress import RunProgress


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def _rpc(**message: Any) -> bytes:
    return json.dumps({"jsonrpc": "2.0", **message}).encode()


# The tags the sessions and probes give their requests (the notes beside them are for people).
MAIN = 1  # the run's main connection
ERA_PROBE = FrameTag(Purpose.ERA_PROBE, connection=MAIN)
DISCOVERY = FrameTag(Purpose.DISCOVERY, connection=MAIN)
CREATE = FrameTag(Purpose.TASK_CREATE, connection=MAIN)
PROBE = FrameTag(Purpose.PROBE, connection=MAIN)


def _poll(number: int) -> FrameTag:
    return FrameTag.polling(number).on(MAIN)


def _run_to_a_task(poll_timeout_s: float = 30.0) -> tuple[RunProgress, WireLog, Clock]:
    """A RunProgress watching a wire log through the era probe and the task's creation."""
    clock = Clock()
    state = RunProgress(poll_timeout_s, clock=clock)
    wire = WireLog()
    wire.observer = state.on_frame
    state.say(steps.CONNECTING)
    assert state.line() == "connecting · 0.0s"
    clock.now += 0.4
    wire.record("out", "stdio", _rpc(id=1, method="server/discover"), note="era probe (server/discover)",
                tag=ERA_PROBE)
    wire.record("in", "stdio", _rpc(id=1, result={"supportedVersions": ["2026-07-28"]}))
    assert state.line() == "discovering · 0.4s"
    state.say(steps.probing("tools/call declaring the extension"))
    wire.record("out", "stdio", _rpc(id=3, method="tools/call"), note="declared tools/call", tag=CREATE)
    wire.record("in", "stdio", _rpc(id=3, result={"resultType": "task", "taskId": "t1", "status": "working"}))
    return state, wire, clock


def test_the_line_follows_the_task_through_its_polls() -> None:
    state, wire, clock = _run_to_a_task(poll_timeout_s=30.0)
    assert state.line() == "task running · 0.4s · task working"
    clock.now += 1.0
    wire.record("out", "stdio", _rpc(id=8, method="tasks/get"), note="poll #1", tag=_poll(1))
    wire.record("in", "stdio", _rpc(id=8, result={"taskId": "t1", "status": "working"}))
    clock.now += 2.0
    wire.record("out", "stdio", _rpc(id=9, method="tasks/get"), note="poll #2", tag=_poll(2))
    wire.record("in", "stdio", _rpc(id=9, result={"taskId": "t1", "status": "input_required"}))
    # 3.4 s since the start; the polling began 2 s ago, so 28 s of the 30 s --poll-timeout are left.
    assert state.line() == "task running · 3.4s · task input_required, poll 2 · 28s left of --poll-timeout"
    assert state.line(clock.now + 10) == ("task running · 13.4s · task input_required, poll 2 · "
                                          "18s left of --poll-timeout")
    clock.now += 1.0
    wire.record("out", "stdio", _rpc(id=10, method="tasks/get"), note="poll #3", tag=_poll(3))
    wire.record("in", "stdio", _rpc(id=10, result={"taskId": "t1", "status": "completed"}))
    state.say(steps.probing("tasks/get twice more after the task ended"))
    assert state.line() == "probes · 4.4s · task completed, poll 3 · tasks/get twice more after the task ended"
    state.say(steps.JUDGING)
    assert state.line() == "reporting · 4.4s · task completed, poll 3"


def test_the_time_left_never_goes_below_zero() -> None:
    state, wire, clock = _run_to_a_task(poll_timeout_s=2.0)
    wire.record("out", "stdio", _rpc(id=8, method="tasks/get"), note="poll #1", tag=_poll(1))
    assert state.line(clock.now + 5).endswith("task working, poll 1 · 0s left of --poll-timeout")


def test_a_legacy_task_nested_in_its_create_result_is_read() -> None:
    clock = Clock()
    state = RunProgress(30.0, clock=clock)
    wire = WireLog()
    wire.observer = state.on_frame
    wire.record("out", "http", _rpc(id="a", method="tools/call"), note="declared tools/call", tag=CREATE)
    wire.record("in", "http", _rpc(id="a", result={"task": {"taskId": "t", "status": "working"}}))
    assert "task working" in state.line()


def test_server_text_is_escaped_and_bounded() -> None:
    state, wire, _clock = _run_to_a_task()
    wire.record("out", "stdio", _rpc(id=8, method="tasks/get"), note="poll #1", tag=_poll(1))
    hostile = "\x1b]8;;http://evil\x07click\x1b[31m" + "x" * 500
    wire.record("in", "stdio", _rpc(id=8, result={"status": hostile}))
    line = state.line()
    assert "\x1b" not in line and "\\x1b" in line and "x" * 100 not in line


def test_answers_to_other_requests_and_junk_change_nothing() -> None:
    state, wire, _clock = _run_to_a_task()
    before = state.line()
    wire.record("in", "stdio", b"not json at all")
    wire.record("in", "stdio", _rpc(id=99, result={"status": "completed"}))  # not a watched id
    wire.record("in", "stdio", _rpc(id=True, result={"status": "completed"}))
    wire.record("in", "stdio", _rpc(id=3, result=["odd"]))
    assert state.line() == before


def test_the_terminal_line_shows_it_and_ticks_on_redraw() -> None:
    """A fake terminal: the line is drawn from the state, re-read at every redraw."""
    clock = Clock()
    state = RunProgress(30.0, clock=clock)
    out = io.StringIO()
    with ProgressLine(enabled=True, file=out) as line:
        line.follow(state)
        state.phase = "task running"
        clock.now += 12.5
        line.follow(state)  # a redraw
    text = out.getvalue()
    assert "connecting · 0.0s" in text and "task running · 12.5s" in text


# -- the command line: a terminal gets the line; off a terminal, CI or --quiet, nothing ----------


def _on_a_terminal(*args: str, env: dict[str, str] | None = None) -> tuple[int, str]:
    """Run the command line with stdout and stderr on a pseudo-terminal; its exit code and output."""
    main, child = pty.openpty()
    full_env = {k: v for k, v in os.environ.items() if k not in ("CI", "NO_COLOR", "TERM")}
    full_env.update({"TERM": "xterm", "COLUMNS": "200", **(env or {})})
    proc = subprocess.Popen([sys.executable, "-m", "tasks_conformance", *args], stdin=subprocess.DEVNULL,
                            stdout=child, stderr=child, env=full_env, close_fds=True)
    os.close(child)
    chunks: list[bytes] = []
    try:
        for _ in range(10_000):  # bounded; each read waits at most 60 s
            ready, _w, _x = select.select([main], [], [], 60)
            if not ready:
                break
            try:
                data = os.read(main, 65536)
            except OSError:  # EIO: the child closed the terminal
                break
            if not data:
                break
            chunks.append(data)
    finally:
        os.close(main)
        try:
            code = proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            code = proc.wait(timeout=10)
    return code, b"".join(chunks).decode("utf-8", "replace")


DEMO = ("demo", "--check-id", "tasks-inline-result")


def test_on_a_terminal_the_line_names_the_phase_and_the_task() -> None:
    code, text = _on_a_terminal(*DEMO)
    assert code == 0, text[-2000:]
    assert "connecting · 0.0s" in text  # drawn as the run starts
    assert "task completed, poll" in text  # the task's status and poll count were shown
    assert "PASSED" in text


@pytest.mark.parametrize("extra", [["--quiet"], ["--format", "json"]], ids=["quiet", "CI=true"])
def test_quiet_or_ci_on_a_terminal_show_no_line(extra: list[str]) -> None:
    env = {} if extra == ["--quiet"] else {"CI": "true"}
    code, text = _on_a_terminal(*DEMO, *extra, env=env)
    assert code == 0, text[-2000:]
    assert "connecting ·" not in text and "discovering ·" not in text and ", poll " not in text


def test_off_a_terminal_stderr_has_no_line() -> None:
    proc = subprocess.run([sys.executable, "-m", "tasks_conformance", *DEMO], capture_output=True, text=True,
                          timeout=60, stdin=subprocess.DEVNULL, env={**os.environ, "TERM": "xterm"})
    assert proc.returncode == 0 and proc.stderr == ""


# -- the progress line while a second session starts ------------------------------------------------

# What the line says while a session of a probe's own is opening (its first request unanswered).
STARTING_SESSION = "starting a second session"  # a 2025-11-25 session: its initialize
CONNECTING_SESSION = "connecting a new session"  # a 2026-07-28 connection: the request it was opened for
# The connections probes open of their own (a session each), numbered after the main one.
DUAL_ERA, DURABILITY, SECOND_PRINCIPAL = 2, 3, 4
CANCEL = steps.probing("tasks/cancel on a task (extension: the probe task; legacy: a fresh task)")


def _run_past_the_cancel(channel: str = "stdio") -> tuple[RunProgress, WireLog, Clock]:
    """Discovery, the probe task created, polled to its end, then tasks/cancel said and answered:
    the probes phase, with the cancel probe as the last words the runner said."""
    clock = Clock()
    state = RunProgress(30.0, clock=clock)
    wire = WireLog()
    wire.observer = state.on_frame
    state.say(steps.CONNECTING)
    wire.record("out", channel, _rpc(id=1, method="server/discover"), note="era probe (server/discover)",
                tag=ERA_PROBE)
    wire.record("in", channel, _rpc(id=1, result={"supportedVersions": ["2026-07-28"]}))
    wire.record("out", channel, _rpc(id=2, method="tools/list"), note="discovery", tag=DISCOVERY)
    wire.record("in", channel, _rpc(id=2, result={"tools": []}))
    state.say(steps.probing("call the probe tool declaring tasks support"))
    wire.record("out", channel, _rpc(id=3, method="tools/call"), note="declared tools/call", tag=CREATE)
    wire.record("in", channel, _rpc(id=3, result={"resultType": "task", "taskId": "t1", "status": "working"}))
    state.say(steps.probing("second connection: 2025-11-25 initialize listing the tasks extension"))
    # The main session's requests overlap: ids go out of order without being another session.
    wire.record("out", channel, _rpc(id=5, method="tasks/get"), note="unknown id", tag=PROBE)
    wire.record("out", channel, _rpc(id=4, method="tasks/get"), note="poll #1", tag=_poll(1))
    wire.record("in", channel, _rpc(id=4, result={"taskId": "t1", "status": "completed"}))
    wire.record("in", channel, _rpc(id=5, error={"code": -32602, "message": "no such task"}))
    clock.now += 1.0
    state.say(CANCEL)
    wire.record("out", channel, _rpc(id=9, method="tasks/cancel"), note="cancel", tag=PROBE)
    wire.record("in", channel, _rpc(id=9, result={"taskId": "t1", "status": "cancelled"}))
    assert state.line() == "probes · 1.0s · task completed, poll 1 · " + CANCEL.removeprefix("probe: ")
    return state, wire, clock


def test_the_line_says_a_second_session_is_starting_not_the_last_probe_said() -> None:
    # The dual-era probe's 2025-11-25 session: a second server process boots (stdio) before it
    # answers initialize; the cancel probe said last is long done.
    state, wire, clock = _run_past_the_cancel()
    wire.record("out", "stdio", _rpc(id=2_000_001, method="initialize", params={}),
                tag=FrameTag(Purpose.HANDSHAKE, connection=DUAL_ERA))
    clock.now += 3.0
    assert state.line() == f"probes · 4.0s · task completed, poll 1 · {STARTING_SESSION}"
    wire.record("in", "stdio", _rpc(id=2_000_001, result={"protocolVersion": "2025-11-25"}))
    assert STARTING_SESSION not in state.line()
    # Its further requests are that session's, not another one starting.
    wire.record("out", "stdio", _rpc(id=2_000_002, method="tools/call"), note="2025-11-25 session",
                tag=FrameTag(Purpose.PROBE, connection=DUAL_ERA))
    assert STARTING_SESSION not in state.line() and CONNECTING_SESSION not in state.line()


def test_the_line_says_a_new_connection_is_connecting_until_its_answer_or_failure() -> None:
    # The durability probe's brand-new HTTP connection: its first request is a tasks/get.
    state, wire, _clock = _run_past_the_cancel("http")
    sent = wire.record("out", "http", _rpc(id=1_000_001, method="tasks/get"), note="durability: fresh connection",
                       tag=FrameTag(Purpose.PROBE, connection=DURABILITY))
    assert state.line().endswith(f" · {CONNECTING_SESSION}")
    wire.record("in", "event", b"", reply_to=sent.seq, note="connection refused")  # HTTP: the POST failed
    assert CONNECTING_SESSION not in state.line()
    # A second principal's session, answered in an HTTP response of its own.
    sent = wire.record("out", "http", _rpc(id=3_000_001, method="tasks/get"), note="second principal",
                       tag=FrameTag(Purpose.PROBE, connection=SECOND_PRINCIPAL))
    assert state.line().endswith(f" · {CONNECTING_SESSION}")
    wire.record("in", "http", _rpc(id=3_000_001, error={"code": -32602, "message": "no"}), reply_to=sent.seq)
    assert CONNECTING_SESSION not in state.line()


def test_a_session_never_answered_is_not_shown_once_judging() -> None:
    state, wire, _clock = _run_past_the_cancel()
    wire.record("out", "stdio", _rpc(id=2_000_001, method="initialize", params={}),
                tag=FrameTag(Purpose.HANDSHAKE, connection=DUAL_ERA))
    state.say(steps.JUDGING)
    assert state.line() == "reporting · 1.0s · task completed, poll 1"


def test_the_first_session_and_notifications_are_never_a_second_session() -> None:
    clock = Clock()
    state = RunProgress(30.0, clock=clock)
    wire = WireLog()
    wire.observer = state.on_frame
    state.say(steps.CONNECTING)
    wire.record("out", "http", _rpc(id=1, method="initialize", params={}),
                tag=FrameTag(Purpose.HANDSHAKE, connection=MAIN))
    assert state.line() == "discovering · 0.0s"
    wire.record("in", "http", _rpc(id=1, result={}))
    wire.record("out", "http", _rpc(method="notifications/initialized"))
    state.say(steps.probing("something"))
    wire.record("out", "http", _rpc(id="srv-1", result={}))  # our answer to a server's request
    assert state.line() == "probes · 0.0s · something"


def test_the_line_follows_the_steps_phase_not_its_wording() -> None:
    # A reworded sentence changes nothing: the phase travels as a field. A plain string that
    # merely looks like a step is only a detail.
    state = RunProgress(poll_timeout_s=10, clock=lambda: 0.0)
    state.say(steps.Step("negotiating (reworded)", steps.Phase.CONNECTING))
    assert state.phase == "connecting"
    state.say(steps.Step("looking at something", steps.Phase.PROBE, "a probe's description"))
    assert (state.phase, state.detail) == ("probes", "a probe's description")
    state.say("judging")
    assert state.phase == "probes" and state.detail == "judging"
    state.say(steps.Step("done (reworded)", steps.Phase.JUDGING))
    assert state.phase == "reporting"
