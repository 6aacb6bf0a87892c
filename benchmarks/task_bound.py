"""The "task-bound" scenario: what a full run costs on top of the task's own duration.

The reference server runs its task tool for 300 ms and announces pollIntervalMs 100; the full
default suite runs against it over stdio, over HTTP, and over HTTP with --no-tcp-nodelay (each
response's head and body in two writes with Nagle's algorithm on, as Python's http.server family
writes them, where a client that waits on delayed ACKs stalls about 40 ms per exchange; the
stall a plain http.client keep-alive connection sees in each mode is reported too, to show it).
For each transport: the run's wall time minus the tool's duration (median, min and max of N runs)
and, from the run's own wire log, the median time from an HTTP request to its response.
`python -c pass` in the same run is the baseline the ratios are against, so a slower or busier
machine shifts both.

Every process runs with Python's bytecode cache on (PYTHONDONTWRITEBYTECODE removed from the
environment), as an installed package runs: with it set, each start compiles every module again.
Also reported: the tool's peak RSS over the runs (getrusage of the tool's process; the server it
spawns over stdio is counted only if larger) and the wall time of `--list-checks`.

    python benchmarks/task_bound.py [--repeat 7] [--write docs/benchmarks.md]
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlsplit

PY = sys.executable
TOOL_MS = 300
SERVER = [PY, "-m", "tasks_conformance.reference", "--task-duration-ms", str(TOOL_MS), "--poll-interval-ms", "100"]
TC = [PY, "-m", "tasks_conformance", "--tool-name", "slow_compute", "--format", "json"]
READY_TIMEOUT_S = 20.0
# What an installed package runs with: the bytecode cache on (see the module doc).
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


NAIVE_EXCHANGES = 10
DISCOVER = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}}})


@contextmanager
def listening(argv: list[str]) -> Iterator[str]:
    """A server that prints READY <url>; yields the URL and always stops it."""
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=ENV)
    try:
        deadline = time.monotonic() + READY_TIMEOUT_S
        assert proc.stdout is not None
        line = ""
        while time.monotonic() < deadline and not line.startswith("READY "):
            line = proc.stdout.readline()
            if not line and proc.poll() is not None:
                raise RuntimeError("the reference server exited before it was ready")
        yield line.split(" ", 1)[1].strip()
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=5)


def exchange_ms(wire_log: Path) -> list[float]:
    """Request-to-response times of the HTTP exchanges in a wire log."""
    rows = [json.loads(line) for line in wire_log.read_text().splitlines() if line.strip()]
    sent = {r["seq"]: r["time"] for r in rows if r.get("direction") == "out" and r.get("channel") == "http"}
    out = []
    for r in rows:
        reply_to = (r.get("http") or {}).get("replyTo", r.get("replyTo"))
        if r.get("direction") == "in" and reply_to in sent:
            out.append((r["time"] - sent[reply_to]) * 1000)
    return out


def naive_exchange_ms(url: str) -> float:
    """Median time of one keep-alive exchange for a client that never asks for quick ACKs."""
    parts = urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname or "127.0.0.1", parts.port, timeout=READY_TIMEOUT_S)
    times = []
    try:
        for _ in range(NAIVE_EXCHANGES):
            t0 = time.perf_counter()
            conn.request("POST", parts.path, body=DISCOVER, headers={
                "Content-Type": "application/json", "Accept": "application/json, text/event-stream",
                "Mcp-Method": "server/discover", "MCP-Protocol-Version": "2026-07-28"})
            conn.getresponse().read()
            times.append((time.perf_counter() - t0) * 1000)
    finally:
        conn.close()
    return statistics.median(times)


def timed(argv: list[str]) -> tuple[float, float]:
    """Wall seconds and peak RSS (MiB) of one process run to its end."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL,
                            env=ENV)
    try:
        _pid, _status, usage = os.wait4(proc.pid, 0)
    finally:
        proc.returncode = 0  # reaped by wait4 above; keeps Popen from waiting again
    wall = time.perf_counter() - t0
    rss_kib = usage.ru_maxrss // (1024 if sys.platform == "darwin" else 1)
    return wall, rss_kib / 1024


