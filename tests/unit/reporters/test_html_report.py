"""The html reporter without a browser: the page is one self-contained file whose run data cannot
act (escaped JSON, a strict CSP by hash, nothing to fetch), its timeline puts each frame in its
lane (a probe, a client scenario) with the polls, their intervals and the task's status changes,
and it works from the command line in server mode, client mode, --era both and suite.
tests/e2e/cli/test_html_report_browser.py opens it in Chromium."""

from __future__ import annotations

import base64
import hashlib
import json
import re
import shlex
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from helpers.made_runs import (
    DEFERRING,
    HOSTILE,
    OWNER,
    RAW_CONTROL,
    deferred_run,
    failed_run,
    no_tool_run,
    passed_run,
)
from helpers.pages import EVIL, SECRET, bench, client_records, hostile_wire, paced_wire
from helpers.paths import BROKEN, REFERENCE, ROOT
from helpers.runs import cli, tool
from helpers.suites import reference, write_suite
from helpers.zygote import forked

from tasks_conformance import run
from tasks_conformance.core.redact import Redactor
from tasks_conformance.core.wirelog import FrameTag, Purpose, WireLog, in_lane
from tasks_conformance.reporters.html import document, embedded_json, render_html, run_data
from tasks_conformance.reporters.html_timeline import timeline

embedded = bench.embedded


def _page(result: Any) -> str:
    import io

    out = io.StringIO()
    render_html(result, out)
    return out.getvalue()


def test_embedded_json_cannot_end_its_element_and_reads_back_exactly() -> None:
    value = {"s": EVIL, "k": {"</script>": "\u2028"}}
    text = embedded_json(value)
    assert not set(text) & {"<", ">", "&", "\u2028", "\u2029"} and text.isascii()
    assert json.loads(text) == value


def test_the_page_is_self_contained_and_nothing_from_the_run_can_act() -> None:
    result = failed_run()  # hostile strings in its target, messages and details
    result.wire = hostile_wire()
    page = _page(result)
    data_start = page.index(bench.DATA_OPEN)
    data_end = page.index("</script>", data_start)
    outside = page[:data_start] + page[data_end:]
    # Outside the data element nothing comes from the run: the markup is our fixed template.
    for evil in [*EVIL, *HOSTILE, SECRET, "</b>"]:
        assert evil not in outside
    assert SECRET not in page  # redacted in the frame's bytes
    assert page.count("<script") == 2 and not re.search(r"\s(src|href|action|srcdoc)=", outside)
    assert not RAW_CONTROL.search(page) and page[data_start:data_end].isascii()
    # The strict CSP admits exactly the page's own inline script and style, by hash; nothing else.
    csp = re.search(r'<meta http-equiv="Content-Security-Policy" content="([^"]+)">', page)
    assert csp is not None
    script = re.findall(r"<script>(.*?)</script>", page, re.S)
    style = re.findall(r"<style>(.*?)</style>", page, re.S)
    assert len(script) == 1 and len(style) == 1

    def digest(text: str) -> str:
        return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"

    assert csp.group(1).split("; ") == [
        "default-src 'none'", f"script-src {digest(script[0])}", f"style-src {digest(style[0])}", "img-src 'none'",
        "connect-src 'none'", "font-src 'none'", "base-uri 'none'", "form-action 'none'"]
    data = embedded(page)
    (section,) = data["runs"]
    frames = section["timeline"]["frames"]
    assert [f["utf8"] for f in frames] == [True, True, False]
    assert frames[2]["text"] == "\\xff\\xfe not utf-8 <script>\\u0000"  # escaped, shown as text by the page
    assert "\ud800" not in frames[1]["text"] and "\\ud800" in frames[1]["text"]
    assert section["timeline"]["statuses"][0]["status"] == "<script>x</script>"  # a string, drawn as text


