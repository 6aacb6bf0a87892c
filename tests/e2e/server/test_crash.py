"""A server that goes away mid-run is named as such: tasks-server-stays-up fails with how it ended
(exit code, the end of its stderr or output), and every check whose requests it left unanswered
defers to it (could-not-run pointing at it, which its failure turns into a deferral), never failed
on a missing answer."""

from __future__ import annotations

from typing import Any

import pytest
from helpers.paths import BROKEN, REFERENCE
from helpers.processes import free_port, http_server
from helpers.runs import run, stdio

from tasks_conformance.core.causes import CauseKind, unmet
from tasks_conformance.core.rpc.peer import Reply
from tasks_conformance.core.verdict import could_not_run, failed
from tasks_conformance.core.wirelog import WireLog
from tasks_conformance.core.wires import Wire
from tasks_conformance.server.checks import CHECKS
from tasks_conformance.server.checks.liveness import after_server_gone
from tasks_conformance.server.evidence import Cancel, Discovery, Evidence, GoneHow, Poll, ServerGone
from tasks_conformance.server.managed import ServerExit
from tasks_conformance.server.server_gone import server_gone

CRASH = "tasks-server-stays-up"
EXITS = [*BROKEN, "--break", "exits-on-cancel"]
LEGACY = {"protocol_version": "2025-11-25", "poll_timeout_ms": 3_000}


def _by_bucket(ex: Any) -> dict[str, list[Any]]:
    out: dict[str, list[Any]] = {}
    for c in ex.result.checks:
        out.setdefault(c.bucket, []).append(c)
    return out


def _assert_named_once(ex: Any, *words: str) -> None:
    buckets = _by_bucket(ex)
    assert [c.id for c in buckets.get("failed", [])] == [CRASH], {c.id: c.message for c in buckets.get("failed", [])}
    crash = buckets["failed"][0]
    assert all(w in crash.message for w in words), crash.message
    assert crash.broken == ["S-WIRE-04"]
    # The crash check comes first in the report, and the others that could not read defer to it:
    # its failure says what to correct, so they give no advice of their own and the run is not
    # made incomplete by them.
    assert ex.result.checks[0].id == CRASH
    blocked = buckets.get("deferred", [])
    assert blocked, "the checks whose requests went unanswered defer to the crash check"
    for c in blocked:
        assert c.deferredTo == CRASH, (c.id, c.message)
    # Said once: the exit and its output are in the crash check's message, not in every blocked row.
    assert all("RuntimeError" not in c.message for c in blocked)
    assert not buckets.get("could-not-run") and ex.result.incompleteCauses == []


def test_a_stdio_server_that_exits_mid_run_fails_the_crash_check_alone() -> None:
    ex = run(**stdio(EXITS, process=True), **LEGACY)
    _assert_named_once(ex, "exited with code 1", "tasks/cancel", "stderr: ", "RuntimeError: task store")


def test_the_extension_wire_too() -> None:
    ex = run(**stdio(EXITS, process=True), tool_name="slow_compute", poll_timeout_ms=3_000)
    _assert_named_once(ex, "exited with code 1", "tasks/cancel")


def test_over_http_the_refused_connections_name_it() -> None:
    server = http_server(EXITS)
    try:
        ex = run(url=server.url, **LEGACY)
    finally:
        server.stop()
    _assert_named_once(ex, "stopped accepting connections", "tasks/cancel")


@pytest.mark.parametrize("argv", [EXITS, list(REFERENCE)], ids=["exits-on-cancel", "reference"])
def test_with_server_command_the_exit_code_is_known(argv: list[str]) -> None:
    port = free_port()
    ex = run(url=f"http://127.0.0.1:{port}/mcp",
             server_command=[*argv, "--transport", "http", "--port", str(port)], **LEGACY)
    if argv is EXITS:
        _assert_named_once(ex, "exited with code 1", "its output: ", "RuntimeError")
    else:
        # Stopped by the run at its end (SIGTERM): not a crash.
        crash = next(c for c in ex.result.checks if c.id == CRASH)
        assert crash.bucket == "passed" and ex.result.outcome == "passed", crash.message


def test_the_reference_server_stays_up() -> None:
    ex = run(**stdio(list(REFERENCE), process=True), **LEGACY)
    crash = next(c for c in ex.result.checks if c.id == CRASH)
    assert crash.bucket == "passed" and ex.result.outcome == "passed"


# ---------------------------------------------------------------- the decision, on hand-built replies
def _reply(method: str, seq: int, answer: int | None = None, *, lost: bool = False) -> Reply:
    r = Reply(method, seq, seq, response_seq=answer, result={} if answer else None, lost=lost,
              transport_problem="the server closed its output stream" if lost else None)
    return r


