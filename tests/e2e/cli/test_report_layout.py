"""Report defects users saw: spec links split over two lines, a failed run's fix list lost,
an interrupted run headed FAILED, and "nothing answered" said of a server that answered."""

from __future__ import annotations

import io
import json
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from typing import Any

import jsonschema
import pytest
from helpers.processes import free_port, stop_process, wait_listening
from helpers.runs import cli

from tasks_conformance.core.causes import Cause, CauseKind, by_flag
from tasks_conformance.core.multirun_result import Combined, NamedRun
from tasks_conformance.core.result import CheckResult, Discovery, RunResult, decide_outcome, incomplete_reason
from tasks_conformance.reporters import ReportOptions, render, schema_text
from tasks_conformance.reporters.combined import render_combined
from tasks_conformance.reporters.json_report import summary_document

SGR = re.compile(r"\x1b\[[0-9;]*m")
URL = re.compile(r"https?://\S+")
# The rules with the longest spec links (all over 110 characters).
LONG_LINKED = ["S-CORE-SHOULD-02", "S-EXT-MUST-35", "S-EXT-MUST-29", "S-LEG-MUST-14"]
TARGET = "https://mcp.example.com/deployments/production-eu-west-1/servers/tasks-conformance-target/mcp"


def _check(check_id: str, status: str, *, requirements: list[str] | None = None, skip: str | None = None,
           message: str = "", details: dict[str, Any] | None = None, cause: Cause | None = None) -> CheckResult:
    shown = message or (cause.message if cause is not None else f"{check_id} message")
    return CheckResult(id=check_id, category="dispatch", title=f"title of {check_id}", description="d",
                       requirements=requirements or [], status=status,  # type: ignore[arg-type]
                       skipReason=skip, message=shown,  # type: ignore[arg-type]
                       details=details or {}, cause=cause)


def _result(checks: list[CheckResult], *, interrupted: bool = False, target: str = TARGET) -> RunResult:
    """As the runner builds it: incompleteReason only when the outcome is incomplete."""
    outcome = decide_outcome(checks, interrupted)
    return RunResult(outcome=outcome, target=target, durationMs=1500, discovery=Discovery(), checks=checks,
                     incompleteReason=incomplete_reason(checks, interrupted, target) if outcome == "incomplete"
                     else None, interrupted=interrupted, toolVersion="0.1.0")


def _text(name: str, result: RunResult, options: ReportOptions | None = None) -> str:
    out = io.StringIO()
    render(name, result, out, options or ReportOptions())
    return out.getvalue()


def _combined(*results: RunResult, interrupted: bool = False) -> Combined:
    eras = ("2025-11-25", "2026-07-28")
    return Combined(kind="eras", interrupted=interrupted, runs=tuple(
        NamedRun(name=era, era=era, target=None, result=r, wire=None)
        for era, r in zip(eras, results, strict=False)))


def _combined_text(name: str, combined: Combined, options: ReportOptions | None = None) -> str:
    out = io.StringIO()
    render_combined(name, combined, out, options or ReportOptions())
    return out.getvalue()


# ---------------------------------------------------------------------------------------------
# 1. a link sits whole on one line


def _linked_run() -> RunResult:
    """Failures citing the longest spec links, one beside a long check id, and an unreachable
    target whose fix names it."""
    return _result([
        _check("tasks-result-type-discipline", "failed", requirements=LONG_LINKED[:2],
               message="the server answered without the routing headers"),
        _check("tasks-undeclared-capability-names-requirements", "failed", requirements=LONG_LINKED[2:],
               message="the legacy task was not associated"),
        _check("tasks-ttl-shape", "skipped", skip="could-not-run",
               cause=Cause("could not talk to the server: no answer (All connection attempts failed)",
                           CauseKind.UNREACHABLE)),
    ])


def _urls(result: RunResult) -> set[str]:
    urls = {rule.url for check in result.checks for rule in check.rules if rule.url}
    return urls | {result.target}


def _assert_whole(text: str, urls: set[str]) -> None:
    lines = [SGR.sub("", line) for line in text.splitlines()]
    for url in urls:
        assert any(url in line for line in lines), f"{url} is not whole on one line:\n" + "\n".join(lines)
    # No fragment of a link stands alone: each https:// on a line is one of the links, whole.
    for line in lines:
        for found in URL.findall(line):
            assert found.rstrip(").,") in urls or found.startswith(tuple(urls)), (found, line)


@pytest.mark.parametrize("width", [80, 120])
@pytest.mark.parametrize("terminal", [True, False], ids=["terminal", "ci-log"])
def test_spec_links_are_never_split_across_lines(width: int, terminal: bool) -> None:
    result = _linked_run()
    urls = _urls(result)
    assert all(len(u) > 90 for u in urls)  # wider than any column the report gives them
    options = ReportOptions(color=terminal, width=width)
    human = _text("human", result, options)
    for text in (human, _combined_text("human", _combined(result, result), options)):
        _assert_whole(text, urls)
        if terminal:
            assert "\x1b[" in text  # the terminal path really is styled
    # Only a line that holds a link may be wider than the console (the combined report's one
    # line per run is never wrapped), and a link alone on its line moves left to fit when it can.
    for line in (SGR.sub("", x) for x in human.splitlines()):
        assert len(line) <= width or URL.search(line), line
        if URL.fullmatch(line.strip()) and len(line.strip()) + 2 <= width:
            assert len(line) <= width, line
    # Markdown never wraps; its links are the spec's (server text such as the target is escaped,
    # never made a link), each whole in its reference definition.
    spec = urls - {result.target}
    for text in (_text("markdown", result), _combined_text("markdown", _combined(result, result))):
        lines = text.splitlines()
        assert all(any(line.endswith(f"]: {url}") for line in lines) for url in spec)


