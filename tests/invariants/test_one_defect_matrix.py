"""One defect, one failure, whatever tools play the probe roles: every breaking fixture server
(fixtures/broken_server.py and the hostile cases, each Fails declaration) runs with its declared
settings, with the probe roles named (--probe ROLE=TOOL), and with the task tool picked
automatically; no run may fail any check but the one the fixture breaks (and the checks its
declaration names beside it, `also=`, or the owner of its rule when that check deferred to it),
and every failure
names the rules it broke and the frames it rests on.

Slow (a few hundred runs): it runs with --full. The runs are mostly waits on the fixture servers,
so a few run at once, each in its own thread and event loop.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from helpers.breaking import CASES, RUNS, execute_run, fixture_server
from helpers.broken_variants import BROKEN_SERVER

# Slow on the test, not the module: its cases share no pool, so a --full run need not keep them on
# the one worker of the modules that do (helpers.groups.whole_module).
pytestmark = [pytest.mark.timeout(1200)]

PARALLEL = 4
# The role tools of the fixture servers (the reference server's tools): named on the extension,
# where tools carry no task metadata; on 2025-11-25 required and sync are inferred, the rest named.
NAMED_ROLES = {
    "extension": ["required=long_job", "tool-error=tool_error", "fault=rpc_error"],
    "legacy": ["tool-error=tool_error", "fault=rpc_error"],
}


def _named(settings: dict[str, Any]) -> dict[str, Any] | None:
    if settings.get("tool_name") == "work":  # the hostile server has one tool: no role to name
        return None
    era = "legacy" if settings.get("protocol_version") == "2025-11-25" else "extension"
    return {**settings, "probes": NAMED_ROLES[era]}


def _auto(settings: dict[str, Any]) -> dict[str, Any] | None:
    # Legacy picks a task-capable tool from execution.taskSupport (required first): the task tool
    # is then also the required role's tool. The extension has nothing to pick by (incomplete).
    return {k: v for k, v in settings.items() if k not in ("tool_name", "tool_args", "probes")}


ASSIGNMENTS: dict[str, Callable[[dict[str, Any]], dict[str, Any] | None]] = {
    "declared": lambda s: s, "named-roles": _named, "auto-picked": _auto,
}


def _runs(assignment: str) -> list[tuple[str, Any, dict[str, Any]]]:
    """(fixture server, its Fails declaration, settings): one per distinct run."""
    seen: set[str] = set()
    out = []
    for name, case in CASES:
        settings = ASSIGNMENTS[assignment](dict(RUNS[case.run]))
        key = json.dumps([name, case.check, case.transport, settings], sort_keys=True)
        if settings is not None and key not in seen:
            seen.add(key)
            out.append((name, case, settings))
    return out


def _key(name: str, settings: dict[str, Any], transport: str) -> str:
    return json.dumps([name, settings, transport], sort_keys=True)


# What a fixture declares failing with given settings, over all its declarations: a run that another
# declaration of the same fixture names (draft-32003's ext-roles) expects that declaration's checks too.
DECLARED_FAILING: dict[str, set[str]] = {}
for _name, _case in CASES:
    DECLARED_FAILING.setdefault(_key(_name, RUNS[_case.run], _case.transport), set()).update({_case.check,
                                                                                             *_case.also})


def _problems(name: str, case: Any, settings: dict[str, Any], assignment: str) -> list[str]:
    ex = execute_run(fixture_server(name), settings, case.transport)
    where = f"{name} ({case.run}, {case.transport}, {assignment})"
    failed = {c.id: c for c in ex.result.checks if c.bucket == "failed"}
    expected = {case.check, *case.also} | DECLARED_FAILING.get(_key(name, settings, case.transport), set())
    # With other role tools the rule may be seen by its owner too: the fixture's check then defers
    # to it (deferred, naming the owner), and the owner's is the one failure.
    by_id = {c.id: c for c in ex.result.checks}
    owners = {str(by_id[cid].deferredTo) for cid in expected if cid in by_id and by_id[cid].deferredTo}
    problems = [f"{where}: also failed {cid}: {c.message[:160]}" for cid, c in failed.items()
                if cid not in expected | owners]
    # That the declared run does fail its check is test_breaking_fixtures' to show; here, under a
    # few runs at once, a fixture whose defect shows only while its task still works (legacy-result-early)
    # may end before the check could see it, and that is no second failure.
    for cid, c in failed.items():
        if not c.broken or not c.evidence:
            # A rule the check does not judge is no rule of its report either (CheckResult.broken).
            problems.append(f"{where}: {cid} failed without {'rules (broken)' if not c.broken else 'frames'}")
    return problems


@pytest.mark.slow
@pytest.mark.parametrize("assignment", list(ASSIGNMENTS))
def test_each_breaking_fixture_fails_one_check_whatever_the_probe_roles(assignment: str) -> None:
    runs = _runs(assignment)
    assert len(runs) > 20, len(runs)  # the matrix is not empty
    with ThreadPoolExecutor(max_workers=PARALLEL) as pool:
        found = list(pool.map(lambda r: _problems(*r, assignment), runs))
    problems = [p for batch in found for p in batch]
    assert not problems, "\n".join(problems)


def test_the_matrix_covers_every_breaking_fixture() -> None:
    declared = {name for name, runs in BROKEN_SERVER.servers().items()
                if any(isinstance(r, BROKEN_SERVER.Fails) for r in runs)}
    assert {name for name, _case, _settings in _runs("declared")} == declared
