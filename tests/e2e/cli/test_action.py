"""The GitHub Action: action.yml's shape (read with a small line reader: PyYAML is not a
dependency), and its run step, scripts/action-run.sh, run here with a fake GITHUB_STEP_SUMMARY and
GITHUB_OUTPUT against the reference server, a broken one and a recording stand-in for the tool."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from helpers.action import ACTION, BIN, INPUTS, OUTPUTS, RECORDER, SCRIPT, run_step, section
from helpers.paths import BROKEN, REFERENCE, ROOT


def test_the_readme_lists_every_input_and_output_of_the_action() -> None:
    text = ACTION.read_text()
    readme = (ROOT / "README.md").read_text()
    inputs = section(text, "inputs")
    for name in inputs:
        assert f"| `{name}` |" in readme, f"action input {name} is not in the README's table of inputs"
    for name in section(text, "outputs"):
        assert f"`{name}`" in readme, f"action output {name} is not in the README"


def test_the_readme_never_promises_an_install_from_an_index() -> None:
    # Not published on any package index: `pipx run`/`uvx NAME` would find nothing.
    readme = (ROOT / "README.md").read_text()
    assert "pipx run tasks-conformance" not in readme and "uvx tasks-conformance" not in readme


def test_action_yml_is_a_composite_action_with_the_inputs_and_outputs() -> None:
    text = ACTION.read_text()
    assert re.search(r"^  using: composite$", text, re.M)
    inputs = section(text, "inputs")
    assert set(INPUTS) <= set(inputs) and "python-version" in inputs
    for name, lines in inputs.items():
        assert any(line.startswith("description: ") for line in lines), name
        assert "required: false" in lines, name
    outputs = section(text, "outputs")
    assert list(outputs) == list(OUTPUTS)
    for name, lines in outputs.items():
        assert f"value: ${{{{ steps.run.outputs.{name} }}}}" in lines
        assert f"{name}=" in SCRIPT.read_text()


def test_action_yml_hands_inputs_to_the_script_only_through_the_environment() -> None:
    text = ACTION.read_text()
    for name, var in INPUTS.items():
        assert f"        {var}: ${{{{ inputs.{name} }}}}" in text.splitlines(), name
        assert var in SCRIPT.read_text(), var
    # ${{ inputs.* }} pasted into a run script would let an input inject shell: env and with only.
    for line in text.splitlines():
        if "${{ inputs." in line:
            assert re.match(r"^ +[\w-]+: \$\{\{ inputs\.[\w-]+ \}\}$", line), line
    assert '-m pip install --quiet --disable-pip-version-check "${{ github.action_path }}"' in text
    assert 'run: bash "${{ github.action_path }}/scripts/action-run.sh"' in text
    assert "update-environment: false" in text  # the job's own python stays first on PATH
    assert os.access(SCRIPT, os.X_OK)


def test_action_yml_parses_as_yaml_where_pyyaml_is_installed() -> None:
    yaml = pytest.importorskip("yaml", reason="PyYAML is not installed (the line reader above still ran)")
    doc = yaml.safe_load(ACTION.read_text())
    assert doc["runs"]["using"] == "composite"
    assert set(doc["inputs"]) == set(section(ACTION.read_text(), "inputs"))
    steps = doc["runs"]["steps"]
    assert all(step.get("shell") == "bash" for step in steps if "run" in step)
    assert steps[-1]["id"] == "run" and set(INPUTS.values()) <= set(steps[-1]["env"])


@pytest.mark.skipif(not BIN.exists(), reason=f"{BIN} is not installed (pip install -e .)")
def test_the_run_step_against_the_reference_server(tmp_path: Path) -> None:
    proc, outputs, summary = run_step(
        tmp_path, TC_COMMAND=shlex.join([*REFERENCE, "--transport", "stdio"]), TC_TOOL_NAME="slow_compute",
        TC_ARGS="--timeout 5000 --poll-timeout '5000'",
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "PASSED" in proc.stdout  # the human report goes to the step log
    assert outputs["exit-code"] == "0" and outputs["report-dir"] == str(tmp_path / "reports")
    assert json.loads(Path(outputs["json"]).read_text())["outcome"] == "passed"
    assert ET.parse(outputs["junit"]).getroot().iter("testcase")
    assert Path(outputs["wire-log"]).read_text().count("\n") > 10
    assert "passed</text>" in Path(outputs["badge"]).read_text()  # the SVG badge for a README
    assert Path(outputs["html"]).name == "report.html" and 'id="report-data"' in Path(outputs["html"]).read_text()
    assert summary.endswith(Path(outputs["markdown"]).read_text()) and "MCP Tasks conformance: passed" in summary


@pytest.mark.skipif(not BIN.exists(), reason=f"{BIN} is not installed (pip install -e .)")
def test_the_run_step_exits_with_the_tools_code_for_a_broken_server(tmp_path: Path) -> None:
    proc, outputs, summary = run_step(
        tmp_path, TC_COMMAND=shlex.join([*BROKEN, "--break", "nested-create", "--transport", "stdio"]),
        TC_TOOL_NAME="slow_compute", TC_ARGS="--timeout 5000 --poll-timeout 5000",
    )
    assert proc.returncode == 1 and outputs["exit-code"] == "1"
    assert "tasks-result-type-discipline" in summary and "failed" in summary
    failures = [c for c in ET.parse(outputs["junit"]).getroot().iter("testcase") if c.find("failure") is not None]
    assert [c.get("name") for c in failures] == ["tasks-result-type-discipline"]


@pytest.mark.skipif(not BIN.exists(), reason=f"{BIN} is not installed (pip install -e .)")
def test_a_usage_error_leaves_no_report_and_says_so_in_the_summary(tmp_path: Path) -> None:
    proc, outputs, summary = run_step(tmp_path)  # no url, no command
    assert proc.returncode == 2 and outputs["exit-code"] == "2"
    assert "no target" in proc.stderr
    assert {outputs[name] for name in ("junit", "json", "markdown", "wire-log", "badge", "html")} == {""}
    assert "No report: tasks-conformance exited with code 2" in summary


def test_the_run_step_passes_inputs_as_flags_and_profile_and_config_only_when_set(tmp_path: Path) -> None:
    fake = tmp_path / "fake-tasks-conformance"
    fake.write_text(RECORDER)
    fake.chmod(0o755)
    record = tmp_path / "argv.txt"
    base = {"TC_BIN": str(fake), "RECORD": str(record)}

    proc, outputs, _ = run_step(tmp_path, **base, TC_URL="http://127.0.0.1:9/mcp", TC_TOOL_NAME="long job",
                                TC_ARGS="--header 'X-A: b c' --env HOME=$HOME '*'")
    assert proc.returncode == 3 and outputs["exit-code"] == "3"
    argv = record.read_text().splitlines()
    assert argv[argv.index("--url") + 1] == "http://127.0.0.1:9/mcp"
    assert argv[argv.index("--tool-name") + 1] == "long job"
    assert argv[-5:] == ["--header", "X-A: b c", "--env", "HOME=$HOME", "*"]  # words, never expanded
    assert "--profile" not in argv and "--config" not in argv and "--command" not in argv and "--baseline" not in argv
    reports = tmp_path / "reports"
    assert f"junit-xml={reports}/junit.xml" in argv and f"markdown={reports}/report.md" in argv

    run_step(tmp_path, **base, TC_COMMAND="python server.py", TC_PROFILE="strict", TC_CONFIG="tc.toml",
             TC_BASELINE="known.toml")
    argv = record.read_text().splitlines()
    assert argv[argv.index("--baseline") + 1] == "known.toml"
    assert argv[argv.index("--command") + 1] == "python server.py"
    assert argv[argv.index("--profile") + 1] == "strict" and argv[argv.index("--config") + 1] == "tc.toml"


def test_args_that_cannot_be_split_are_refused(tmp_path: Path) -> None:
    proc, outputs, _ = run_step(tmp_path, TC_BIN=shutil.which("false") or "false", TC_ARGS="--header 'unclosed")
    assert proc.returncode == 2 and outputs == {}
    assert "::error::tasks-conformance: the args input cannot be split" in proc.stdout
