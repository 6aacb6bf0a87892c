"""`tasks-conformance client`: the reference client passes every scenario, each breaking client
(fixtures/broken_client.py) breaks exactly the check that owns its rule, and a client that never
connects, hangs or is misnamed is stated once, never a traceback."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import anyio
import pytest
from helpers.client_fast import QUICK_WAITS, judged_over
from helpers.paths import ROOT, load_module
from helpers.zygote import forked

from tasks_conformance.client.checks import CLIENT_CHECKS
from tasks_conformance.client.runner import ClientConfig, execute_client
from tasks_conformance.client.scenarios import SCENARIOS

BROKEN = ROOT / "fixtures" / "broken_client.py"
REFERENCE = (sys.executable, "-m", "tasks_conformance.client.reference_client")
# C-EXT-MUST-13/14 are server duties on the wire; a client sending the legacy task wire beside the
# extension warns (policy P-32), it does not fail.
WARN_ONLY = frozenset({"C-EXT-MUST-13", "C-EXT-MUST-14"})


def _load_broken() -> ModuleType:
    return load_module(BROKEN, "broken_client")


# The 2026-07-28 breaks, run here over HTTP: those of stdio only are tests/e2e/client/test_client_stdio.py's.
BREAKS: dict[str, Any] = {name: b for name, b in _load_broken().BREAKS.items()
                          if not name.startswith("legacy-") and "http" in b.transports}


def _owner(b: Any) -> str:
    """The check a break breaks: the one whose requirements name its rule, or (a policy-only
    check, which cites no requirement it could break) the one it names."""
    if b.check:
        return str(b.check)
    (owner,) = [c.id for c in CLIENT_CHECKS.values() if b.rule in c.requirements]
    return owner


def _run(command: tuple[str, ...], *scenarios: str, timeout_s: float = 20) -> Any:
    config = ClientConfig(command=forked(command), scenarios=scenarios, timeout_s=timeout_s, jobs=4, waits=QUICK_WAITS)
    return anyio.run(execute_client, config).result


def _cli(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "tasks_conformance", "client", *args], capture_output=True,
                          text=True, timeout=timeout, cwd=ROOT)


def test_every_client_rule_a_break_names_has_one_owning_check() -> None:
    for name, b in BREAKS.items():
        assert _owner(b), name


def test_every_client_check_has_a_breaking_client() -> None:
    """Of either era: each check of the registry is the owner of at least one break."""
    owners = {_owner(b) for b in _load_broken().BREAKS.values()}
    assert sorted(set(CLIENT_CHECKS) - owners) == []
    assert owners <= set(CLIENT_CHECKS)


def test_the_reference_client_passes_every_scenario_with_no_warning() -> None:
    result = _run(REFERENCE)
    assert result.outcome == "passed", [(c.id, c.bucket, c.message) for c in result.checks if c.bucket != "passed"]
    assert [c.id for c in result.checks if c.warnings] == []
    assert {c.bucket for c in result.checks} == {"passed"}


@pytest.mark.matrix
@pytest.mark.parametrize("name", sorted(BREAKS))
def test_a_breaking_client_breaks_exactly_the_check_that_owns_its_rule(name: str) -> None:
    b = BREAKS[name]
    owner = _owner(b)
    result = _run((sys.executable, str(BROKEN), "--break", name), *judged_over(owner, b.rule, "extension", "http"))
    by_id = {c.id: c for c in result.checks}
    failed = sorted(c.id for c in result.checks if c.bucket == "failed")
    must = "-MUST-" in b.rule and b.rule not in WARN_ONLY
    if must:
        assert failed == [owner], (name, [(c.id, c.message) for c in result.checks if c.bucket == "failed"])
        assert b.rule in by_id[owner].broken or not by_id[owner].broken
        assert by_id[owner].details.get("expected") and by_id[owner].details.get("actual"), by_id[owner].details
    else:
        assert failed == [], (name, failed)
        assert any(b.rule in str(w) for w in by_id[owner].warnings), (name, by_id[owner].warnings)
    assert [c.id for c in result.checks if c.bucket == "could-not-run"] == [], name


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(BREAKS))
def test_over_every_scenario_nothing_but_the_owner_fails(name: str) -> None:
    b = BREAKS[name]
    result = _run((sys.executable, str(BROKEN), "--break", name))
    failed = sorted(c.id for c in result.checks if c.bucket == "failed")
    expected = [_owner(b)] if "-MUST-" in b.rule and b.rule not in WARN_ONLY else []
    assert failed == expected, (name, [(c.id, c.message) for c in result.checks if c.bucket == "failed"])


def test_a_client_that_never_connects_is_one_cause_and_exit_3() -> None:
    proc = _cli("--command", f"{sys.executable} -c pass", "--scenario", "tasks-client-lifecycle",
                "--format", "json")
    assert proc.returncode == 3, proc.stderr
    doc = json.loads(proc.stdout)
    causes = doc["incompleteCauses"]
    assert len(causes) == 1 and "exited with code 0 without sending anything" in causes[0]["cause"]
    assert "Traceback" not in proc.stderr


def test_a_client_that_exits_non_zero_without_traffic_is_quoted_from_both_streams() -> None:
    """A harness may say why it gave up on stdout (a print) as well as on stderr: both are quoted."""
    code = "import sys; print('no server config found'); print('boom', file=sys.stderr); sys.exit(1)"
    proc = _cli("--command", sys.executable, "--args", "-c", "--args", code, "--scenario", "tasks-client-lifecycle",
                "--format", "json")
    assert proc.returncode == 3, proc.stderr
    (cause,) = json.loads(proc.stdout)["incompleteCauses"]
    assert "exited with code 1 without sending anything" in cause["cause"]
    assert "its stderr ends: boom" in cause["cause"] and "its stdout ends: no server config found" in cause["cause"]


# A client that sends nothing in one scenario (it exits at once there) and is the reference client
# in every other: the check that scenario is for could not run, never passes on the other runs.
SILENT_IN = ("import os, sys\n"
             "if os.environ['MCP_CONFORMANCE_SCENARIO'] == sys.argv[1]: sys.exit(0)\n"
             "os.execv(sys.executable, [sys.executable, '-m', 'tasks_conformance.client.reference_client',"
             " *sys.argv[2:]])\n")


@pytest.mark.parametrize(("scenario", "check"), [("tasks-client-version-negotiation", "tasks-client-version-retry"),
                                                 ("tasks-client-request-cancel", "tasks-client-request-cancellation")])
def test_a_client_silent_in_the_scenario_a_check_is_for_leaves_that_check_unjudged(scenario: str, check: str) -> None:
    result = _run((sys.executable, "-c", SILENT_IN, scenario), scenario, "tasks-client-lifecycle")
    by_id = {c.id: c for c in result.checks}
    assert by_id[check].bucket == "could-not-run", (by_id[check].bucket, by_id[check].message)
    assert "exited with code 0 without sending anything" in by_id[check].message
    # Only the checks that need that scenario are left unjudged; nothing fails.
    assert {c.id for c in result.checks if c.bucket == "could-not-run"} == {
        c.id for c in CLIENT_CHECKS.values() if c.needs_scenario(scenario)}
    assert [c.id for c in result.checks if c.bucket == "failed"] == []


def test_every_scenario_is_needed_by_a_check_but_the_control() -> None:
    """A scenario no check needs could show nothing of the client and every verdict still pass:
    each is the precondition of a check, but tasks-client-direct-error, the control the outcome
    check compares a failed task's error with (a measure, not a run a rule is judged on)."""
    unneeded = {s.name for s in SCENARIOS if not any(c.needs_scenario(s.name) for c in CLIENT_CHECKS.values())}
    assert unneeded == {"tasks-client-direct-error"}


