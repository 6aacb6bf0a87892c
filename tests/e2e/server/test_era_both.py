"""`--era both`: one run per era against one server, reported together (json under `eras`, a
JUnit testsuite per era, a human and a markdown section per era), exit code the worse of the two;
a server that speaks one era gets the other reported, not a crash. `--era legacy|extension` is one
of those runs alone: a single run's report, on that wire."""

from __future__ import annotations

import io
import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import jsonschema  # type: ignore[import-untyped,unused-ignore]
import pytest
import xmlschema
from helpers.junit import JUNIT_XSD, multi_validator
from helpers.paths import DEMO_INPUT, REFERENCE, ROOT
from helpers.runs import interrupt_once_started, invoke, tool, usage_error

from tasks_conformance.core import eras
from tasks_conformance.core.multirun_result import Combined, NamedRun, worst
from tasks_conformance.core.result import CheckResult, Discovery, RunResult
from tasks_conformance.reporters import schema_text

ERAS = ["2025-11-25", "2026-07-28"]


def test_demo_era_both_reports_each_era_in_every_format(tmp_path: Path) -> None:
    files = {name: tmp_path / f"report.{name}" for name in ("json", "json-summary", "junit-xml", "markdown")}
    wire = tmp_path / "wire.ndjson"
    proc = tool("demo", "--era", "both", "--format", "human", "--wire-log", str(wire),
               *(arg for name, path in files.items() for arg in ("--reporter", f"{name}={path}")))
    assert proc.returncode == 0, proc.stdout + proc.stderr

    doc = json.loads(files["json"].read_text())
    multi_validator().validate(doc)
    assert doc["kind"] == "tasks-conformance-eras" and doc["outcome"] == "passed" and doc["passed"] is True
    assert list(doc["eras"]) == ERAS
    assert [doc["eras"][era]["discovery"]["wire"] for era in ERAS] == ["legacy", "extension"]
    assert [doc["eras"][era]["discovery"]["protocolVersion"] for era in ERAS] == ERAS
    jsonschema.Draft202012Validator(json.loads(schema_text("json"))).validate(doc["eras"]["2026-07-28"])
    summary = json.loads(files["json-summary"].read_text())
    multi_validator().validate(summary)
    assert [summary["eras"][era]["kind"] for era in ERAS] == ["tasks-conformance"] * 2

    text = files["junit-xml"].read_text()
    xmlschema.XMLSchema(str(JUNIT_XSD)).validate(text)
    suites = ET.fromstring(text.encode()).findall("testsuite")
    assert len(suites) == 2
    assert "2025-11-25 legacy wire" in suites[0].get("name", "")
    assert "2026-07-28 extension wire" in suites[1].get("name", "")

    md = files["markdown"].read_text()
    assert md.startswith("## ✅ MCP Tasks conformance, both eras: passed")
    assert "\n### ✅ 2025-11-25, legacy wire: passed" in md and "\n### ✅ 2026-07-28, extension wire: passed" in md

    assert "era 2025-11-25, legacy wire" in proc.stdout and "era 2026-07-28, extension wire" in proc.stdout
    assert proc.stdout.rstrip().splitlines()[-1] == "PASSED  both eras: 2025-11-25 passed, 2026-07-28 passed"
    assert proc.stderr == ""  # no live display off a terminal

    runs = {json.loads(line)["run"] for line in wire.read_text().splitlines()}
    assert runs == set(ERAS)  # each frame says which era's run it belongs to


