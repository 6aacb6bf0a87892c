"""The HTML report's size and render time, for a full demo run and for a synthetic 100 checks x
500 frames (docs/benchmarks.md quotes both).

Size: the bytes of the file `--reporter html=PATH` writes. Render time: the page's own figure,
`performance.now()` when its script has drawn everything (header, every check, every frame mark),
in headless Chromium (Debian's `chromium`, or TASKS_CONFORMANCE_CHROMIUM), the median of --repeat
loads. tests/e2e/cli/test_html_report_browser.py uses `synthetic()` too.

    python benchmarks/html_report.py [--repeat 5] [--out DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from tasks_conformance.core.causes import Cause, CauseKind
from tasks_conformance.core.redact import Redactor
from tasks_conformance.core.result import CheckResult, Discovery, RunResult, decide_outcome
from tasks_conformance.core.wirelog import FrameTag, Purpose, WireLog, in_lane
from tasks_conformance.core.wires import Wire

DATA_OPEN = '<script type="application/json" id="report-data">'
STATUSES = ("working", "working", "input_required", "working", "completed")


def _frame_pair(wire: WireLog, lane: str, i: int, t: float, task: str) -> list[int]:
    """One request and its answer on `lane` at time `t` (seconds): a poll of `task` every other time."""
    poll = i % 2 == 0
    method = "tasks/get" if poll else "tools/call"
    tag = FrameTag.polling(i // 2 + 1) if poll else FrameTag(Purpose.PROBE)
    with in_lane(lane):
        req = wire.record("out", "stdio", json.dumps(
            {"jsonrpc": "2.0", "id": i, "method": method, "params": {"taskId": task}}).encode(), tag=tag)
        status = STATUSES[min(i // 4, len(STATUSES) - 1)]
        res = wire.record("in", "stdio", json.dumps({"jsonrpc": "2.0", "id": i, "result": {
            "taskId": task, "status": status, "pollIntervalMs": 100, "ttlMs": 60000,
            "createdAt": "2026-08-01T00:00:00Z", "lastUpdatedAt": "2026-08-01T00:00:00Z"}}).encode())
    req.time, res.time = t, t + 0.004
    return [req.seq, res.seq]


def synthetic(checks: int = 100, frames: int = 500, lanes: int = 25) -> RunResult:
    """A run of `checks` checks over `frames` frames in `lanes` lanes: a third of the checks fail
    (with expected and actual), some could not run, some warn; each rests on a few frames."""
    wire = WireLog(Redactor())
    seqs: list[int] = []
    for i in range(frames // 2):
        lane = f"probe-{i % lanes:02d}"
        seqs += _frame_pair(wire, lane, i // lanes, 0.05 + i * 0.012, f"task-{i % lanes}")
    results = []
    for n in range(checks):
        status, skip, cause = "passed", None, None
        if n % 3 == 0:
            status = "failed"
        elif n % 17 == 0:
            status, skip = "skipped", "could-not-run"
            cause = Cause(f"the probe of check {n} had no tool", CauseKind.SETTING, "pass --tool-name",
                          ("--tool-name",))
        evidence = seqs[(n * 5) % len(seqs):][:5]
        results.append(CheckResult(
            id=f"tasks-synthetic-{n:03d}", category="tasks", area=f"area-{n % 8}", title=f"Synthetic check {n}",
            description="A check of the benchmark's synthetic run", requirements=["S-EXT-MUST-01"],
            status=status, skipReason=skip, cause=cause,  # type: ignore[arg-type]
            message=f"check {n}: " + ("the task's status went backwards" if status == "failed" else "as the spec says"),
            evidence=evidence,
            details=({"expected": {"status": "completed"}, "actual": {"status": "working"}}
                     if status == "failed" else {}),
        ))
    return RunResult(outcome=decide_outcome(results), target="python synthetic_server.py", durationMs=6100,
                     discovery=Discovery(protocolVersion="2026-07-28", wire=Wire.EXTENSION), checks=results,
                     toolVersion="bench", startedAt="2026-12-01T00:00:00", wire=wire)


def embedded(page: str) -> dict[str, Any]:
    """The run data a report page embeds (its JSON data element)."""
    start = page.index(DATA_OPEN) + len(DATA_OPEN)
    data: dict[str, Any] = json.loads(page[start:page.index("</script>", start)])
    return data


def chromium() -> str | None:
    """Debian's chromium (or the one TASKS_CONFORMANCE_CHROMIUM names); None when there is none."""
    named = os.environ.get("TASKS_CONFORMANCE_CHROMIUM")
    if named:
        return named if Path(named).exists() else None
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    return None


def drawn_ms(path: Path, repeat: int) -> float:
    from playwright.sync_api import sync_playwright

    exe = chromium()
    if exe is None:
        raise SystemExit("no Chromium found: install Debian's chromium or set TASKS_CONFORMANCE_CHROMIUM")
    times = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=exe, args=["--no-sandbox"])
        try:
            for _ in range(repeat):
                page = browser.new_page(viewport={"width": 1400, "height": 900})
                page.goto(path.resolve().as_uri())
                page.wait_for_selector("body[data-ready='1']", timeout=30_000)
                times.append(float(page.get_attribute("body", "data-drawn-ms") or "nan"))
                page.close()
        finally:
            browser.close()
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--out", type=Path, default=None, help="keep the reports here (default: a temporary directory)")
    args = parser.parse_args()
    out = args.out or Path(tempfile.mkdtemp(prefix="html-report-"))
    out.mkdir(parents=True, exist_ok=True)
    demo = out / "demo.html"
    proc = subprocess.run([sys.executable, "-m", "tasks_conformance", "demo", "-q", "--reporter", f"html={demo}"],
                          capture_output=True, text=True, timeout=300)
    if proc.returncode != 0:
        raise SystemExit(f"the demo run failed ({proc.returncode}): {proc.stdout[-500:]} {proc.stderr[-500:]}")
    from tasks_conformance.reporters.html import document, run_data

    big = out / "synthetic-100x500.html"
    big.write_text(document([run_data("", synthetic())]), encoding="utf-8")
    for name, path in (("demo (full run)", demo), ("synthetic", big)):
        data = embedded(path.read_text(encoding="utf-8"))
        frames = sum(len(r["timeline"]["frames"]) for r in data["runs"])
        checks = sum(len(a["checks"]) for r in data["runs"] for a in r["areas"])
        print(f"{name}: {checks} checks, {frames} frames: {path.stat().st_size / 1024:.0f} KiB, "
              f"drawn in {drawn_ms(path, args.repeat):.0f} ms (median of {args.repeat})")


if __name__ == "__main__":
    main()
