"""A suite of many targets against the reference server, each target its own server process, run
with `suite --jobs 8`, against the same runs made one after another as single runs (one
`tasks-conformance` process each): the wall time, and the peak memory of the whole process tree
(the tool and the servers it started, the sum of their resident sets, sampled every 20 ms with
psutil). docs/benchmarks.md quotes the figures.

    python benchmarks/suite_scale.py [--targets 200] [--jobs 8] [--out DIR]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import psutil

SERVER = [sys.executable, "-m", "tasks_conformance.server.reference", "--transport", "stdio",
          "--task-duration-ms", "50"]
FLAGS = {"tool-name": "slow_compute", "timeout": 30000}


def suite_file(path: Path, targets: int) -> Path:
    lines = ["[defaults]", *(f"{k} = {json.dumps(v)}" for k, v in FLAGS.items())]
    for i in range(targets):
        lines += ["[[targets]]", f'name = "server-{i:03d}"', f"command = {json.dumps(SERVER)}"]
    path.write_text("\n".join(lines) + "\n")
    return path


def run_tree(argv: list[str]) -> tuple[int, float, float]:
    """(exit code, wall seconds, peak MiB of the process and its descendants)."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
    peak = 0
    done = threading.Event()

    def sample() -> None:
        nonlocal peak
        try:
            root = psutil.Process(proc.pid)
            while not done.is_set():
                total = 0
                for p in [root, *root.children(recursive=True)]:
                    try:
                        total += p.memory_info().rss
                    except psutil.Error:
                        pass
                peak = max(peak, total)
                done.wait(0.02)
        except psutil.Error:
            pass

    watcher = threading.Thread(target=sample, daemon=True)
    watcher.start()
    try:
        code = proc.wait(timeout=3600)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=30)
        done.set()
        watcher.join(timeout=5)
    return code, time.perf_counter() - start, peak / 2**20


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--targets", type=int, default=200)
    parser.add_argument("--jobs", type=int, default=8)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    out = args.out or Path(tempfile.mkdtemp(prefix="suite-scale-"))
    out.mkdir(parents=True, exist_ok=True)
    suite = suite_file(out / "scale.toml", args.targets)
    report = out / "suite.json"
    tool = [sys.executable, "-m", "tasks_conformance"]
    code, wall, peak = run_tree([*tool, "suite", str(suite), "--jobs", str(args.jobs), "-q",
                                 "--reporter", f"json={report}"])
    counts = json.loads(report.read_text())["counts"]
    print(f"suite of {args.targets} targets, --jobs {args.jobs}: exit {code}, {counts}, {wall:.1f} s, "
          f"peak {peak:.0f} MiB (the tool and every server it started)")
    walls, peaks, codes = [], [], []
    for _ in range(args.targets):
        c, w, p = run_tree([*tool, "--command", " ".join(SERVER), *(a for k, v in FLAGS.items()
                                                                   for a in (f"--{k}", str(v))), "-q"])
        codes.append(c)
        walls.append(w)
        peaks.append(p)
    print(f"{args.targets} single runs one after another: exit codes {sorted(set(codes))}, {sum(walls):.1f} s, "
          f"peak {max(peaks):.0f} MiB (one run's tool and server); suite / sequential wall: {wall / sum(walls):.2f}")


if __name__ == "__main__":
    main()
