"""A failure explains itself in every reporter, on each era: the rules broken (id, level, text,
spec URL), expected versus actual, and the frames it rests on; every report names the profile and
carries the score, which matches a hand computation for two fixtures.

Extension: `--break no-inline-result` with slow_compute, in this process, profile standard.
Legacy: `--break no-inline-result` pinned to 2025-11-25, profile core, through the command line
writing every reporter to a file.
"""

from __future__ import annotations

import io
import json
import re
import xml.etree.ElementTree as ET
from typing import Any

import jsonschema  # type: ignore[import-untyped,unused-ignore]
import pytest
from helpers.paths import BROKEN
from helpers.runs import run, stdio, tool

from tasks_conformance.core.requirements import load
from tasks_conformance.core.result import CheckResult, CheckWarning, RunResult
from tasks_conformance.core.text import one_line
from tasks_conformance.reporters import ReportOptions, render, schema_text
from tasks_conformance.reporters.markdown import cell

FAILING = "tasks-inline-result"
REPORTERS = ("human", "json", "json-summary", "junit-xml", "markdown")


def _render(name: str, result: RunResult, **options: Any) -> str:
    out = io.StringIO()
    render(name, result, out, ReportOptions(width=4000, **options))
    return out.getvalue()


@pytest.fixture(scope="module")
def extension_run() -> RunResult:
    return run(**stdio(BROKEN, "--break", "no-inline-result"), tool_name="slow_compute").result


@pytest.fixture(scope="module")
def legacy_reports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    d = tmp_path_factory.mktemp("legacy")
    argv = [*BROKEN, "--break", "no-inline-result", "--transport", "stdio"]
    args = ["--command", argv[0], *(a for x in argv[1:] for a in ("--args", x))]
    res = tool(*args, "--protocol-version", "2025-11-25", "--profile", "core", "-v", "--timeout", "5000",
              "--poll-timeout", "5000", *(a for n in REPORTERS for a in ("--reporter", f"{n}={d / n}")))
    assert res.returncode == 1, res.stderr  # the score never changes the exit code: failed is 1
    return {n: (d / n).read_text(encoding="utf-8") for n in REPORTERS}


def _cited(message: str, ids: list[str]) -> tuple[list[str], list[str]]:
    """(the check's requirement ids its message names, the others): reports show the first as
    broken, in full, and list the others as also judged."""
    named = [r for r in ids if r in message]
    assert named, message  # both fixtures' messages name the rule they break
    return named, [r for r in ids if r not in named]


def _failed(result: RunResult) -> CheckResult:
    failed = [c for c in result.checks if c.bucket == "failed"]
    assert [c.id for c in failed] == [FAILING]
    return failed[0]


def test_extension_score_by_hand(extension_run: RunResult) -> None:
    buckets = [c.bucket for c in extension_run.checks]
    # 47 checks: 24 passed, 1 failed, 22 not applicable (Mcp-Name routing, task authorization and the
    # four HTTP endpoint checks are HTTP-only; the required, tool-error, fault and input roles have no
    # tool under the standard profile; the forbidden-tool check and the eight tasks-legacy-* checks
    # judge only 2025-11-25; slow_compute never asks for input, which three input checks need);
    # every check here judges a MUST rule, so each weighs 2; none warned.
    assert (buckets.count("passed"), buckets.count("failed"), buckets.count("not-applicable")) == (24, 1, 22)
    assert not any(c.warnings for c in extension_run.checks)
    assert extension_run.score == 96  # floor(100 * 24*2 / (25*2)) = floor(96.0)
    assert extension_run.profile == "tasks-conformance/standard@2026-12"


@pytest.mark.parametrize("name", REPORTERS)
def test_every_report_names_the_profile_and_the_score(extension_run: RunResult, name: str) -> None:
    text = _render(name, extension_run)
    assert "tasks-conformance/standard@2026-12" in text
    assert {"human": "score 96/100", "markdown": "score **96/100**", "json": '"score": 96',
            "json-summary": '"score": 96', "junit-xml": '<property name="score" value="96"'}[name] in text


def test_extension_failure_in_human(extension_run: RunResult) -> None:
    check = _failed(extension_run)
    text = _render("human", extension_run)
    broken, others = _cited(check.message, check.requirements)
    assert broken == ["S-EXT-MUST-10"]
    for rule in check.rules:
        assert "/specification/2026-07-28/" in rule.url
        if rule.id in broken:
            assert f"{rule.id} ({rule.level}): {rule.text}" in text and rule.url in text
        else:
            assert rule.text not in text
    assert f"also judged here: {', '.join(others)} (tasks-conformance explain {FAILING})" in text
    assert f"expected: {json.dumps(check.details['expected'])}" in text
    assert f"actual: {json.dumps(check.details['actual'])}" in text
    # The frames: only with -v, and then each one the verdict rests on.
    assert check.frames and check.frames[0][:60] not in text
    verbose = _render("human", extension_run, verbose=True)
    assert all(one_line(f)[:60] in verbose for f in check.frames)


def test_extension_failure_in_markdown(extension_run: RunResult) -> None:
    check = _failed(extension_run)
    text = _render("markdown", extension_run)
    assert "**Failures**" in text
    broken, others = _cited(check.message, check.requirements)
    for rule in check.rules:
        if rule.id in broken:
            assert f"[{rule.id}] **{rule.level}**: {cell(rule.text)}" in text
            assert f"\n[{rule.id}]: {rule.url}\n" in text  # the link definition: [id] is clickable
    assert "also judged here: " + ", ".join(f"`{r}`" for r in others) in text
    assert "expected: " in text and "actual: " in text


