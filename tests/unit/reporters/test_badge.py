"""The badge reporter: one self-contained SVG, "MCP tasks | N/M passed" (the fraction the report's
summary gives), coloured by outcome; one badge for several runs; written by the command line and
the Action."""

from __future__ import annotations

import io
import re
import subprocess
import sys
from pathlib import Path
from xml.etree import ElementTree as ET

import pytest
from helpers.made_runs import RUNS, failed_run, incomplete_run, interrupted_run, passed_run, render_text
from helpers.paths import ROOT

from tasks_conformance.core.multirun_result import Combined, NamedRun
from tasks_conformance.reporters.badge import COLOURS
from tasks_conformance.reporters.badge import message as badge_message
from tasks_conformance.reporters.combined import render_combined

SVG = "{http://www.w3.org/2000/svg}"


def _texts(svg: str) -> list[str]:
    root = ET.fromstring(svg)
    assert root.tag == f"{SVG}svg" and root.get("role") == "img"
    assert not list(root.iter(f"{SVG}script")) and "href" not in svg  # nothing to run or fetch
    return [t.text or "" for t in root.iter(f"{SVG}text")]


@pytest.mark.parametrize(("run", "outcome"), [(passed_run, "passed"), (failed_run, "failed"),
                                              (incomplete_run, "incomplete"), (interrupted_run, "interrupted")])
def test_the_badge_says_the_count_and_is_coloured_by_outcome(run: object, outcome: str) -> None:
    result = run()  # type: ignore[operator]
    svg = render_text("badge", result)
    label, said = _texts(svg)
    assert label == "MCP tasks" and COLOURS[outcome] in svg
    n = result.counts()
    if outcome == "interrupted":
        assert said == "interrupted"
    else:
        assert said.startswith(f"{n['passed']}/{n['total']} passed")
    if outcome == "incomplete":
        assert said.endswith(f"{n['couldNotRun']} could not run")


def _fraction(text: str) -> str:
    match = re.match(r"(\d+/\d+) (checks )?passed", text)
    assert match is not None, text
    return match.group(1)


@pytest.mark.parametrize("run", sorted(set(RUNS) - {"interrupted"}))
def test_the_badge_counts_what_the_report_counts(run: str) -> None:
    """`19/22 passed` on the badge of a run whose report said `19/47 checks passed` (issue 35): the
    badge's fraction is the summary's, not-applicable and deferred checks included in both."""
    result = RUNS[run]()
    assert _fraction(badge_message(result)[0]) == _fraction(result.summary)
    # --era both and suite: one badge, each run's summary summed.
    runs = (NamedRun("a", "2025-11-25", None, result, None),
            NamedRun("b", "2026-07-28", None, RUNS["deferred"](), None))
    out = io.StringIO()
    render_combined("badge", Combined(kind="eras", runs=runs), out)
    (_label, said) = _texts(out.getvalue())
    totals = [sum(int(_fraction(r.result.summary).split("/")[i]) for r in runs) for i in (0, 1)]
    assert _fraction(said) == f"{totals[0]}/{totals[1]}"


def test_the_command_line_writes_one_badge_for_both_eras(tmp_path: Path) -> None:
    badge = tmp_path / "badge.svg"
    server = f"{sys.executable} -m tasks_conformance.server.reference --transport stdio"
    proc = subprocess.run([sys.executable, "-m", "tasks_conformance", "--command", server, "--tool-name",
                           "slow_compute", "--era", "both", "-q", "--reporter", f"badge={badge}"],
                          capture_output=True, text=True, timeout=180, cwd=ROOT)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    label, said = _texts(badge.read_text())
    assert label == "MCP tasks" and said.endswith(" passed") and COLOURS["passed"] in badge.read_text()
