"""Two 2025-11-25 rules judged for real: a server request made for a task carries the related-task
_meta (S-LEG-MUST-13), and every task tasks/get reads is reachable through tasks/list's pages
(S-LEG-MUST-16/17). Hand-built evidence for the judges, and runs against fixture servers."""

from __future__ import annotations

import json
from typing import Any

from helpers.paths import BROKEN, DEMO_INPUT, REFERENCE
from helpers.processes import http_server
from helpers.runs import run, stdio

from tasks_conformance.core.rpc.peer import Reply
from tasks_conformance.core.verdict import Verdict
from tasks_conformance.core.wirelog import Frame, WireLog
from tasks_conformance.core.wires import CreatedTask, Wire
from tasks_conformance.server.checks import CHECKS
from tasks_conformance.server.evidence import (
    Discovery,
    Evidence,
    InputRequestSeen,
    InputTask,
    InputTie,
    StopReason,
    ToolChoice,
)
from tasks_conformance.server.evidence.legacy_records import LIST_EXTRA_TASKS
from tasks_conformance.server.probes.input_ties import tied_input_requests
from tasks_conformance.server.runner import judge

RELATED = "io.modelcontextprotocol/related-task"
INPUT_CHECK = "tasks-input-required-update-completes"
LIST_CHECK = "tasks-legacy-list-includes-task"


class Log:
    """A wire log written frame by frame; `out`/`inn` return the frame's seq."""

    def __init__(self) -> None:
        self.log = WireLog()
        self.server_requests: list[Frame] = []

    def out(self, msg: dict[str, Any]) -> int:
        return self.log.record("out", "stdio", json.dumps({"jsonrpc": "2.0", **msg}).encode()).seq

    def inn(self, msg: dict[str, Any], reply_to: int | None = None) -> int:
        frame = self.log.record("in", "stdio", json.dumps({"jsonrpc": "2.0", **msg}).encode(), reply_to=reply_to)
        if "method" in msg and "id" in msg:
            self.server_requests.append(frame)
        return frame.seq

    def elicit(self, meta: dict[str, Any] | None = None, reply_to: int | None = None) -> int:
        params: dict[str, Any] = {"mode": "form", "message": "confirm?", "requestedSchema": {}}
        if meta is not None:
            params["_meta"] = meta
        return self.inn({"id": f"s{len(self.server_requests)}", "method": "elicitation/create", "params": params},
                        reply_to)

    def ties(self, since: int) -> list[tuple[int, InputTie]]:
        return [(r.seq, r.tie) for r in tied_input_requests(self.log, self.server_requests, "t1", since)]


def test_a_request_naming_the_task_is_tied_by_its_meta_and_one_naming_another_is_not() -> None:
    w = Log()
    created = w.inn({"id": 1, "result": {"task": {"taskId": "t1"}}})
    mine = w.elicit({RELATED: {"taskId": "t1"}})
    w.elicit({RELATED: {"taskId": "other"}})
    assert w.ties(created) == [(mine, InputTie.META)]


def test_over_stdio_a_bare_request_is_the_tasks_unless_a_synchronous_call_was_outstanding() -> None:
    w = Log()
    created = w.inn({"id": 1, "result": {"task": {"taskId": "t1"}}})
    # A call that made a task asks nothing itself: while only it is open, a bare request is the task's.
    w.out({"id": 2, "method": "tools/call", "params": {"name": "slow", "task": {}}})
    live = w.elicit()
    w.inn({"id": 2, "result": {"task": {"taskId": "t2"}}})
    # A synchronous call may ask for input itself: a bare request meanwhile cannot be told apart.
    w.out({"id": 3, "method": "tools/call", "params": {"name": "confirm"}})
    untold = w.elicit()
    w.inn({"id": 3, "result": {"content": []}})
    after = w.elicit()
    assert w.ties(created) == [(live, InputTie.LIVE), (untold, InputTie.UNTOLD), (after, InputTie.LIVE)]


def test_over_http_the_stream_says_whose_a_request_is() -> None:
    w = Log()
    created = w.inn({"id": 1, "result": {"task": {"taskId": "t1"}}})
    on_result = w.out({"id": 2, "method": "tasks/result", "params": {"taskId": "t1"}})
    on_call = w.out({"id": 3, "method": "tools/call", "params": {"name": "confirm"}})
    on_other = w.out({"id": 4, "method": "tasks/result", "params": {"taskId": "t2"}})
    mine = w.elicit(reply_to=on_result)
    w.elicit(reply_to=on_call)
    w.elicit(reply_to=on_other)
    assert w.ties(created) == [(mine, InputTie.STREAM)]


def _input_evidence(w: Log, seen: list[InputRequestSeen], statuses: list[str]) -> Evidence:
    rec = InputTask(ran=True, tool="confirm")
    call = Reply("tools/call", 1, w.out({"id": 1, "method": "tools/call", "params": {"name": "confirm", "task": {}}}))
    call.result = {"task": {"taskId": "t1", "status": "working"}}
    rec.call, rec.created = call, CreatedTask.read(call.result)
    rec.poll.ran, rec.poll.statuses, rec.poll.stop = True, statuses, StopReason.TERMINAL
    rec.poll.input_requests = seen
    rec.poll.elicitations = [s.seq for s in seen]
    return Evidence(wire_log=w.log, discovery=Discovery(protocol_version="2025-11-25", wire=Wire.LEGACY),
                    transport="stdio",
                    tool=ToolChoice("confirm", "test"), records={InputTask.probe: rec},
                    roles={"input": ToolChoice("confirm", "test")})


