"""`tasks-conformance suite FILE`: targets from a TOML or JSON file, each an independent run,
with bounded concurrency, sharding, one combined report and the worst exit code; every mistake
in the file is a one-line usage error before anything runs."""

from __future__ import annotations

import functools
import io
import json
import sys
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
import xmlschema
from helpers.junit import JUNIT_XSD, multi_validator
from helpers.paths import BROKEN, DEMO_INPUT
from helpers.processes import HttpServer
from helpers.runs import interrupt_once_started, invoke, tool, usage_error
from helpers.suites import reference, write_suite

from tasks_conformance.entry.multirun import MultiProgress, Planned, run_all
from tasks_conformance.entry.suite import load

WIRE = "tasks-wire-resolvable"
SECRET = "s3cr3t-suite-token-value"


def test_a_suite_runs_every_target_and_writes_one_combined_report(tmp_path: Path,
                                                                  reference_http: HttpServer) -> None:
    suite = write_suite(tmp_path / "suite.toml", [
        reference("stdio", **{"tool-name": "confirm_action", "input-responses": DEMO_INPUT}),
        {"name": "http", "url": reference_http.url, "tool-name": "confirm_action", "input-responses": DEMO_INPUT,
         "header": [f"X-Api-Key: {SECRET}"]},
        {"name": "broken", "command": [*BROKEN, "--break", "removed-methods-served", "--transport", "stdio"],
         "tool-name": "slow_compute"},
    ], defaults={"timeout": 10000})
    files = {name: tmp_path / f"out.{name}" for name in ("json", "junit-xml", "markdown")}
    proc = tool("suite", str(suite), "--jobs", "2", "--format", "human", "--verbose",
               *(a for name, path in files.items() for a in ("--reporter", f"{name}={path}")))
    assert proc.returncode == 1, proc.stdout + proc.stderr  # the worst: one target failed
    assert proc.stderr == ""  # no live display off a terminal

    doc = json.loads(files["json"].read_text())
    multi_validator().validate(doc)
    assert doc["kind"] == "tasks-conformance-suite" and doc["outcome"] == "failed" and doc["shard"] is None
    assert [(t["name"], t["outcome"]) for t in doc["targets"]] == [
        ("stdio", "passed"), ("http", "passed"), ("broken", "failed")]
    broken = doc["targets"][2]["result"]
    assert [c["id"] for c in broken["checks"] if c["status"] == "failed"] == ["tasks-removed-methods-not-found"]

    text = files["junit-xml"].read_text()
    xmlschema.XMLSchema(str(JUNIT_XSD)).validate(text)
    names = [s.get("name") for s in ET.fromstring(text.encode()).findall("testsuite")]
    assert names == ["tasks-conformance: stdio", "tasks-conformance: http", "tasks-conformance: broken"]

    md = files["markdown"].read_text()
    assert "| Check | stdio | http | broken |" in md
    assert "| `tasks-removed-methods-not-found` | ✅ | ✅ | ❌ |" in md
    assert "## ❌ broken: failed" in md and "## ❌ stdio" not in md  # details only for what did not pass

    lines = proc.stdout.splitlines()
    assert [line.split()[0] for line in lines[:3]] == ["stdio", "http", "broken"]
    assert lines[-1] == "FAILED  suite: 3 targets: 2 passed, 1 failed, 0 incomplete"
    assert "✗ tasks-removed-methods-not-found" in proc.stdout
    assert '"method":"tasks/list"' in proc.stdout.replace(" ", "")  # --verbose: the frames behind the failure
    for output in (proc.stdout, *(p.read_text() for p in files.values())):
        assert SECRET not in output


def test_shards_split_the_targets_by_position(tmp_path: Path) -> None:
    suite = tmp_path / "suite.json"
    suite.write_text(json.dumps({"targets": [reference(f"t{i}") for i in range(5)]}))
    loaded = load(str(suite))
    assert [p.name for p in loaded.planned((1, 2))] == ["t0", "t2", "t4"]
    assert [p.name for p in loaded.planned((2, 2))] == ["t1", "t3"]
    assert [p.name for p in loaded.planned((3, 3))] == ["t2"]
    assert [p.name for p in loaded.planned()] == [f"t{i}" for i in range(5)]


