"""The critical path of a full stdio run, and what the run costs beyond the task's own time.

The reference server (a plain Python server) runs its task tool for 300 ms; the full default
suite runs against it over stdio. Printed:

* the chain of probes that decided the run's length (the trace of probes/engine/schedule.py): for each
  step, when it was ready (what it waited for had ended), when it started (later only for a brief
  probe waiting for its turn), when it ended, from the start of the probe schedule, and the probe
  whose end released it; then the last six probes to end;
* the wall time of whole runs minus the tool's 300 ms, median of N, with `python -c pass` as the
  baseline of the same run (so a busier machine shifts both), for each `--src` tree given, timed in
  turns (e.g. a `git worktree` of the previous commit against this one).

Not a test: run it by hand.

    python benchmarks/critical_path.py [--repeat 9] [--src OTHER/src ...]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from waiting import run_waited

PY = sys.executable
TOOL_MS = 300
SRC = str(Path(__file__).resolve().parent.parent / "src")

# One run in a child process, printing its schedule's trace as JSON.
TRACE = f"""
import anyio, json, sys
from tasks_conformance.server.runner import execute
from tasks_conformance.settings import RunOptions
from tasks_conformance.settings.config import build_run_config
server = f"{{sys.executable}} -m tasks_conformance.server.reference --task-duration-ms {TOOL_MS}"
config = build_run_config(RunOptions(command=server, tool_name="slow_compute"))
ex = anyio.run(execute, config)
path = ex.schedule.critical_path()
last = sorted(ex.schedule.timings.values(), key=lambda t: t.ended_s)[-6:]
row = lambda t: [t.name, t.ready_s, t.started_s, t.ended_s, t.released_by]
print(json.dumps({{"outcome": ex.result.outcome, "durationMs": ex.result.durationMs,
                   "path": [row(t) for t in path], "last": [row(t) for t in last]}}))
"""


def env_for(src: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = src
    return env


def server_module(src: str) -> str:
    """Where the tree keeps the reference server (before issue 21: tasks_conformance.reference)."""
    moved = Path(src, "tasks_conformance", "server", "reference", "__init__.py").is_file()
    return "tasks_conformance.server.reference" if moved else "tasks_conformance.reference"


def wall_s(argv: list[str], src: str) -> float:
    t0 = time.perf_counter()
    run_waited(argv, env=env_for(src))
    return time.perf_counter() - t0


def run_argv(src: str) -> list[str]:
    server = f"{PY} -m {server_module(src)} --task-duration-ms {TOOL_MS}"
    return [PY, "-m", "tasks_conformance", "--command", server, "--tool-name", "slow_compute", "--format", "json"]


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=9)
    parser.add_argument("--src", action="append", default=[], help="a source tree to time (repeatable)")
    args = parser.parse_args(argv)
    trees = args.src or [SRC]

    out = subprocess.run([PY, "-c", TRACE], env=env_for(SRC), capture_output=True, text=True, timeout=120,
                         check=True)
    trace = json.loads(out.stdout.strip().splitlines()[-1])
    print(f"critical path of one run ({trace['outcome']}, {trace['durationMs']} ms; tool {TOOL_MS} ms), "
          "seconds from the schedule's start:")
    print(f"  {'probe':<28} {'ready':>7} {'started':>8} {'ended':>7}  released by")
    for name, ready, started, ended, released in trace["path"]:
        print(f"  {name:<28} {ready:7.3f} {started:8.3f} {ended:7.3f}  {released or '-'}")
    print("the last probes to end:")
    for name, ready, started, ended, released in trace["last"]:
        print(f"  {name:<28} {ready:7.3f} {started:8.3f} {ended:7.3f}  {released or '-'}")

    times: dict[str, list[float]] = {"python -c pass": [], **{t: [] for t in trees}}
    for _ in range(args.repeat):  # in turns, so a change in load hits every tree alike
        times["python -c pass"].append(wall_s([PY, "-c", "pass"], SRC))
        for tree in trees:
            times[tree].append(wall_s(run_argv(tree), tree) - TOOL_MS / 1000)
    base = statistics.median(times["python -c pass"])
    print(f"\nwall time beyond the tool's {TOOL_MS} ms, median of {args.repeat} (baseline python -c pass "
          f"{base * 1000:.0f} ms):")
    for tree in trees:
        med = statistics.median(times[tree])
        print(f"  {tree}: {med * 1000:.0f} ms ({med / base:.1f}x the baseline; min {min(times[tree]) * 1000:.0f}, "
              f"max {max(times[tree]) * 1000:.0f})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