def run_once(argv: list[str], wire_log: Path) -> tuple[float, float]:
    return timed([*argv, "--wire-log", str(wire_log)])


def measure(argv: list[str], repeat: int) -> tuple[list[float], list[float], float]:
    walls: list[float] = []
    exchanges: list[float] = []
    peak = 0.0
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "wire.ndjson"
        run_once(argv, log)  # warm the page cache and .pyc files
        for _ in range(repeat):
            wall, rss = run_once(argv, log)
            walls.append(wall)
            peak = max(peak, rss)
            exchanges += exchange_ms(log)
    return walls, exchanges, peak


def baseline(repeat: int) -> float:
    return statistics.median(timed([PY, "-c", "pass"])[0] for _ in range(repeat))


def list_checks(repeat: int) -> list[float]:
    timed([*TC[:3], "--list-checks"])  # warm
    return [timed([*TC[:3], "--list-checks"])[0] for _ in range(repeat)]


def table(repeat: int) -> str:
    base = baseline(repeat)
    rows = ["| scenario | wall − tool, median (min–max) s | × `python -c pass` | HTTP exchange median ms "
            "| peak RSS MiB |",
            "|---|---|---|---|---|"]
    naive: dict[str, float] = {}
    for name, how in (("full suite over stdio", "stdio"), ("full suite over HTTP", "http"),
                      ("full suite over HTTP, head and body split, no TCP_NODELAY", "split")):
        if how == "stdio":
            walls, ex, peak = measure([*TC, "--command", " ".join([*SERVER, "--transport", "stdio"])], repeat)
        else:
            extra = ["--no-tcp-nodelay"] if how == "split" else []
            with listening([*SERVER, "--transport", "http", *extra]) as url:
                walls, ex, peak = measure([*TC, "--url", url], repeat)
                naive[how] = naive_exchange_ms(url)
        over = [w - TOOL_MS / 1000 for w in walls]
        med = statistics.median(over)
        ex_text = f"{statistics.median(ex):.1f}" if ex else "–"
        rows.append(f"| {name} | {med:.3f} ({min(over):.3f}–{max(over):.3f}) | {med / base:.1f} | {ex_text} "
                    f"| {peak:.1f} |")
    lc = list_checks(repeat)
    return (
        "\n".join(rows)
        + f"\n\nA plain `http.client` keep-alive connection, which never asks for quick ACKs: "
        f"{naive['http']:.1f} ms per exchange against the HTTP server, {naive['split']:.1f} ms against the "
        "split one (the stall the tool's own exchange times above do not show)."
        + f"\n\n`tasks-conformance --list-checks`: {statistics.median(lc):.3f} s ({min(lc):.3f}–{max(lc):.3f}), "
        f"{statistics.median(lc) / base:.1f} × `python -c pass`.\n"
        + f"\nBaseline `python -c pass`: {base:.3f} s; {repeat} runs each after one warm-up; bytecode cache on.\n"
    )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--write", type=Path, default=None, help="also write the table into this Markdown file")
    opts = ap.parse_args()
    text = table(opts.repeat)
    print(text)
    if opts.write is not None:
        opts.write.write_text(
            "# Benchmarks\n\nGenerated by `python benchmarks/task_bound.py --write docs/benchmarks.md`; the "
            "figures are from the machine that ran it.\n\n## Task-bound: a full run against a 300 ms task tool\n\n"
            "Of what a run adds to the tool's 300 ms, 0.1 s is one poll interval: once the task is seen to end "
            "it is read twice, one interval apart (`tasks-terminal-status-immutable`). The reference server's "
            "subscription shows the end before the next poll is due, so that poll is the first of the two "
            "reads; without notifications it costs one interval more. Only the probes that must follow those "
            "reads come after them. The rest is start-up (over stdio, two interpreters: ours and the server's, "
            "which boots while ours imports), the exchanges, and teardown.\n\n"
            + text
        )


if __name__ == "__main__":
    main()
