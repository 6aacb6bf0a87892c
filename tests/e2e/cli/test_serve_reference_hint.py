"""serve-reference prints, beside READY, the command that runs the whole suite against it, and
that command, run as printed, passes every check."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys

import pytest
from helpers.processes import stop_process


def _serve(transport: str) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen([sys.executable, "-m", "tasks_conformance", "serve-reference", "--transport", transport],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    assert proc.stdout is not None
    lines = [proc.stdout.readline(), proc.stdout.readline()]  # READY, then RUN (the server flushes both)
    assert lines[0].startswith("READY "), lines
    assert lines[1].startswith("RUN tasks-conformance "), lines
    return proc, lines[1][4:].strip()


@pytest.mark.parametrize("transport", ["http", "tcp"])
def test_the_printed_command_runs_the_full_suite_and_passes(transport: str) -> None:
    proc, command = _serve(transport)
    try:
        argv = shlex.split(command)
        assert argv[0] == "tasks-conformance"
        done = subprocess.run([sys.executable, "-m", "tasks_conformance", *argv[1:], "--format", "json"],
                              capture_output=True, text=True, timeout=120)
        report = json.loads(done.stdout)
        assert done.returncode == 0 and report["outcome"] == "passed", report.get("incompleteReason")
        assert not any(c["skipReason"] == "could-not-run" for c in report["checks"])
        # Every probe role has its tool: the role checks are judged, not skipped.
        status = {c["id"]: c["status"] for c in report["checks"]}
        roles = ("tasks-required-tool-needs-task", "tasks-tool-error-outcome", "tasks-fault-outcome")
        assert [status[check] for check in roles] == ["passed"] * 3
    finally:
        stop_process(proc, grace_s=10)
