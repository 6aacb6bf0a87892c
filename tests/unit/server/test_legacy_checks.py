"""The 2025-11-25 checks on hand-built evidence: frames in the order they crossed the wire."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from helpers.evidence import Wire2025, result, task, verdict

from tasks_conformance.core.wirelog import HttpMeta
from tasks_conformance.core.wires import CreatedTask
from tasks_conformance.server.evidence import (
    Cancel,
    DeclaredCall,
    ListBadCursor,
    Poll,
    RelatedMetaOverride,
    ResultWhileRunning,
    TaskIds,
    TaskListing,
    TaskProgress,
    TerminalRereads,
)

BLOCKS = "tasks-legacy-result-blocks"
IMMUTABLE = "tasks-terminal-status-immutable"


def _result_sent_while_running() -> tuple[Wire2025, ResultWhileRunning]:
    """A created task and the tasks/result sent on it at once, not yet answered."""
    w = Wire2025()
    w.create()
    early = w.record(ResultWhileRunning)
    early.task_id = "t1"
    early.result = w.send("tasks/result", {"taskId": "t1"})
    return w, early


def test_tasks_result_answered_after_the_end_with_the_outcome_passes() -> None:
    w, early = _result_sent_while_running()
    w.poll("working")
    w.poll("completed")
    w.answer(early.result, {"result": result("done")})
    w.final_result()
    v = verdict(BLOCKS, w.ev)
    assert v.status == "passed" and "still showed the task running" in v.message


def test_tasks_result_answered_while_a_later_read_says_working_fails() -> None:
    w = Wire2025()
    w.create()
    early = w.record(ResultWhileRunning)
    early.result = w.exchange("tasks/result", {"taskId": "t1"}, {"result": result("done")})
    w.poll("working")
    w.poll("completed")
    w.final_result()
    v = verdict(BLOCKS, w.ev)
    assert v.status == "failed" and "S-LEG-MUST-11" in v.message and "'working'" in v.message


def test_a_working_read_after_the_end_was_seen_is_the_immutability_checks_not_this_ones() -> None:
    """One defect, one failure: a read that says working after one that showed the end is an
    ended task's status flipping (tasks-terminal-status-immutable's rule), not tasks/result
    answering early (seen in CI with fixtures' terminal-status-flips under load)."""
    w, early = _result_sent_while_running()
    w.poll("working")
    w.poll("completed")
    w.answer(early.result, {"result": result("done")})
    w.poll("working")
    w.final_result()
    assert verdict(BLOCKS, w.ev).status == "passed"


def test_a_working_poll_after_the_listings_read_showed_the_end_is_the_immutability_checks() -> None:
    """The same when the read that first showed the end was not a poll but the listing's tasks/get of
    the task, between two polls (CI#17, terminal-status-flips under load): the flip is still an
    ended task's status changing."""
    w, early = _result_sent_while_running()
    w.poll("working")
    w.answer(early.result, {"result": result("done")})
    w.record(TaskListing).reads.append(w.exchange("tasks/get", {"taskId": "t1"}, {"result": task("completed")}))
    w.poll("working")
    w.poll("completed")
    w.final_result()
    assert verdict(BLOCKS, w.ev).status == "passed"
    # Another task's read showing its end tells nothing of this one's: the early answer fails.
    w.record(TaskListing).reads[0].result = task("completed") | {"taskId": "t2"}
    assert verdict(BLOCKS, w.ev).status == "failed"


def test_a_working_poll_after_the_related_meta_read_showed_the_end_is_the_immutability_checks() -> None:
    """The same when the read that first showed the end was the related-meta probe's tasks/get of
    the task (CI#31, terminal-status-flips under load); its read of another task tells nothing."""
    w, early = _result_sent_while_running()
    w.poll("working")
    w.answer(early.result, {"result": result("done")})
    meta_read = w.exchange("tasks/get", {"taskId": "t1"}, {"result": task("completed")})
    w.record(RelatedMetaOverride).meta_names_other = meta_read
    w.poll("working")
    w.poll("completed")
    w.final_result()
    assert verdict(BLOCKS, w.ev).status == "passed"
    meta_read.result = task("completed") | {"taskId": "t2"}
    assert verdict(BLOCKS, w.ev).status == "failed"


def test_a_poll_saying_working_after_the_listings_read_showed_the_end_fails_immutability() -> None:
    """The flip the result-blocks check defers is judged here: the listing's tasks/get showed the
    task completed, and a poll sent after that answer says working (CI#21, terminal-status-flips
    under load, where no check failed); the same polls with no read of the end before pass."""
    def run(listed: str) -> str:
        w = Wire2025()
        w.create()
        w.poll("working")
        w.record(TaskListing).reads.append(w.exchange("tasks/get", {"taskId": "t1"}, {"result": task(listed)}))
        w.poll("working")
        w.poll("completed")
        rereads = w.record(TerminalRereads)
        rereads.task_id, rereads.terminal_status = "t1", "completed"
        rereads.gets += [w.exchange("tasks/get", {"taskId": "t1"}, {"result": task("completed")}) for _ in range(2)]
        return str(verdict(IMMUTABLE, w.ev).status)

    assert run("completed") == "failed"
    assert run("working") == "passed"


def test_an_early_answer_that_is_not_the_outcome_fails_whatever_the_order() -> None:
    w, early = _result_sent_while_running()
    w.poll("working")
    w.answer(early.result, {"error": {"code": -32603, "message": "not ready"}})
    w.poll("completed")
    w.final_result()
    v = verdict(BLOCKS, w.ev)
    assert v.status == "failed" and "other content" in v.message


def test_tasks_result_sent_after_the_end_was_seen_judges_nothing() -> None:
    w = Wire2025()
    w.create()
    w.poll("completed")
    early = w.record(ResultWhileRunning)
    early.result = w.exchange("tasks/result", {"taskId": "t1"}, {"result": result("done")})
    w.final_result()
    assert verdict(BLOCKS, w.ev).skip_reason == "could-not-run"


def test_tasks_result_never_answered_after_the_end_fails() -> None:
    w, early = _result_sent_while_running()
    early.result.timed_out = True
    w.poll("working")
    w.poll("completed")
    w.final_result()
    assert verdict(BLOCKS, w.ev).status == "failed"


def _listing(w: Wire2025, *pages: list[str], cursor_code: int = -32602) -> TaskListing:
    rec = w.record(TaskListing)
    rec.task_id = "t1"
    for n, ids in enumerate(pages):
        page: dict[str, Any] = {"tasks": [task("working", tid) for tid in ids]}
        if n + 1 < len(pages):
            page["nextCursor"] = f"c{n + 1}"
        rec.pages.append(w.exchange("tasks/list", {}, {"result": page}))
    # Our task, read once the listing was done (readable: it must be listed).
    rec.ours = ["t1"]
    rec.reads = [w.exchange("tasks/get", {"taskId": "t1"}, {"result": task("working")})]
    bad = w.record(ListBadCursor)
    bad.bad_cursor = "made-up"
    answer = ({"error": {"code": cursor_code, "message": "bad cursor"}} if cursor_code
              else {"result": {"tasks": []}})
    bad.bad_cursor_reply = w.exchange("tasks/list", {"cursor": "made-up"}, answer)
    bad.ran = True
    return rec


def test_tasks_list_must_show_our_task_on_some_page() -> None:
    w = Wire2025()
    w.create()
    _listing(w, ["a", "b"], ["t1"])
    v = verdict("tasks-legacy-list-includes-task", w.ev)
    assert v.status == "passed" and "2 page(s)" in v.message
    w = Wire2025()
    w.create()
    _listing(w, ["a"], ["b"])
    v = verdict("tasks-legacy-list-includes-task", w.ev)
    assert v.status == "failed" and "S-LEG-MUST-17" in v.message


def test_a_listing_cut_short_by_our_bound_does_not_fail() -> None:
    w = Wire2025()
    w.create()
    rec = _listing(w, ["a"])
    rec.stopped = "20 pages read"
    v = verdict("tasks-legacy-list-includes-task", w.ev)
    assert v.skip_reason == "could-not-run" and v.message_policies == ("P-27",)
    rec.pages.append(w.exchange("tasks/list", {"cursor": "c1"}, {"result": {"tasks": [task("working")]}}))
    v = verdict("tasks-legacy-list-includes-task", w.ev)
    assert v.status == "passed" and v.warnings[0].policies == ("P-27",)


def test_a_made_up_cursor_must_get_invalid_params() -> None:
    w = Wire2025()
    _listing(w, ["t1"])
    assert verdict("tasks-legacy-list-invalid-cursor", w.ev).status == "passed"
    w = Wire2025()
    _listing(w, ["t1"], cursor_code=0)
    v = verdict("tasks-legacy-list-invalid-cursor", w.ev)
    assert v.status == "failed" and "S-LEG-MUST-16" in v.message


def test_tasks_list_is_not_applicable_without_its_capability() -> None:
    w = Wire2025(caps={"tasks": {"requests": {"tools": {"call": {}}}}})
    w.create()
    rec = w.record(TaskListing)
    rec.ran, rec.no_list_capability = False, True
    bad = w.record(ListBadCursor)
    bad.ran, bad.no_list_capability = False, True
    assert verdict("tasks-legacy-list-includes-task", w.ev).skip_reason == "not-applicable"
    assert verdict("tasks-legacy-list-invalid-cursor", w.ev).skip_reason == "not-applicable"


def test_a_made_up_cursor_is_judged_with_no_task_of_ours() -> None:
    """The made-up cursor needs no task: a run whose tool made none still has it judged (it used
    to be could-not-run, "no task was created by the declared tools/call")."""
    from tasks_conformance.server.probes import load_probes

    spec = load_probes()["list-bad-cursor"]
    assert not spec.preconditions and spec.brief


def test_params_task_id_must_win_over_the_related_task_meta() -> None:
    w = Wire2025()
    w.create()
    rec = w.record(RelatedMetaOverride)
    rec.task_id, rec.other_id = "t1", "other"
    rec.meta_names_other = w.exchange("tasks/get", {"taskId": "t1"}, {"result": task("working")})
    rec.params_names_other = w.exchange("tasks/get", {"taskId": "other"},
                                        {"error": {"code": -32602, "message": "unknown"}})
    assert verdict("tasks-legacy-task-id-wins", w.ev).status == "passed"
    rec.params_names_other = w.exchange("tasks/get", {"taskId": "other"}, {"result": task("working")})
    v = verdict("tasks-legacy-task-id-wins", w.ev)
    assert v.status == "failed" and "S-LEG-MUST-14" in v.message


def test_a_cancelled_task_that_reads_working_again_fails() -> None:
    w = Wire2025()
    w.create()
    w.poll("working")
    w.poll("completed")
    cancel = w.record(Cancel)
    cancel.cancel = w.exchange("tasks/cancel", {"taskId": "t2"}, {"result": task("cancelled", "t2")})
    cancel.after = w.exchange("tasks/get", {"taskId": "t2"}, {"result": task("cancelled", "t2")})
    v = verdict("tasks-legacy-status-transitions", w.ev)
    assert v.status == "passed" and "working → completed" in v.message
    cancel.after = w.exchange("tasks/get", {"taskId": "t2"}, {"result": task("working", "t2")})
    v = verdict("tasks-legacy-status-transitions", w.ev)
    assert v.status == "failed" and "S-LEG-MUST-20" in v.message


def test_a_status_change_off_the_allowed_paths_fails() -> None:
    w = Wire2025()
    w.create()
    w.poll("input_required")
    w.poll("working")
    w.poll("completed")
    assert verdict("tasks-legacy-status-transitions", w.ev).status == "passed"
    w = Wire2025()
    w.create()
    rec = w.record(Poll)
    rec.gets.append(w.exchange("tasks/get", {"taskId": "t1"}, {"result": task("failed")}))
    w.records[DeclaredCall.probe].created = CreatedTask("t1", "nested", task("completed"))
    v = verdict("tasks-legacy-status-transitions", w.ev)
    assert v.status == "failed" and "completed → failed" in v.message and "S-LEG-MUST-07" in v.message


def test_a_related_task_meta_that_leaves_tasks_get_unanswered_fails() -> None:
    w = Wire2025()
    w.create()
    rec = w.record(RelatedMetaOverride)
    rec.task_id, rec.other_id = "t1", "other"
    rec.meta_names_other = w.send("tasks/get", {"taskId": "t1"})
    rec.meta_names_other.timed_out = True
    rec.params_names_other = w.send("tasks/get", {"taskId": "other"})
    rec.params_names_other.timed_out = True
    # Nothing shows the server answers a plain tasks/get: no verdict on the _meta.
    assert verdict("tasks-legacy-task-id-wins", w.ev).skip_reason == "could-not-run"
    w.poll("working")
    v = verdict("tasks-legacy-task-id-wins", w.ev)
    assert v.status == "failed" and "without it is answered" in v.message and "S-LEG-MUST-14" in v.message


def test_a_related_task_meta_on_results_or_status_notifications_warns() -> None:
    w = Wire2025()
    w.create()
    w.poll("working")
    assert not verdict("tasks-legacy-related-meta-absent", w.ev).warnings
    rec = w.record(Poll)
    rec.gets.append(w.exchange("tasks/get", {"taskId": "t1"}, {"result": {
        **task("completed"), "_meta": {"io.modelcontextprotocol/related-task": {"taskId": "t1"}}}}))
    v = verdict("tasks-legacy-related-meta-absent", w.ev)
    assert v.status == "passed" and len(v.warnings) == 1 and "S-LEG-SHOULD-04" in v.warnings[0].text
    assert "tasks/get #2" in v.warnings[0].text
    note = w.log.record("in", "stdio", json.dumps({"jsonrpc": "2.0", "method": "notifications/tasks/status",
                                                     "params": {"status": "done"}}).encode())
    v = verdict("tasks-legacy-related-meta-absent", replace(w.ev, notifications=(note,)))
    assert v.status == "passed" and any("has no taskId" in x.text for x in v.warnings)


def _poll_over_http(w: Wire2025, content_type: str) -> None:
    rec = w.record(Poll)
    out = w.send("tasks/get", {"taskId": "t1"})
    meta = HttpMeta("POST", "http://127.0.0.1/mcp", 200, response_headers=(("Content-Type", content_type),))
    channel = "sse" if content_type == "text/event-stream" else "http"
    inn = w.log.record("in", channel, json.dumps({"jsonrpc": "2.0", "id": out.request_id,
                                                    "result": task("working")}).encode(), http=meta)
    out.response_seq, out.result, out.http = inn.seq, task("working"), meta
    rec.gets.append(out)


def test_a_tasks_get_answered_as_sse_warns_over_http() -> None:
    w = Wire2025()
    w.create()
    _poll_over_http(w, "application/json")
    http_ev = replace(w.ev, transport="http")
    assert verdict("tasks-legacy-get-plain-json", http_ev).warnings == ()
    _poll_over_http(w, "text/event-stream")
    v = verdict("tasks-legacy-get-plain-json", replace(w.ev, transport="http"))
    assert v.status == "passed" and "1 of 2" in v.warnings[0].text and "S-LEG-SHOULD-08" in v.warnings[0].text
    assert verdict("tasks-legacy-get-plain-json", w.ev).skip_reason == "not-applicable"  # stdio


def _progress(w: Wire2025, token: str) -> int:
    return w.log.record("in", "stdio", json.dumps({"jsonrpc": "2.0", "method": "notifications/progress", "params": {
        "progressToken": token, "progress": 1, "total": 4}}).encode()).seq


def _progress_task(w: Wire2025, before_end: list[str], after_end: list[str]) -> TaskProgress:
    rec = w.record(TaskProgress)
    rec.token, rec.task_id = "tok", "t2"
    rec.create = w.exchange("tools/call", {"name": "slow", "task": {}}, {"result": {"task": task("working", "t2")}})
    rec.result = w.send("tasks/result", {"taskId": "t2"})
    rec.frames += [_progress(w, t) for t in before_end]
    w.answer(rec.result, {"result": result("done")})
    rec.ended = w.exchange("tasks/get", {"taskId": "t2"}, {"result": task("completed", "t2")})
    rec.frames += [_progress(w, t) for t in after_end]
    rec.later = w.exchange("tasks/get", {"taskId": "t2"}, {"result": task("completed", "t2")})
    return rec


def test_progress_with_the_token_until_the_end_passes_and_after_it_fails() -> None:
    w = Wire2025()
    w.create()
    _progress_task(w, ["tok", "tok"], [])
    v = verdict("tasks-legacy-progress-token", w.ev)
    assert v.status == "passed" and v.message.startswith("2 ")
    w = Wire2025()
    w.create()
    _progress_task(w, ["tok"], ["tok"])
    v = verdict("tasks-legacy-progress-token", w.ev)
    assert v.status == "failed" and "after tasks/get showed it completed" in v.message and "S-LEG-MUST-23" in v.message


def test_progress_with_a_token_nobody_sent_fails_and_no_progress_is_not_applicable() -> None:
    w = Wire2025()
    w.create()
    _progress_task(w, ["other"], [])
    v = verdict("tasks-legacy-progress-token", w.ev)
    assert v.status == "failed" and "'other'" in v.message
    w = Wire2025()
    w.create()
    _progress_task(w, [], [])
    assert verdict("tasks-legacy-progress-token", w.ev).skip_reason == "not-applicable"


def _legacy_ids(w: Wire2025, ids: list[str], *, credentials: bool) -> None:
    w.create()
    rec: TaskIds = w.record(TaskIds)
    rec.ids = ["t1", *ids]
    rec.credentials = credentials
    for tid in ids:
        rec.calls.append(w.exchange("tools/call", {"name": "slow", "task": {}}, {"result": {"task": task("working",
                                                                                                        tid)}}))


def test_legacy_sequential_ids_fail_without_credentials_and_warn_with_them() -> None:
    # S-LEG-MUST-22 binds where tasks cannot be tied to an authorization context (policy P-31).
    w = Wire2025()
    _legacy_ids(w, ["t2", "t3"], credentials=False)
    v = verdict("tasks-task-id-entropy", w.ev)
    assert v.status == "failed" and "S-LEG-MUST-22" in v.message and "sequential" in v.message
    w = Wire2025()
    _legacy_ids(w, ["t2", "t3"], credentials=True)
    v = verdict("tasks-task-id-entropy", w.ev)
    assert v.status == "passed" and any(x.policies == ("P-31",) and "S-LEG-MUST-22" in x.text
                                        for x in v.warnings), v.warnings


def test_legacy_random_ids_pass_without_a_warning() -> None:
    w = Wire2025()
    _legacy_ids(w, ["Zq3-9fJk2LpQw8RtYv1Xn0aB", "c7Hh2Kd9_Pp4Ww1Ee6Rr8Tt0"], credentials=False)
    w.records["task-ids"].ids[0] = "olBKYEa6H6QClB9FJ92H_mXE"
    v = verdict("tasks-task-id-entropy", w.ev)
    assert v.status == "passed" and not v.warnings, (v.message, v.warnings)
