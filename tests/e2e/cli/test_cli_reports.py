"""Report selection on the command line: stdout format, extra reporters to files, schemas,
unwritable paths rejected before any traffic, exit codes independent of reporters."""

from __future__ import annotations

import json
import shlex
import socket
import sys
import xml.etree.ElementTree as ET
from datetime import datetime
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from helpers.paths import BROKEN, FIXTURES, REFERENCE
from helpers.runs import invoke, tool

from tasks_conformance.core.profiles import OPT_IN_CHECKS
from tasks_conformance.reporters import schema_text
from tasks_conformance.server.checks import CHECKS

REF = " ".join(REFERENCE)


def test_human_on_stdout_plus_junit_and_summary_files(tmp_path: Path) -> None:
    junit, summary = tmp_path / "r.xml", tmp_path / "s.json"
    proc = tool("--command", REF, "--tool-name", "slow_compute", "--format", "human",
               "--reporter", f"junit-xml={junit}", "--reporter", f"json-summary={summary}")
    assert proc.returncode == 0, proc.stderr
    assert "tasks-wire-resolvable" in proc.stdout and "\x1b" not in proc.stdout  # NO_COLOR set
    root = ET.parse(junit).getroot()
    suite = root.find("testsuite")
    data = json.loads(summary.read_text())
    # The suite is named after the target and era (issue 14); <testsuites> keeps the tool's name.
    assert root.get("name") == "tasks-conformance"
    expected = f"tasks-conformance: {shlex.join(REFERENCE)} (2026-07-28 extension wire)"
    assert suite is not None and suite.get("name") == expected
    assert data["target"] == shlex.join(REFERENCE)
    assert suite.get("hostname") == socket.gethostname()
    started = datetime.fromisoformat(suite.get("timestamp") or "")
    assert started.tzinfo is None and started.microsecond == 0
    names = [tc.get("name") for tc in suite.iter("testcase")]
    assert "tasks-ttl-shape" in names and len(names) == len(set(CHECKS) - set(OPT_IN_CHECKS))
    assert data["kind"] == "tasks-conformance" and data["outcome"] == "passed"
    schema = json.loads(schema_text("json-summary"))
    jsonschema.validate(data, schema)


def test_default_stdout_is_json_when_not_a_terminal_and_validates() -> None:
    proc = tool("--command", REF, "--tool-name", "slow_compute", env={"CI": ""})  # a script, not CI
    data = json.loads(proc.stdout)
    jsonschema.validate(data, json.loads(schema_text("json")))
    assert proc.returncode == 0


def _is_human(stdout: str) -> bool:
    """The human report: no JSON document, no colour, and the verdict in words."""
    try:
        json.loads(stdout)
    except json.JSONDecodeError:
        return "\x1b" not in stdout and "PASSED" in stdout and "tasks-wire-resolvable" in stdout
    return False


def test_the_readme_ci_example_prints_the_human_report_and_writes_its_files(tmp_path: Path) -> None:
    # The README's CI line, against the reference server: reports to files, no --format.
    junit, summary, wire = tmp_path / "report.xml", tmp_path / "summary.json", tmp_path / "wire.ndjson"
    proc = tool("--command", REF, "--tool-name", "slow_compute", "--reporter", f"junit-xml={junit}",
               "--reporter", f"json-summary={summary}", "--wire-log", str(wire), env={"CI": "", "NO_COLOR": ""})
    assert proc.returncode == 0, proc.stderr
    assert _is_human(proc.stdout), proc.stdout[:500]
    assert json.loads(summary.read_text())["outcome"] == "passed" and junit.read_text().startswith("<?xml")


@pytest.mark.parametrize("value", ["true", "1", "TRUE", "yes"])
def test_ci_in_the_environment_prints_the_human_report(value: str) -> None:
    proc = tool("--command", REF, "--check-id", "tasks-wire-resolvable", env={"CI": value, "NO_COLOR": ""})
    assert proc.returncode == 0 and _is_human(proc.stdout), proc.stdout[:500]


@pytest.mark.parametrize("env", [{"CI": "true"}, {"CI": ""}])
def test_an_explicit_format_json_wins_in_ci_and_with_report_files(env: dict[str, str], tmp_path: Path) -> None:
    proc = tool("--command", REF, "--check-id", "tasks-wire-resolvable", "--format", "json",
               "--reporter", f"markdown={tmp_path / 'r.md'}", env=env)
    assert proc.returncode == 0 and json.loads(proc.stdout)["outcome"] == "passed"


def test_the_stdout_rule() -> None:
    from tasks_conformance.reporters.output import in_ci, stdout_report
    from tasks_conformance.settings.config import RunOptions, build_run_config

    def pick(*, tty: bool = False, ci: bool = False, **flags: Any) -> str:
        config = build_run_config(RunOptions(command=sys.executable, **flags))
        named = next((r.name for r in config.reporters if r.path is None), None)
        return stdout_report(config, named, tty=tty, ci=ci)

    assert pick() == "json"
    assert pick(tty=True) == pick(ci=True) == pick(reporters=("junit-xml=r.xml",)) == "human"
    assert pick(ci=True, format="json") == pick(reporters=("json-summary=s.json",), format="json") == "json"
    assert pick(tty=True, reporters=("markdown",)) == pick(ci=True, reporters=("markdown",)) == "markdown"
    assert [in_ci({"CI": v}) for v in ("", "0", "false", "False", "no", "true", "1", "yes")] == [False] * 5 + [True] * 3
    assert in_ci({}) is False