def test_a_client_that_hangs_is_stopped_at_the_timeout(tmp_path: Path) -> None:
    marker = tmp_path / "child.pid"
    # The client starts a child of its own and hangs: both must be gone afterwards.
    hang = (f"{sys.executable} -c \"import subprocess,sys,time; p=subprocess.Popen([sys.executable,'-c',"
            f"'import time; time.sleep(60)']); open({str(marker)!r},'w').write(str(p.pid)); time.sleep(60)\"")
    proc = _cli("--command", hang, "--scenario", "tasks-client-lifecycle", "--timeout", "1500", "--format", "json")
    assert proc.returncode == 3, proc.stderr
    assert "stopped after --timeout" in json.loads(proc.stdout)["incompleteCauses"][0]["cause"]
    import psutil

    child = int(marker.read_text())
    assert not psutil.pid_exists(child) or psutil.Process(child).status() == psutil.STATUS_ZOMBIE


@pytest.mark.parametrize(("args", "says"), [
    ((), "--command is required"),
    (("--command", "x", "--era", "nope"), "--era must be one of"),
    (("--command", "x", "--transport", "ws"), "--transport must be http or stdio"),
    (("--command", "x", "--transport", "stdio", "--scenario", "tasks-client-unsafe-task-id"),
     "a scenario of --transport http only"),
    (("--command", "x", "--scenario", "nope"), "unknown 'nope'"),
    (("--command", "x", "--timeout", "0"), "--timeout must be"),
    (("--command", "x", "--reporter", "nope=out.txt"), "unknown reporter"),
])
def test_usage_errors_are_one_line_and_exit_2(args: tuple[str, ...], says: str) -> None:
    proc = _cli(*args)
    assert proc.returncode == 2 and says in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr and len(proc.stderr.strip().splitlines()) == 1