def test_a_server_of_one_era_gets_the_other_reported_and_fails(tmp_path: Path) -> None:
    md = tmp_path / "report.md"
    proc = tool("--era", "both", "--command", REFERENCE[0], *(a for x in [*REFERENCE[1:], "--transport", "stdio",
               "--era", "legacy"] for a in ("--args", x)), "--tool-name", "confirm_action",
               "--input-responses", DEMO_INPUT, "--format", "json", "--reporter", f"markdown={md}")
    assert proc.returncode == 1, proc.stderr  # failed: the worse of passed (legacy) and failed (2026-07-28)
    assert "Traceback" not in proc.stderr
    doc = json.loads(proc.stdout)
    multi_validator().validate(doc)
    legacy, extension = doc["eras"]["2025-11-25"], doc["eras"]["2026-07-28"]
    assert legacy["outcome"] == "passed"
    assert extension["outcome"] == "failed" and extension["discovery"]["wire"] == "none"
    failed = [c for c in extension["checks"] if c["status"] == "failed"]
    assert [c["id"] for c in failed] == ["tasks-wire-resolvable"]
    assert "speaks the legacy wire (protocol 2025-11-25)" in failed[0]["message"]
    text = md.read_text()
    assert "\n### ❌ 2026-07-28, no tasks wire: failed" in text and "offered no tasks wire on 2026-07-28" in text


def test_a_baseline_applies_to_each_era_of_era_both(tmp_path: Path) -> None:
    """The missing era's failure, listed for that era only, is known in that era's report, whose
    other checks defer to it (they could not run for the failure it reports), so that era passes
    under the baseline: the owner known, its deferrals follow; the entry does not touch the other era."""
    known = tmp_path / "baseline.toml"
    known.write_text('[[known]]\ncheck = "tasks-wire-resolvable"\nera = "2026-07-28"\nreason = "legacy only for now"\n')
    proc = tool("--era", "both", "--command", REFERENCE[0], *(a for x in [*REFERENCE[1:], "--transport", "stdio",
               "--era", "legacy"] for a in ("--args", x)), "--tool-name", "confirm_action",
               "--input-responses", DEMO_INPUT, "--format", "json", "--baseline", str(known))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    doc = json.loads(proc.stdout)
    multi_validator().validate(doc)
    legacy, extension = doc["eras"]["2025-11-25"], doc["eras"]["2026-07-28"]
    resolvable = {era: next(c for c in run["checks"] if c["id"] == "tasks-wire-resolvable")
                  for era, run in (("legacy", legacy), ("extension", extension))}
    assert resolvable["extension"]["status"] == "failed" and resolvable["extension"]["baseline"]["state"] == "known"
    assert resolvable["legacy"]["status"] == "passed" and not resolvable["legacy"].get("baseline")
    assert (legacy["outcome"], extension["outcome"]) == ("passed", "passed")
    assert {c["skipReason"] for c in extension["checks"] if c["id"] != "tasks-wire-resolvable"} == {"deferred"}


@pytest.mark.parametrize(("args", "message"), [
    (["--era", "both", "--protocol-version", "2025-11-25"],
     "--era both runs each protocol version in turn; leave out --protocol-version"),
    (["--era", "both", "--expect-wire", "legacy"], "--era both runs each wire in turn; leave out --expect-wire"),
    (["--era", "sometimes"], "--era must be auto, legacy, extension or both, got 'sometimes'"),
    (["--era", "legacy", "--expect-wire", "extension"],
     "--era legacy expects the legacy wire; --expect-wire extension names the other"),
    (["--era", "extension", "--protocol-version", "2025-11-25"],
     "--era extension runs 2026-07-28; --protocol-version 2025-11-25 names the other era"),
])
def test_era_usage_errors(args: list[str], message: str) -> None:
    assert usage_error("--url", "http://127.0.0.1:9/mcp", *args) == message
    assert usage_error("demo", *args) == message


def _result(outcome: str, interrupted: bool = False) -> RunResult:
    status = {"passed": "passed", "failed": "failed", "incomplete": "skipped"}[outcome]
    check = CheckResult(id="tasks-x", category="dispatch", title="x", description="x", requirements=[],
                        status=status, skipReason="could-not-run" if status == "skipped" else None)  # type: ignore[arg-type]
    return RunResult(outcome=outcome, target="t", durationMs=1, discovery=Discovery(), checks=[check],  # type: ignore[arg-type]
                     interrupted=interrupted)