def test_a_shard_runs_only_its_targets_and_says_which(tmp_path: Path) -> None:
    suite = write_suite(tmp_path / "suite.toml", [reference("a"), reference("b"), reference("c")],
                        defaults={"check-id": [WIRE]})
    proc = tool("suite", str(suite), "--shard", "2/2", "--format", "json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["shard"] == "2/2" and [t["name"] for t in doc["targets"]] == ["b"]
    # More shards than targets: this job has nothing to do, and says so.
    empty = tool("suite", str(suite), "--shard", "4/4", "--format", "human")
    assert empty.returncode == 0 and empty.stdout == "PASSED  suite: no targets in shard 4/4\n", empty


def test_a_target_with_era_both_runs_once_per_era(tmp_path: Path) -> None:
    log = tmp_path / "dual.ndjson"
    suite = write_suite(tmp_path / "suite.toml", [reference("dual", era="both", **{"check-id": [WIRE],
                                                                                   "wire-log": str(log)})])
    junit = tmp_path / "out.xml"
    proc = tool("suite", str(suite), "--format", "json", "--reporter", f"junit-xml={junit}")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    multi_validator().validate(doc)
    assert [(t["label"], t["name"], t["era"], t["result"]["discovery"]["wire"]) for t in doc["targets"]] == [
        ("dual (2025-11-25)", "dual", "2025-11-25", "legacy"), ("dual (2026-07-28)", "dual", "2026-07-28", "extension")]
    names = [s.get("name") for s in ET.fromstring(junit.read_bytes()).findall("testsuite")]
    assert names == ["tasks-conformance: dual (2025-11-25)", "tasks-conformance: dual (2026-07-28)"]
    # The target's own wire log holds both of its runs, each frame tagged with the run.
    assert {json.loads(line)["run"] for line in log.read_text().splitlines()} == {
        "dual (2025-11-25)", "dual (2026-07-28)"}


def _planned(tmp_path: Path, n: int) -> list[Planned]:
    suite = write_suite(tmp_path / "suite.toml", [reference(f"t{i}") for i in range(n)],
                        defaults={"check-id": [WIRE], "timeout": 10000})
    return load(str(suite)).planned()


def _recorder(events: list[tuple[int, str]]) -> Callable[[int, str], None]:
    return lambda i, text: events.append((i, text))


def test_jobs_bound_how_many_targets_run_at_once(tmp_path: Path) -> None:
    planned = _planned(tmp_path, 3)
    for jobs, most in ((1, 1), (2, 2)):
        events: list[tuple[int, str]] = []
        combined = anyio.run(functools.partial(run_all, planned, "suite", jobs=jobs, say=_recorder(events)))
        assert combined.outcome == "passed" and [r.name for r in combined.runs] == ["t0", "t1", "t2"]
        running, peak = set(), 0
        for i, text in events:
            if text == "starting":
                running.add(i)
            elif text.startswith("done"):
                running.discard(i)
            peak = max(peak, len(running))
        assert peak == most, events


def test_the_live_display_draws_each_target_only_when_enabled() -> None:
    out = io.StringIO()
    with MultiProgress(["alpha", "beta"], enabled=False, file=out) as progress:
        progress.update(0, "probe: tasks/get")
    assert out.getvalue() == ""
    with MultiProgress(["alpha", "beta"], enabled=True, file=out) as progress:
        progress.update(1, "probe: \x1b[31mtasks/get")
    drawn = out.getvalue()
    assert "alpha" in drawn and "beta" in drawn and "probe: \\x1b[31mtasks/get" in drawn


def test_an_interrupted_suite_reports_every_target_and_exits_130(tmp_path: Path) -> None:
    marker = tmp_path / "started"
    # A server that says nothing: the first target waits for it until the suite is interrupted.
    silent = [sys.executable, "-c", f"open({str(marker)!r}, 'w').close(); import time; time.sleep(60)"]
    suite = write_suite(tmp_path / "suite.toml", [{"name": "silent", "command": silent}, reference("never")],
                        defaults={"timeout": 60000})
    proc = interrupt_once_started([sys.executable, "-m", "tasks_conformance", "suite", str(suite), "--jobs", "1",
                                   "--format", "json"], marker)
    stdout, stderr = proc.stdout, proc.stderr
    assert proc.returncode == 130, stderr
    doc = json.loads(stdout)
    assert doc["interrupted"] is True
    first, second = (t["result"] for t in doc["targets"])
    assert first["interrupted"] is True
    assert second["outcome"] == "incomplete" and second["checks"] == []
    assert "interrupted before this one started" in second["incompleteReason"]


# Every mistake in a suite file, as the one line the user gets (exit 2, nothing run).
FILE_ERRORS: list[tuple[dict[str, Any], str]] = [
    ({"targets": [reference("a", tool_name="x")]},
     "suite.json: target 'a': unknown key 'tool_name'; did you mean tool-name?"),
    ({"targets": [reference("a", timeot=5)]},
     "suite.json: target 'a': unknown key 'timeot'; did you mean timeout?"),
    ({"target": []}, "suite.json: unknown top-level key 'target'; did you mean targets?"),
    ({"targets": [reference("a", **{"update-baseline": "b.toml"})]},
     "suite.json: target 'a': unknown key 'update-baseline'; update-baseline is for a single run on the command "
     "line, not a suite target"),
    ({"targets": []}, "suite.json: no targets: add one [[targets]] table per server, each with a name"),
    ({"targets": [{"url": "http://127.0.0.1:9/mcp"}]}, "suite.json: target 1 needs a name (a non-empty string)"),
    ({"targets": [reference("a"), reference("a")]},
     "suite.json: target 'a': the name is used by another target; names must be unique"),
    ({"targets": [reference("a", timeout="10")]},
     "suite.json: target 'a': timeout must be an integer (milliseconds), got a string"),
    ({"targets": [reference("a", reporter="json")]},
     "suite.json: target 'a': 'reporter' shapes the combined report: give --reporter to the suite command"),
    ({"targets": [reference("a", **{"access-token": "-"})]},
     "suite.json: target 'a': access-token cannot read standard input (-) in a suite file; use @FILE"),
    ({"targets": [reference("a", era="both", **{"protocol-version": "2025-11-25"})]},
     "suite.json: target 'a': --era both runs each protocol version in turn; leave out --protocol-version"),
    ({"targets": [{"name": "a", "url": "ftp://x"}]},
     "suite.json: target 'a': --url must start with http:// or https://, got 'ftp://x'"),
    ({"defaults": {"profile": "nope"}, "targets": [reference("a")]},
     "suite.json: target 'a': unknown --profile 'nope'; valid profiles: core, standard, full, durable"),
    ({"defaults": {"name": "x"}, "targets": [reference("a")]},
     "suite.json: defaults: name belongs to each target (names must be unique), not to defaults"),
]


@pytest.mark.parametrize(("content", "message"), FILE_ERRORS)
def test_file_mistakes_are_usage_errors(tmp_path: Path, content: dict[str, Any], message: str) -> None:
    suite = tmp_path / "suite.json"
    suite.write_text(json.dumps(content))
    assert usage_error("suite", str(suite)) == message


def test_flag_and_file_errors(tmp_path: Path) -> None:
    good = write_suite(tmp_path / "suite.toml", [reference("a")])
    assert usage_error("suite", str(good), "--jobs", "0") == "--jobs must be at least 1, got 0"
    shard = "--shard must be I/N with 1 <= I <= N (e.g. 1/3), got "
    assert usage_error("suite", str(good), "--shard", "3/2") == shard + "'3/2'"
    assert usage_error("suite", str(good), "--shard", "x") == shard + "'x'"
    assert usage_error("suite", str(good), "--format", "xml") == "--format must be human or json, got 'xml'"
    missing = tmp_path / "missing.toml"
    assert usage_error("suite", str(missing)) == f"suite: cannot read {str(missing)!r}: No such file or directory"
    assert usage_error("suite", str(tmp_path / "s.yaml")).endswith("must be a .toml or .json file")
    bad = tmp_path / "bad.toml"
    bad.write_text("[[targets]\n")
    assert usage_error("suite", str(bad)).startswith(f"suite: {str(bad)!r} is not valid TOML: ")


def test_a_mistake_in_any_target_stops_the_suite_before_anything_runs(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    starts = [sys.executable, "-c", f"open({str(marker)!r}, 'w').close()"]
    suite = write_suite(tmp_path / "suite.toml", [{"name": "first", "command": starts},
                                                  {"name": "second", "command": starts, "tool-nam": "x"}])
    assert usage_error("suite", str(suite)) == (
        "suite.toml: target 'second': unknown key 'tool-nam'; did you mean tool-name?")
    assert not marker.exists()


def test_suite_help_names_its_flags() -> None:
    res = invoke("suite", "--help")
    assert res.code == 0
    for flag in ("--jobs", "--shard", "--reporter", "--format", "FILE"):
        assert flag in res.stdout
