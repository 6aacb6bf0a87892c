"""Every check FAILS against a fixture server that breaks exactly its rule, and that one defect
gives one failure: the other checks pass, are not applicable, or could not run pointing at it."""

from __future__ import annotations

from typing import Any

import pytest
from helpers.breaking import (
    CASES,
    DECLARED,
    LEGACY,
    PERMITTED,
    QUICK_SERVER,
    RUNS,
    WARN_CASES,
    case_id,
    execute_run,
    failures_of,
    fixture_server,
)
from helpers.broken_variants import BROKEN_SERVER
from helpers.paths import BROKEN, REFERENCE
from helpers.runs import cli

from tasks_conformance.server.checks import CHECKS


@pytest.mark.matrix
@pytest.mark.parametrize("name,case", CASES, ids=[case_id(*c) for c in CASES])
def test_check_fails_on_the_fixture_that_breaks_its_rule(name: str, case: Any) -> None:
    ex = execute_run(fixture_server(name), RUNS[case.run], case.transport)
    fails = failures_of(ex)
    assert case.check in fails, {c.id: (c.bucket, c.message) for c in ex.result.checks}
    assert ex.result.outcome == "failed"
    extra = set(fails) - {case.check} - set(case.also)
    assert not extra, f"one defect, one failure: also failed {extra}: {[fails[e] for e in extra]}"
    # A check named as failing with it must fail too, or the declaration hides a change.
    assert set(case.also) <= set(fails), set(case.also) - set(fails)


# The reference server passes every run a breaking fixture is judged in (the hostile corpus has
# its own well-behaved control case, hostile:ok), so each failure there is the fixture's defect;
# and a few settings of its own: the tool that ends with isError, an input task on legacy.
REFERENCE_RUNS = sorted({(run.run, run.transport) for _name, run in CASES + WARN_CASES}
                        | {("tool-error", "stdio"), ("legacy-input", "stdio")})
# Runs that leave the reference honestly incomplete, failing nothing: polling gives up while the
# task still works, on purpose (what needs its end cannot be seen); no tool named, and on the
# extension wire tools carry no task metadata to pick one by.
INCOMPLETE = {"extension-cancel-running", "any-tool"}


@pytest.mark.matrix
@pytest.mark.parametrize("key,transport", REFERENCE_RUNS, ids=[f"{k}-{t}" for k, t in REFERENCE_RUNS])
def test_the_reference_passes_with_the_same_settings(key: str, transport: str) -> None:
    server = fixture_server("hostile:ok") if key == "hostile" else [*REFERENCE, *QUICK_SERVER]
    ex = execute_run(server, RUNS[key], transport)
    assert not failures_of(ex), failures_of(ex)
    assert ex.result.outcome == ("incomplete" if key in INCOMPLETE else "passed"), {
        c.id: c.message for c in ex.result.checks if c.bucket not in ("passed", "not-applicable")}
    # The control of every SHOULD-level case judged with these settings (the test below): the
    # reference server gives its check no warning.
    for _name, case in WARN_CASES:
        if (case.run, case.transport) == (key, transport):
            got = next(c for c in ex.result.checks if c.id == case.check)
            assert got.bucket == "passed" and not got.warnings, (case.check, got.warnings)


# Checks of a SHOULD-level rule only warn (Warns): the check passes with a warning naming the
# rule and nothing fails; the reference server, with the same settings, gives no such warning
# (asserted on its run above, which REFERENCE_RUNS holds for every such case).
@pytest.mark.parametrize("name,case", WARN_CASES, ids=[case_id(*c) for c in WARN_CASES])
def test_a_should_level_check_warns_on_its_fixture_and_not_on_the_reference(name: str, case: Any) -> None:
    assert (case.run, case.transport) in REFERENCE_RUNS
    ex = execute_run(fixture_server(name), RUNS[case.run], case.transport)
    got = next(c for c in ex.result.checks if c.id == case.check)
    assert got.bucket == "passed" and any(case.rule in w.text for w in got.warnings), (got.bucket, got.message,
                                                                               got.warnings)
    assert not failures_of(ex), failures_of(ex)
    assert ex.result.outcome == "passed", {c.id: (c.bucket, c.message) for c in ex.result.checks
                                            if c.bucket not in ("passed", "not-applicable")}


def test_every_check_has_a_breaking_fixture_case() -> None:
    covered = {run.check for _name, run in CASES + WARN_CASES}
    assert covered == set(CHECKS), set(CHECKS) ^ covered
    # A check named beside the one a variant breaks exists too; every declared run names its settings.
    assert {a for _name, run in CASES for a in run.also} <= set(CHECKS)
    assert {run.run for _name, run in DECLARED} <= set(RUNS), {run.run for _name, run in DECLARED} - set(RUNS)
    assert {run.transport for _name, run in DECLARED} <= {"stdio", "http"}


