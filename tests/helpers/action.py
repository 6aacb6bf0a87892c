"""The GitHub Action's run step as the tests drive it: action.yml's sections, its inputs and
outputs, and scripts/action-run.sh run with a recorder in place of the tool."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from helpers.paths import ROOT

ACTION = ROOT / "action.yml"
SCRIPT = ROOT / "scripts" / "action-run.sh"
BIN = Path(sys.executable).parent / "tasks-conformance"
INPUTS = {  # the action's input -> the variable the run step reads it from
    "url": "TC_URL", "command": "TC_COMMAND", "tool-name": "TC_TOOL_NAME", "args": "TC_ARGS",
    "profile": "TC_PROFILE", "config": "TC_CONFIG", "baseline": "TC_BASELINE", "report-dir": "TC_REPORT_DIR",
}
OUTPUTS = ("exit-code", "report-dir", "junit", "json", "markdown", "wire-log", "badge", "html")


def section(text: str, name: str) -> dict[str, list[str]]:
    """The two-space-indented keys under a top-level `name:` and the lines below each."""
    keys: dict[str, list[str]] = {}
    inside, current = False, ""
    for line in text.splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if not line.startswith(" "):
            inside = line.rstrip() == f"{name}:"
            continue
        if inside and re.match(r"^  [\w-]+:", line):
            current = line.strip().split(":")[0]
            keys[current] = []
        elif inside and current:
            keys[current].append(line.strip())
    return keys


def run_step(tmp_path: Path, **env: str) -> tuple[subprocess.CompletedProcess[str], dict[str, str], str]:
    """Run the script as the action's step does; returns the process, GITHUB_OUTPUT and the summary."""
    summary, output = tmp_path / "summary.md", tmp_path / "output.txt"
    summary.write_text("# an earlier step's summary\n")
    output.write_text("")
    full = {
        **os.environ, "NO_COLOR": "1", "GITHUB_STEP_SUMMARY": str(summary), "GITHUB_OUTPUT": str(output),
        "TC_BIN": str(BIN), "TC_PYTHON": sys.executable, "TC_REPORT_DIR": str(tmp_path / "reports"), **env,
    }
    proc = subprocess.run(["bash", str(SCRIPT)], capture_output=True, text=True, timeout=120, env=full,
                          stdin=subprocess.DEVNULL, cwd=tmp_path)
    outputs = dict(line.split("=", 1) for line in output.read_text().splitlines())
    text = summary.read_text()
    assert text.startswith("# an earlier step's summary\n"), "the summary must be appended to, never replaced"
    return proc, outputs, text


RECORDER = """#!/bin/sh
for arg in "$@"; do printf '%s\\n' "$arg"; done > "$RECORD"
exit 3
"""
