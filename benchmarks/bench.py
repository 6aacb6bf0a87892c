"""Wall-clock budgets of issue 2 and 3, measured as medians over repeated runs, each with the
ratio to a baseline (`python -c pass`) taken in the same run. Not a test: run it by hand.

    python benchmarks/bench.py [--repeat 7]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PY = sys.executable
REF = f"{PY} -m tasks_conformance.server.reference --transport stdio"
BROKEN = f"{PY} {ROOT / 'fixtures' / 'broken_server.py'}"
TC = [PY, "-m", "tasks_conformance"]

CASES: list[tuple[str, list[str], str]] = [
    ("baseline: python -c pass", [PY, "-c", "pass"], "-"),
    ("tasks-conformance --help", [*TC, "--help"], "0.3 s"),
    ("tasks-conformance --version", [*TC, "--version"], "-"),
    ("tasks-conformance --list-checks", [*TC, "--list-checks"], "-"),
    (
        "wire-resolvable over stdio (reference)",
        [*TC, "--command", REF, "--check-id", "tasks-wire-resolvable", "--format", "json"],
        "0.6 s",
    ),
    (
        "full suite over stdio (reference, extension)",
        [*TC, "--command", REF, "--tool-name", "slow_compute", "--format", "json"],
        "0.8 s",
    ),
    (
        "full suite over stdio (reference, legacy)",
        [*TC, "--command", REF, "--protocol-version", "2025-11-25", "--format", "json"],
        "-",
    ),
    (
        "pollIntervalMs 15000 with --poll-timeout 1000",
        [*TC, "--command", f"{BROKEN} --break slow-poll-interval --transport stdio", "--tool-name", "slow_compute",
         "--poll-timeout", "1000", "--format", "json"],
        "2.5 s",
    ),
]


def timed(argv: list[str]) -> tuple[float, int]:
    t0 = time.perf_counter()
    proc = subprocess.run(argv, capture_output=True, timeout=120, stdin=subprocess.DEVNULL)
    return time.perf_counter() - t0, proc.returncode


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=7)
    opts = ap.parse_args()
    rows = []
    base = None
    for name, argv, budget in CASES:
        times = []
        code = 0
        timed(argv)  # warm the page cache and .pyc files
        for _ in range(opts.repeat):
            t, code = timed(argv)
            times.append(t)
        med = statistics.median(times)
        if base is None:
            base = med
        rows.append((name, med, max(times), med / base, budget, code))
    print(f"{'case':<48} {'median s':>9} {'max s':>7} {'x base':>7} {'budget':>7} {'exit':>5}")
    for name, med, mx, ratio, budget, code in rows:
        print(f"{name:<48} {med:9.3f} {mx:7.3f} {ratio:7.1f} {budget:>7} {code:5d}")


if __name__ == "__main__":
    main()
