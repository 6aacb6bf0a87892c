"""The badge reporter: one self-contained SVG, "MCP tasks | N/M passed", coloured by outcome; one
badge for several runs; written by the command line and the Action."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from xml.etree import ElementTree as ET

import pytest
from test_reporters import failed_run, incomplete_run, interrupted_run, passed_run, render_text

from tasks_conformance.reporters.badge import COLOURS

ROOT = Path(__file__).resolve().parent.parent
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
        assert said.startswith(f"{n['passed']}/{n['total'] - n['notApplicable']} passed")
    if outcome == "incomplete":
        assert said.endswith(f"{n['couldNotRun']} could not run")


def test_the_command_line_writes_one_badge_for_both_eras(tmp_path: Path) -> None:
    badge = tmp_path / "badge.svg"
    server = f"{sys.executable} -m tasks_conformance.server.reference --transport stdio"
    proc = subprocess.run([sys.executable, "-m", "tasks_conformance", "--command", server, "--tool-name",
                           "slow_compute", "--era", "both", "-q", "--reporter", f"badge={badge}"],
                          capture_output=True, text=True, timeout=180, cwd=ROOT)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    label, said = _texts(badge.read_text())
    assert label == "MCP tasks" and said.endswith(" passed") and COLOURS["passed"] in badge.read_text()
