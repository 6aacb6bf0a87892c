"""What a client run costs beyond the client's own time.

`tasks-conformance client` runs every scenario of both eras against the bundled reference client,
one scenario at a time (`--jobs 1`), in-process so that each scenario's client process time is
known. Our cost is the run's wall time minus the time the client processes ran (their start-up,
their polls, the scenarios' task time all count as the client's): the scripted servers, starting
the processes, judging, reporting. Printed with `python -c pass` of the same run as the baseline.
Over stdio the client spawns each scripted server itself, so that server's start-up counts as the
client's; ours is the relay that receives its frames and stops it.

    python benchmarks/client_run.py [--repeat 5] [--transport http|stdio|both]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time

PY = sys.executable
RUN = """
import anyio, json, sys, time
from tasks_conformance.client.runner import ClientConfig, execute_client
config = ClientConfig(command=(sys.executable, "-m", "tasks_conformance.client.reference_client"),
                      eras=("extension", "legacy"), jobs=1, transport=sys.argv[1])
t0 = time.perf_counter()
ex = anyio.run(execute_client, config)
wall = time.perf_counter() - t0
clients = sum(r.client.duration_s for r in ex.runs)
print(json.dumps({"outcome": ex.result.outcome, "wall": wall, "clients": clients, "scenarios": len(ex.runs)}))
"""


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--transport", choices=("http", "stdio", "both"), default="both")
    args = parser.parse_args(argv)
    for transport in ("http", "stdio") if args.transport == "both" else (args.transport,):
        measure(transport, args.repeat)
    return 0


def measure(transport: str, repeat: int) -> None:
    import json

    base, ours, walls = [], [], []
    scenarios = 0
    for _ in range(repeat):
        t0 = time.perf_counter()
        subprocess.run([PY, "-c", "pass"], check=True)
        base.append(time.perf_counter() - t0)
        out = subprocess.run([PY, "-c", RUN, transport], capture_output=True, text=True, check=True, timeout=600)
        doc = json.loads(out.stdout.strip().splitlines()[-1])
        assert doc["outcome"] == "passed", doc
        walls.append(doc["wall"])
        ours.append(doc["wall"] - doc["clients"])
        scenarios = doc["scenarios"]
    b, o, w = statistics.median(base), statistics.median(ours), statistics.median(walls)
    print(f"{transport}: {scenarios} scenarios, both eras, --jobs 1, median of {repeat}:")
    print(f"  wall time of the run          {w * 1000:7.0f} ms")
    print(f"  ours (wall minus the clients) {o * 1000:7.0f} ms  = {o / scenarios * 1000:.0f} ms a scenario, "
          f"{o / b:.1f}x python -c pass ({b * 1000:.0f} ms)")


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
