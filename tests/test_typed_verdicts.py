"""Verdicts carry their meaning as fields: reports find the rule a failure broke in the check's
typed `broken` ids, never by reading its message (issue: one core for two subjects)."""

from __future__ import annotations

import pytest
from conftest import BROKEN, run, stdio

from tasks_conformance.core.causes import Cause, CauseKind, Reason, setting
from tasks_conformance.core.result import CheckResult, incomplete_causes
from tasks_conformance.reporters._failure import broken_rules
from tasks_conformance.server.checks.registry import could_not_run


def _failure(variant: str, check_id: str) -> CheckResult:
    ex = run(**stdio(BROKEN, "--break", variant), tool_name="slow_compute", check_ids=[check_id],
             protocol_version="2026-07-28")
    [result] = ex.result.checks
    assert result.status == "failed", result.message
    return result


def test_a_failure_names_the_rule_it_broke_of_those_its_check_judges() -> None:
    result = _failure("create-result-type-complete", "tasks-result-type-discipline")
    assert len(result.requirements) > 1
    assert result.broken == ["S-EXT-MUST-03"]
    named, others = broken_rules(result)
    assert [r.id for r in named] == ["S-EXT-MUST-03"] and others


def test_reports_read_the_typed_ids_not_the_message() -> None:
    result = _failure("create-result-type-complete", "tasks-result-type-discipline")
    other = next(r for r in result.requirements if r != "S-EXT-MUST-03")
    result.broken = [other]  # a message citing S-EXT-MUST-03 does not decide it
    assert [r.id for r in broken_rules(result)[0]] == [other]
    result.broken = []  # naming none: the failure is about every rule the check judges
    assert [r.id for r in broken_rules(result)[0]] == result.requirements


# -- could-not-run: a typed cause, its fix from the cause's kind ------------------------------


def _blocked(cause: Cause, check_id: str = "tasks-ttl-shape") -> CheckResult:
    return CheckResult(id=check_id, category="lifecycle", title="t", description="d", requirements=[],
                       status="skipped", skipReason="could-not-run", message=cause.message, cause=cause)


@pytest.mark.parametrize("kind", list(CauseKind))
def test_every_kind_of_cause_has_a_fix(kind: CauseKind) -> None:
    fix = Cause("what happened", kind, http_status=501 if kind is CauseKind.HTTP_STATUS else None).fix_for(
        "tasks-ttl-shape", "http://127.0.0.1:1/mcp")
    assert fix.strip(), kind


def test_the_fix_list_reads_the_cause_not_the_message() -> None:
    # Words that once decided the fix ("could not talk to the server", "interrupted", a --flag)
    # decide nothing: the kind does.
    looks_unreachable = _blocked(Cause("could not talk to the server: interrupted, see --timeout"))
    [cause] = incomplete_causes([looks_unreachable], target="http://127.0.0.1:1/mcp")
    assert cause.fix == "`tasks-conformance explain tasks-ttl-shape` says what this check needs"
    unreachable = _blocked(Cause("the socket closed", CauseKind.UNREACHABLE))
    [cause] = incomplete_causes([unreachable], target="http://127.0.0.1:1/mcp")
    assert cause.fix.endswith("nothing answered at http://127.0.0.1:1/mcp")
    flagged = _blocked(setting("no tool runs as a task", "name one with --tool-name"))
    assert flagged.message == "no tool runs as a task; name one with --tool-name"
    [cause] = incomplete_causes([flagged])
    assert (cause.cause, cause.fix) == ("no tool runs as a task", "name one with --tool-name")


def test_a_reason_kept_in_a_record_carries_its_cause_to_the_verdict() -> None:
    reason = Reason(setting("no second principal was given", "", "--other-access-token"))
    assert reason == "no second principal was given"  # a plain string to whoever shows it
    verdict = could_not_run(reason)
    assert verdict.cause is not None and verdict.cause.flags == ("--other-access-token",)
    assert verdict.cause.fix_for("x", "") == "change the flag this names (--other-access-token)"
