"""The fleet page (reporters/fleet_html.py), the html report of a suite or a merge, as data: the
matrix targets x checks grouped by area, the per-rule failure counts, the history marks, a page
that stays small (each rule's wording once, timelines within a budget) and in which nothing from
the runs can act. tests/e2e/cli/test_fleet_page_browser.py draws it in Chromium."""

from __future__ import annotations

import base64
import hashlib
import re
from pathlib import Path
from typing import Any

import pytest
from helpers.made_runs import a_check, a_run, failed_run
from helpers.pages import EVIL, FLEET_OPEN, SECRET, bench, fleet_bench, fleet_of, hostile_wire, named, page_of
from helpers.paths import ROOT

from tasks_conformance.core import fleet_history as fh
from tasks_conformance.core.baseline_marks import BaselineMark
from tasks_conformance.core.multirun_result import Combined
from tasks_conformance.core.result import Discovery
from tasks_conformance.reporters import fleet_html

RUN_SCRIPT_OPEN = '<script type="text/plain" id="run-script">'


def rule_fleet() -> Combined:
    """Four targets, five runs: `both` fails S-EXT-MUST-03 in each era, `known` fails it under a
    baseline, `fine` passes it, and a client fails a rule of its own."""
    def judged(status: str, **kw: Any) -> Any:
        return a_check("tasks-result-type-discipline", status, requirements=["S-EXT-MUST-03", "S-EXT-MUST-04"],
                      broken=["S-EXT-MUST-03"] if status == "failed" else None, **kw)

    known = judged("failed")
    known.baseline = BaselineMark("known", "being fixed")
    client = a_run([a_check("tasks-client-follows-task", "failed", requirements=["C-EXT-MUST-02"], category="client")])
    client.profile = "tasks-conformance/client-standard@2026-12"
    legacy = Discovery(protocolVersion="2025-11-25", wire="legacy")  # type: ignore[arg-type]
    return Combined(kind="suite", runs=(
        named("both (2025-11-25)", a_run([judged("failed")], discovery=legacy), era="2025-11-25", target="both"),
        named("both (2026-07-28)", a_run([judged("failed")]), era="2026-07-28", target="both"),
        named("known", a_run([known])),
        named("fine", a_run([judged("passed"), a_check("tasks-inline-result", "skipped", skip="not-applicable")])),
        named("a-client", client),
    ))


def test_the_rules_the_fleet_breaks_are_counted_per_target_most_broken_first() -> None:
    counts = fleet_html.rule_counts(rule_fleet())
    assert [{k: c[k] for k in ("rule", "subject", "failed", "of", "known", "runs")} for c in counts] == [
        # A target that ran each era counts once; of: the targets whose runs judged the rule.
        {"rule": "S-EXT-MUST-03", "subject": "server", "failed": 2, "of": 3, "known": 1, "runs": [0, 1, 2]},
        {"rule": "C-EXT-MUST-02", "subject": "client", "failed": 1, "of": 1, "known": 0, "runs": [4]},
    ]


def test_the_matrix_is_targets_by_checks_grouped_by_area_with_each_verdict() -> None:
    combined = rule_fleet()
    fleet = fleet_of(page_of(combined))
    assert [(a["area"], [c["id"] for c in a["checks"]]) for a in fleet["columns"]] == [
        ("dispatch", ["tasks-result-type-discipline", "tasks-inline-result"]),
        ("client", ["tasks-client-follows-task"])]
    assert [(t["label"], t["name"], t["era"], t["subject"], t["v"]) for t in fleet["targets"]] == [
        ("both (2025-11-25)", "both", "2025-11-25", "server", "F--"), ("both (2026-07-28)", "both", "2026-07-28",
                                                                        "server", "F--"),
        ("known", "known", "2026-07-28", "server", "K--"), ("fine", "fine", "2026-07-28", "server", "PN-"),
        ("a-client", "a-client", "2026-07-28", "client", "--F")]
    assert fleet["targets"][0]["broken"] == {"tasks-result-type-discipline": ["S-EXT-MUST-03"]}
    assert (fleet["outcome"], fleet["exitCode"]) == ("failed", 1)


def test_a_merge_with_history_marks_each_target(tmp_path: Path) -> None:
    combined = rule_fleet()
    before = fh.RunRecord("20260101T000000Z", "passed", {
        "known": fh.TargetRecord("passed", {"tasks-result-type-discipline": "P"})})
    now = combined.history_record("20260102T000000Z")
    fleet = fleet_of(page_of(Combined(kind="suite", runs=combined.runs, history=fh.marks(now, [before]))))
    known = next(t for t in fleet["targets"] if t["label"] == "known")
    assert known["history"] == {"recent": [{"run": "20260101T000000Z", "outcome": "passed"},
                                           {"run": "20260102T000000Z", "outcome": "passed"}],
                                "previous": "20260101T000000Z",
                                "failingSince": {"tasks-result-type-discipline": "20260102T000000Z"},
                                "regressions": ["tasks-result-type-discipline"]}
    assert fleet["history"]["regressions"] == 1 and fleet["history"]["earlier"] == ["20260101T000000Z"]


