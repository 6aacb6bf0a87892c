"""The HTML report in a real browser: headless Chromium (Debian's `chromium`, which .ci/run installs;
or the one TASKS_CONFORMANCE_CHROMIUM names), driven by playwright with `executable_path`, so no
browser is ever downloaded. Skipped, with the reason, where there is no Chromium or no playwright.

Playwright rather than raw DevTools protocol calls: its locators wait for what they act on and
report what they found, which keeps the assertions short and honest; it speaks the same
protocol underneath. The screenshots go to .ci/artifacts/ (git-ignored); the README's comes from
here too (docs/images/html-report.png, rewritten when TASKS_CONFORMANCE_README_SHOT is set)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers.made_runs import DEFERRING, NO_TOOL_CAUSE, OWNER, a_check, a_run, failed_run, passed_run
from helpers.pages import EVIL, SECRET, bench, client_records, hostile_wire, paced_wire
from helpers.paths import BROKEN, ROOT
from helpers.runs import cli

from tasks_conformance.reporters.html import document, run_data

ARTIFACTS = ROOT / ".ci" / "artifacts"
README_SHOT = ROOT / "docs" / "images" / "html-report.png"

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
        # --no-sandbox: CI runs as root, where Chromium's sandbox refuses to start.
        b = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"], timeout=60_000)
        try:
            yield b
        finally:
            b.close()


def open_report(browser: Any, path: Path, width: int = 1400, height: int = 900) -> tuple[Any, list[str]]:
    """The page, loaded and drawn; the list collects console errors, page errors and CSP violations."""
    page = browser.new_page(viewport={"width": width, "height": height})
    problems: list[str] = []
    page.on("console", lambda m: problems.append(f"console {m.type}: {m.text}") if m.type == "error" else None)
    page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
    page.on("request", lambda r: problems.append(f"request: {r.url}") if r.url != path.resolve().as_uri() else None)
    page.goto(path.resolve().as_uri())
    page.wait_for_selector("body[data-ready='1']", timeout=30_000)
    return page, problems


def marks(page: Any) -> list[dict[str, Any]]:
    return list(page.eval_on_selector_all("svg.tl rect.f", """els => els.map(e => ({
        seq: Number(e.dataset.seq), x: Number(e.getAttribute('x')), y: Number(e.getAttribute('y')),
        hl: e.classList.contains('hl'), shown: e.getBoundingClientRect().width > 0}))"""))


def test_a_failing_run_draws_its_timeline_and_a_failed_check_lights_exactly_its_frames(
        browser: Any, tmp_path: Path) -> None:
    path = tmp_path / "report.html"
    server = " ".join([*BROKEN, "--break", "nested-create"])
    proc = cli("--command", server, "--tool-name", "slow_compute", "-q", "--reporter", f"html={path}", timeout=180)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    (section,) = bench.embedded(path.read_text(encoding="utf-8"))["runs"]
    frames = section["timeline"]["frames"]
    page, problems = open_report(browser, path)
    drawn = marks(page)
    # Every frame is a mark, at a position that follows its time (frames are in time order).
    assert [m["seq"] for m in drawn] == [f["seq"] for f in frames] and all(m["shown"] for m in drawn)
    xs = [m["x"] for m in drawn]
    assert xs == sorted(xs) and xs[-1] > xs[0]
    lanes = section["timeline"]["lanes"]
    assert len({m["y"] for m in drawn}) >= len(lanes)  # one row per lane (sent and received apart)
    assert page.locator("svg.tl text.lane-label").count() == len(lanes)
    assert page.locator("svg.tl line.interval").count() >= 1  # the polls' intervals
    # The failed check is first; clicking it lights its frames and no other.
    failed = page.locator("li.check.b-failed").first
    assert failed.get_attribute("data-check-id") == "tasks-result-type-discipline"
    evidence = next(c for a in section["areas"] for c in a["checks"] if c["id"] == "tasks-result-type-discipline")
    assert evidence["evidence"]
    failed.locator(".check-head").click()
    lit = {m["seq"] for m in marks(page) if m["hl"]}
    assert lit == set(evidence["evidence"])
    # Clicking a frame shows its bytes, as text.
    last = frames[-1]
    page.locator(f"svg.tl rect.f[data-seq='{last['seq']}']").click()
    assert page.locator(".frame-view").get_attribute("data-seq") == str(last["seq"])
    assert page.locator(".frame-bytes").text_content() == last["text"]
    page.locator(".frame-nav .prev").click()  # marks that overlap are reached by stepping
    assert page.locator(".frame-view").get_attribute("data-seq") == str(frames[-2]["seq"])
    # The filter: "failed" leaves only failed checks.
    page.locator("input[value='failed']").check()
    shown = page.eval_on_selector_all("li.check", "els => els.filter(e => !e.hidden).map(e => e.dataset.bucket)")
    assert shown and set(shown) == {"failed"}
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "html-report-failing.png"), full_page=True)
    assert problems == []
    page.close()


def test_nothing_a_server_sent_can_act_in_the_page(browser: Any, tmp_path: Path) -> None:
    result = failed_run()  # hostile strings in the target, messages and details
    result.wire = hostile_wire()  # and in the frames, a lane name, a task's status; bytes not UTF-8
    path = tmp_path / "hostile.html"
    path.write_text(document([run_data("<script>window.pwned=1</script>", result)]), encoding="utf-8")
    page, problems = open_report(browser, path)
    assert page.evaluate("typeof window.pwned") == "undefined"
    assert page.locator("img, iframe, object, embed, b, x").count() == 0  # no element came from the data
    assert page.locator("script").count() == 2
    body = page.locator("main").text_content()
    assert "<script>window.pwned=1</script>" in body  # shown as text, literally
    frames = [m["seq"] for m in marks(page)]
    page.locator(f"svg.tl rect.f[data-seq='{frames[2]}']").click()  # the frame that is not UTF-8
    assert page.locator(".frame-bytes").text_content() == "\\xff\\xfe not utf-8 <script>\\u0000"
    assert "not UTF-8" in (page.locator(".frame-head").text_content() or "")
    page.locator(f"svg.tl rect.f[data-seq='{frames[1]}']").click()
    shown = page.locator(".frame-bytes").text_content() or ""
    assert EVIL[1] in shown and "<img src=x onerror=" in shown and SECRET not in shown
    assert problems == []
    page.close()


def test_the_synthetic_100_checks_by_500_frames_report_is_drawn(browser: Any, tmp_path: Path) -> None:
    path = tmp_path / "synthetic.html"
    path.write_text(document([run_data("", bench.synthetic())]), encoding="utf-8")
    page, problems = open_report(browser, path)
    assert len(marks(page)) == 500 and page.locator("li.check").count() == 100
    page.locator("li.check.b-failed .check-head").first.click()
    assert sum(m["hl"] for m in marks(page)) == 5
    assert problems == []
    page.close()


def test_the_readme_screenshot(browser: Any, tmp_path: Path) -> None:
    """The demo's report, a failed check's frames lit: written to .ci/artifacts/, and to the README's
    image when TASKS_CONFORMANCE_README_SHOT=1 (then scaled down to stay small)."""
    path = tmp_path / "report.html"
    server = " ".join([*BROKEN, "--break", "nested-create"])
    proc = cli("--command", server, "--tool-name", "slow_compute", "-q", "--reporter", f"html={path}", timeout=180)
    assert proc.returncode == 1
    # The target as a reader would type it (this machine's paths stay out of the picture).
    from tasks_conformance.reporters import html as html_reporter

    text = path.read_text(encoding="utf-8")
    data = bench.embedded(text)
    data["runs"][0]["header"]["target"] = "python server.py"
    path.write_text(html_reporter.document(data["runs"]), encoding="utf-8")
    page, problems = open_report(browser, path, width=1280, height=760)
    page.locator("li.check.b-failed .check-head").first.click()
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    shot = ARTIFACTS / "html-report.png"
    page.screenshot(path=str(shot))
    assert shot.stat().st_size > 10_000 and problems == []
    if os.environ.get("TASKS_CONFORMANCE_README_SHOT"):
        page.set_viewport_size({"width": 1280, "height": 760})
        README_SHOT.parent.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(README_SHOT), scale="css", type="png")
    page.close()


def _lead_run() -> Any:
    """Two failures (one with a warning), a deferral to one of them, two checks that could not run
    for one cause, a passed check that warned, one that did not, one not applicable."""
    checks = [
        a_check("tasks-wire-resolvable", "passed", message="ok"),
        a_check("tasks-ttl-shape", "passed", warnings=["ttl is very short (100 ms)"]),
        a_check("tasks-result-type-discipline", "failed", requirements=["S-EXT-MUST-03", "S-EXT-MUST-04"],
               broken=["S-EXT-MUST-03"], warnings=["also odd"], evidence=[1, 2],
               details={"expected": "task", "actual": "tool"}, message="resultType was 'tool'"),
        a_check(OWNER, "failed", requirements=["S-LEG-MUST-02"], evidence=[3], message="ran synchronously"),
        a_check(DEFERRING, "skipped", skip="deferred", requirements=["S-LEG-MUST-02"], deferred_to=OWNER,
               details={"deferredTo": {"S-LEG-MUST-02": OWNER}}, message="S-LEG-MUST-02 is failed by its owner"),
        *(a_check(i, "skipped", skip="could-not-run", cause=NO_TOOL_CAUSE)
          for i in ("tasks-inline-result", "tasks-cancel-ack-shape")),
        a_check("tasks-legacy-task-id-wins", "skipped", skip="not-applicable", message="applies to the legacy wire"),
    ]
    areas = ["discovery", "task_object", "creation", "creation", "creation", "results", "cancel", "association"]
    for check, area in zip(checks, areas, strict=True):
        check.area = area
    result = a_run(checks)
    result.wire = paced_wire({"declared-call": [0.1, 0.101], "required-tool": [0.2, 0.201]})
    return result


def _lead_page(browser: Any, tmp_path: Path) -> tuple[Any, list[str], dict[str, Any]]:
    data = run_data("", _lead_run())
    path = tmp_path / "lead.html"
    path.write_text(document([data]), encoding="utf-8")
    page, problems = open_report(browser, path)
    return page, problems, data


def test_a_failing_run_opens_on_its_failures_with_their_rules_and_expected_actual(
        browser: Any, tmp_path: Path) -> None:
    """Issue 35: the page led with a could-not-run box (about a deferral, once), every check closed
    and the filter on "all"."""
    page, problems, data = _lead_page(browser, tmp_path)
    # First after the header: the failures; what could not run comes after them, folded.
    boxes = page.eval_on_selector_all("section.run > *", "els => els.map(e => [e.tagName, e.className, e.open])")
    assert [(tag, cls) for tag, cls, _open in boxes] == [
        ("DIV", "header"), ("DIV", "lead"), ("DETAILS", "causes"), ("DIV", "layout")]
    assert boxes[2][2] is False
    led = page.eval_on_selector_all(".lead .lead-item", "els => els.map(e => e.dataset.checkId)")
    assert led == data["lead"] == ["tasks-result-type-discipline", OWNER]  # never the deferral
    rule = next(r for c in data["areas"][0]["checks"] if c["id"] == led[0] for r in c["rules"] if r["broken"])
    first = page.locator(".lead .lead-item").first
    assert first.locator(".rules a").get_attribute("href") == rule["url"] and rule["url"].startswith("https://")
    assert first.locator(".rules a").text_content() == "S-EXT-MUST-03"
    assert first.locator(".rules .rule-text").text_content() == rule["text"]  # its wording, not the unbroken rule's
    assert first.locator(".rules li").count() == 1
    assert first.locator(".expected-actual dt").all_text_contents() == ["expected", "actual"]
    assert first.locator(".expected-actual pre").all_text_contents() == ['"task"', '"tool"']
    # The list opens on the failures, each open; the deferral keeps its own status.
    assert page.locator("input[name='filter-0']:checked").get_attribute("value") == "failed"
    shown = page.eval_on_selector_all("li.check", """els => els.filter(e => !e.hidden).map(e =>
        [e.dataset.bucket, !e.querySelector('.check-body').hidden])""")
    assert shown == [["failed", True], ["failed", True]]
    deferral = page.locator(f"li.check[data-check-id='{DEFERRING}']")
    assert deferral.locator(".status").text_content() == deferral.get_attribute("data-bucket") == "deferred"
    # A failure's id in the lead shows it in the list (whatever the filter) and lights its frames.
    page.locator("input[value='all']").check()
    page.locator(f"li.check[data-check-id='{led[0]}'] .check-head").click()  # selected, then closed
    page.locator(f"li.check[data-check-id='{led[0]}'] .check-head").click()
    page.locator("input[value='warnings']").check()
    first.locator(".lead-id").click()
    selected = page.locator("li.check.selected")
    assert selected.get_attribute("data-check-id") == led[0] and selected.is_visible()
    assert selected.locator(".check-body").is_visible()
    assert {m["seq"] for m in marks(page) if m["hl"]} == {1, 2}
    assert problems == []
    page.close()


def test_warnings_count_the_passed_checks_that_warned(browser: Any, tmp_path: Path) -> None:
    """Issue 35: "warnings (N)" counted failed and could-not-run checks too."""
    page, problems, _data = _lead_page(browser, tmp_path)
    labels = [" ".join(t.split()) for t in page.locator(".filters label").all_text_contents()]
    assert labels == ["failed (2)", "warnings (1)", "could not run (2)", "deferred (1)", "all (8)"]
    page.locator("input[value='warnings']").check()
    visible = page.eval_on_selector_all("li.check", "els => els.filter(e => !e.hidden).map(e => e.dataset.checkId)")
    assert visible == ["tasks-ttl-shape"]  # not the failure that warned too
    page.locator("input[value='could-not-run']").check()
    visible = page.eval_on_selector_all("li.check", "els => els.filter(e => !e.hidden).map(e => e.dataset.bucket)")
    assert visible == ["could-not-run", "could-not-run"]
    assert problems == []
    page.close()


def test_areas_are_titled_in_words(browser: Any, tmp_path: Path) -> None:
    """Issue 35: area headings were module names (`task_object`)."""
    page, problems, _data = _lead_page(browser, tmp_path)
    page.locator("input[value='all']").check()
    headings = page.locator(".area h3").all_text_contents()
    assert {"Task creation", "The task object", "Discovery of the tasks wire", "Task results"} <= set(headings)
    assert not any("_" in h for h in headings)
    assert problems == []
    page.close()


def test_the_timeline_spreads_the_frames_beside_a_long_pause_and_zooms_to_a_checks_frames(
        browser: Any, tmp_path: Path) -> None:
    """Issue 35: frames bunched into the first 6 % of the axis, so a check's lit frames were a few
    pixels wide. A long pause is drawn narrow, and "zoom" draws only the time around the evidence."""
    burst = [0.5 + i * 0.0015 for i in range(40)]  # 40 frames in 60 ms, then ~10 s with none
    result = a_run([a_check("tasks-result-type-discipline", "failed", evidence=[10, 11])])
    result.wire = paced_wire({"burst": burst, "late": [10.5, 10.502]})
    path = tmp_path / "pause.html"
    path.write_text(document([run_data("", result)]), encoding="utf-8")
    page, problems = open_report(browser, path)
    xs = {m["seq"]: m["x"] for m in marks(page)}
    assert len(xs) == 42
    assert (xs[40] - xs[1]) / (xs[42] - xs[1]) > 0.5  # the burst spans most of the plot, not 0.6 % of it
    assert page.locator("svg.tl rect.gap").count() == 1 and page.locator(".legend .lg.gap").count() == 1
    assert "no frame for 9.94 s" in (page.locator("svg.tl rect.gap title").text_content() or "")
    zoom = page.locator(".tl-tools .zoom")
    assert zoom.is_disabled()  # nothing selected yet
    page.locator("li.check .check-head").first.click()
    lit = {m["seq"]: m["x"] for m in marks(page) if m["hl"]}
    assert set(lit) == {10, 11}
    apart = lit[11] - lit[10]
    zoom.click()
    zoomed = marks(page)
    near = {m["seq"]: m["x"] for m in zoomed if m["hl"]}
    assert set(near) == {10, 11} and len(zoomed) < 42 and {41, 42}.isdisjoint(m["seq"] for m in zoomed)
    assert near[11] - near[10] > 2 * apart
    assert zoom.text_content() == "show the whole exchange"
    zoom.click()
    assert len(marks(page)) == 42 and {m["seq"] for m in marks(page) if m["hl"]} == {10, 11}
    assert problems == []
    page.close()


def test_client_mode_says_who_sent_each_frame(browser: Any, tmp_path: Path) -> None:
    """Issue 35: in client mode the legend said "received" for what the user's client sent. The
    wire log is the scripted server's: in is what the client sent, out what the scripted server did."""
    from tasks_conformance.core.profiles import CLIENT_PROFILES

    words = {}
    for subject in ("client", "server"):
        result = passed_run()
        if subject == "client":
            result.profile = next(iter(CLIENT_PROFILES.values())).id
        result.wire = paced_wire({"tasks-client-lifecycle (extension)": [0.1, 0.2]})  # out, then in
        path = tmp_path / f"{subject}.html"
        path.write_text(document([run_data("", result)]), encoding="utf-8")
        page, problems = open_report(browser, path)
        legend = (page.locator(".legend .lg.out").text_content(), page.locator(".legend .lg.in").text_content())
        page.locator("svg.tl rect.f[data-seq='2']").click()
        words[subject] = (legend, (page.locator(".frame-head").text_content() or "").split(" · ")[1])
        assert problems == []
        page.close()
    assert words["client"] == (("sent by the scripted server", "sent by the client"), "sent by the client")
    assert words["server"] == (("sent", "received"), "received")


def test_a_client_runs_record_is_drawn_and_opens_when_a_scenario_did_not_end_cleanly(
        browser: Any, tmp_path: Path) -> None:
    """Issue 31: the page shows what the client did in each scenario, as JSON, JUnit and -v do; a
    client stopped at --timeout opens the record, a run whose clients all exited 0 keeps it shut."""
    seen = {}
    for name, records in (("odd", client_records()), ("clean", client_records()[:1])):
        result = passed_run()
        result.scenarios = records
        path = tmp_path / f"{name}.html"
        path.write_text(document([run_data("", result)]), encoding="utf-8")
        page, problems = open_report(browser, path)
        box = page.locator("details.client-record")
        seen[name] = (box.evaluate("d => d.open"), box.locator("summary").text_content(),
                      box.locator("li.odd .scenario-status").all_text_contents())
        assert page.evaluate("() => window.pwned") is None and problems == []
        page.close()
    assert seen["odd"] == (True, "What the client did: 2 scenarios, 1 did not end cleanly",
                           ["stopped at --timeout 30000 ms"])
    assert seen["clean"] == (False, "What the client did: 1 scenario, each exited 0", [])