def _combined(*outcomes: str, interrupted: bool = False) -> Combined:

    runs = tuple(NamedRun(name=era, era=era, target=None, result=_result(o), wire=None)
                 for era, o in zip(ERAS, outcomes, strict=False))
    return Combined(kind="eras", runs=runs, interrupted=interrupted)


@pytest.mark.parametrize(("outcomes", "code"), [
    (("passed", "passed"), 0), (("passed", "failed"), 1), (("failed", "passed"), 1),
    (("failed", "incomplete"), 3), (("incomplete", "passed"), 3),
])
def test_the_exit_code_is_the_worse_of_the_eras(outcomes: tuple[str, str], code: int) -> None:
    assert _combined(*outcomes).exit_code == code
    assert worst(list(outcomes)) == {0: "passed", 1: "failed", 3: "incomplete"}[code]


def test_an_interrupted_invocation_exits_130() -> None:
    assert _combined("passed", "passed", interrupted=True).exit_code == 130


def test_the_multi_schema_rejects_a_document_of_the_wrong_shape() -> None:
    doc = {"schemaVersion": "1", "kind": "tasks-conformance-eras", "toolVersion": "0.1.0", "outcome": "passed",
           "passed": True, "interrupted": False, "summary": "", "target": "t",
           "counts": {"total": 1, "passed": 1, "failed": 0, "incomplete": 0},
           "eras": {"2025-11-25": _result("passed").to_json()}}
    validator = multi_validator()
    validator.validate(doc)
    for broken in ({**doc, "eras": {"2025-11-25": {"outcome": "passed"}}},  # not a run document
                   {k: v for k, v in doc.items() if k != "eras"},  # eras kind without eras
                   {**doc, "targets": []},  # a suite's member in an eras document
                   {**doc, "passed": False}):  # passed contradicts the outcome
        with pytest.raises(jsonschema.ValidationError):
            validator.validate(broken)


def test_junit_suite_name_names_each_era() -> None:
    from tasks_conformance.reporters import ReportOptions
    from tasks_conformance.reporters.combined import render_combined

    out = io.StringIO()
    render_combined("junit-xml", _combined("passed", "failed"), out, ReportOptions(suite_name="my server"))
    root = ET.fromstring(out.getvalue().encode())
    assert [s.get("name") for s in root.findall("testsuite")] == ["my server (2025-11-25)", "my server (2026-07-28)"]
    assert (root.get("tests"), root.get("failures")) == ("2", "1")


def test_a_third_party_reporter_is_called_once_per_run(example_plugin: Any) -> None:
    from tasks_conformance.reporters.combined import render_combined

    out = io.StringIO()
    render_combined("example-count", _combined("passed", "failed"), out)
    assert out.getvalue() == ("example-count outcome=passed total=1 failed=0\n\n"
                              "example-count outcome=failed total=1 failed=1\n")
    assert example_plugin.CALLS == ["example-count", "example-count"]


def test_an_interrupted_era_both_run_reports_both_eras_and_exits_130(tmp_path: Path) -> None:
    import sys

    marker = tmp_path / "started"
    silent = f"open({str(marker)!r}, 'w').close(); import time; time.sleep(60)"  # a server that never answers
    proc = interrupt_once_started([sys.executable, "-m", "tasks_conformance", "--era", "both", "--command",
                                   sys.executable, "--args", "-c", "--args", silent, "--timeout", "60000",
                                   "--format", "human"], marker)
    stdout, stderr = proc.stdout, proc.stderr
    assert proc.returncode == 130, stderr
    lines = stdout.splitlines()
    assert any(line.startswith("2025-11-25  INTERRUPTED") for line in lines), stdout  # no wire claimed
    assert any(line.startswith("2026-07-28  INCOMPLETE") for line in lines), stdout
    assert "the run was interrupted before this one started" in stdout
    assert "offered no tasks wire" not in stdout  # an interrupted era is not a missing one
    assert "(interrupted)" in stdout.splitlines()[-1]


