"""ruff and mypy --strict stay clean on src/ (the project's rule), so CI enforces them."""

from __future__ import annotations

import importlib.util
import subprocess
import sys

import pytest
from helpers.paths import ROOT


@pytest.mark.parametrize("tool,args", [("ruff", ["check", "src"]), ("mypy", [])])
def test_static_checks_are_clean(tool: str, args: list[str]) -> None:
    if importlib.util.find_spec(tool) is None:
        pytest.skip(f"{tool} is not installed (pip install -e '.[test]')")
    cmd = [sys.executable, "-m", tool, *args]
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