def test_reporter_without_path_takes_stdout_and_quiet_prints_one_line() -> None:
    proc = tool("--command", REF, "--check-id", "tasks-wire-resolvable", "--reporter", "markdown")
    assert proc.returncode == 0 and "tasks-wire-resolvable" in proc.stdout and "|" in proc.stdout
    proc = tool("--command", REF, "--check-id", "tasks-wire-resolvable", "--format", "human", "--quiet")
    assert proc.returncode == 0 and len(proc.stdout.strip().splitlines()) == 1


def test_unwritable_report_path_is_exit_2_before_any_traffic(tmp_path: Path) -> None:
    # In-process: the check is that no server is started, so none needs to answer.
    marker = tmp_path / "received.bin"
    server = f"{sys.executable} {FIXTURES / 'recording_server.py'} --record {marker}"
    res = invoke("--command", server, "--reporter", f"junit-xml={tmp_path}/missing/dir/r.xml")
    assert res.code == 2 and "cannot write" in res.stderr
    assert not marker.exists()  # the server was never started


def test_exit_code_does_not_depend_on_reporters(tmp_path: Path) -> None:
    broken = f"{' '.join(BROKEN)} --break nested-create --transport stdio"
    codes = set()
    for extra in ([], ["--reporter", f"junit-xml={tmp_path / 'a.xml'}"], ["--reporter", "markdown"],
                  ["--format", "human", "--quiet"]):
        codes.add(tool("--command", broken, "--tool-name", "slow_compute", *extra).returncode)
    assert codes == {1}


def test_junit_marks_could_not_run_as_error_and_not_applicable_as_skipped(tmp_path: Path) -> None:
    junit = tmp_path / "r.xml"
    proc = tool("--command", REF, "--reporter", f"junit-xml={junit}", "--format", "json")
    assert proc.returncode == 3  # no --tool-name on the extension wire: incomplete
    cases = {tc.get("name"): tc for tc in ET.parse(junit).getroot().iter("testcase")}
    err = cases["tasks-ttl-shape"].find("error")
    assert err is not None and err.get("type") == "could-not-run" and "--tool-name" in (err.get("message") or "")
    skipped = cases["tasks-mcp-name-routing"].find("skipped")
    assert skipped is not None and (skipped.get("message") or "").startswith("not-applicable")


def test_wire_log_export_is_ndjson_of_every_frame(tmp_path: Path) -> None:
    log = tmp_path / "wire.ndjson"
    proc = tool("--command", REF, "--check-id", "tasks-wire-resolvable", "--format", "json", "--wire-log", str(log))
    assert proc.returncode == 0
    frames = [json.loads(line) for line in log.read_text().splitlines()]
    assert [f["seq"] for f in frames] == list(range(1, len(frames) + 1))
    assert frames[0]["direction"] == "out" and "server/discover" in frames[0]["text"]
    assert {f["channel"] for f in frames} == {"stdio"}


def _closed_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_an_unreachable_server_gives_one_cause_once() -> None:
    url = f"http://127.0.0.1:{_closed_port()}/mcp"
    proc = tool("--url", url, "--format", "json", "--timeout", "5000")
    assert proc.returncode == 3, proc.stderr
    data = json.loads(proc.stdout)
    jsonschema.validate(data, json.loads(schema_text("json")))
    (cause,) = data["incompleteCauses"]
    assert cause["checks"] == [c["id"] for c in data["checks"]] and url in cause["fix"]
    assert data["incompleteReason"].count("could not talk to the server") == 1
    human = tool("--url", url, "--format", "human", "--timeout", "5000").stdout
    assert human.count("could not talk to the server") == 1 and "tasks-ttl-shape" not in human
    assert f"! not run  all {len(data['checks'])} checks: could not talk to the server" in human


def test_no_tool_name_on_the_extension_wire_is_one_cause_with_its_fix(tmp_path: Path) -> None:
    summary = tmp_path / "s.json"
    proc = tool("--command", REF, "--format", "json", "--reporter", f"json-summary={summary}")
    assert proc.returncode == 3
    data, small = json.loads(proc.stdout), json.loads(summary.read_text())
    jsonschema.validate(small, json.loads(schema_text("json-summary")))
    (cause,) = data["incompleteCauses"]
    assert small["incompleteCauses"] == data["incompleteCauses"]
    assert cause["fix"].startswith("name one with --tool-name (listed: ") and "tasks-ttl-shape" in cause["checks"]
    not_run = [c["id"] for c in data["checks"] if c["skipReason"] == "could-not-run"]
    assert sorted(cause["checks"]) == sorted(not_run) and len(not_run) > 5
    assert data["incompleteReason"].count("cannot guess which tool") == 1
    assert len(data["incompleteReason"]) < 1200  # was ~3 KB: the sentence once per blocked check


def test_junit_suite_name_overrides_the_derived_name(tmp_path: Path) -> None:
    junit = tmp_path / "r.xml"
    proc = tool("demo", "--check-id", "tasks-wire-resolvable", "--junit-suite-name", "staging <eu> & co",
               "--reporter", f"junit-xml={junit}")
    assert proc.returncode == 0, proc.stderr
    suite = ET.parse(junit).getroot().find("testsuite")
    assert suite is not None and suite.get("name") == "staging <eu> & co"
    assert invoke("demo", "--junit-suite-name", " ").stderr.strip() == (
        "tasks-conformance: error: --junit-suite-name must not be empty")
