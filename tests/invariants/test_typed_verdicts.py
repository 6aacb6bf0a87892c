"""Verdicts carry their meaning as fields: reports find the rule a failure broke in the check's
typed `broken` ids, and the policies a warning cites in its typed `policies`, never by reading
its message (issue: one core for two subjects; issue 21, a typed verdict)."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from helpers.paths import BROKEN
from helpers.policy_citations import scan
from helpers.runs import run, stdio

from tasks_conformance.core.causes import Cause, CauseKind, Reason, by_flag
from tasks_conformance.core.result import CheckResult, CheckStatus, Discovery, RunResult, incomplete_causes
from tasks_conformance.core.verdict import could_not_run, warn
from tasks_conformance.reporters import render
from tasks_conformance.reporters._failure import broken_rules


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
    flagged = _blocked(by_flag("no tool runs as a task", "name one with --tool-name"))
    assert flagged.message == "no tool runs as a task; name one with --tool-name"
    [cause] = incomplete_causes([flagged])
    assert (cause.cause, cause.fix) == ("no tool runs as a task", "name one with --tool-name")


def test_a_reason_kept_in_a_record_carries_its_cause_to_the_verdict() -> None:
    reason = Reason(by_flag("no second principal was given", "", "--other-access-token"))
    assert reason == "no second principal was given"  # a plain string to whoever shows it
    verdict = could_not_run(reason)
    assert verdict.cause is not None and verdict.cause.flags == ("--other-access-token",)
    assert verdict.cause.fix_for("x", "") == "change the flag this names (--other-access-token)"


# -- policies: cited as data (warn(text, "P-NN"), policies=(…)), never found in the words -----


def test_every_policy_a_check_cites_in_a_sentence_it_cites_as_data() -> None:
    citations, stray = scan()
    # A P-NN in a string outside warn(…)/a verdict's message (and outside descriptions and docstrings).
    assert not stray, stray
    # The sentence names exactly the ids given as data: none in the words only, none in the data only.
    assert not [c for c in citations if c.typed != c.prose], [c for c in citations if c.typed != c.prose]
    assert {c.call for c in citations} == {"warn", "failed", "could_not_run", "passed"}


def test_the_scan_finds_a_policy_cited_only_in_prose(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text(
        'def judge(ev):\n'
        '    bare = ["odd (policy P-15)"]\n'  # a plain warning naming a policy: prose only
        '    worded = warn("short (policy P-06)")\n'  # warn() without the id
        '    typed = warn("short (policy P-06)", "P-06")\n'
        '    return failed(f"{ev} (policy P-21)", policies=("P-21",), warnings=[*bare, worded, typed])\n',
        encoding="utf-8")
    citations, stray = scan([sample])
    assert stray == ["sample.py:2: 'odd (policy P-15)'"]
    assert sorted((c.where, c.typed == c.prose) for c in citations) == [
        ("sample.py:3", False), ("sample.py:4", True), ("sample.py:5", True)]


def test_reports_link_the_policies_given_as_data_not_those_in_the_words() -> None:
    check = CheckResult(
        id="tasks-ttl-shape", category="lifecycle", title="t", description="d", requirements=[],
        status="passed", message="passed (policy P-01 in the words only)", message_policies=["P-28"],
        warnings=[warn("the server said P-99"), warn("short ttl (policy P-06)", "P-06")])
    assert [p.id for p in check.policies] == ["P-28", "P-06"]
    assert check.status is CheckStatus.PASSED and check.to_json()["status"] == "passed"
    assert check.to_json()["warnings"] == ["the server said P-99", "short ttl (policy P-06)"]
    out = io.StringIO()
    render("human", RunResult("passed", "t", 1, Discovery(), [check]), out)
    assert "P-06: docs/policies.md#p-06" in out.getvalue() and "#p-99" not in out.getvalue()
