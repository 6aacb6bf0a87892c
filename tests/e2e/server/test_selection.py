"""Selecting checks runs only the probes they need; unknown ids, categories and areas are usage errors."""

from __future__ import annotations

import json

from helpers.paths import REFERENCE
from helpers.runs import run, stdio, tool


def _methods(ex) -> list[str]:  # type: ignore[no-untyped-def]
    out = []
    for f in ex.wire:
        msg = f.json()
        if f.direction == "out" and isinstance(msg, dict) and "method" in msg:
            out.append(msg["method"])
    return out


def test_wire_resolvable_alone_calls_no_tool() -> None:
    ex = run(**stdio(REFERENCE), check_ids=["tasks-wire-resolvable"], tool_name="slow_compute")
    assert [c.id for c in ex.result.checks] == ["tasks-wire-resolvable"]
    assert ex.result.outcome == "passed"
    methods = _methods(ex)
    assert "tools/call" not in methods and not any(m.startswith("tasks/") for m in methods)


def test_category_selects_its_checks_and_check_id_wins() -> None:
    ex = run(**stdio(REFERENCE), categories=["creation"], tool_name="slow_compute")
    assert {c.category for c in ex.result.checks} == {"creation"}
    assert "tasks/get" not in _methods(ex)  # no polling for creation checks
    ex = run(**stdio(REFERENCE), categories=["creation"], check_ids=["tasks-ttl-shape"], tool_name="slow_compute")
    assert [c.id for c in ex.result.checks] == ["tasks-ttl-shape"]


def test_area_selects_its_checks_by_name_or_prefix_and_narrows_a_category() -> None:
    from tasks_conformance.server.checks import CHECKS

    ex = run(**stdio(REFERENCE), areas=["cancel"], tool_name="slow_compute")
    assert {c.id for c in ex.result.checks} == {c.id for c in CHECKS.values() if c.area == "cancel"}
    assert {c.area for c in ex.result.checks} == {"cancel"}
    prefixed = run(**stdio(REFERENCE), areas=["input"], tool_name="confirm_action").result.checks
    assert {c.area for c in prefixed} == {"input", "input_requests"}
    both = run(**stdio(REFERENCE), areas=["cancel", "status"], categories=["lifecycle"], tool_name="slow_compute")
    assert {c.id for c in both.result.checks} == {c.id for c in CHECKS.values()
                                                   if c.area in ("cancel", "status") and c.category == "lifecycle"}


def test_an_area_that_names_none_is_a_usage_error_listing_them() -> None:
    proc = tool("--command", "true", "--area", "nowhere")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "--area nowhere names no spec area; the areas: liveness, discovery" in proc.stderr, proc.stderr
    listed = tool("--list-checks", "--format", "json")
    assert {c["id"]: c["area"] for c in json.loads(listed.stdout)["checks"]}["tasks-cancel-ack-shape"] == "cancel"


def test_unknown_check_id_and_category_exit_2_listing_valid_ones() -> None:
    proc = tool("--command", "true", "--check-id", "tasks-nope")
    assert proc.returncode == 2
    assert "tasks-wire-resolvable" in proc.stderr and "Traceback" not in proc.stderr
    proc = tool("--command", "true", "--category", "weird")
    assert proc.returncode == 2 and "dispatch" in proc.stderr


def test_extension_without_tool_name_is_could_not_run_naming_tools() -> None:
    ex = run(**stdio(REFERENCE))
    c = {c.id: c for c in ex.result.checks}["tasks-result-type-discipline"]
    assert c.bucket == "could-not-run"
    assert "--tool-name" in c.message and "slow_compute" in c.message
    assert ex.result.outcome == "incomplete"
    assert ex.result.incompleteReason and "tasks-result-type-discipline" in ex.result.incompleteReason
    assert "tools/call" not in _methods(ex)


def test_unknown_tool_name_is_could_not_run_naming_listed_tools() -> None:
    ex = run(**stdio(REFERENCE), tool_name="no_such_tool")
    c = {c.id: c for c in ex.result.checks}["tasks-ttl-shape"]
    assert c.bucket == "could-not-run" and "no_such_tool" in c.message and "echo" in c.message


def test_naming_a_forbidden_tool_on_legacy_is_could_not_run_not_a_server_failure() -> None:
    ex = run(**stdio(REFERENCE), protocol_version="2025-11-25", tool_name="echo")
    assert ex.result.outcome == "incomplete"
    c = {c.id: c for c in ex.result.checks}["tasks-result-type-discipline"]
    assert c.bucket == "could-not-run" and "forbidden" in c.message and "long_job" in c.message
    # No params.task was sent to the forbidden tool as the task tool; the only tools/call frames are
    # the probe roles' own (the inferred required and sync tools), which never run as the task tool.
    notes = [f.note for f in ex.wire if f.direction == "out" and (f.json() or {}).get("method") == "tools/call"]
    assert notes and all(n and ("required tool" in n or "never-task tool" in n) for n in notes), notes


def test_expect_wire_chooses_the_era_on_a_server_of_both() -> None:
    ex = run(**stdio(REFERENCE), check_ids=["tasks-wire-resolvable"], expect_wire="legacy")
    assert ex.result.discovery.wire == "legacy" and ex.result.outcome == "passed"