# ---------------------------------------------------------------------------------------------
# 2. a failed run keeps its fix list

NO_TOOL = by_flag("no tool runs as a task", "name one with --tool-name")
BLOCKED = ["tasks-ttl-shape", "tasks-inline-result", "tasks-cancel-ack-shape", "tasks-status-payload-shape"]


def _failed_and_blocked(*, interrupted: bool = False) -> RunResult:
    return _result([
        _check("tasks-wire-resolvable", "passed", message="ok"),
        _check("tasks-result-type-discipline", "failed", requirements=["S-EXT-MUST-03"],
               message='resultType is "tsak"; S-EXT-MUST-03 requires "task"'),
        *(_check(i, "skipped", skip="could-not-run", cause=NO_TOOL) for i in BLOCKED),
    ], interrupted=interrupted, target="http://127.0.0.1:8765/mcp")


def test_a_failed_run_states_each_cause_once_with_its_fix() -> None:
    result = _failed_and_blocked()
    assert result.outcome == "failed" and result.incompleteReason is None
    (cause,) = result.incompleteCauses
    assert cause.cause == "no tool runs as a task" and cause.fix == "name one with --tool-name"
    assert cause.checks == tuple(BLOCKED)
    for kind, doc in (("json", result.to_json()), ("json-summary", summary_document(result))):
        jsonschema.validate(doc, json.loads(schema_text(kind)))  # type: ignore[arg-type]
        assert doc["incompleteCauses"] == [cause.to_json()] and doc["incompleteReason"] is None

    human = " ".join(_text("human", result, ReportOptions(width=200)).split())
    assert human.count("no tool runs as a task") == 1 and human.count("fix: ") == 1
    assert "fix: name one with --tool-name" in human
    assert human.count("see the cause below") == len(BLOCKED)
    assert "blocked: " + ", ".join(BLOCKED) in human

    md = _text("markdown", result)
    assert md.count("no tool runs as a task") == 1 and md.count("**Fix:** name one with --tool-name") == 1
    assert md.count("| see the cause above |") == len(BLOCKED)

    suite = ET.fromstring(_text("junit-xml", result).split("\n", 1)[1]).find("testsuite")
    assert suite is not None
    out = suite.findtext("system-out") or ""
    assert "no tool runs as a task (to fix: name one with --tool-name)" in out

    # The combined reports say it too.
    both = " ".join(_combined_text("human", _combined(result, result)).split())
    assert both.count("fix: name one with --tool-name") == 2


def test_a_failed_and_interrupted_run_lists_the_interruption_as_a_cause() -> None:
    result = _failed_and_blocked(interrupted=True)
    assert result.outcome == "failed"
    interrupted, blocked = result.incompleteCauses
    assert interrupted.cause.startswith("the run was interrupted") and blocked.checks == tuple(BLOCKED)


# ---------------------------------------------------------------------------------------------
# 3. an interrupted run says so


def _interrupted_failure() -> RunResult:
    return _result([
        _check("tasks-result-type-discipline", "failed", requirements=["S-EXT-MUST-03"], message="bad"),
        _check("tasks-ttl-shape", "skipped", skip="could-not-run",
               cause=Cause("the run was interrupted before this check's traffic finished", CauseKind.INTERRUPTED)),
    ], interrupted=True)


def test_an_interrupted_run_is_headed_interrupted_not_failed() -> None:
    result = _interrupted_failure()
    assert result.outcome == "failed" and result.to_json()["interrupted"] is True  # the JSON stays as it was
    full = _text("human", result).splitlines()
    summary = next(line for line in full if "checks passed" in line)
    assert summary.startswith("INTERRUPTED  ") and "FAILED" not in "\n".join(full)
    quiet = _text("human", result, ReportOptions(quiet=True))
    assert quiet.startswith("INTERRUPTED  ") and "FAILED" not in quiet
    md = _text("markdown", result)
    assert md.splitlines()[0] == "## ⏹️ MCP Tasks conformance: interrupted"
    combined = _combined(result, _result([_check("tasks-x", "passed")]), interrupted=True)
    assert combined.exit_code == 130
    lines = _combined_text("human", combined, ReportOptions(quiet=True)).splitlines()
    assert lines[0].startswith("2025-11-25  INTERRUPTED  ") and lines[-1].startswith("INTERRUPTED  both eras:")
    md = _combined_text("markdown", combined)
    assert md.startswith("## ⏹️ MCP Tasks conformance, both eras: interrupted")
    assert "### ⏹️ 2025-11-25: interrupted" in md


# ---------------------------------------------------------------------------------------------
# 4. an HTTP server that is not an MCP endpoint


def test_a_plain_http_server_is_said_to_answer_not_to_be_absent() -> None:
    port = free_port()
    server = subprocess.Popen([sys.executable, "-m", "http.server", "--bind", "127.0.0.1", str(port)],
                              stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_listening(port, server)
        proc = cli("--url", f"http://127.0.0.1:{port}/", "--format", "json", "--timeout", "5000", timeout=60)
    finally:
        stop_process(server)
    assert proc.returncode == 3, proc.stderr
    doc = json.loads(proc.stdout)
    (cause,) = doc["incompleteCauses"]
    assert "HTTP 501" in cause["cause"]
    assert "nothing answered" not in cause["fix"]
    assert "answered HTTP 501" in cause["fix"] and "not an MCP Streamable HTTP endpoint" in cause["fix"]
    assert f"http://127.0.0.1:{port}/" in cause["fix"] and "--url" in cause["fix"]
    wire = next(c for c in doc["checks"] if c["id"] == "tasks-wire-resolvable")
    assert wire["details"]["httpStatus"] == 501
