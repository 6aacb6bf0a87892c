"""One defect, one failure: every failure names its rules and frames; a rule several checks judge
has one owner (data, in the registry); a check that fails a rule its owner fails too defers to it.
And the four cases where two checks used to fail for one defect."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import pytest
from helpers.evidence import Builder
from helpers.paths import BROKEN, ROOT
from helpers.processes import http_server
from helpers.runs import run, stdio

from tasks_conformance.core.verdict import failed, passed
from tasks_conformance.core.wirelog import HttpMeta
from tasks_conformance.core.wires import Wire
from tasks_conformance.server.checks import CHECKS
from tasks_conformance.server.checks.engine.ownership import defer
from tasks_conformance.server.checks.engine.registry import CheckSpec, Judge, judged_by, rule_owners, validate
from tasks_conformance.server.evidence import Base64Name, UndeclaredCall

CHECKS_DIR = ROOT / "src" / "tasks_conformance" / "server" / "checks"
LEGACY = {"protocol_version": "2025-11-25"}


def _execute(name: str, transport: str = "stdio", **settings: Any) -> Any:
    settings.setdefault("poll_timeout_ms", 3_000)
    argv = [*BROKEN, "--break", name]
    if transport == "http":
        server = http_server(argv)
        try:
            return run(url=server.url, **settings)
        finally:
            server.stop()
    return run(**stdio(argv), **settings)


def _buckets(ex: Any) -> dict[str, Any]:
    return {c.id: c for c in ex.result.checks}


def _failures(ex: Any) -> dict[str, str]:
    return {c.id: c.message for c in ex.result.checks if c.bucket == "failed"}


# ---------------------------------------------------------------------------------------------
# The mechanism


def test_every_rule_has_exactly_one_owner() -> None:
    owners = rule_owners(CHECKS)
    judged = judged_by(CHECKS)
    assert set(owners) == set(judged), set(judged) - set(owners)
    shared = {r: ids for r, ids in judged.items() if len(ids) > 1}
    assert shared, "no rule is judged by two checks: the ownership table would be empty"
    assert all(owners[r] in ids for r, ids in shared.items())


def test_a_shared_rule_without_exactly_one_owner_is_a_registry_problem() -> None:
    def spec(cid: str, owns: tuple[str, ...] = ()) -> CheckSpec:
        return CheckSpec(id=cid, area="base", category="c", title="t", description="d", probes=(),
                         judges={Wire.LEGACY: Judge(lambda _ev: failed("x"), ("S-LEG-MUST-02",))}, owns=owns)

    rules = {"S-LEG-MUST-02", "S-LEG-MUST-03"}
    assert any("none does" in p for p in validate({"a": spec("a"), "b": spec("b")}, set(), rules))
    both = {"a": spec("a", ("S-LEG-MUST-02",)), "b": spec("b", ("S-LEG-MUST-02",))}
    assert any("owned by a, b" in p for p in validate(both, set(), rules))
    assert any("which it does not judge" in p for p in validate({"a": spec("a", ("S-LEG-MUST-03",))}, set(), rules))
    assert validate({"a": spec("a", ("S-LEG-MUST-02",)), "b": spec("b")}, set(), rules) == []


def _failed_calls(path: Path) -> list[tuple[int, set[str]]]:
    tree = ast.parse(path.read_text())
    return [(node.lineno, {k.arg for k in node.keywords if k.arg})
            for node in ast.walk(tree)
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "failed"]


def test_every_failing_path_of_a_server_check_names_its_rules_and_frames() -> None:
    missing = [f"{p.name}:{line} lacks {', '.join(sorted({'broken', 'evidence'} - kws))}"
               for p in sorted(CHECKS_DIR.glob("*.py")) for line, kws in _failed_calls(p)
               if not {"broken", "evidence"} <= kws]
    assert not missing, missing
    assert sum(len(_failed_calls(p)) for p in CHECKS_DIR.glob("*.py")) > 50  # the scan sees the checks


def _undeclared_pair(required_args: dict[str, Any]) -> tuple[Builder, Any, Any]:
    """The task tool and the required role's tool called without params.task (legacy)."""
    b = Builder(Wire.LEGACY)
    mine = b.call(UndeclaredCall, {"result": {"content": []}}, params={"name": "long_job", "arguments": {}},
                  declared=False)
    theirs = b.exchange("tools/call", {"name": "long_job", "arguments": required_args}, {"result": {"content": []}},
                        declared=False)
    return b, mine, theirs


