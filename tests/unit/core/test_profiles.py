"""Profiles (core | standard | full, each with a versioned id) and the 0–100 score."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tasks_conformance.core.errors import UsageError
from tasks_conformance.core.profiles import CORE_CHECKS, MUST_WEIGHT, OPT_IN_CHECKS, PROFILES, score
from tasks_conformance.core.result import CheckResult, CheckWarning, RunResult
from tasks_conformance.core.result import Discovery as DiscoveryReport
from tasks_conformance.entry.cli import run_cli
from tasks_conformance.server.checks import CATEGORIES, CHECKS, ordered_checks
from tasks_conformance.server.runner import select_checks
from tasks_conformance.settings.config import build_config

MUST = "S-EXT-MUST-03"  # level MUST
SHOULD = "S-EXT-SHOULD-08"  # level SHOULD


def _c(status: str, reqs: list[str], *, skip: str | None = None, warnings: list[str] | None = None) -> CheckResult:
    return CheckResult(id=f"c{id(reqs)}", category="dispatch", title="t", description="d", requirements=reqs,
                       status=status, skipReason=skip,
                       warnings=[CheckWarning(w) for w in warnings or []])  # type: ignore[arg-type]


def _config(**flags: Any) -> Any:
    return build_config(known_check_ids=tuple(CHECKS), known_categories=CATEGORIES, command="python", **flags)


def test_profile_ids_are_versioned() -> None:
    assert [p.id for p in PROFILES.values()] == [
        "tasks-conformance/core@2026-12", "tasks-conformance/standard@2026-12", "tasks-conformance/full@2026-12",
        "tasks-conformance/durable@2026-12",
    ]
    assert all(re.fullmatch(r"tasks-conformance/[a-z]+@\d{4}-\d{2}", p.id) for p in PROFILES.values())


def test_core_is_the_eight_scored_checks_and_standard_and_full_are_everything() -> None:
    assert len(CORE_CHECKS) == 8 and set(CORE_CHECKS) <= set(CHECKS)
    assert [c.id for c in select_checks(_config(profile="core"))] == [
        c.id for c in ordered_checks() if c.id in CORE_CHECKS
    ]
    # Every check but the opt-in ones (a claim beyond the specification, which restarts the server).
    everything = [c.id for c in ordered_checks() if c.id not in OPT_IN_CHECKS]
    assert OPT_IN_CHECKS and set(OPT_IN_CHECKS) <= set(CHECKS)
    assert [c.id for c in select_checks(_config())] == everything
    assert [c.id for c in select_checks(_config(profile="standard"))] == everything
    assert [c.id for c in select_checks(_config(profile="full"))] == everything  # no probe roles yet
    assert [c.id for c in select_checks(_config(profile="durable"))] == [c.id for c in ordered_checks()]


def test_category_and_check_id_narrow_within_the_profile() -> None:
    creation = [c.id for c in select_checks(_config(profile="core", categories=["creation"]))]
    assert creation == ["tasks-result-type-discipline", "tasks-undeclared-creation-refused"]
    assert [c.id for c in select_checks(_config(profile="core", check_ids=["tasks-ttl-shape"]))] == ["tasks-ttl-shape"]
    with pytest.raises(UsageError, match="not in profile core"):
        _config(profile="core", check_ids=["tasks-cancel-ack-shape"])
    with pytest.raises(UsageError, match="unknown --profile 'strict'; valid profiles: core, standard, full, durable"):
        _config(profile="strict")


def test_an_unknown_profile_is_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert run_cli(["--profile", "strict", "--command", "python"]) == 2
    assert "unknown --profile 'strict'" in capsys.readouterr().err


def test_score_by_hand() -> None:
    checks = [
        _c("passed", [MUST]),  # weight 2, earns 2
        _c("failed", [MUST, SHOULD]),  # weight 2 (a MUST rule), earns 0
        _c("passed", [SHOULD], warnings=["short ttl (policy P-06)"]),  # weight 1, earns 1/2
        _c("skipped", [MUST], skip="could-not-run"),  # weight 2, earns 0
        _c("skipped", [MUST], skip="not-applicable"),  # left out
    ]
    # floor(100 * 2.5 / 7) = floor(35.71)
    assert score(checks) == 35
    run = RunResult(outcome="failed", target="x", durationMs=1, discovery=DiscoveryReport(), checks=checks)
    assert run.score == 35 and run.to_json()["score"] == 35


def test_score_edges_and_weights() -> None:
    assert score([_c("passed", [MUST]), _c("passed", [SHOULD])]) == 100
    assert score([_c("passed", [MUST], warnings=["w"])]) == 75  # (2 - 1/2) / 2
    assert score([_c("skipped", [MUST], skip="not-applicable")]) is None
    assert score([]) is None
    assert score([_c("skipped", [MUST], skip="could-not-run")]) == 0
    # A MUST-level failure costs more than a SHOULD-level warning, and more than a SHOULD failure.
    base = [_c("passed", [MUST]) for _ in range(3)]
    must_failed = score([*base, _c("failed", [MUST])])
    should_failed = score([*base, _c("failed", [SHOULD])])
    warned = score([*base, _c("passed", [MUST], warnings=["w"])])
    assert must_failed is not None and should_failed is not None and warned is not None
    assert must_failed < should_failed < warned < 100
    assert MUST_WEIGHT == 2


def test_an_opt_in_check_runs_only_when_asked_for() -> None:
    restart = "tasks-task-survives-restart"
    assert restart in OPT_IN_CHECKS
    assert PROFILES["durable"].includes(restart)
    assert not any(PROFILES[p].includes(restart) for p in ("core", "standard", "full"))
    # Naming it is asking for it, in any profile of every check; core stays the eight.
    for profile in ("standard", "full", "durable"):
        assert [c.id for c in select_checks(_config(profile=profile, check_ids=[restart]))] == [restart]
    with pytest.raises(UsageError, match="not in profile core"):
        _config(profile="core", check_ids=[restart])
