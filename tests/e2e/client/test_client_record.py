"""The client's own record in every report: per scenario its exit status, time, --timeout, what it
sent, the outcome line exactly as it printed it (a malformed one is a cause of its own, naming what
is wrong) and the last lines of its stderr, redacted: in the JSON report (held to its schema), in
JUnit's <system-out> and under human -v."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import jsonschema
from helpers.paths import ROOT

from tasks_conformance.reporters import schema_text

SECRET = "recordSecret7x9q"
# A harness that calls nothing, says two things on stderr (one of them the -e secret), prints an
# outcome line that is not JSON, and exits 5.
HARNESS = (
    "import os, sys\n"
    "sys.stderr.write('starting\\n')\n"
    "sys.stderr.write('token ' + os.environ['RECORD_TOKEN'] + '\\n')\n"
    "print('TASKS-CONFORMANCE-OUTCOME {status: done')\n"
    "sys.exit(5)\n"
)


def _client(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    harness = tmp_path / "harness.py"
    harness.write_text(HARNESS)
    command = shlex.join([sys.executable, str(harness)])
    return subprocess.run([sys.executable, "-m", "tasks_conformance", "client", "--command", command,
                           "--scenario", "tasks-client-lifecycle", "--scenario", "tasks-client-tool-error",
                           "--timeout", "15000", "-e", f"RECORD_TOKEN={SECRET}", *args],
                          capture_output=True, text=True, timeout=120, cwd=ROOT)


def test_the_json_report_has_each_scenarios_record_and_keeps_its_schema(tmp_path: Path) -> None:
    junit = tmp_path / "client.xml"
    proc = _client(tmp_path, "--format", "json", "--reporter", f"junit-xml={junit}")
    assert SECRET not in proc.stdout + junit.read_text()
    doc = json.loads(proc.stdout)
    jsonschema.Draft202012Validator(json.loads(schema_text("json"))).validate(doc)
    records: list[dict[str, Any]] = doc["scenarios"]
    assert [r["scenario"] for r in records] == ["tasks-client-lifecycle", "tasks-client-tool-error"]
    first = records[0]
    assert first["exitCode"] == 5 and first["timedOut"] is False and first["timeoutMs"] == 15000
    assert first["started"] is True and first["reached"] is False and first["messages"] == 0
    assert first["era"] == "extension" and first["transport"] == "http"
    assert first["outcomeLine"] == "{status: done" and "not JSON" in first["outcomeProblem"]
    assert first["stderrTail"] == ["starting", "token [REDACTED]"]
    out = ET.parse(junit).getroot().find("testsuite/system-out")
    assert out is not None and out.text is not None
    assert "tasks-client-lifecycle (extension, http): exit 5" in out.text and "token [REDACTED]" in out.text


def test_human_verbose_shows_the_record(tmp_path: Path) -> None:
    proc = _client(tmp_path, "--format", "human", "-v")
    assert "the client, scenario by scenario:" in proc.stdout and "exit 5" in proc.stdout
    assert "outcome line: the TASKS-CONFORMANCE-OUTCOME line is not JSON" in proc.stdout
    assert SECRET not in proc.stdout
    quiet = _client(tmp_path, "--format", "human")
    assert "scenario by scenario" not in quiet.stdout


def test_a_malformed_outcome_line_is_its_own_cause() -> None:
    """Under --profile full the check judged from the line could not run, saying what is wrong with
    it (not that no line was printed); under standard it is not applicable, saying the same."""
    from tasks_conformance.client.evidence import Exchange, ScenarioRun
    from tasks_conformance.client.launch import ClientRun
    from tasks_conformance.client.runner import ClientConfig, judge
    from tasks_conformance.client.scenarios import BY_NAME
    from tasks_conformance.core.wirelog import WireLog

    problem = "the TASKS-CONFORMANCE-OUTCOME line is not JSON"
    client = ClientRun(("c",), True, 0, False, 1.0, "", "", None, outcome_problem=problem, outcome_line="{x")
    call = Exchange(1, 0.0, {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {}}, None, 2, 0.1,
                    {"jsonrpc": "2.0", "id": 1, "result": {"resultType": "complete", "content": []}})
    runs = [ScenarioRun(BY_NAME[name], "extension", client, (call,), reached=True)
            for name in ("tasks-client-tool-error", "tasks-client-failed")]
    from tasks_conformance.client.checks import CLIENT_CHECKS

    check = CLIENT_CHECKS["tasks-client-surfaces-outcome"]
    full = judge(check, runs, WireLog(), ClientConfig(command=("c",), profile="full"))
    assert full.skipReason == "could-not-run" and full.cause is not None and problem in full.cause.text
    standard = judge(check, runs, WireLog(), ClientConfig(command=("c",)))
    assert standard.skipReason == "not-applicable" and problem in standard.message
