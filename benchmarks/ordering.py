"""What declared order costs: full default runs, each era over each transport, for several trees.

The checker waits for a notification's answer (over HTTP, its 202) before what depends on it
(issue 30: the initialized notification before any request of a 2025-11-25 session). On
localhost that costs a round trip, not a poll interval. This times whole runs against the
reference server (its task tool works 300 ms, pollIntervalMs 100) over stdio and over HTTP, on
both eras, for each `--src` tree in turns (a `git worktree` of the commit before the change
against this one), with `python -c pass` as the baseline of the same run; the ratio is against
the first tree given.

Not a test: run it by hand.

    git worktree add /tmp/wt-before COMMIT
    python benchmarks/ordering.py --src /tmp/wt-before/src --src src [--repeat 9]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from critical_path import PY, SRC, TOOL_MS, env_for, server_module, wall_s

ERAS = {"legacy": ["--protocol-version", "2025-11-25"], "extension": ["--tool-name", "slow_compute"]}
READY_TIMEOUT_S = 20.0


def _server(src: str, transport: str) -> list[str]:
    return [PY, "-m", server_module(src), "--task-duration-ms", str(TOOL_MS), "--poll-interval-ms", "100",
            "--transport", transport]


def _listening(src: str) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen([*_server(src, "http"), "--port", "0"], stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True, env=env_for(src))
    assert proc.stdout is not None
    deadline = time.monotonic() + READY_TIMEOUT_S
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if line.startswith("READY "):
            return proc, line.split()[1]
    proc.kill()
    raise RuntimeError("the reference server did not start")


def _argv(src: str, transport: str, era: str, url: str) -> list[str]:
    target = ["--url", url] if transport == "http" else ["--command", " ".join(_server(src, "stdio"))]
    return [PY, "-m", "tasks_conformance", *target, *ERAS[era], "--format", "json"]


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=9)
    parser.add_argument("--src", action="append", default=[], help="a source tree to time (repeatable)")
    args = parser.parse_args(argv)
    trees = args.src or [SRC]
    servers = {tree: _listening(tree) for tree in trees}
    try:
        cases = [(t, e) for t in ("stdio", "http") for e in ERAS]
        times: dict[tuple[str, str, str], list[float]] = {(t, e, tree): [] for t, e in cases for tree in trees}
        base: list[float] = []
        for _ in range(args.repeat):  # in turns, so a change in load hits every tree alike
            base.append(wall_s([PY, "-c", "pass"], SRC))
            for transport, era in cases:
                for tree in trees:
                    argv_ = _argv(tree, transport, era, servers[tree][1])
                    times[(transport, era, tree)].append(wall_s(argv_, tree))
    finally:
        for proc, _url in servers.values():
            proc.kill()
            proc.wait(timeout=10)
    print(f"full default run, wall s, median of {args.repeat} (baseline python -c pass "
          f"{statistics.median(base) * 1000:.0f} ms); ratio against {trees[0]}:")
    for transport, era in cases:
        first = statistics.median(times[(transport, era, trees[0])])
        for tree in trees:
            med = statistics.median(times[(transport, era, tree)])
            print(f"  {transport:<5} {era:<9} {tree}: {med:.3f} (min {min(times[(transport, era, tree)]):.3f}, "
                  f"max {max(times[(transport, era, tree)]):.3f}) ratio {med / first:.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
