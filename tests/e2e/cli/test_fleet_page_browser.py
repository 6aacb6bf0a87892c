"""The fleet page in headless Chromium (as tests/e2e/cli/test_html_report_browser.py drives it): a 500-target
page draws its matrix, filters and rule counts, a click on a cell draws that target's section with
its timeline and the check selected, and nothing a server or a suite file named can act in it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers.made_runs import failed_run
from helpers.pages import EVIL, bench, fleet_bench, fleet_of, hostile_wire, named, page_of

from tasks_conformance.core.multirun_result import Combined

playwright_api = pytest.importorskip("playwright.sync_api",
                                     reason="playwright is not installed (the test extra has it)")
CHROMIUM = bench.chromium()
pytestmark = [
    pytest.mark.skipif(CHROMIUM is None, reason="no Chromium found: install Debian's chromium (.ci/run does, as root) "
                                                "or set TASKS_CONFORMANCE_CHROMIUM to a Chromium binary"),
    pytest.mark.timeout(300),
]


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with playwright_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, timeout=60_000, args=[
            "--no-sandbox", "--headless", "--disable-gpu", "--disable-background-networking"])
        try:
            yield b
        finally:
            b.close()


def open_page(browser: Any, path: Path) -> tuple[Any, list[str]]:
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    problems: list[str] = []
    page.on("console", lambda m: problems.append(f"console {m.type}: {m.text}") if m.type == "error" else None)
    page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
    page.on("request", lambda r: problems.append(f"request: {r.url}") if r.url != path.resolve().as_uri() else None)
    page.goto(path.resolve().as_uri())
    page.wait_for_selector("body[data-ready='1']", timeout=60_000)
    return page, problems


def visible_rows(page: Any) -> list[str]:
    rows = "table.matrix tbody tr:not([hidden]) th.target"
    return list(page.eval_on_selector_all(rows, "e => e.map(x => x.textContent)"))


def test_a_500_target_fleet_page_draws_its_matrix_filters_rule_counts_and_sections(browser: Any,
                                                                                    tmp_path: Path) -> None:
    combined = fleet_bench().synthetic_fleet(500, frames=20)
    path = tmp_path / "fleet.html"
    path.write_text(page_of(combined), encoding="utf-8")
    fleet = fleet_of(path.read_text(encoding="utf-8"))
    page, problems = open_page(browser, path)
    assert page.eval_on_selector_all("table.matrix tbody tr", "e => e.length") == 500
    assert page.eval_on_selector_all("table.matrix td.v", "e => e.length") == 500 * 48
    areas = page.eval_on_selector_all("table.matrix tr.areas th.area", "e => e.map(x => [x.textContent, x.colSpan])")
    assert areas == [[a["title"], len(a["checks"])] for a in fleet["columns"]]  # in words (issue 35)
    assert "The task object" in [a for a, _n in areas] and not any("_" in a for a, _n in areas)
    top = fleet["ruleCounts"][0]
    first = page.text_content("ol.rule-list li button.rule-count")
    assert first == f"{top['rule']}: {top['failed']} of {top['of']} servers"
    # The rule filter: the targets that broke it, and nothing else.
    page.click("ol.rule-list li button.rule-count")
    assert visible_rows(page) == [fleet["targets"][i]["label"] for i in top["runs"]]
    page.select_option("select[aria-label=rule]", "")
    # The outcome and era filters.
    page.uncheck("label.filter:has-text('passed') input")
    others = [t["label"] for t in fleet["targets"] if t["outcome"] != "passed"]
    assert visible_rows(page) == others and len(others) < 500
    page.select_option("select[aria-label=era]", "2026-07-28")
    assert visible_rows(page) == [t["label"] for t in fleet["targets"] if t["outcome"] != "passed"
                                  and t["era"] == "2026-07-28"]
    # A failed cell opens its target's section: that check selected, its timeline drawn.
    row = next(t["label"] for t in fleet["targets"] if t["outcome"] == "failed" and t["era"] == "2026-07-28")
    index = next(i for i, t in enumerate(fleet["targets"]) if t["label"] == row)
    page.click(f"table.matrix tbody tr[data-row='{index}'] td.v-F")
    assert page.text_content("section.target-detail section.run h2") == row
    selected = page.eval_on_selector_all("section.run li.check.selected", "e => e.map(x => x.dataset.checkId)")
    column = fleet["targets"][index]["v"].index("F")
    assert selected == [[c["id"] for a in fleet["columns"] for c in a["checks"]][column]]
    assert page.eval_on_selector_all("section.run svg.tl rect.f", "e => e.length") == 20
    # Each rule's wording, left out of the sections' data, is back in the drawn section.
    rules = page.eval_on_selector_all("section.run li.selected .rules li .rule-text", "e => e.map(x => x.textContent)")
    assert rules and all(rules)
    # Another target replaces it.
    page.click("table.matrix tbody tr:not([hidden]) th.target button")
    assert page.eval_on_selector_all("section.target-detail section.run", "e => e.length") == 1
    assert problems == []
    page.close()


def test_nothing_named_by_a_server_or_a_suite_file_can_act_in_the_fleet_page(browser: Any, tmp_path: Path) -> None:
    result = failed_run()
    result.wire = hostile_wire()
    path = tmp_path / "evil.html"
    path.write_text(page_of(Combined(kind="suite", runs=tuple(named(label, result) for label in EVIL[:4]))),
                    encoding="utf-8")
    page, problems = open_page(browser, path)
    assert visible_rows(page) == EVIL[:4]  # shown as text
    page.click("table.matrix tbody tr td.v-F")
    page.click("section.run li.check.selected button.seq")
    assert page.evaluate("() => window.pwned") is None
    assert page.eval_on_selector_all("img", "e => e.length") == 0
    assert problems == []
    page.close()