def test_the_timeline_puts_frames_in_lanes_with_polls_intervals_and_status_changes() -> None:
    wire = WireLog(Redactor())
    answers = {"working": 1000, "input_required": 500}

    def exchange(lane: str | None, t: float, status: str, poll: int | None, reply_in_lane: bool = True) -> None:
        tag = FrameTag.polling(poll) if poll else FrameTag(Purpose.PROBE)
        with in_lane(lane or "session"):
            req = wire.record("out", "stdio", b'{"jsonrpc":"2.0","id":1,"method":"tasks/get"}', tag=tag)
        body = json.dumps({"jsonrpc": "2.0", "id": 1, "result": {
            "taskId": "t1", "status": status, "pollIntervalMs": answers.get(status, 0)}}).encode()
        if reply_in_lane:
            with in_lane(lane or "session"):
                res = wire.record("in", "stdio", body)
        else:  # read by another task (the transport's reader): the peer's match moves it
            res = wire.record("in", "stdio", body)
            wire.answers(res.seq, req.seq)
        req.time, res.time = t, t + 0.002

    exchange("poll", 0.0, "working", None)
    exchange("poll", 1.0, "working", 1, reply_in_lane=False)
    exchange("poll", 1.6, "input_required", 2)
    exchange("cancel", 1.7, "cancelled", None)
    exchange("poll", 2.1, "completed", 3)
    tl = timeline(wire)
    assert tl["lanes"] == ["poll", "cancel"]
    assert Counter(f["lane"] for f in tl["frames"]) == {"poll": 8, "cancel": 2}
    polls = [(p["n"], p["sinceMs"], p["askedMs"]) for p in tl["polls"]]
    assert polls == [(1, None, 1000), (2, 600.0, 1000), (3, 500.0, 500)]
    changes = [(s["lane"], s["status"]) for s in tl["statuses"]]
    assert changes == [("poll", "working"), ("poll", "input_required"), ("cancel", "cancelled"), ("poll", "completed")]
    assert tl["duration"] == 2102.0


def test_failed_checks_come_first_by_area_with_rules_details_and_causes() -> None:
    data = run_data("", failed_run())
    buckets = [c["bucket"] for a in data["areas"] for c in a["checks"]]
    assert buckets[0] == "failed" and "passed" in buckets
    assert buckets.index("passed") > max(i for i, b in enumerate(buckets) if b == "failed")
    failed = next(c for a in data["areas"] for c in a["checks"] if c["bucket"] == "failed")
    assert failed["rules"][0]["broken"] and failed["rules"][0]["url"].startswith("https://")
    assert {"expected", "actual"} <= set(failed["details"])
    assert data["header"]["exitCode"] == 1 and data["header"]["outcome"] == "failed"
    passed = run_data("", passed_run())
    assert passed["header"]["exitCode"] == 0 and passed["timeline"]["frames"] == []


def test_a_stdio_run_puts_each_answer_in_its_probes_lane() -> None:
    report = run(command=[*REFERENCE, "--transport", "stdio"], tool_name="slow_compute")
    lanes: dict[str, set[str]] = {}
    for frame in report.wire:
        lanes.setdefault(frame.lane or "", set()).add(frame.direction)
    # Every probe's lane has its requests and its answers (read off stdout by the reader task).
    assert "session" in lanes and "poll" in lanes and "cancel" in lanes
    assert all(dirs == {"in", "out"} for lane, dirs in lanes.items() if lane != "session"), lanes


def test_the_command_line_writes_a_report_of_a_failing_server(tmp_path: Path) -> None:
    page = tmp_path / "report.html"
    server = " ".join([*BROKEN, "--break", "nested-create"])
    proc = tool("--command", server, "--tool-name", "slow_compute", "-q", "--reporter", f"html={page}")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    (section,) = embedded(page.read_text(encoding="utf-8"))["runs"]
    assert section["header"]["exitCode"] == 1 and section["header"]["outcome"] == "failed"
    first = section["areas"][0]["checks"][0]
    assert first["id"] == "tasks-result-type-discipline" and first["bucket"] == "failed"
    seqs = {f["seq"] for f in section["timeline"]["frames"]}
    assert first["evidence"] and set(first["evidence"]) <= seqs
    assert {"session", "declared-call", "poll"} <= set(section["timeline"]["lanes"])


def test_client_mode_draws_one_lane_per_scenario(tmp_path: Path) -> None:
    page = tmp_path / "client.html"
    client = shlex.join(forked((sys.executable, "-m", "tasks_conformance.client.reference_client")))
    proc = tool("client", "--command", client, "--era", "extension", "--reporter", f"html={page}")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (section,) = embedded(page.read_text(encoding="utf-8"))["runs"]
    lanes = section["timeline"]["lanes"]
    assert "tasks-client-lifecycle (extension)" in lanes and all(lane.endswith("(extension)") for lane in lanes)
    assert section["timeline"]["statuses"]  # the scripted tasks' statuses, on their scenarios' lanes
    records = section["scenarios"]  # what the client did, one record per scenario it ran
    assert {r["scenario"] + " (extension)" for r in records} == set(lanes) and all(r["ok"] for r in records)