def _verdict(check_id: str, ev: Evidence) -> Verdict:
    return judge(CHECKS[check_id], ev, interrupted=False)


def test_a_request_tied_to_the_task_without_the_meta_fails_even_when_no_poll_saw_input_required() -> None:
    w = Log()
    bare = w.elicit()
    # The question was asked and answered between two polls: no poll read input_required.
    v = _verdict(INPUT_CHECK, _input_evidence(w, [InputRequestSeen(bare, "elicitation/create", InputTie.STREAM,
                                                                    False)], ["working", "completed"]))
    assert v.status == "failed" and v.broken == ("S-LEG-MUST-13",) and "tasks/result stream" in v.message
    named = w.elicit({RELATED: {"taskId": "t1"}})
    v = _verdict(INPUT_CHECK, _input_evidence(w, [InputRequestSeen(named, "elicitation/create", InputTie.META,
                                                                    True)], ["working", "completed"]))
    assert v.status == "passed", v.message


def test_a_request_that_cannot_be_told_apart_counts_as_asking_but_is_not_failed() -> None:
    w = Log()
    untold = w.elicit()
    v = _verdict(INPUT_CHECK, _input_evidence(w, [InputRequestSeen(untold, "elicitation/create", InputTie.UNTOLD,
                                                                    False)], ["working", "completed"]))
    # Evidence that the task asked (not "never asked"), but its _meta is not judged, and the
    # message says so (it used to say "the elicitation carried the related-task _meta").
    assert v.status == "passed", v.message
    assert "not judged" in v.message and "carried the related-task _meta" not in v.message
    assert v.message_policies == ("P-42",)
    v = _verdict(INPUT_CHECK, _input_evidence(w, [], ["working", "completed"]))
    assert v.skip_reason == "not-applicable" and "never asked" in v.message


def _failures(ex: Any) -> dict[str, str]:
    return {c.id: c.message for c in ex.result.checks if c.bucket == "failed"}


def test_the_elicitation_without_meta_fails_over_stdio_and_only_that_check() -> None:
    ex = run(**stdio([*BROKEN, "--break", "legacy-input-without-meta"]), protocol_version="2025-11-25",
             tool_name="long_job", probes=["input=confirm_action"], input_responses=DEMO_INPUT,
             poll_timeout_ms=3_000)
    assert set(_failures(ex)) == {INPUT_CHECK}, _failures(ex)
    assert "S-LEG-MUST-13" in _failures(ex)[INPUT_CHECK]


def test_over_http_the_stream_ties_the_elicitation_whichever_tasks_result_carried_it() -> None:
    # Over HTTP the server asks on the first tasks/result stream open for the task, often the one
    # sent while the task runs, not polling's own: the request is still the task's.
    server = http_server([*BROKEN, "--break", "legacy-input-without-meta"])
    try:
        ex = run(url=server.url, protocol_version="2025-11-25", tool_name="confirm_action",
                 input_responses=DEMO_INPUT, poll_timeout_ms=3_000)
    finally:
        server.stop()
    fails = _failures(ex)
    assert set(fails) == {INPUT_CHECK} and "tasks/result stream" in fails[INPUT_CHECK], fails


def _list_check(ex: Any) -> Any:
    return next(c for c in ex.result.checks if c.id == LIST_CHECK)


def test_a_server_that_pages_correctly_passes_after_its_pages_were_followed() -> None:
    ex = run(**stdio([*BROKEN, "--break", "legacy-small-pages"]), protocol_version="2025-11-25",
             poll_timeout_ms=3_000)
    got = _list_check(ex)
    assert got.bucket == "passed" and not _failures(ex), (got.message, _failures(ex))
    pages = int(got.message.split(" page(s)")[0].rsplit(" ", 1)[1])
    # Two tasks a page and at least 1 + LIST_EXTRA_TASKS of ours: the cursors had to be followed.
    assert pages >= (1 + LIST_EXTRA_TASKS + 1) // 2, got.message


def test_a_server_that_does_not_page_passes() -> None:
    ex = run(**stdio(list(REFERENCE)), protocol_version="2025-11-25", poll_timeout_ms=3_000)
    got = _list_check(ex)
    assert got.bucket == "passed" and "did not page" in got.message, got.message


def test_a_dropped_next_cursor_fails_on_both_paging_rules() -> None:
    ex = run(**stdio([*BROKEN, "--break", "legacy-list-drops-cursor"]), protocol_version="2025-11-25",
             poll_timeout_ms=3_000)
    assert set(_failures(ex)) == {LIST_CHECK}, _failures(ex)
    got = _list_check(ex)
    assert got.broken == ["S-LEG-MUST-17", "S-LEG-MUST-16"], got.broken
