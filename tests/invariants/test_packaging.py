"""The package as users get it: build the wheel, install it into a fresh virtual environment, and
run it from there, so that a file the wheel forgets (requirements.toml, the report schemas,
py.typed, an entry point) or a dependency the metadata forgets fails here rather than for them.

The fresh environment resolves the dependencies from the configured package index, as
`pip install tasks-conformance` (or pipx, or uvx) would: no --system-site-packages, no
--no-deps. That is the honest test (it also catches an undeclared dependency) and costs about
35 s on this project's 2-core machines (wheel ~6 s, venv and install ~27 s, the runs ~2 s).
Offline, set TASKS_CONFORMANCE_OFFLINE=1 to skip it with that reason, or deselect it with
-m "not packaging"."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from helpers.paths import ROOT

# The group is on the test, not the module: a --full run need not keep it on the one worker of
# the modules that share a pool (helpers.groups.whole_module).
pytestmark = [
    pytest.mark.timeout(900),
    pytest.mark.skipif(bool(os.environ.get("TASKS_CONFORMANCE_OFFLINE")),
                       reason="TASKS_CONFORMANCE_OFFLINE is set: installing the wheel needs the package index"),
]

SOURCE_VERSION = re.search(r'^__version__ = "([^"]+)"$', (ROOT / "src/tasks_conformance/__init__.py").read_text(),
                           re.M)


def sh(*argv: str | Path, cwd: Path, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    # Nothing of this checkout may leak in: no PYTHONPATH, no active venv, and a cwd outside it.
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
    env["NO_COLOR"] = "1"
    proc = subprocess.run([str(a) for a in argv], capture_output=True, text=True, timeout=timeout, cwd=cwd, env=env,
                          stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, f"{argv} exited {proc.returncode}\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return proc


@pytest.mark.packaging
def test_the_built_wheel_installs_and_runs_in_a_fresh_environment(tmp_path: Path) -> None:
    assert SOURCE_VERSION is not None, "__init__.py must hold the one __version__ = \"...\" line"
    version = SOURCE_VERSION.group(1)
    dist = tmp_path / "dist"
    sh(sys.executable, "-m", "pip", "wheel", ROOT, "--no-deps", "--quiet", "-w", dist, cwd=tmp_path)
    (wheel,) = dist.glob("*.whl")
    assert wheel.name == f"tasks_conformance-{version}-py3-none-any.whl"
    with zipfile.ZipFile(wheel) as zf:
        names = set(zf.namelist())
        entry_points = zf.read(f"tasks_conformance-{version}.dist-info/entry_points.txt").decode()
    for shipped in ("py.typed", "core/requirements.toml", "schemas/json.schema.json",
                    "schemas/json-summary.schema.json", "entry/api.py", "entry/pytest_plugin.py",
                    "server/reference/__main__.py", "client/__init__.py", "reporters/html_report.js",
                    "reporters/html_report.css", "reporters/fleet_report.js", "reporters/fleet_report.css"):
        assert f"tasks_conformance/{shipped}" in names, shipped
    assert "[pytest11]\ntasks_conformance = tasks_conformance.entry.pytest_plugin" in entry_points
    assert "tasks-conformance = tasks_conformance.entry.cli:main" in entry_points

    venv = tmp_path / "venv"
    sh(sys.executable, "-m", "venv", venv, cwd=tmp_path)
    python, cli = venv / "bin" / "python", venv / "bin" / "tasks-conformance"
    sh(python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", wheel, cwd=tmp_path)

    where = sh(python, "-c", "import tasks_conformance as t, importlib.metadata as m; "
               "print(t.__file__); print(m.version('tasks-conformance'))", cwd=tmp_path).stdout.splitlines()
    assert Path(where[0]).is_relative_to(venv), f"imported from {where[0]}, not the installed wheel"
    assert where[1] == version
    assert sh(cli, "--version", cwd=tmp_path).stdout == f"tasks-conformance {version}\n"

    demo = sh(cli, "demo", "--format", "human", "--quiet", cwd=tmp_path, timeout=120).stdout
    assert demo.startswith("PASSED"), demo
    assert '"$schema"' in sh(cli, "schema", "json", cwd=tmp_path).stdout
    sh(python, "-c", "import tasks_conformance.core.requirements as r; assert r.load()", cwd=tmp_path)
    api = sh(python, "-c", "import sys, tasks_conformance as t; r = t.run(command=[sys.executable, '-m', "
             "'tasks_conformance.server.reference', '--transport', 'stdio'], tool_name='slow_compute'); "
             "print(r.outcome)",
             cwd=tmp_path)
    assert api.stdout == "passed\n"