def test_era_both_and_a_suite_get_one_section_per_run(tmp_path: Path) -> None:
    both = tmp_path / "both.html"
    proc = tool("--command", shlex.join([*forked(REFERENCE), "--transport", "stdio"]), "--tool-name", "slow_compute",
               "--era", "both", "-q", "--reporter", f"html={both}")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    runs = embedded(both.read_text(encoding="utf-8"))["runs"]
    assert sorted(r["label"].split(",")[0] for r in runs) == ["2025-11-25", "2026-07-28"]
    assert all(r["timeline"]["frames"] for r in runs)
    page = tmp_path / "suite.html"
    suite = write_suite(tmp_path / "suite.toml", [reference("first"), reference("second")],
                        {"tool-name": "slow_compute", "check-id": ["tasks-wire-resolvable"]})
    proc = tool("suite", str(suite), "--format", "human", "--reporter", f"html={page}")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    runs = embedded(page.read_text(encoding="utf-8"))["runs"]
    assert [r["label"] for r in runs] == ["first", "second"]


HOSTILE_SERVER = [sys.executable, str(ROOT / "fixtures" / "hostile" / "server.py")]
TOKEN = "tok-s3cret-html-123"  # the hostile server echoes API_TOKEN into serverInfo, errors and stderr


def hostile_report(tmp_path: Path, case: str) -> tuple[str, dict[str, Any]]:
    """The html report of a run against a hostile fixture server (`fixtures/hostile/server.py`)."""
    page = tmp_path / f"{case}.html"
    proc = cli("--command", " ".join([*HOSTILE_SERVER, "--case", case]), "--tool-name", "work", "-q",
               "-e", f"API_TOKEN={TOKEN}", "--reporter", f"html={page}", timeout=180)
    assert proc.returncode in (1, 3), proc.stdout + proc.stderr
    text = page.read_text(encoding="utf-8")
    return text, embedded(text)


@pytest.mark.parametrize("case", ["markup", "invalid-utf8"])
def test_a_hostile_servers_strings_and_bytes_stay_data(tmp_path: Path, case: str) -> None:
    text, data = hostile_report(tmp_path, case)
    assert TOKEN not in text and text.count("<script") == 2 and not RAW_CONTROL.search(text)
    start = text.index(bench.DATA_OPEN)
    assert not re.search(r"[<>&]", text[start + len(bench.DATA_OPEN):text.index("</script>", start)])
    frames = data["runs"][0]["timeline"]["frames"]
    if case == "markup":  # rich markup, ANSI, OSC 8, bidi, XML-breaking text: the frame's bytes as sent
        shown = next(f["text"] for f in frames if "[bold red]" in f["text"])
        assert "\\u001b[31m" in shown and "\\u202eevil" in shown and "\x1b" not in shown
    else:  # bytes that are not UTF-8, shown as \xNN
        bad = [f for f in frames if not f["utf8"]]
        assert bad and "\\xff\\xfe" in bad[0]["text"]


def test_the_synthetic_benchmark_run_is_what_the_docs_say() -> None:
    result = bench.synthetic()
    data = run_data("", result)
    assert len(data["timeline"]["frames"]) == 500
    assert sum(len(a["checks"]) for a in data["areas"]) == 100
    assert len(document([data]).encode()) < 1_000_000  # "the file small": docs/benchmarks.md has the figure


