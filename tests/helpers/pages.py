"""The html report and the fleet page read back: their benchmarks' builders, a hostile wire
log, paced and client records, and the data a page embeds."""

from __future__ import annotations

import io
import json
from typing import Any

from helpers.made_runs import (
    SCRIPT,
)
from helpers.paths import ROOT, load_module
from tasks_conformance.core.multirun_result import Combined, NamedRun
from tasks_conformance.core.redact import Redactor
from tasks_conformance.core.result import RunResult
from tasks_conformance.core.scenario_record import ScenarioRecord
from tasks_conformance.core.wirelog import FrameTag, WireLog, in_lane
from tasks_conformance.reporters.combined import render_combined

bench = load_module(ROOT / "benchmarks" / "html_report.py", "html_bench")
# Markup and script a server could send, in every place a page could be made to run it.
EVIL = [SCRIPT, "</script><script>window.pwned=1</script>", "<img src=x onerror=\"window.pwned=1\">",
        "<!-- <script>", "]]>", "&lt;b&gt; &amp;", "\u2028\u2029", "lone\ud800surrogate", "\x00\x1b[31m\u202e"]
SECRET = "s3cr3t-html-token"


def hostile_wire() -> WireLog:
    """A wire log whose frames carry every EVIL string, a secret, and bytes that are not UTF-8."""
    wire = WireLog(Redactor([SECRET]))
    with in_lane("</script><b>lane</b>"):
        wire.record("out", "stdio", b'{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"taskId":"t"}}',
                    tag=FrameTag.polling(1))
        wire.record("in", "stdio", json.dumps({"jsonrpc": "2.0", "id": 1, "result": {
            "taskId": " ".join(EVIL), "status": "<script>x</script>", "pollIntervalMs": 50,
            "note": f"Bearer {SECRET}"}}).encode("utf-8", "surrogatepass"))
        wire.record("in", "stdio", b"\xff\xfe not utf-8 <script>\x00")
    for i, frame in enumerate(wire):
        frame.time = 0.1 * (i + 1)  # apart, as frames a few ms apart are (each mark can be clicked)
    return wire


def paced_wire(times: dict[str, list[float]]) -> WireLog:
    """A wire log with one frame (out, then in, alternately) at each of these times (s) on each lane."""
    wire = WireLog(Redactor())
    stamped = []
    for lane, ts in times.items():
        for i, t in enumerate(ts):
            with in_lane(lane):
                frame = wire.record("out" if i % 2 == 0 else "in", "stdio", b'{"jsonrpc":"2.0","id":1,"result":{}}')
            stamped.append((frame, t))
    for frame, t in stamped:
        frame.time = t
    return wire


def client_records() -> tuple[ScenarioRecord, ...]:
    """One scenario whose client ended cleanly, one it had to stop at --timeout (its stderr carrying
    every EVIL string)."""
    clean = ScenarioRecord("tasks-client-lifecycle", "extension", "http", True, 0, False, 420, 30_000, True, 6, 1,
                           outcome_line='{"status":"completed"}')
    stopped = ScenarioRecord("tasks-client-input", "legacy", "stdio", True, None, True, 30_000, 30_000, True, 3, 1,
                             outcome_problem="no outcome line", stderr_tail=tuple(EVIL[:4]))
    return clean, stopped


FLEET_OPEN = '<script type="application/json" id="fleet-data">'


def fleet_bench() -> Any:
    return load_module(ROOT / "benchmarks" / "fleet_page.py", "fleet_bench")


def page_of(combined: Combined) -> str:
    out = io.StringIO()
    render_combined("html", combined, out)
    return out.getvalue()


def fleet_of(page: str) -> dict[str, Any]:
    start = page.index(FLEET_OPEN) + len(FLEET_OPEN)
    data: dict[str, Any] = json.loads(page[start:page.index("</script>", start)])
    return data


def named(name: str, result: RunResult, era: str | None = None, target: str | None = None) -> NamedRun:
    return NamedRun(name=name, era=era, target=target or name, result=result, wire=result.wire)
