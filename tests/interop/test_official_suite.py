"""The official MCP conformance suite certifies the reference server, and serves as a second oracle.

``@modelcontextprotocol/conformance`` (pinned in ``package.json`` beside this file; CI runs
``npm ci`` here) is run scenario by scenario against ``tasks-conformance serve-reference
--transport http``: every tasks scenario plus ``server-stateless``, ``http-header-validation``
and ``dns-rebinding-protection`` must pass every check (the pending and draft scenarios run with
``--force`` and are reported, not required). Then, for every HTTP extension-wire server, the
verdicts of both oracles are compared rule by rule (``scripts/oracle_table.py``): a disagreement
that ``docs/oracle-agreement.md`` does not explain, or verdict rows that differ from it, fail.

Skips, with the reason, when node, the npm packages or (on Node 20) the loader shim in
``<repo>/../shared/tools/conformance-node20`` are absent. Each server runs on an ephemeral
127.0.0.1 port and is stopped in a ``finally``; every subprocess has a bounded wait.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

import oracle_table as O  # noqa: E402  (needs the path above)

pytestmark = [pytest.mark.interop, pytest.mark.official, pytest.mark.timeout(300)]

#: Checks the suite skips on the reference server because they do not apply to it (it
#: declares no prompts.listChanged / tools.listChanged), with the suite's check id.
NOT_APPLICABLE_SKIPS = frozenset(
    {
        ("server-stateless", "sep-2575-server-sends-prompts-list-changed-on-subscription"),
        ("server-stateless", "sep-2575-server-sends-tools-list-changed-on-subscription"),
    }
)


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("official-suite")


@pytest.fixture(scope="module")
def reference(workdir: Path) -> O.TargetResult:
    why = O.suite_unavailable()
    if why is not None:
        pytest.skip(f"the official conformance suite cannot run: {why}")
    return O.judge_target(O.BY_NAME["reference"], workdir)


def test_reference_server_passes_every_official_check(reference: O.TargetResult) -> None:
    problems: list[str] = []
    for scenario in O.REQUIRED_SCENARIOS:
        run = reference.suite[scenario]
        if run.problem is not None:
            problems.append(f"{scenario}: did not run: {run.problem}")
            continue
        if not any(c.status == "SUCCESS" for c in run.checks):
            problems.append(f"{scenario}: no check passed ({[c.status for c in run.checks]})")
        for check in run.checks:
            not_applicable = check.status == "SKIPPED" and (scenario, check.id) in NOT_APPLICABLE_SKIPS
            if check.status == "SUCCESS" or not_applicable:
                continue
            problems.append(f"{scenario}: {check.id} {check.status}: {check.message[:300]}")
    assert not problems, "\n".join(problems)


def test_pending_and_draft_scenarios_run_and_are_reported(reference: O.TargetResult) -> None:
    for scenario in O.FORCED_SCENARIOS:
        run = reference.suite[scenario]
        assert run.problem is None, f"{scenario}: {run.problem}"
        assert run.checks, scenario
        print(f"{scenario} (forced, not required): " + ", ".join(f"{c.id} {c.status}" for c in run.checks))


def test_the_oracles_agree_or_the_table_explains_why(reference: O.TargetResult, workdir: Path) -> None:
    results = [reference]
    fastmcp = O.BY_NAME["fastmcp-tasks"]
    reason = fastmcp.unavailable()
    if reason is None:
        results.append(O.judge_target(fastmcp, workdir))
    committed = O.DEFAULT_OUTPUT.read_text(encoding="utf-8")
    problems: list[str] = []
    for result in results:
        problems += [f"{result.target.name}: {s}: {r.problem}" for s, r in result.suite.items() if r.problem]
        problems += [
            f"{result.target.name}: {row.rule.id}: the official suite says {row.official}, tasks-conformance "
            f"says {row.ours}, and {O.DEFAULT_OUTPUT.name} does not explain it"
            for row in O.unexplained(result.target.name, result.rows)
        ]
        if result.section not in committed:
            problems.append(
                f"{result.target.name}: the verdict rows differ from {O.DEFAULT_OUTPUT.name}; if the change is "
                "right, regenerate it with `python scripts/oracle_table.py`:\n" + result.section
            )
    assert not problems, "\n".join(problems)
    if reason is not None:
        pytest.skip(f"compared the reference server only; fastmcp-tasks cannot run: {reason}")


# ---------------------------------------------------------------------- the comparison itself
def _suite(scenario: str, check_id: str, status: str, message: str = "") -> dict[str, O.ScenarioRun]:
    untestable = message.startswith("Not testable")
    return {scenario: O.ScenarioRun(scenario, [O.SuiteCheck(scenario, check_id, status, message, untestable)])}


def test_a_new_disagreement_is_reported_until_explained() -> None:
    rule = next(r for r in O.RULES if r.id == "S-EXT-MUST-17")
    (scenario, check_id), (run_id, ours_id) = rule.official[0], rule.ours[0]
    ours_pass = {run_id: {ours_id: {"status": "passed"}}}
    rows = O.rows_for(_suite(scenario, check_id, "FAILURE", "expected -32602; got -32601"), ours_pass)
    row = next(r for r in rows if r.rule.id == rule.id)
    assert (row.official, row.ours, row.agreement) == ("fail", "pass", "DISAGREE")
    assert row in O.unexplained("some-server", rows)
    # The suite's own "Not testable" is no verdict, so nothing is compared.
    rows = O.rows_for(_suite(scenario, check_id, "FAILURE", "Not testable: no task"), ours_pass)
    assert next(r for r in rows if r.rule.id == rule.id).agreement == "not compared"
    rows = O.rows_for(_suite(scenario, check_id, "SUCCESS"), ours_pass)
    assert next(r for r in rows if r.rule.id == rule.id).agreement == "agree"


def test_our_failure_counts_only_against_the_rules_it_cites() -> None:
    rule_06 = next(r for r in O.RULES if r.id == "S-EXT-MUST-06")
    rule_03 = next(r for r in O.RULES if r.id == "S-EXT-MUST-03")
    nested = {"main": {"tasks-result-type-discipline": {
        "status": "failed", "message": "the CreateTaskResult is nested under `task` (S-EXT-MUST-06)"}}}
    assert O.our_verdict(rule_06, nested) == "fail"
    assert O.our_verdict(rule_03, nested) == "—"  # the failure is not about S-EXT-MUST-03
    uncited = {"main": {"tasks-result-type-discipline": {"status": "failed", "message": "no task"}}}
    assert O.our_verdict(rule_03, uncited) == "fail"
    assert O.cited_rules("each must get -32021 (S-EXT-MUST-18/19)") == {"S-EXT-MUST-18", "S-EXT-MUST-19"}


def test_every_rule_names_checks_that_exist() -> None:
    from tasks_conformance.server.checks import CHECKS

    for rule in O.RULES:
        assert rule.official and rule.ours, rule.id
        for scenario, _ in rule.official:
            assert scenario in O.ALL_SCENARIOS, (rule.id, scenario)
        for run_id, check_id in rule.ours:
            assert check_id in CHECKS, (rule.id, check_id)
            assert all(run_id in {r.id for r in t.runs} for t in O.TARGETS), (rule.id, run_id)
    for target, _rule_id in O.EXPLAINED:
        assert target in O.BY_NAME