def test_schema_multi_prints_the_shipped_schema() -> None:
    from helpers.runs import invoke

    res = invoke("schema", "multi")
    assert res.code == 0 and json.loads(res.stdout)["$id"] == "urn:tasks-conformance:schema:multi:1"


@pytest.mark.parametrize(("era", "version"), [("legacy", "2025-11-25"), ("extension", "2026-07-28")])
def test_era_legacy_or_extension_is_one_run_on_that_wire(era: str, version: str) -> None:
    proc = tool("--command", " ".join(REFERENCE), "--era", era, "--tool-name", "slow_compute", "--format", "json")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    doc = json.loads(proc.stdout)
    jsonschema.Draft202012Validator(json.loads(schema_text("json"))).validate(doc)  # a single run's report
    assert "eras" not in doc and doc["outcome"] == "passed"
    assert (doc["discovery"]["wire"], doc["discovery"]["protocolVersion"]) == (era, version)


def test_era_extension_on_a_legacy_only_server_fails_naming_the_era_flag() -> None:
    proc = tool("--command", " ".join([*REFERENCE, "--era", "legacy"]), "--era", "extension", "--format", "json",
               "--check-id", "tasks-wire-resolvable")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    (check,) = json.loads(proc.stdout)["checks"]
    assert check["status"] == "failed" and "--era extension" in check["message"], check["message"]
    assert "speaks the legacy wire (protocol 2025-11-25)" in check["message"]


def test_a_config_file_and_a_suite_target_pin_an_era_as_the_flag_does(tmp_path: Path) -> None:
    from tasks_conformance.entry.api import build_config

    config = tmp_path / "tasks-conformance.toml"
    config.write_text('era = "legacy"\n', encoding="utf-8")
    assert build_config(command=REFERENCE, config=str(config)).expect_wire == "legacy"  # from Python too
    proc = tool("--command", " ".join(REFERENCE), "--config", str(config), "--tool-name", "slow_compute",
               "--format", "json")
    assert proc.returncode == 0 and json.loads(proc.stdout)["discovery"]["wire"] == "legacy", proc.stdout + proc.stderr
    suite = tmp_path / "suite.toml"
    suite.write_text(f'[[targets]]\nname = "ref"\ncommand = {json.dumps(" ".join(REFERENCE))}\nera = "legacy"\n'
                     'tool-name = "slow_compute"\n', encoding="utf-8")
    proc = tool("suite", str(suite), "--format", "json")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (target,) = json.loads(proc.stdout)["targets"]
    assert (target["label"], target["era"], target["result"]["discovery"]["wire"]) == ("ref", None, "legacy")


def test_every_commands_era_takes_the_words_of_the_readme_table() -> None:
    """`--era` means one thing: each command's flag takes exactly the words its row of the README's
    table names, all of them era words (core/eras.py), its default first."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    table = readme[readme.index("| command | `--era` | default |"):].split("\n\n", 1)[0]
    rows = [line.split(" | ") for line in table.splitlines()[2:]]
    assert len(rows) == 4, rows
    commands = {"`tasks-conformance`": [], "`client`": ["client"], "`call`": ["call"],
                "`serve-reference`": ["serve-reference"]}
    for command, words, default in rows:
        args = commands[command.removeprefix("| ").split(" ")[0].rstrip(",")]
        help_text = invoke(*args, "--help").stdout
        taken = re.search(r"--era ([a-z|]+)", help_text)
        assert taken, (args, help_text)
        flag_words = taken.group(1).split("|")
        assert set(flag_words) == set(re.findall(r"`([a-z]+)`", words)), (command, flag_words, words)
        assert set(flag_words) <= {eras.AUTO, eras.BOTH, *eras.ERAS}
        assert flag_words[0] == default.strip(" |`"), (command, flag_words)
