"""The README's client harness examples, the Python one and the JavaScript one, run as printed
against `tasks-conformance client`: every scenario of both eras, over HTTP and over stdio (the fast
run: a sample of each era's scenarios, over HTTP), with no check failed and none that could not run.
The JavaScript one needs node and the npm packages of tests/interop (`npm ci` there); without them
it is skipped, saying so."""

from __future__ import annotations

import json
import re
import shlex
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
from helpers.client_fast import EVERY_SCENARIO_SAMPLE
from helpers.paths import ROOT
from helpers.runs import invoke

NODE_MODULES = ROOT / "tests" / "interop" / "node_modules"


def readme_example(lang: str) -> str:
    """The harness example in `lang` of the README's "Testing a tasks client" section."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text[text.index("\n## Testing a tasks client\n"):text.index("\n## The checks\n")]
    found = [b for b in re.findall(rf"^```{lang}\n(.*?)^```$", section, re.M | re.S) if "MCP_CONFORMANCE_CONTEXT" in b]
    assert len(found) == 1, f"one {lang} harness example in the README, found {len(found)}"
    return str(found[0])


def _run(command: list[str], transport: str, scenarios: tuple[str, ...]) -> dict[str, Any]:
    chosen = [arg for name in scenarios for arg in ("--scenario", name)]
    res = invoke("client", "--command", shlex.join(command), "--era", "both", "--transport", transport,
                 *chosen, "--format", "json")
    doc: dict[str, Any] = json.loads(res.stdout)
    failing = [(c["id"], c["message"]) for c in doc["checks"] if c["status"] == "failed"
               or c.get("skipReason") == "could-not-run"]
    assert res.code == 0 and doc["outcome"] == "passed" and not failing, (res.code, failing, res.stderr)
    assert doc["counts"]["passed"] >= (20 if not scenarios else SAMPLE_PASSES)
    return doc


# Each scenario is a harness process (node's costs most): the fast run runs the harnesses over HTTP
# on one scenario of each kind of traffic per wire, --full (CI) over every scenario on both transports
# (over stdio each harness spawns the scripted server itself).
SAMPLE = (*EVERY_SCENARIO_SAMPLE["extension"], *EVERY_SCENARIO_SAMPLE["legacy"])
SAMPLE_PASSES = 24  # of the 39 checks, those the sample exercises (the others are not applicable)
RUNS = [pytest.param("http", SAMPLE, id="http-sample"), pytest.param("http", (), id="http", marks=pytest.mark.slow),
        pytest.param("stdio", (), id="stdio", marks=pytest.mark.slow)]


@pytest.mark.parametrize("transport,scenarios", RUNS)
def test_the_readme_python_harness_runs_as_printed(tmp_path: Path, transport: str, scenarios: tuple[str, ...]) -> None:
    script = tmp_path / "harness.py"
    script.write_text(readme_example("python"), encoding="utf-8")
    _run([sys.executable, str(script)], transport, scenarios)


@pytest.mark.parametrize("transport,scenarios", RUNS)
def test_the_readme_javascript_harness_runs_as_printed(tmp_path: Path, transport: str,
                                                        scenarios: tuple[str, ...]) -> None:
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed: the README's JavaScript harness needs it")
    if not (NODE_MODULES / "@modelcontextprotocol" / "sdk" / "package.json").exists():
        pytest.skip("@modelcontextprotocol/sdk is not installed: run `npm ci` in tests/interop")
    # `npm install @modelcontextprotocol/sdk` beside the script, as the README says: here, a link
    # to the packages tests/interop installed.
    (tmp_path / "node_modules").symlink_to(NODE_MODULES, target_is_directory=True)
    script = tmp_path / "harness.mjs"
    script.write_text(readme_example("js"), encoding="utf-8")
    doc = _run([node, str(script)], transport, scenarios)
    # The SDK's own 2025-11-25 choices are warnings (README), never failures.
    assert doc["discovery"]["wires"] == ["legacy", "extension"]