# Variants that use a freedom (a MAY) the specification gives servers (Permits). Each run must
# fail no check and pass (exit 0): a check the freedom leaves nothing to inspect is not applicable
# (policy P-41 for a task deleted once its TTL ran out). Incomplete (exit 3) only where the run's
# own settings ask for it: the named tool answered synchronously (name a task tool), or polling
# given up on purpose (ext-cancel-running).
@pytest.mark.matrix
@pytest.mark.parametrize("name,case", PERMITTED, ids=[case_id(*c) for c in PERMITTED])
def test_a_server_using_a_freedom_fails_no_check(name: str, case: Any) -> None:
    ex = execute_run(fixture_server(name), RUNS[case.run], case.transport)
    assert not failures_of(ex), failures_of(ex)
    assert ex.result.outcome == case.outcome, {c.id: (c.bucket, c.message) for c in ex.result.checks
                                               if c.bucket not in ("passed", "not-applicable")}
    # Warnings only where a policy or the MAY itself is named: using a freedom is not a deviation.
    stray = [w.text for c in ex.result.checks for w in c.warnings if not w.policies and "MAY" not in w.text]
    assert not stray, stray
    # Each freedom used is declared by a check that saw the traffic.
    honoured = {r for c in CHECKS.values() for r in c.permits}
    assert case.may in honoured, case.may


def test_every_permits_fixture_is_run_and_only_they_permit() -> None:
    """A permits-… variant declares the freedom it uses (Permits) and nothing else; a variant that
    breaks a rule uses no Permits run."""
    variants = BROKEN_SERVER.VARIANTS
    permits = {n for n in variants if n.startswith("permits-")}
    assert permits == {name for name, _run in PERMITTED}, permits ^ {name for name, _run in PERMITTED}
    assert all(isinstance(run, BROKEN_SERVER.Permits) for n in permits for run in variants[n].runs)


def test_exit_code_is_1_for_a_broken_server() -> None:
    proc = cli("--command", " ".join(BROKEN), "--args", "--break", "--args", "nested-create", "--args",
               "--transport", "--args", "stdio", "--tool-name", "slow_compute", "--format", "json")
    assert proc.returncode == 1, proc.stderr


def test_ambiguous_is_error_to_failed_warns_without_failing() -> None:
    # A failed task whose tool, called without the extension, returns isError: true may be the
    # S-EXT-MUST-13 mistake or a tool that raised a protocol error; only a warning is honest.
    ex = execute_run([*BROKEN, "--break", "isError-failed"], {"tool_name": "tool_error"}, "stdio")
    inline = next(c for c in ex.result.checks if c.id == "tasks-inline-result")
    assert inline.bucket == "passed" and any("S-EXT-MUST-13" in w.text for w in inline.warnings)
    ex = execute_run(list(REFERENCE), {"tool_name": "tool_error"}, "stdio")
    inline = next(c for c in ex.result.checks if c.id == "tasks-inline-result")
    assert inline.bucket == "passed" and not inline.warnings


def test_should_level_deviations_warn_without_failing() -> None:
    # Legacy isError -> completed breaks a SHOULD (spec-digest §6 Q17): a warning, never a failure.
    ex = execute_run([*BROKEN, "--break", "legacy-isError-completed"], {**LEGACY, "tool_name": "tool_error"}, "stdio")
    inline = next(c for c in ex.result.checks if c.id == "tasks-inline-result")
    assert inline.bucket == "passed" and any("isError" in w.text for w in inline.warnings)
    ex = execute_run(list(REFERENCE), {**LEGACY, "tool_name": "tool_error"}, "stdio")
    inline = next(c for c in ex.result.checks if c.id == "tasks-inline-result")
    assert inline.bucket == "passed" and not inline.warnings


def test_a_legacy_server_without_the_optional_cancel_capability_passes() -> None:
    ex = execute_run(fixture_server("legacy-without-cancel"), LEGACY, "stdio")
    v = {c.id: c.bucket for c in ex.result.checks}
    assert ex.result.outcome == "passed", {c.id: c.message for c in ex.result.checks if c.bucket == "failed"}
    assert v["tasks-cancel-ack-shape"] == "not-applicable"
    assert v["tasks-invalid-task-id-rejected"] == "passed"


def test_the_fixture_index_explain_shows_is_generated_from_these_declarations() -> None:
    """`explain CHECK` names its breaking fixtures from tasks_conformance.server.fixture_index, which
    scripts/update_docs.py writes from the declarations above: it must be current."""
    from tasks_conformance.server.fixture_index import BREAKING

    assert dict(BREAKING) == BROKEN_SERVER.breaking_index(), "stale: run python scripts/update_docs.py"