def test_the_scenarios_are_listed_with_their_context_and_rules() -> None:
    proc = _cli("--list-scenarios", "--format", "json")
    assert proc.returncode == 0
    rows = json.loads(proc.stdout)["scenarios"]
    assert [r["name"] for r in rows] == [s.name for s in SCENARIOS]
    for row in rows:
        assert row["name"].startswith("tasks-client-")
        assert row["protocolVersions"] == [{"extension": "2026-07-28", "legacy": "2025-11-25"}[e] for e in row["eras"]]
        assert {"toolName", "arguments"} <= set(row["context"]) and row["rules"] and row["checks"]
    assert {r["name"]: r["context"].get("cancel") for r in rows}["tasks-client-cancel"] is True
    transports = {r["name"]: r["transports"] for r in rows}
    assert transports["tasks-client-unsafe-task-id"] == ["http"]
    assert transports["tasks-client-lifecycle"] == ["http", "stdio"]


def test_client_demo_passes_and_writes_reports(tmp_path: Path) -> None:
    junit, wire = tmp_path / "client.xml", tmp_path / "wire.jsonl"
    proc = _cli("--command", shlex.join(forked(REFERENCE)), "--format", "json", "--reporter", f"junit-xml={junit}",
                "--wire-log", str(wire))
    assert proc.returncode == 0, proc.stdout[-2000:]
    doc = json.loads(proc.stdout)
    extension_checks = [c for c in CLIENT_CHECKS.values() if ClientConfig(command=()).judges(c)]  # the default era
    assert doc["outcome"] == "passed" and doc["counts"]["passed"] == len(extension_checks)
    assert 'classname="tasks_conformance.requests"' in junit.read_text()
    frames = [json.loads(line) for line in wire.read_text().splitlines()]
    assert any(f.get("http", {}).get("method") == "POST" for f in frames)


def test_a_cancel_over_a_second_http_connection_reaches_the_stateless_server_and_passes() -> None:
    """cancels-elsewhere breaks the rule over stdio only: over HTTP the second connection reaches the
    same 2026-07-28 server, which is stateless (policy P-28), so its tasks/cancel cancels the task."""
    result = _run((sys.executable, str(BROKEN), "--break", "cancels-elsewhere"), "tasks-client-cancel")
    by_id = {c.id: c for c in result.checks}
    assert by_id["tasks-client-cancels-with-tasks-cancel"].bucket == "passed", by_id[
        "tasks-client-cancels-with-tasks-cancel"].message
    assert by_id["tasks-client-keeps-observing"].warnings == []


def test_every_frame_of_a_client_run_names_its_scenario_and_connection() -> None:
    config = ClientConfig(command=REFERENCE, eras=("extension", "legacy"), jobs=4, timeout_s=20,
                          scenarios=("tasks-client-lifecycle", "tasks-client-legacy-lifecycle"))
    execution = anyio.run(execute_client, config)
    frames = [f.to_json() for f in execution.wire.frames()]
    assert frames and {(f["lane"], f["connection"]) for f in frames} == {
        ("tasks-client-lifecycle (extension)", 1), ("tasks-client-legacy-lifecycle (legacy)", 1)}


def test_a_client_that_shows_every_error_without_its_code_surfaces_the_failed_task_as_the_direct_call() -> None:
    """tasks-client-direct-error is the control: the failed task's error shown exactly as the same
    error from the tools/call itself is what C-EXT-MUST-16 asks, code or no code."""
    command = (sys.executable, str(BROKEN), "--freedom", "errors-without-code")
    result = _run(command, "tasks-client-tool-error", "tasks-client-failed", "tasks-client-direct-error")
    surfaces = {c.id: c for c in result.checks}["tasks-client-surfaces-outcome"]
    assert surfaces.bucket == "passed" and "direct tools/call" in surfaces.message, surfaces.message
    # Without the control the missing code is all there is to judge.
    alone = {c.id: c for c in _run(command, "tasks-client-failed").checks}["tasks-client-surfaces-outcome"]
    assert alone.bucket == "failed", alone.message


def test_a_failed_task_shown_otherwise_than_the_direct_call_still_fails() -> None:
    result = _run((sys.executable, str(BROKEN), "--break", "generic-error"), "tasks-client-failed",
                  "tasks-client-direct-error")
    surfaces = {c.id: c for c in result.checks}["tasks-client-surfaces-outcome"]
    assert surfaces.bucket == "failed" and "direct tools/call" in surfaces.message, surfaces.message