@pytest.mark.parametrize("asset", ["html_report.js", "html_report.css"])
def test_the_assets_use_no_markup_sink_and_fetch_nothing(asset: str) -> None:
    text = (ROOT / "src" / "tasks_conformance" / "reporters" / asset).read_text()
    for sink in ("innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "Function(",
                 "url(", "@import", "fetch(", "XMLHttpRequest", "import("):
        assert sink not in text, sink
    # The one address is SVG's namespace name (never fetched); links are made only to https: spec pages.
    assert set(re.findall(r"https?://[^\"' ]*", text)) <= {"http://www.w3.org/2000/svg", "https://"}


def test_a_failing_run_leads_with_its_failures_with_rule_and_expected_actual_never_a_deferral() -> None:
    """Issue 35: the page led with what could not run (a deferral, once): `lead` names the failed
    checks in page order, each with expected/actual as every report words them; never a deferral."""
    data = run_data("", failed_run())
    assert data["lead"] == ["tasks-result-type-discipline", "tasks-mcp-name-routing"]
    checks = {c["id"]: c for a in data["areas"] for c in a["checks"]}
    assert checks["tasks-result-type-discipline"]["expectedActual"][0] == ["expected", '"task"']
    assert checks["tasks-result-type-discipline"]["expectedActual"][1][0] == "actual"
    assert checks["tasks-mcp-name-routing"]["expectedActual"] == []  # it set neither
    assert "expectedActual" not in checks["tasks-wire-resolvable"]
    deferred = run_data("", deferred_run())
    assert deferred["lead"] == [OWNER]
    (deferral,) = [c for a in deferred["areas"] for c in a["checks"] if c["id"] == DEFERRING]
    assert deferral["bucket"] == "deferred" and deferral["deferredTo"] == OWNER
    assert run_data("", passed_run())["lead"] == [] and run_data("", no_tool_run())["lead"] == []


def test_every_area_is_titled_in_words() -> None:
    """Issue 35: area headings were module names (`task_object`). Every area of both subjects' checks
    has a title in core/areas.py's table, and every area there is some check's."""
    from tasks_conformance.client.checks import CLIENT_CHECKS
    from tasks_conformance.core.areas import AREAS, area_title
    from tasks_conformance.server.checks import CHECKS

    areas = {c.area for c in CHECKS.values()} | {c.area for c in CLIENT_CHECKS.values()}
    assert areas == set(AREAS), areas ^ set(AREAS)
    assert all(" " in title or title[0].isupper() for title in AREAS.values())
    assert area_title("task_object") == "The task object" and area_title("made_up") == "made up"
    result = failed_run()
    result.checks[1].area = "task_object"
    data = run_data("", result)
    assert {a["area"]: a["title"] for a in data["areas"]}["task_object"] == "The task object"


def test_a_long_pause_is_a_break_of_the_time_axis() -> None:
    """Issue 35: frames bunched in the first 6 % of the axis beside one long wait. The timeline names
    the pauses longer than a tenth of the exchange (and 250 ms) as breaks, which the page draws narrow."""
    burst = [i * 0.0015 for i in range(40)]  # 40 frames in 60 ms, then a wait of ~10 s
    tl = timeline(paced_wire({"burst": burst, "late": [10.0, 10.002]}))
    assert tl["breaks"] == [{"from": round(burst[-1] * 1000, 3), "to": 10000.0}]
    # Polls every 100 ms for 2 s: no pause is long enough to leave out.
    assert timeline(paced_wire({"poll": [i * 0.1 for i in range(21)]}))["breaks"] == []
    # Two waits: both left out, in time order.
    two = timeline(paced_wire({"a": [0.0, 0.01, 3.0, 3.01, 6.0], "b": [6.2]}))
    assert [(b["from"], b["to"]) for b in two["breaks"]] == [(10.0, 3000.0), (3010.0, 6000.0)]
    # A pause under 250 ms never is, even beyond a tenth of a short exchange.
    short = timeline(paced_wire({"a": [0.0, 0.2, 1.0]}))
    assert [(b["from"], b["to"]) for b in short["breaks"]] == [(200.0, 1000.0)]
    assert timeline(None)["breaks"] == [] and timeline(paced_wire({"one": [1.0]}))["breaks"] == []


def test_the_page_knows_which_side_it_shows() -> None:
    """Client mode's legend speaks of what the client sent (issue 35): the header says the subject."""
    from tasks_conformance.core.profiles import CLIENT_PROFILES

    result = passed_run()
    assert run_data("", result)["header"]["subject"] == "server"
    result.profile = next(iter(CLIENT_PROFILES.values())).id
    assert run_data("", result)["header"]["subject"] == "client"


def test_a_client_runs_page_says_what_the_client_did_in_each_scenario() -> None:
    """Issue 31: every report has the client's own record per scenario; the page too, with the
    scenario that did not end cleanly marked (the page opens the record then)."""
    result = passed_run()
    result.scenarios = client_records()
    clean, stopped = run_data("", result)["scenarios"]
    assert (clean["scenario"], clean["ok"], clean["status"]) == ("tasks-client-lifecycle", True, "exit 0")
    assert clean["lines"] == ['outcome line: {"status":"completed"}']
    assert (stopped["ok"], stopped["status"]) == (False, "stopped at --timeout 30000 ms")
    assert stopped["lines"][0] == "outcome line: no outcome line:"
    assert [line.removeprefix("stderr: ") for line in stopped["lines"][1:]] == EVIL[:4]
    page = _page(result)
    assert "</script><script>" not in page.split('id="report-data">', 1)[1].split("</script>", 1)[0]
    assert run_data("", passed_run())["scenarios"] == []  # a server run has no client record
