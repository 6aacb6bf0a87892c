"""--startup-timeout: a server slow to start is given its start, and a handshake that outlasts it
names the one setting to change. These tests wait on purpose: the wait is a cold start."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from helpers.paths import ROOT

# Longer than --timeout below, far shorter than the --startup-timeout the passing case gives.
START_DELAY_S = 1.0
TIMEOUT_MS = "800"


def _slow_starter(era: str) -> list[str]:
    """A stdio reference server that reads nothing for START_DELAY_S, as heavy imports do."""
    code = (f"import os, sys, time; time.sleep({START_DELAY_S}); "
            f"os.execv(sys.executable, [sys.executable, '-m', 'tasks_conformance.server.reference', "
            f"'--era', '{era}'])")
    return ["--command", sys.executable, "--args", "-c", "--args", code]


def _slow_second_start(started: Path) -> list[str]:
    """A stdio reference server of both eras that starts at once the first time and is slow every
    time after (`started` remembers): the second connection of tasks-extension-in-initialize-ignored
    is a second process."""
    code = (f"import os, sys, time, pathlib; p = pathlib.Path({str(started)!r}); "
            f"time.sleep({START_DELAY_S}) if p.exists() else p.touch(); "
            f"os.execv(sys.executable, [sys.executable, '-m', 'tasks_conformance.server.reference', "
            f"'--era', 'both'])")
    return ["--command", sys.executable, "--args", "-c", "--args", code]


def _run(*args: str, check_id: str = "tasks-wire-resolvable") -> tuple[int, dict[str, Any]]:
    proc = subprocess.run([sys.executable, "-m", "tasks_conformance", *args, "--format", "json",
                           "--check-id", check_id, "--timeout", TIMEOUT_MS],
                          capture_output=True, text=True, timeout=120, cwd=ROOT)
    return proc.returncode, json.loads(proc.stdout)


def _verdict(report: dict[str, Any], check_id: str) -> dict[str, Any]:
    return next(c for c in report["checks"] if c["id"] == check_id)


@pytest.mark.parametrize(("era", "pin"), [("legacy", "2025-11-25"), ("extension", "2026-07-28")])
def test_a_slow_start_within_startup_timeout_is_waited_for(era: str, pin: str) -> None:
    code, report = _run(*_slow_starter(era), "--protocol-version", pin, "--startup-timeout", "30000")
    assert code == 0, report
    assert _verdict(report, "tasks-wire-resolvable")["status"] == "passed"


def test_an_unpinned_slow_start_falls_back_and_still_connects() -> None:
    # The era probe gives up early (a silent server is taken for a legacy one); initialize then
    # waits the start out.
    code, report = _run(*_slow_starter("legacy"), "--startup-timeout", "30000")
    assert code == 0, report
    assert _verdict(report, "tasks-wire-resolvable")["status"] == "passed"


def test_a_handshake_past_the_timeout_names_startup_timeout() -> None:
    code, report = _run(*_slow_starter("legacy"), "--protocol-version", "2025-11-25")
    assert code == 3, report
    verdict = _verdict(report, "tasks-wire-resolvable")
    assert (verdict["status"], verdict["skipReason"]) == ("skipped", "could-not-run")
    (cause,) = report["incompleteCauses"]
    assert "--startup-timeout" in cause["fix"], cause
    # Something was started and alive: the fix is not "start the server".
    assert "start the server or correct the target" not in cause["fix"]


def test_a_second_server_process_is_given_the_startup_timeout_too(tmp_path: Path) -> None:
    code, report = _run(*_slow_second_start(tmp_path / "started"), "--startup-timeout", "30000",
                        "--tool-name", "slow_compute", check_id="tasks-extension-in-initialize-ignored")
    assert code == 0, report
    assert _verdict(report, "tasks-extension-in-initialize-ignored")["status"] == "passed"


def test_a_second_server_process_past_the_timeout_names_startup_timeout(tmp_path: Path) -> None:
    code, report = _run(*_slow_second_start(tmp_path / "started"), "--tool-name", "slow_compute",
                        check_id="tasks-extension-in-initialize-ignored")
    assert code == 3, report
    verdict = _verdict(report, "tasks-extension-in-initialize-ignored")
    assert (verdict["status"], verdict["skipReason"]) == ("skipped", "could-not-run"), verdict
    (cause,) = report["incompleteCauses"]
    assert "--startup-timeout" in cause["fix"], cause