def test_a_non_owner_defers_only_to_an_owner_that_fails_the_rule() -> None:
    b, mine, theirs = _undeclared_pair({})
    specs = {i: CHECKS[i] for i in ("tasks-undeclared-creation-refused", "tasks-required-tool-needs-task")}
    verdicts = {"tasks-undeclared-creation-refused": failed("sync", broken=("S-LEG-MUST-02",), evidence=mine.seqs()),
                "tasks-required-tool-needs-task": failed("sync", broken=("S-LEG-MUST-02",), evidence=theirs.seqs())}
    out = defer(verdicts, specs, b.ev)
    assert out["tasks-required-tool-needs-task"] is verdicts["tasks-required-tool-needs-task"]  # the owner fails
    deferred = out["tasks-undeclared-creation-refused"]
    # A verdict of its own, naming its owner: neither a failure nor a could-not-run (no blocking cause).
    assert (deferred.status, deferred.skip_reason) == ("skipped", "deferred")
    assert deferred.deferred_to == "tasks-required-tool-needs-task"
    assert deferred.blocked_by is None and deferred.cause is None
    assert deferred.details["deferredTo"] == {"S-LEG-MUST-02": "tasks-required-tool-needs-task"}
    assert deferred.evidence == tuple(mine.seqs())  # it still shows what it saw
    # An owner that passed, or was not selected, takes nothing over: the failure is the rule's only report.
    owner_passed = {**verdicts, "tasks-required-tool-needs-task": passed("refused", evidence=theirs.seqs())}
    assert defer(owner_passed, specs, b.ev) == owner_passed
    alone = {"tasks-undeclared-creation-refused": verdicts["tasks-undeclared-creation-refused"]}
    assert defer(alone, specs, b.ev) == alone


def test_a_failure_on_rules_of_its_own_too_keeps_failing_on_those_alone() -> None:
    b = Builder(Wire.EXTENSION)
    mine = b.call(UndeclaredCall, {"error": {"code": -32003, "message": "x"}}, declared=False)
    theirs = b.exchange("tools/call", {"name": "long_job"}, {"error": {"code": -32003, "message": "x"}}, declared=False)
    specs = {i: CHECKS[i] for i in ("tasks-undeclared-creation-refused", "tasks-required-tool-needs-task")}
    both = failed("two", broken=("S-EXT-MUST-02", "S-CORE-MUST-13"), evidence=mine.seqs())
    out = defer({"tasks-undeclared-creation-refused": both,
                 "tasks-required-tool-needs-task": failed("code", broken=("S-EXT-MUST-02",), evidence=theirs.seqs())},
                specs, b.ev)
    kept = out["tasks-undeclared-creation-refused"]
    assert kept.status == "failed" and kept.broken == ("S-CORE-MUST-13",) and kept.deferred_to is None
    assert kept.details["deferredTo"] == {"S-EXT-MUST-02": "tasks-required-tool-needs-task"}


# ---------------------------------------------------------------------------------------------
# a. The undeclared call of the task-required tool: S-LEG-MUST-02 is the required-tool check's.


def test_a_required_tool_run_without_a_task_fails_its_owner_alone() -> None:
    ex = _execute("required-without-task-ok", **LEGACY)
    assert set(_failures(ex)) == {"tasks-required-tool-needs-task"}, _failures(ex)
    other = _buckets(ex)["tasks-undeclared-creation-refused"]
    assert other.bucket == "deferred" and other.deferredTo == "tasks-required-tool-needs-task"
    assert other.details["deferredTo"] == {"S-LEG-MUST-02": "tasks-required-tool-needs-task"}
    assert "blockedBy" not in other.details
    # The deferral neither fails the run nor makes it incomplete, and costs no score: the owner's does.
    assert ex.result.outcome == "failed" and ex.result.incompleteCauses == []
    assert ex.result.counts()["deferred"] == 1 and ex.result.counts()["couldNotRun"] == 0


# b. "Task not found" is not "not decoded".