def test_each_rule_and_title_is_embedded_once_and_timelines_within_a_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    passing, failing = bench.synthetic(checks=6, frames=40), failed_run()
    passing.checks = [c for c in passing.checks if c.status == "passed"]
    passing.outcome = "passed"
    failing.wire = hostile_wire()
    runs = (named("passing", passing), named("failing", failing))
    sections = [s for s in bench.embedded(page_of(Combined(kind="suite", runs=runs)))["runs"]]
    assert all(len(s["timeline"]["frames"]) for s in sections)
    rules = [r for s in sections for a in s["areas"] for c in a["checks"] for r in c["rules"]]
    assert rules and all(r["text"] == r["url"] == "" for r in rules)
    assert all(c["title"] == "" for s in sections for a in s["areas"] for c in a["checks"])
    page = page_of(Combined(kind="suite", runs=runs))
    fleet = fleet_of(page)
    assert set(fleet["rules"]) == {r["id"] for r in rules} and fleet["rules"]["S-EXT-MUST-03"]["url"].startswith("https://")
    # Room for one timeline only: the run that did not pass keeps its own.
    monkeypatch.setattr(fleet_html, "TIMELINE_BUDGET", 4000)
    page = page_of(Combined(kind="suite", runs=runs))
    kept, dropped = bench.embedded(page)["runs"][1]["timeline"], bench.embedded(page)["runs"][0]["timeline"]
    assert len(kept["frames"]) == 3 and dropped["frames"] == [] and dropped["omitted"] == 40
    assert fleet_of(page)["timelinesLeftOut"] == 1


def test_the_fleet_page_is_self_contained_and_nothing_from_the_runs_can_act() -> None:
    result = failed_run()
    result.wire = hostile_wire()
    runs = tuple(named(label, result) for label in EVIL[:3])
    page = page_of(Combined(kind="suite", runs=runs))
    outside = page
    for open_tag in (bench.DATA_OPEN, FLEET_OPEN, RUN_SCRIPT_OPEN):
        start = outside.index(open_tag)
        outside = outside[:start] + outside[outside.index("</script>", start):]
    for evil in [*EVIL, SECRET, "</b>"]:
        assert evil not in outside
    assert SECRET not in page and page.count("<script") == 4
    assert not re.search(r"\s(src|href|action|srcdoc)=", outside)
    run_js = (ROOT / "src/tasks_conformance/reporters/html_report.js").read_text()
    start = page.index(RUN_SCRIPT_OPEN) + len(RUN_SCRIPT_OPEN)
    assert page[start:page.index("</script>", start)] == run_js  # run as it is, to draw a section

    def digest(text: str) -> str:
        return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"

    csp = re.search(r'<meta http-equiv="Content-Security-Policy" content="([^"]+)">', page)
    assert csp is not None
    (script,) = re.findall(r"<script>(.*?)</script>", page, re.S)
    styles = re.findall(r"<style>(.*?)</style>", page, re.S)
    assert csp.group(1).split("; ") == [
        "default-src 'none'", f"script-src {digest(script)} {digest(run_js)}",
        f"style-src {' '.join(digest(s) for s in styles)}", "img-src 'none'", "connect-src 'none'", "font-src 'none'",
        "base-uri 'none'", "form-action 'none'"]
    # --era both keeps the single-run page's sections, all drawn at once.
    eras = page_of(Combined(kind="eras", runs=(named("x", result, era="2026-07-28"),)))
    assert FLEET_OPEN not in eras and eras.count("<script") == 2


@pytest.mark.parametrize("asset", ["fleet_report.js", "fleet_report.css"])
def test_the_fleet_assets_use_no_markup_sink_and_fetch_nothing(asset: str) -> None:
    text = (ROOT / "src" / "tasks_conformance" / "reporters" / asset).read_text()
    for sink in ("innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "Function(",
                 "url(", "@import", "fetch(", "XMLHttpRequest", "import(", "setAttribute(\"style", "http"):
        assert sink not in text, sink


def test_the_benchmark_fleet_is_what_the_docs_say() -> None:
    fleet = fleet_bench().synthetic_fleet(500, frames=20)
    assert len(fleet.runs) == 500 and all(len(r.result.checks) == 48 for r in fleet.runs)
    outcomes = [r.result.outcome for r in fleet.runs]
    assert 0 < outcomes.count("failed") < outcomes.count("passed")