def test_extension_failure_in_junit(extension_run: RunResult) -> None:
    check = _failed(extension_run)
    root = ET.fromstring(_render("junit-xml", extension_run))
    case = next(c for c in root.iter("testcase") if c.get("name") == FAILING)
    failure = case.find("failure")
    assert failure is not None
    first = next(r for r in check.rules if r.id == _cited(check.message, check.requirements)[0][0])
    assert (failure.get("message") or "").startswith(f"{first.id} ({first.level}): {first.text}")
    body = failure.text or ""
    for rule in check.rules:
        assert rule.url in body
    assert f"expected: {json.dumps(check.details['expected'])}" in body
    out = case.findtext("system-out") or ""
    assert "wire frames:" in out and all(f[:60] in out for f in check.frames)


def test_extension_failure_in_json_and_summary(extension_run: RunResult) -> None:
    check = _failed(extension_run)
    registry = load()
    want = [{"id": r, "level": registry[r].level, "text": registry[r].text, "url": registry[r].url}
            for r in check.requirements]
    for name in ("json", "json-summary"):
        doc = json.loads(_render(name, extension_run))
        jsonschema.validate(doc, json.loads(schema_text(name)))  # type: ignore[arg-type]
        got = next(c for c in doc["checks"] if c["id"] == FAILING)
        assert got["requirements"] == want and got["requirementIds"] == check.requirements
        assert doc["profile"] == "tasks-conformance/standard@2026-12" and doc["score"] == 96
        if name == "json":
            assert got["evidenceFrames"] == check.frames and len(got["evidenceFrames"]) == len(got["evidence"]) > 0
            assert got["details"]["expected"] == check.details["expected"]


def test_legacy_failure_in_every_report_and_score_by_hand(legacy_reports: dict[str, str]) -> None:
    doc = json.loads(legacy_reports["json"])
    jsonschema.validate(doc, json.loads(schema_text("json")))
    buckets = {c["id"]: (c["status"], c["skipReason"]) for c in doc["checks"]}
    # core on legacy stdio: 5 passed, tasks-inline-result failed, the two extension-only checks
    # not applicable; all weigh 2, none warned: floor(100 * 10 / 12) = 83.
    assert list(buckets) == [
        "tasks-wire-resolvable", "tasks-declaration-hygiene", "tasks-result-type-discipline",
        "tasks-undeclared-creation-refused", "tasks-ttl-shape", "tasks-inline-result", "tasks-mcp-name-routing",
        "tasks-undeclared-capability-rejected",
    ]
    assert [s for s, _ in buckets.values()].count("passed") == 5 and buckets[FAILING] == ("failed", None)
    assert buckets["tasks-mcp-name-routing"] == buckets["tasks-undeclared-capability-rejected"] == (
        "skipped", "not-applicable")
    assert not any(c["warnings"] for c in doc["checks"])
    assert doc["score"] == 83 and doc["profile"] == "tasks-conformance/core@2026-12"

    failed = next(c for c in doc["checks"] if c["id"] == FAILING)
    rules = failed["requirements"]
    assert rules and all(r["id"].startswith("S-LEG-") and "/specification/2025-11-25/" in r["url"] for r in rules)
    summary = json.loads(legacy_reports["json-summary"])
    jsonschema.validate(summary, json.loads(schema_text("json-summary")))
    assert next(c for c in summary["checks"] if c["id"] == FAILING)["requirements"] == rules
    assert summary["score"] == 83 and summary["profile"] == doc["profile"]

    broken, others = _cited(failed["message"], failed["requirementIds"])
    shown = [r for r in rules if r["id"] in broken]
    human = legacy_reports["human"]  # a file: plain, and -v was given, so the frames are there
    assert "score 83/100" in human and "tasks-conformance/core@2026-12" in human
    unfolded = re.sub(r"\s+", "", human)  # at the file's 120 columns a long URL is folded over lines
    for r in shown:
        assert f"{r['id']} ({r['level']})" in human and r["url"] in unfolded
    assert all(r in human for r in others)
    assert failed["evidenceFrames"] and "-v shows them" not in human
    assert all(re.sub(r"\s+", "", one_line(f)[:80]) in unfolded for f in failed["evidenceFrames"])

    md = legacy_reports["markdown"]
    assert "score **83/100**" in md
    for r in shown:
        assert f"[{r['id']}]: {r['url']}" in md

    root = ET.fromstring(legacy_reports["junit-xml"])
    case = next(c for c in root.iter("testcase") if c.get("name") == FAILING)
    message = case.find("failure").get("message") or ""  # type: ignore[union-attr]
    assert message.startswith(f"{shown[0]['id']} ({shown[0]['level']}): {shown[0]['text']}")
    assert all(r["url"] in (case.findtext("failure") or "") for r in rules)
    props = {p.get("name"): p.get("value") for p in root.iter("property")}
    assert props["profile"] == "tasks-conformance/core@2026-12" and props["score"] == "83"


def test_a_warning_citing_a_policy_links_to_it_in_every_report(extension_run: RunResult) -> None:
    from dataclasses import replace

    odd = CheckWarning("the extension capability value is odd (policy P-15)", ("P-15",))
    warned = replace(extension_run.checks[0], warnings=[odd])
    result = replace(extension_run, checks=[warned, *extension_run.checks[1:]])
    assert "P-15: docs/policies.md#p-15" in _render("human", result)
    assert "(see [P-15])" in (md := _render("markdown", result)) and "\n[P-15]: docs/policies.md#p-15\n" in md
    assert "see P-15: docs/policies.md#p-15" in _render("junit-xml", result)
    for name in ("json", "json-summary"):
        got = json.loads(_render(name, result))["checks"][0]
        assert got["policies"] == [{"id": "P-15", "url": "docs/policies.md#p-15"}]