class _Http:
    uses_headers = True

    def exit_code(self) -> int | None:
        return None

    def output_tail(self) -> str:
        return ""


class _Stdio(_Http):
    uses_headers = False

    def exit_code(self) -> int | None:
        return 3

    def output_tail(self) -> str:
        return "boom\npanic: store"


def test_a_lost_request_over_stdio_is_the_end_and_names_the_last_answer() -> None:
    poll = Poll(ran=True, gets=[_reply("tasks/get", 1, 2), _reply("tasks/get", 3, None, lost=True)])
    gone = server_gone([poll], _Stdio(), None)  # type: ignore[arg-type]
    assert gone is not None and gone.how is GoneHow.EXITED and gone.exit_code == 3
    assert gone.after_method == "tasks/get" and gone.after_seq == 2 and gone.lost_seqs == (3,)
    assert gone.statement() == ("the server exited with code 3 after answering tasks/get; 1 request was left "
                                "unanswered (tasks/get); stderr: boom | panic: store")


def test_a_request_never_written_is_no_evidence() -> None:
    # Settled by the closing pipe before it became a frame (seq -1): the crash's evidence names
    # only frames the wire log holds, or the failure could not rest on them.
    poll = Poll(ran=True, gets=[_reply("tasks/get", 1, 2), _reply("tasks/get", 3, None, lost=True),
                                _reply("tasks/get", -1, None, lost=True)])
    gone = server_gone([poll], _Stdio(), None)  # type: ignore[arg-type]
    assert gone is not None and gone.lost_seqs == (3,)


def test_over_http_one_dropped_exchange_then_answers_again_is_not_a_crash() -> None:
    poll = Poll(ran=True, gets=[_reply("tasks/get", 1, 2), _reply("tasks/get", 3, None, lost=True),
                                _reply("tasks/get", 5, 6)])
    assert server_gone([poll], _Http(), None) is None  # type: ignore[arg-type]
    # Refused after its last answer, and nothing answered again: gone.
    poll.gets.append(_reply("tasks/get", 7, None, lost=True))
    gone = server_gone([poll], _Http(), None)  # type: ignore[arg-type]
    assert gone is not None and gone.how is GoneHow.UNREACHABLE
    # --server-command knows the process's own exit code.
    gone = server_gone([poll], _Http(), ServerExit(exit_code=1, output_tail="x"))  # type: ignore[arg-type]
    assert gone is not None and gone.how is GoneHow.EXITED and "its output: x" in gone.statement()


def test_a_server_that_never_answered_is_the_connection_problem_not_a_crash() -> None:
    poll = Poll(ran=True, gets=[_reply("tasks/get", 1, None, lost=True)])
    assert server_gone([poll], _Stdio(), None) is None  # type: ignore[arg-type]
    assert server_gone([Poll(gets=[_reply("tasks/get", 1, 2)])], _Stdio(), None) is None  # type: ignore[arg-type]


def _evidence(gone: ServerGone | None, cancel: Cancel) -> Evidence:
    return Evidence(wire_log=WireLog(), discovery=Discovery(protocol_version="2025-11-25", wire=Wire.LEGACY),
                    transport="stdio",
                    records={Cancel.probe: cancel}, server_gone=gone)


def test_a_check_defers_only_for_the_requests_the_crash_left_unanswered() -> None:
    spec = CHECKS["tasks-cancel-ack-shape"]
    cancel = Cancel(ran=True, cancel=_reply("tasks/cancel", 5, None, lost=True))
    gone = ServerGone(GoneHow.EXITED, 1, "", "tasks/get", 4, (5,))
    missing = failed("tasks/cancel got no answer", evidence=[5])
    v = after_server_gone(spec, _evidence(gone, cancel), missing)
    assert v.skip_reason == "could-not-run" and v.blocked_by == CRASH and v.cause is not None
    assert v.cause.kind is CauseKind.SERVER_GONE
    # Without the crash the verdict stands; a failure on frames from before the end stands too.
    assert after_server_gone(spec, _evidence(None, cancel), missing) is missing
    earlier = failed("the ack had the wrong shape", evidence=[2, 3])
    assert after_server_gone(spec, _evidence(gone, cancel), earlier) is earlier
    # A check that lost nothing keeps its verdict.
    untouched = Cancel(ran=True, cancel=_reply("tasks/cancel", 1, 2))
    cnr = could_not_run(unmet("something else", "change it"))
    assert after_server_gone(spec, _evidence(gone, untouched), cnr) is cnr
    # The crash check itself is never deferred.
    assert after_server_gone(CHECKS[CRASH], _evidence(gone, cancel), missing) is missing
