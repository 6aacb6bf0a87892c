"""Peak memory of tasks-conformance against hostile servers, relative to the reference server.

    python benchmarks/hostile_memory.py [--repeat N] [--json]

Each scenario runs the tool in its own process, which records its own peak RSS
(getrusage RUSAGE_SELF, so the server it spawns is not counted) when it exits. The flood
(100 000 notifications) and huge-message (50 MB line / body / SSE event) cases are compared
with a baseline run against the bundled reference server over the same transport, in the same
script run. Prints a table; asserts nothing (timings are for information only).
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import shlex
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIXTURE = ROOT / "fixtures" / "hostile" / "server.py"
REFERENCE = [sys.executable, "-m", "tasks_conformance.server.reference"]

# Runs the CLI in this interpreter and writes its own peak RSS (KiB on Linux) at exit.
_WRAPPER = """
import atexit, resource, sys
out = sys.argv.pop(1)
def _peak():
    with open(out, "w") as fh:
        fh.write(str(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss))
atexit.register(_peak)
sys.argv[0] = "tasks-conformance"
from tasks_conformance.entry.cli import main
main()
"""


@dataclass(frozen=True)
class Scenario:
    name: str
    transport: str  # stdio | http
    server: list[str]
    tool_name: str
    baseline: bool = False


def scenarios() -> list[Scenario]:
    def hostile(case: str) -> list[str]:
        return [sys.executable, str(FIXTURE), "--case", case]

    return [
        Scenario("reference (baseline)", "stdio", [*REFERENCE], "slow_compute", baseline=True),
        Scenario("flood: 100 000 notifications", "stdio", hostile("flood"), "work"),
        Scenario("huge: one 50 MB line", "stdio", hostile("huge"), "work"),
        Scenario("reference (baseline)", "http", [*REFERENCE], "slow_compute", baseline=True),
        Scenario("flood: 100 000 SSE events", "http", hostile("flood"), "work"),
        Scenario("huge: one 50 MB JSON body", "http", hostile("huge"), "work"),
        Scenario("huge: one 50 MB SSE event", "http", hostile("huge-sse"), "work"),
    ]


class HttpServer:
    def __init__(self, argv: list[str]) -> None:
        self.proc = subprocess.Popen(
            [*argv, "--transport", "http", "--port", "0"], stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL, text=True, start_new_session=True,
        )
        lines: queue.Queue[str] = queue.Queue()
        def pump() -> None:
            for x in self.proc.stdout or ():
                lines.put(x)

        threading.Thread(target=pump, daemon=True).start()
        line = lines.get(timeout=30)
        if not line.startswith("READY "):
            self.stop()
            raise RuntimeError(f"server did not start: {line!r}")
        self.url = line.split()[1]

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def measure(s: Scenario) -> tuple[int, float, float]:
    """(exit code, seconds, peak RSS in MiB) of one tool run."""
    server = HttpServer(s.server) if s.transport == "http" else None
    target = ["--url", server.url] if server else ["--command", shlex.join(s.server)]
    with tempfile.TemporaryDirectory() as tmp:
        peak_file = Path(tmp) / "peak"
        argv = [
            sys.executable, "-c", _WRAPPER, str(peak_file), *target, "--tool-name", s.tool_name,
            "--timeout", "30000", "--poll-timeout", "10000", "--format", "json",
        ]
        started = time.monotonic()
        try:
            proc = subprocess.run(
                argv, cwd=ROOT, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                timeout=300, env={**os.environ, "NO_COLOR": "1"},
            )
        finally:
            if server is not None:
                server.stop()
        elapsed = time.monotonic() - started
        kib = int(peak_file.read_text()) if peak_file.exists() else 0
    if sys.platform == "darwin":
        kib //= 1024  # ru_maxrss is in bytes there
    return proc.returncode, elapsed, kib / 1024


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeat", type=int, default=1, help="runs per scenario; the highest peak is kept")
    p.add_argument("--json", action="store_true", help="print the rows as JSON instead of a table")
    opts = p.parse_args()
    rows = []
    baseline: dict[str, float] = {}
    for s in scenarios():
        results = [measure(s) for _ in range(max(opts.repeat, 1))]
        code, elapsed, peak = max(results, key=lambda r: r[2])
        if s.baseline:
            baseline[s.transport] = peak
        base = baseline.get(s.transport)
        ratio = peak / base if base else float("nan")
        rows.append({"scenario": s.name, "transport": s.transport, "exit": code, "seconds": round(elapsed, 2),
                     "peakRssMiB": round(peak, 1), "ratio": round(ratio, 2)})
    if opts.json:
        print(json.dumps(rows, indent=2))
        return 0
    print(f"{'scenario':<32} {'transport':<9} {'exit':>4} {'seconds':>8} {'peak RSS MiB':>13} {'x baseline':>11}")
    for r in rows:
        print(f"{r['scenario']:<32} {r['transport']:<9} {r['exit']:>4} {r['seconds']:>8.2f} "
              f"{r['peakRssMiB']:>13.1f} {r['ratio']:>11.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
