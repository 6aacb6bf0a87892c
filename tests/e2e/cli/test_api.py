"""The Python API: tasks_conformance.run / run_async / ConfigError / RunReport.

Settings go through the command line's own builder (same validation, same messages); the run is
the runner's; the package stays cheap to import."""

from __future__ import annotations

import inspect
import json
import os
import re
import subprocess
import sys
import threading
from dataclasses import fields
from pathlib import Path
from typing import Any

import anyio
import pytest
from helpers.paths import BROKEN, REFERENCE, ROOT

import tasks_conformance
from tasks_conformance import ConfigError, RunReport, run, run_async
from tasks_conformance.entry.cli import run_cli
from tasks_conformance.settings.config import RunOptions

REFERENCE_STDIO = [*REFERENCE, "--transport", "stdio"]
FAST = {"timeout_ms": 5_000, "poll_timeout_ms": 5_000}


def test_importing_the_package_loads_nothing_heavy_until_the_api_is_used() -> None:
    code = (
        "import sys\nimport tasks_conformance as t\n"
        "big = {'anyio', 'httpx', 'pydantic', 'typer', 'rich'}\n"
        "heavy = lambda: sorted({m.split('.')[0] for m in sys.modules} & big)\n"
        "ours = lambda: sorted(m for m in sys.modules if m.startswith('tasks_conformance.'))\n"
        "print(heavy(), ours())\n"
        "t.ConfigError, t.RunReport\n"
        "print(heavy())\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.splitlines() == ["[] []", "[]"], out.stdout


def test_public_names_are_exported_and_resolve() -> None:
    for name in tasks_conformance.__all__:
        assert getattr(tasks_conformance, name) is not None
        assert name in dir(tasks_conformance)
    assert issubclass(ConfigError, ValueError)
    with pytest.raises(AttributeError):
        tasks_conformance.no_such_name  # noqa: B018


def test_the_package_ships_its_type_marker() -> None:
    assert (ROOT / "src" / "tasks_conformance" / "py.typed").is_file()


def test_run_keywords_are_the_cli_settings_with_the_same_defaults() -> None:
    options = {f.name: f.default for f in fields(RunOptions)}
    for fn in (run, run_async):
        params = dict(inspect.signature(fn).parameters)
        assert params.pop("progress").default is None
        assert list(params) == list(options), fn
        assert all(p.kind is inspect.Parameter.KEYWORD_ONLY for p in params.values())
        assert {k: p.default for k, p in params.items()} == options


def test_run_against_the_reference_server_passes_and_keeps_the_wire() -> None:
    seen: list[str] = []
    report = run(command=REFERENCE_STDIO, tool_name="slow_compute", progress=seen.append, **FAST)
    assert isinstance(report, RunReport)
    assert report.outcome == "passed" and report.passed and report.exit_code == 0, report.failure_summary()
    assert report.result.discovery.wire == "extension" and report.result.discovery.probedTool == "slow_compute"
    assert report.check("tasks-wire-resolvable").status == "passed"
    assert report.failed == [] and report.could_not_run == []
    frames = [json.loads(line) for line in report.wire_ndjson().splitlines()]
    assert frames and frames[0]["direction"] == "out" and len(frames) == len(list(report.wire))
    assert "judging" in seen
    with pytest.raises(KeyError):
        report.check("tasks-nope")


def test_run_async_in_a_running_event_loop() -> None:
    async def main() -> RunReport:
        return await run_async(command=REFERENCE_STDIO, tool_name="slow_compute",
                               check_ids=["tasks-wire-resolvable", "tasks-inline-result"], **FAST)

    report = anyio.run(main)
    assert [c.id for c in report.checks] == ["tasks-wire-resolvable", "tasks-inline-result"]
    assert report.passed, report.failure_summary()


def test_a_failing_server_gives_a_readable_failure_summary() -> None:
    report = run(command=[*BROKEN, "--break", "nested-create", "--transport", "stdio"], tool_name="slow_compute",
                 **FAST)
    assert report.outcome == "failed" and report.exit_code == 1
    failed = report.check("tasks-result-type-discipline")
    assert failed in report.failed
    text = report.failure_summary()
    assert text.startswith("tasks-conformance failed against ")
    assert f"FAILED tasks-result-type-discipline: {failed.message}" in text
    assert all(req in text for req in failed.requirements) and failed.requirements


# (CLI flags, the same settings as API keywords): each is a usage error; the messages must match.
SAME_MISTAKES: list[tuple[list[str], dict[str, Any]]] = [
    ([], {}),
    (["--url", "ftp://x"], {"url": "ftp://x"}),
    (["--url", "http://a/mcp", "--command", "true"], {"url": "http://a/mcp", "command": "true"}),
    (["--command", "no-such-program-tc"], {"command": ["no-such-program-tc", "--flag"]}),
    (["--url", "http://a/mcp", "--cwd", "/tmp"], {"url": "http://a/mcp", "cwd": Path("/tmp")}),
    (["--url", "http://a/mcp", "--header", "X Y: z"], {"url": "http://a/mcp", "headers": {"X Y": "z"}}),
    (["--command", "true", "--check-id", "tasks-nope"], {"command": "true", "check_ids": "tasks-nope"}),
    (["--command", "true", "--category", "weird"], {"command": "true", "categories": ["weird"]}),
    (["--command", "true", "--timeout", "0"], {"command": "true", "timeout_ms": 0}),
    (["--command", "true", "--tool-args", "[1]"], {"command": "true", "tool_args": "[1]"}),
    (["--command", "true", "--expect-wire", "both"], {"command": "true", "expect_wire": "both"}),
    (["--command", "true", "--reporter", "nope=x.txt"], {"command": "true", "reporters": ["nope=x.txt"]}),
    (["--command", "true", "--reporter", "json=/nonexistent-dir/r.json"],
     {"command": "true", "reporters": ["json=/nonexistent-dir/r.json"]}),
    (["--command", "true", "--wire-log", "/nonexistent-dir/w.ndjson"],
     {"command": "true", "wire_log": "/nonexistent-dir/w.ndjson"}),
]


@pytest.mark.parametrize(("flags", "settings"), SAME_MISTAKES, ids=lambda v: " ".join(v) if isinstance(v, list) else "")
def test_a_bad_setting_raises_config_error_with_the_cli_message(
    flags: list[str], settings: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    assert run_cli(flags) == 2
    cli_line = capsys.readouterr().err.strip()
    with pytest.raises(ConfigError) as raised:
        run(**settings)
    assert cli_line == f"tasks-conformance: error: {raised.value}"
    assert "\n" not in str(raised.value)


def test_python_forms_of_the_settings_become_the_same_config() -> None:
    from tasks_conformance.entry.api import build_config

    config = build_config(
        command=[sys.executable, "-m", "srv"], args=["--x"], env={"A": "1"}, tool_args={"n": 2},
        input_responses={"k": {"action": "accept"}}, check_ids="tasks-wire-resolvable", cwd=Path("."),
    )
    assert config.command == (sys.executable, "-m", "srv", "--x")
    assert config.env == {"A": "1"} and config.cwd == "."
    assert config.tool_args == {"n": 2} and config.input_responses == {"k": {"action": "accept"}}
    assert config.check_ids == ("tasks-wire-resolvable",)
    http = build_config(url="http://127.0.0.1:9/mcp", headers={"X-A": "b"}, access_token="t0k")
    assert http.headers == {"X-A": "b", "Authorization": "Bearer t0k"}
    # A program path with a space is one argv item, never split.
    with pytest.raises(ConfigError, match=re.escape("--command: '/no such/dir/python' not found")):
        build_config(command=["/no such/dir/python", "server.py"])
    with pytest.raises(ConfigError, match="the command is empty"):
        build_config(command=[])
    with pytest.raises(TypeError):
        run(tool="x")  # type: ignore[call-arg]


def test_reports_and_the_wire_log_are_written_like_the_cli_and_stdout_stays_quiet(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    junit, summary, wire = tmp_path / "r.xml", tmp_path / "s.json", tmp_path / "w.ndjson"
    report = run(command=REFERENCE_STDIO, tool_name="slow_compute", wire_log=wire,
                 reporters=[f"junit-xml={junit}", f"json-summary={summary}"], **FAST)
    assert capsys.readouterr().out == ""
    assert report.report_errors == ()
    assert "<testsuite" in junit.read_text() and json.loads(summary.read_text())["outcome"] == "passed"
    assert wire.read_text() == report.wire_ndjson()


def test_format_writes_that_report_to_stdout(capsys: pytest.CaptureFixture[str]) -> None:
    report = run(command=REFERENCE_STDIO, tool_name="slow_compute", check_ids=["tasks-wire-resolvable"],
                 format="json", **FAST)
    assert json.loads(capsys.readouterr().out) == report.result.to_json() | {"durationMs": report.result.durationMs}


def test_run_works_outside_the_main_thread() -> None:
    # Only the main thread may watch signals; elsewhere the run goes on without that watch.
    outcomes: list[object] = []

    def go() -> None:
        try:
            outcomes.append(run(command=REFERENCE_STDIO, tool_name="slow_compute", **FAST).outcome)
        except BaseException as exc:
            outcomes.append(exc)

    worker = threading.Thread(target=go)
    worker.start()
    worker.join(timeout=60)
    assert not worker.is_alive()
    assert outcomes == ["passed"]


def python_blocks(markdown: str) -> list[str]:
    return re.findall(r"^```python\n(.*?)^```$", markdown, re.M | re.S)


def test_every_python_example_in_docs_api_md_runs(tmp_path: Path) -> None:
    blocks = python_blocks((ROOT / "docs" / "api.md").read_text())
    assert len(blocks) >= 2
    for i, code in enumerate(blocks):
        env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
        proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                              cwd=tmp_path, env=env, stdin=subprocess.DEVNULL)
        assert proc.returncode == 0, f"block {i}:\n{code}\n{proc.stdout}\n{proc.stderr}"
        assert "checks passed" in proc.stdout, proc.stdout
    assert "<testsuite" in (tmp_path / "conformance.xml").read_text()  # the first example's report
