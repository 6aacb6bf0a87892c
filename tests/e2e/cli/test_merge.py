"""`tasks-conformance merge REPORT…`: json reports of suites, shards and single runs combined into
the report one `suite` of them all would have written (same schema, same exit code rule); a run
given twice is an error naming it unless --latest; a file that is not a report is one line, exit 2."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from helpers.junit import multi_validator
from helpers.paths import BROKEN, REFERENCE
from helpers.runs import invoke, tool, usage_error
from helpers.suites import QUICK, STEADY, fleet_suite, suite_verdicts, write_suite


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """One suite run of the file, and the same file as two shards, each with its json report."""
    tmp = tmp_path_factory.mktemp("fleet")
    suite = fleet_suite(tmp / "fleet.toml")
    out: dict[str, Any] = {"dir": tmp}
    for name, extra in (("whole", []), ("shard1", ["--shard", "1/2"]), ("shard2", ["--shard", "2/2"])):
        report = tmp / f"{name}.json"
        proc = tool("suite", str(suite), "--jobs", "2", *extra, "-q", "--reporter", f"json={report}")
        out[name] = (proc.returncode, report)
    return out


def test_shards_merged_equal_one_suite_run(fleet: dict[str, Any]) -> None:
    whole_code, whole = fleet["whole"]
    assert whole_code == 1  # the broken target fails
    merged = fleet["dir"] / "merged.json"
    junit = fleet["dir"] / "merged.xml"
    # The shards in any order: the merge puts the targets back in the file's order.
    res = invoke("merge", str(fleet["shard2"][1]), str(fleet["shard1"][1]), "-q",
                 "--reporter", f"json={merged}", "--reporter", f"junit-xml={junit}")
    assert res.code == whole_code, res
    doc, suite_doc = json.loads(merged.read_text()), json.loads(whole.read_text())
    multi_validator().validate(doc)
    assert doc["kind"] == "tasks-conformance-suite" and doc["shard"] is None
    assert [t["label"] for t in doc["targets"]] == ["ref", "ref-both (2025-11-25)", "ref-both (2026-07-28)", "broken"]
    assert suite_verdicts(doc) == suite_verdicts(suite_doc)
    assert (doc["outcome"], doc["counts"], doc["summary"]) == (suite_doc["outcome"], suite_doc["counts"],
                                                                suite_doc["summary"])
    # Each run's document is the shard's, as the shard wrote it.
    shard_docs = [json.loads(fleet[s][1].read_text()) for s in ("shard1", "shard2")]
    by_label = {t["label"]: t["result"] for d in shard_docs for t in d["targets"]}
    assert all(t["result"] == by_label[t["label"]] for t in doc["targets"])
    assert junit.read_text().count("<testsuite ") == 4
    assert 'classname="tasks_conformance.routing"' in junit.read_text()  # the area, read back from the report


def test_a_single_run_report_merges_under_its_target(fleet: dict[str, Any], tmp_path: Path) -> None:
    suite_doc = json.loads(fleet["whole"][1].read_text())
    single = tmp_path / "single.json"
    single.write_text(json.dumps(suite_doc["targets"][3]["result"]))  # a single run's report is this document
    merged = tmp_path / "merged.json"
    res = invoke("merge", str(fleet["shard2"][1]), str(single), "-q", "--reporter", f"json={merged}")
    assert res.code == 1, res
    doc = json.loads(merged.read_text())
    target = suite_doc["targets"][3]["result"]["target"]
    assert [(t["label"], t["name"]) for t in doc["targets"]] == [
        ("ref-both (2025-11-25)", "ref-both"), ("ref-both (2026-07-28)", "ref-both"), (target, target)]


def test_a_run_given_twice_is_an_error_naming_it_unless_latest_keeps_the_newest(fleet: dict[str, Any],
                                                                                tmp_path: Path) -> None:
    shard1 = fleet["shard1"][1]
    doc = json.loads(shard1.read_text())
    assert usage_error("merge", str(shard1), str(shard1)) == (
        f"merge: 'ref' is in {shard1} and in {shard1}; give --latest to keep the newer run of it")
    newer = copy.deepcopy(doc)
    broken = next(t for t in newer["targets"] if t["name"] == "broken")
    broken["result"]["startedAt"] = "2099-01-01T00:00:00"
    broken["result"]["summary"] = "the newer run"
    later = tmp_path / "later.json"
    later.write_text(json.dumps(newer))
    merged = tmp_path / "merged.json"
    for order in ((later, shard1), (shard1, later)):  # the newest wins, wherever it is on the line
        res = invoke("merge", *map(str, order), "--latest", "-q", "--reporter", f"json={merged}")
        assert res.code == 1, res
        out = json.loads(merged.read_text())
        assert [t["label"] for t in out["targets"]] == ["ref", "broken"]
        assert out["targets"][1]["result"]["summary"] == "the newer run"


def test_a_missing_shard_is_said(fleet: dict[str, Any]) -> None:
    res = invoke("merge", str(fleet["shard1"][1]), "-q")
    assert res.code == 1
    assert "merge: shard 2/2 of a suite sharded 2 ways not given: the merged report lacks its targets" in res.stderr


def test_what_is_not_a_report_is_one_line_naming_the_file(fleet: dict[str, Any], tmp_path: Path) -> None:
    shard = json.loads(fleet["shard1"][1].read_text())
    single = shard["targets"][0]["result"]
    old = copy.deepcopy(single)
    for check in old["checks"]:
        check["requirements"] = check["requirementIds"]
    cases: dict[str, tuple[str, str]] = {
        "text.json": ("not json {", "not JSON (Expecting value: line 1 column 1 (char 0)), so not a report"),
        "list.json": ("[1, 2]", "not a JSON object, so not a report"),
        "other.json": (json.dumps({"hello": "world"}), "no outcome (not a tasks-conformance json report)"),
        "multi2.json": (json.dumps({**shard, "schemaVersion": "2"}),
                        "a report of multi schema version 2; this tasks-conformance reads version 1 "
                        "(merge it with the version that wrote it)"),
        "json1.json": (json.dumps(old), "a report of json schema version 1 (its requirements are ids; this "
                                        "version reads version 2)"),
        "summary.json": (json.dumps({"schemaVersion": "2", "kind": "tasks-conformance", **single}),
                         "a json-summary report (merge reads the json reporter's reports: --reporter json=FILE)"),
    }
    for name, (text, why) in cases.items():
        path = tmp_path / name
        path.write_text(text)
        assert usage_error("merge", str(fleet["shard1"][1]), str(path)) == f"merge: {path}: {why}"
    assert usage_error("merge", str(tmp_path / "absent.json")) == (
        f"merge: cannot read {str(tmp_path / 'absent.json')!r}: No such file or directory")


def at_time(report: Path, when: str, out: Path) -> Path:
    """The report as if its runs had started at `when` (a history record is named by that time)."""
    doc = json.loads(report.read_text())
    for target in doc["targets"]:
        target["result"]["startedAt"] = when
    out.write_text(json.dumps(doc))
    return out


def test_history_marks_a_regression_and_fail_on_regression_exits_1_under_a_baseline(tmp_path: Path) -> None:
    removed = "tasks-removed-methods-not-found"
    baseline = tmp_path / "known.toml"
    baseline.write_text(f'[[known]]\ncheck = "{removed}"\nreason = "being fixed"\n')
    ref = {"command": [*REFERENCE, *QUICK], "tool-name": "slow_compute", "check-id": STEADY}
    broken = {**ref, "command": [*BROKEN, "--break", "removed-methods-served", *QUICK], "baseline": str(baseline)}
    reports = []
    for n, flaky in enumerate((ref, broken), 1):  # the second time, flaky fails a check it passed
        suite = write_suite(tmp_path / f"suite{n}.toml", [{"name": "ref", **ref}, {"name": "flaky", **flaky}])
        report = tmp_path / f"run{n}.json"
        proc = tool("suite", str(suite), "--jobs", "2", "-q", "--reporter", f"json={report}")
        assert proc.returncode == 0, proc.stdout + proc.stderr  # the failure is a known one: passed
        reports.append(report)
    history = tmp_path / "history"
    first = at_time(reports[0], "2026-01-01T10:00:00", tmp_path / "first.json")
    second = at_time(reports[1], "2026-01-02T10:00:00", tmp_path / "second.json")
    third = at_time(reports[1], "2026-01-03T10:00:00", tmp_path / "third.json")
    merged, md = tmp_path / "merged.json", tmp_path / "merged.md"

    def merge(report: Path, *extra: str) -> tuple[int, dict[str, Any]]:
        res = invoke("merge", str(report), "--history", str(history), "-q", "--reporter", f"json={merged}",
                     "--reporter", f"markdown={md}", *extra)
        return res.code, json.loads(merged.read_text())

    code, doc = merge(first)
    assert code == 0 and doc["history"] == {"run": "20260101T100000Z", "earlierRuns": 0, "previous": None,
                                            "regressions": 0}
    code, doc = merge(second)
    assert code == 0  # a regression fails the merge only when asked
    multi_validator().validate(doc)
    flaky_marks = doc["targets"][1]["history"]
    assert flaky_marks == {"recent": [{"run": "20260101T100000Z", "outcome": "passed"},
                                      {"run": "20260102T100000Z", "outcome": "passed"}],
                           "previous": "20260101T100000Z", "failingSince": {removed: "20260102T100000Z"},
                           "regressions": [removed]}
    assert doc["targets"][0]["history"]["regressions"] == [] and doc["history"]["regressions"] == 1
    assert f"| flaky | ✅ ✅ | `{removed}` since 20260102T100000Z | ⬇️ `{removed}` |" in md.read_text()
    code, _doc = merge(second, "--fail-on-regression")  # the same reports again: the same record, rewritten
    assert code == 1
    assert sorted(p.name for p in history.iterdir()) == ["20260101T100000Z.json", "20260102T100000Z.json"]
    code, doc = merge(third, "--fail-on-regression", "--history-length", "2")
    assert code == 0  # failing since the second run: no longer a regression
    assert doc["targets"][1]["history"] == {
        "recent": [{"run": "20260102T100000Z", "outcome": "passed"}, {"run": "20260103T100000Z", "outcome": "passed"}],
        "previous": "20260102T100000Z", "failingSince": {removed: "20260102T100000Z"}, "regressions": []}
    assert usage_error("merge", str(third), "--fail-on-regression") == (
        "--fail-on-regression needs --history DIR (a regression is a change since the last run)")


def test_two_runs_of_the_same_second_keep_two_records(tmp_path: Path) -> None:
    from tasks_conformance.core import fleet_history as fh

    one = fh.RunRecord("20260101T100000Z", "passed", {"a": fh.TargetRecord("passed", {"c": "P"})})
    other = fh.RunRecord("20260101T100000Z", "failed", {"a": fh.TargetRecord("failed", {"c": "F"})})
    fh.write_record(str(tmp_path), fh.free_name(str(tmp_path), one))
    assert fh.free_name(str(tmp_path), one).run == "20260101T100000Z"  # the same run: its own record
    moved = fh.free_name(str(tmp_path), other)
    assert moved.run == "20260101T100000Z-2"
    fh.write_record(str(tmp_path), moved)
    earlier, problems = fh.read_records(str(tmp_path), before="20260101T100001Z")
    assert [r.run for r in earlier] == ["20260101T100000Z", "20260101T100000Z-2"] and problems == []
    marks = fh.marks(fh.RunRecord("20260101T100001Z", "failed", other.targets), earlier)
    assert marks.targets["a"].failing_since == {"c": "20260101T100000Z-2"}
