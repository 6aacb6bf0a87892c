"""Start-up time of `--help` and `--version`: medians of wall-clock and CPU time (user + system
of the child, less sensitive to a loaded machine), with `python -c pass` as the baseline taken in
the same run. Not a test: run it by hand.

    python benchmarks/help_time.py [--repeat 30] [--src OTHER/src ...]

Each `--src` is a source tree to compare (e.g. a `git worktree` of the previous commit); the
trees are timed in turns, run after run, so that a change in the machine's load hits them alike.
Without `--src`, the installed package is timed.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import sys
import tempfile
import time

from waiting import run_waited

PY = sys.executable
CASES = {
    "python -c pass": [PY, "-c", "pass"],
    "--help": [PY, "-m", "tasks_conformance", "--help"],
    "--version": [PY, "-m", "tasks_conformance", "--version"],
}


# Byte code cached where it does not touch the trees (and written even under PYTHONDONTWRITEBYTECODE,
# which would otherwise time the compilation of every module): what an installed package runs.
PYCACHE = tempfile.mkdtemp(prefix="help-time-pycache-")


def timed(argv: list[str], src: str | None) -> tuple[float, float]:
    """Wall-clock and CPU seconds of one run."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = os.path.join(PYCACHE, str(abs(hash(src))))
    if src is not None:
        env["PYTHONPATH"] = src
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    if run_waited(argv, env=env, limit_s=60) != 0:
        raise SystemExit(f"{argv} failed")
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=30)
    ap.add_argument("--src", action="append", default=[], help="a source tree to time (repeatable)")
    opts = ap.parse_args()
    trees: list[str | None] = list(opts.src) or [None]
    samples: dict[tuple[str, str | None], list[tuple[float, float]]] = {}
    for name, argv in CASES.items():
        for tree in trees:
            timed(argv, tree)  # warm the page cache and the .pyc files
        for _ in range(opts.repeat):
            for tree in trees:
                samples.setdefault((name, tree), []).append(timed(argv, tree))
    print(f"{'case':<16} {'tree':<40} {'wall ms':>8} {'cpu ms':>8}")
    for (name, tree), runs in samples.items():
        wall = statistics.median(w for w, _ in runs) * 1000
        cpu = statistics.median(c for _, c in runs) * 1000
        print(f"{name:<16} {tree or '(installed)':<40} {wall:8.1f} {cpu:8.1f}")


if __name__ == "__main__":
    main()
