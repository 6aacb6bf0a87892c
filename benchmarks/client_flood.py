"""Memory and wall time of `tasks-conformance client` against a flooding client, against an idle one.

    python benchmarks/client_flood.py [--timeout-ms 5000] [--transport http|stdio|both] [--json]

Each run is one `tasks-conformance client` process (the lifecycle scenario, one era), which writes
its own peak RSS (getrusage RUSAGE_SELF: the client and the scripted servers it spawns are not
counted) when it exits. The client is fixtures/hostile/client.py: `idle` calls the tool and then
waits, `flood` calls the tool and then sends messages of the largest size the scripted server
reads (1 MiB POSTs over HTTP, 4 MiB lines over stdio), both until the run stops them at
--timeout. The kept frame bytes are summed from the run's --wire-log. Printed: the flood's peak
against the idle run of the same transport in the same script run, the target (2x the idle peak
plus the wire log's cap on kept frame bytes), and each run's wall time beyond --timeout. Asserts
nothing: the figures are for docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIXTURE = ROOT / "fixtures" / "hostile" / "client.py"
MIB = 1024 * 1024

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


def frame_cap() -> int:
    """The wire log's cap on kept frame bytes, of the code under test (PYTHONPATH)."""
    out = subprocess.run([sys.executable, "-c", "from tasks_conformance.core import wirelog; "
                          "print(wirelog.MAX_FRAME_BYTES)"], capture_output=True, text=True, check=True)
    return int(out.stdout)


def kept_bytes(wire_log: Path) -> int:
    """The frame bytes the run kept (its wire log's frames, decoded)."""
    total = 0
    with wire_log.open("rb") as fh:
        for line in fh:
            row = json.loads(line)
            if "text" in row:
                total += len(row["text"].encode("utf-8", "surrogatepass"))
            elif "base64" in row:
                total += len(base64.b64decode(row["base64"]))
    return total


def measure(case: str, transport: str, timeout_ms: int) -> dict[str, object]:
    client = shlex.join([sys.executable, str(FIXTURE), "--case", case, "--seconds", "3600"])
    with tempfile.TemporaryDirectory() as tmp:
        peak_file, wire_log = Path(tmp) / "peak", Path(tmp) / "wire.ndjson"
        argv = [sys.executable, "-c", _WRAPPER, str(peak_file), "client", "--command", client,
                "--transport", transport, "--scenario", "tasks-client-lifecycle", "--timeout", str(timeout_ms),
                "--format", "json", "--wire-log", str(wire_log)]
        started = time.monotonic()
        proc = subprocess.run(argv, cwd=ROOT, stdin=subprocess.DEVNULL, capture_output=True,
                              timeout=timeout_ms / 1000 + 300,
                              env={**os.environ, "NO_COLOR": "1"}, text=True)
        wall = time.monotonic() - started
        kib = int(peak_file.read_text()) if peak_file.exists() else 0
        kept = kept_bytes(wire_log) if wire_log.exists() else 0
    limits: list[object] = []
    try:
        limits = [r.get("limits", []) for r in json.loads(proc.stdout)["scenarios"]]
    except (ValueError, KeyError):
        pass
    return {"case": case, "transport": transport, "exit": proc.returncode, "wallS": round(wall, 2),
            "beyondTimeoutS": round(wall - timeout_ms / 1000, 2), "peakRssMiB": round(kib / 1024, 1),
            "keptFrameMiB": round(kept / MIB, 1), "limits": limits}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--timeout-ms", type=int, default=5000, help="the run's --timeout (each client runs to it)")
    p.add_argument("--transport", choices=("http", "stdio", "both"), default="both")
    p.add_argument("--json", action="store_true", help="print the rows as JSON instead of a table")
    opts = p.parse_args()
    cap = frame_cap()
    rows = []
    for transport in ("http", "stdio") if opts.transport == "both" else (opts.transport,):
        idle = measure("idle", transport, opts.timeout_ms)
        flood = measure("flood", transport, opts.timeout_ms)
        base = float(idle["peakRssMiB"])  # type: ignore[arg-type]
        target = 2 * base + cap / MIB
        for row in (idle, flood):
            peak = float(row["peakRssMiB"])  # type: ignore[arg-type]
            row["xIdle"] = round(peak / base, 2) if base else None
            row["targetMiB"] = round(target, 1)
            row["withinTarget"] = peak <= target
        rows += [idle, flood]
    if opts.json:
        print(json.dumps({"frameCapMiB": cap / MIB, "timeoutMs": opts.timeout_ms, "rows": rows}, indent=2))
        return 0
    print(f"--timeout {opts.timeout_ms} ms; the wire log keeps at most {cap / MIB:.0f} MiB of frame bytes")
    print(f"{'case':<6} {'transport':<9} {'exit':>4} {'wall s':>7} {'- timeout':>9} {'peak RSS MiB':>12} "
          f"{'x idle':>7} {'target MiB':>10} {'kept MiB':>8}  limits")
    for r in rows:
        print(f"{r['case']:<6} {r['transport']:<9} {r['exit']:>4} {r['wallS']:>7.2f} {r['beyondTimeoutS']:>9.2f} "
              f"{r['peakRssMiB']:>12.1f} {r['xIdle']:>7} {r['targetMiB']:>10.1f} {r['keptFrameMiB']:>8.1f}  "
              f"{json.dumps(r['limits'])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
