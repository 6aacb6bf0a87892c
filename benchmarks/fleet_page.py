"""The fleet page (the `html` report of a suite or a merge) with 500 targets: its size, how long
`merge` takes to write it, and its render time in headless Chromium (docs/benchmarks.md quotes them).

Two fleets of --targets targets:

* merged: every target a copy of a real run of the reference server (`tasks-conformance demo
  --era both`, its json report: the two eras alternate), with a few checks failed per target
  (a deterministic pattern: most targets pass, some break one rule, a few break many), written as
  one suite report and merged with `tasks-conformance merge REPORT --reporter html=PATH`, as CI
  would; a merge has no timelines (a json report holds no wire log).
* suite: `synthetic_fleet()` (also what tests/e2e/cli/test_fleet_page_browser.py draws), each target a run
  of 48 checks with a wire log of 200 frames, as a suite run's page has them: the timelines are
  embedded up to fleet_html.TIMELINE_BUDGET.

Render time: the page's own figure, `performance.now()` when its script has drawn the header,
filters, rule counts and every cell of the matrix (body[data-drawn-ms]), the median of --repeat
loads; and the time to draw one target's section (a click on a failed cell, measured in the page).

    python benchmarks/fleet_page.py [--targets 500] [--repeat 5] [--out DIR]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from tasks_conformance.core.multirun_result import Combined, NamedRun
from tasks_conformance.core.result import CheckResult, Discovery, RunResult, decide_outcome
from tasks_conformance.core.wires import Wire

sys.path.insert(0, str(Path(__file__).resolve().parent))
from html_report import chromium, synthetic  # the html report's benchmark, beside this one

AREAS = ("discovery", "declaration", "creation", "task_object", "status", "results", "routing", "cancel",
         "input", "base")


def broken_checks(i: int, n: int) -> list[int]:
    """Which of `n` checks target `i` fails: none for most, one for some, many for a few."""
    if i % 7 == 0:
        return [(i // 7) % n]
    if i % 31 == 0:
        return [j for j in range(n) if (i + j) % 4 == 0]
    return []


def _synthetic_checks(i: int, n: int = 48) -> list[CheckResult]:
    broken = set(broken_checks(i, n))
    out = []
    for j in range(n):
        skip = "not-applicable" if j % 11 == 5 else ("could-not-run" if i % 53 == 1 and j % 9 == 0 else None)
        status = "failed" if j in broken else ("skipped" if skip else "passed")
        out.append(CheckResult(
            id=f"tasks-synthetic-{j:02d}", category="tasks", area=AREAS[j % len(AREAS)], title=f"Synthetic check {j}",
            description="A check of the fleet benchmark", requirements=[f"S-EXT-MUST-{j % 30 + 1:02d}"],
            status=status, skipReason=skip if status == "skipped" else None,  # type: ignore[arg-type]
            message=f"check {j}: " + ("the task's status went backwards" if status == "failed" else "as the spec says"),
            details={"expected": "completed", "actual": "working"} if status == "failed" else {},
        ))
    return out


def synthetic_fleet(targets: int = 500, frames: int = 200) -> Combined:
    """`targets` runs of 48 checks in 10 areas, each with a wire log of `frames` frames (the html
    benchmark's synthetic run), eras alternating, a few checks failed (`broken_checks`)."""
    runs = []
    for i in range(targets):
        wire = synthetic(checks=1, frames=frames, lanes=10).wire
        checks = _synthetic_checks(i)
        era, kind = ("2026-07-28", Wire.EXTENSION) if i % 2 else ("2025-11-25", Wire.LEGACY)
        result = RunResult(outcome=decide_outcome(checks), target=f"python server_{i:03d}.py", durationMs=900 + i,
                           discovery=Discovery(protocolVersion=era, wire=kind), checks=checks, toolVersion="bench",
                           startedAt="2026-12-01T00:00:00", wire=wire)
        runs.append(NamedRun(name=f"server-{i:03d}", era=None, target=f"server-{i:03d}", result=result, wire=wire))
    return Combined(kind="suite", runs=tuple(runs))


def demo_documents(out: Path) -> list[dict[str, Any]]:
    """The json documents of a real `demo --era both` run: one per era."""
    report = out / "demo.json"
    proc = subprocess.run([sys.executable, "-m", "tasks_conformance", "demo", "--era", "both", "-q",
                           "--reporter", f"json={report}"], capture_output=True, text=True, timeout=600)
    if proc.returncode != 0:
        raise SystemExit(f"the demo run failed ({proc.returncode}): {proc.stdout[-500:]} {proc.stderr[-500:]}")
    return list(json.loads(report.read_text())["eras"].values())


def merged_input(docs: list[dict[str, Any]], targets: int) -> dict[str, Any]:
    """A suite report of `targets` targets, each a demo run with `broken_checks` failed."""
    from tasks_conformance.core.result_doc import reported
    from tasks_conformance.reporters.combined import document

    runs = []
    for i in range(targets):
        base = reported(docs[i % len(docs)])
        checks = list(base.checks)
        judged = [k for k, c in enumerate(checks) if c.status == "passed"]
        for k in broken_checks(i, len(judged)):
            c = checks[judged[k]]
            checks[judged[k]] = CheckResult(**{**c.__dict__, "status": "failed", "message": "synthetic failure",
                                               "broken": c.requirements[:1]})
        result = RunResult(outcome=decide_outcome(checks), target=base.target, durationMs=base.durationMs,
                           discovery=base.discovery, checks=checks, toolVersion=base.toolVersion,
                           profile=base.profile, startedAt=base.startedAt)
        runs.append(NamedRun(name=f"server-{i:03d}", era=None, target=f"server-{i:03d}", result=result, wire=None))
    return document(Combined(kind="suite", runs=tuple(runs)))


def measure(path: Path, repeat: int) -> tuple[float, float]:
    """(drawn ms, median of `repeat` loads; ms to draw one target's section, median)."""
    from playwright.sync_api import sync_playwright

    exe = chromium()
    if exe is None:
        raise SystemExit("no Chromium found: install Debian's chromium or set TASKS_CONFORMANCE_CHROMIUM")
    drawn, opened = [], []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=exe, args=["--no-sandbox", "--headless", "--disable-gpu",
                                                                "--disable-background-networking"])
        try:
            for _ in range(repeat):
                page = browser.new_page(viewport={"width": 1400, "height": 900})
                page.goto(path.resolve().as_uri())
                page.wait_for_selector("body[data-ready='1']", timeout=120_000)
                drawn.append(float(page.get_attribute("body", "data-drawn-ms") or "nan"))
                opened.append(float(page.evaluate("""() => {
                    const cell = document.querySelector('td.v-F');
                    const t = performance.now(); cell.click(); return performance.now() - t; }""")))
                page.close()
        finally:
            browser.close()
    return statistics.median(drawn), statistics.median(opened)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--targets", type=int, default=500)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--out", type=Path, default=None, help="keep the reports here (default: a temporary directory)")
    args = parser.parse_args()
    out = args.out or Path(tempfile.mkdtemp(prefix="fleet-page-"))
    out.mkdir(parents=True, exist_ok=True)

    report = out / "fleet.json"
    report.write_text(json.dumps(merged_input(demo_documents(out), args.targets)), encoding="utf-8")
    merged = out / "merged.html"
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "tasks_conformance", "merge", str(report), "-q",
                           "--reporter", f"html={merged}"], capture_output=True, text=True, timeout=600)
    took = time.perf_counter() - start
    if proc.returncode not in (0, 1, 3):
        raise SystemExit(f"merge failed ({proc.returncode}): {proc.stderr[-500:]}")

    from tasks_conformance.reporters.fleet_html import fleet_document

    suite = out / "suite.html"
    fleet = synthetic_fleet(args.targets)
    suite.write_text(fleet_document(fleet), encoding="utf-8")
    for name, path, extra in (
        (f"merged: {args.targets} demo runs, no timelines", merged,
         f"; merge read {report.stat().st_size / 2**20:.1f} MiB of json and wrote it in {took:.1f} s"),
        (f"suite: {args.targets} synthetic runs x 48 checks, 200 frames each", suite, ""),
    ):
        drawn, opened = measure(path, args.repeat)
        print(f"{name}: {path.stat().st_size / 2**20:.1f} MiB, drawn in {drawn:.0f} ms, a target's section in "
              f"{opened:.0f} ms (medians of {args.repeat}){extra}")


if __name__ == "__main__":
    main()