def _base64_verdict(answer: dict[str, Any], status: int | None = None,
                    control: tuple[dict[str, Any], int | None] | None = None) -> Any:
    b = Builder()
    rec = b.record(Base64Name)
    rec.task_id, rec.sent_name = "t-1", "=?base64?dC0x?="
    if control is not None:
        rec.control = b.exchange("tasks/get", {"taskId": "t-1"}, control[0])
        if control[1] is not None:
            rec.control.http = HttpMeta("POST", "http://127.0.0.1/mcp", control[1])
    rec.reply = b.exchange("tasks/get", {"taskId": "t-1"}, answer)
    if status is not None:
        rec.reply.http = HttpMeta("POST", "http://127.0.0.1/mcp", status)
    return CHECKS["tasks-base-mcp-name-base64"].judges[Wire.EXTENSION].fn(b.ev)


def test_an_error_the_plain_name_gets_too_is_no_decoding_fault() -> None:
    """The control: a server answering -32602 with HTTP 400 for a task it cannot see (the spec
    pairs -32602 with 400 elsewhere) answers the plain Mcp-Name so too; that is not a base64
    header left undecoded (it used to fail, saying so). Without the same answer to the control,
    the error stands as the fault."""
    not_found = {"error": {"code": -32602, "message": "Task not found"}}
    both = _base64_verdict(not_found, 400, control=(not_found, 400))
    assert both.status == "skipped" and both.skip_reason == "not-applicable", both
    only_wrapped = _base64_verdict(not_found, 400, control=({"result": {"taskId": "t-1", "status": "working"}}, 200))
    assert only_wrapped.status == "failed" and only_wrapped.broken == ("S-CORE-MUST-07",)
    mismatch = {"error": {"code": -32020, "message": "Header mismatch"}}
    assert _base64_verdict(mismatch, 400, control=(mismatch, 400)).status == "skipped"
    ok = {"result": {"taskId": "t-1", "status": "working"}}
    assert _base64_verdict(mismatch, 400, control=(ok, 200)).status == "failed"


def test_base64_name_reads_the_answer_it_got() -> None:
    not_found = _base64_verdict({"error": {"code": -32602, "message": "Task not found"}})
    assert not_found.status == "passed" and "tasks-created-task-durable" in not_found.message
    mismatch = _base64_verdict({"error": {"code": -32020, "message": "Header mismatch"}}, 400)
    assert mismatch.status == "failed" and mismatch.broken == ("S-CORE-MUST-07",)


def test_tasks_visible_per_connection_fail_durability_alone() -> None:
    ex = _execute("tasks-per-connection", "http", tool_name="slow_compute")
    assert set(_failures(ex)) == {"tasks-created-task-durable"}, _failures(ex)
    assert _buckets(ex)["tasks-base-mcp-name-base64"].bucket == "passed"


# c. A cancel judged on what the wire showed just before it.


def test_a_cancel_after_the_task_read_working_again_is_not_a_terminal_cancel() -> None:
    ex = _execute("legacy-terminal-reverts", **LEGACY)
    assert set(_failures(ex)) == {"tasks-terminal-status-immutable"}, _failures(ex)
    cancel = _buckets(ex)["tasks-cancel-ack-shape"]
    assert cancel.bucket == "passed" and "does not apply" in cancel.message
    # A terminal task cancelled while it still reads terminal is judged as before.
    ex = _execute("legacy-cancel-terminal-ok", **LEGACY)
    assert set(_failures(ex)) == {"tasks-cancel-ack-shape"}, _failures(ex)


# d. A stale notification delivered late is history: the same verdict on every run.

LATE_RUNS = 20


@pytest.mark.matrix
@pytest.mark.parametrize("attempt", range(LATE_RUNS))
def test_late_notifications_never_fail_immutability(attempt: int) -> None:
    ex = _execute("late-notifications", tool_name="slow_compute",
                  check_ids=["tasks-terminal-status-immutable", "tasks-subscription-notifications"])
    got = _buckets(ex)["tasks-terminal-status-immutable"]
    assert got.bucket == "passed", (got.bucket, got.message)
    # The fixture did deliver a stale status after the end (else this run showed nothing).
    assert "history" in got.message, got.message
    assert not _failures(ex), _failures(ex)
