"""Verdicts carry their meaning as fields: reports find the rule a failure broke in the check's
typed `broken` ids, never by reading its message (issue: one core for two subjects)."""

from __future__ import annotations

from conftest import BROKEN, run, stdio

from tasks_conformance.reporters._failure import broken_rules
from tasks_conformance.result import CheckResult


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
