"""Discovery failures: each step the probes build on broken in turn (fixtures/discovery_faults.py:
initialize or server/discover erroring, tools/list erroring, empty or malformed, the declared
tools/call erroring or creating no task, tasks/get erroring), under every probe (profile full,
every role named), both eras. No internal error anywhere, and every could-not-run names a typed
cause with its fix; where the fix is a flag, a test applies it and the checks then run."""

from __future__ import annotations

import sys
from typing import Any

import pytest
from helpers.paths import DEMO_INPUT, FIXTURES
from helpers.runs import run, stdio

from tasks_conformance.core.causes import CauseKind

FAULTY = [sys.executable, str(FIXTURES / "discovery_faults.py")]
sys.path.insert(0, str(FIXTURES))
from discovery_faults import FAULTS  # noqa: E402

# Every probe planned: profile full, the task tool and every role named, input answered.
ERAS: dict[str, dict[str, Any]] = {
    "legacy": {"protocol_version": "2025-11-25", "tool_name": "slow_compute", "input_responses": DEMO_INPUT,
               "probes": ["required=long_job", "sync=echo", "tool-error=tool_error", "fault=rpc_error",
                          "input=confirm_action"]},
    "extension": {"protocol_version": "2026-07-28", "tool_name": "slow_compute", "input_responses": DEMO_INPUT,
                  "probes": ["required=long_job", "tool-error=tool_error", "fault=rpc_error", "input=confirm_action"]},
}


def _run(fault: str, **settings: Any) -> Any:
    return run(**stdio([*FAULTY, "--fault", fault]), profile="full", poll_timeout_ms=2_000, **settings)


def _internal_errors(ex: Any) -> list[str]:
    return [f"{c.id}: {c.message}" for c in ex.result.checks
            if (c.cause is not None and c.cause.kind is CauseKind.HARNESS) or "internal error" in c.message]


def _without_fix(ex: Any) -> list[str]:
    return [f"{c.id}: {c.message}" for c in ex.result.checks if c.bucket == "could-not-run"
            and (c.cause is None or "says what this check needs" in c.cause.fix_for(c.id, ""))]


@pytest.mark.slow
@pytest.mark.parametrize("era", sorted(ERAS))
@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_no_internal_error_when_a_discovery_step_fails(fault: str, era: str) -> None:
    ex = _run(fault, **ERAS[era])
    assert not _internal_errors(ex), _internal_errors(ex)
    assert not _without_fix(ex), _without_fix(ex)
    kinds = {c.cause.kind for c in ex.result.checks if c.bucket == "could-not-run" and c.cause is not None}
    assert kinds <= set(CauseKind), kinds  # a closed set: the typed kinds, never free text


def _blocked_by_listing(ex: Any) -> list[str]:
    """Checks of the task tool still blocked by the listing (a role's checks need --probe too)."""
    return [c.id for c in ex.result.checks if c.bucket == "could-not-run" and "tools/list" in c.message
            and c.cause is not None and "--probe" not in c.cause.fix_for(c.id, "")]


@pytest.mark.parametrize("fault", ["tools-list-error", "tools-list-malformed"])
@pytest.mark.parametrize("era", ["2025-11-25", "2026-07-28"])
def test_naming_the_tool_when_tools_list_fails_lets_the_checks_run(fault: str, era: str) -> None:
    """The advice given when tools/list fails or cannot be read (--tool-name) is applied and the
    task checks run: the named tool is called unlisted, since no listing contradicts the name."""
    advised = _run(fault, protocol_version=era)
    fixes = {c.cause.fix_for(c.id, "") for c in advised.result.checks
             if c.bucket == "could-not-run" and c.cause is not None and c.id == "tasks-status-payload-shape"}
    assert any("--tool-name" in fix for fix in fixes), fixes
    applied = _run(fault, protocol_version=era, tool_name="slow_compute")
    assert applied.result.discovery.probedTool == "slow_compute"
    assert not _blocked_by_listing(applied), _blocked_by_listing(applied)
    assert next(c for c in applied.result.checks if c.id == "tasks-status-payload-shape").bucket == "passed"


def test_a_server_that_lists_no_tool_is_not_advised_to_name_one() -> None:
    """An empty tools/list: naming a tool the server says it lacks cannot help, so the cause says
    to give the server one (it used to advise --tool-name, then refuse the name as unlisted)."""
    ex = _run("tools-list-empty", protocol_version="2025-11-25", tool_name="slow_compute")
    blocked = [c for c in ex.result.checks if c.bucket == "could-not-run" and c.cause is not None]
    assert blocked
    assert all("--tool-name" not in c.cause.fix_for(c.id, "") for c in blocked if "tools/list" in c.message)
    assert any("lists no tool" in c.message for c in blocked)
