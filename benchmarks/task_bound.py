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
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

PY = sys.executable
TOOL_MS = 300
SERVER = [PY, "-m", "tasks_conformance.server.reference", "--task-duration-ms", str(TOOL_MS),
          "--poll-interval-ms", "100"]
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


TERMINAL = ("completed", "failed", "cancelled")


def end_to_read_ms(wire_log: Path) -> float | None:
    """From the notification that showed the probe task's end to the poll that then read it: the
    wait for the next poll, which never comes sooner than pollIntervalMs after the one before
    (None when no notification showed the end first)."""
    seen: float | None = None
    task: object = None
    for line in wire_log.read_text().splitlines():
        row = json.loads(line) if line.strip() else {}
        try:
            msg = json.loads(row.get("text") or "null")
        except ValueError:
            continue
        if not isinstance(msg, dict):
            continue
        params = msg.get("params")
        status = params.get("status") if isinstance(params, dict) else None
        task_id = params.get("taskId") if isinstance(params, dict) else None
        if seen is None and msg.get("method") == "notifications/tasks" and status in TERMINAL:
            seen, task = float(row["time"]), task_id  # the subscription is the probe task's alone
        elif seen is not None and msg.get("method") == "tasks/get" and task_id == task \
                and str(row.get("note", "")).startswith("poll #"):
            return (float(row["time"]) - seen) * 1000
    return None


def run_once(argv: list[str], wire_log: Path) -> tuple[float, float]:
    return timed([*argv, "--wire-log", str(wire_log)])


@dataclass
class Measured:
    walls: list[float] = field(default_factory=list)
    exchanges: list[float] = field(default_factory=list)
    waits: list[float] = field(default_factory=list)  # end_to_read_ms of each run that had one
    peak: float = 0.0


def measure(argv: list[str], repeat: int) -> Measured:
    m = Measured()
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "wire.ndjson"
        run_once(argv, log)  # warm the page cache and .pyc files
        for _ in range(repeat):
            wall, rss = run_once(argv, log)
            m.walls.append(wall)
            m.peak = max(m.peak, rss)
            m.exchanges += exchange_ms(log)
            wait = end_to_read_ms(log)
            if wait is not None:
                m.waits.append(wait)
    return m


def transport_exchange_ms(url: str, n: int = 300) -> float:
    """Median of `n` sequential exchanges through the tool's own HTTP transport (nothing else in
    flight): what the transport costs per exchange, without the queueing of overlapped probes."""
    import anyio

    from tasks_conformance.core.redact import Redactor
    from tasks_conformance.core.transports.base import ExchangeEnded
    from tasks_conformance.core.transports.http import HttpTransport
    from tasks_conformance.core.wirelog import WireLog

    async def run() -> list[float]:
        transport = HttpTransport(WireLog(Redactor(())), url=url, max_message_bytes=1 << 24)
        await transport.start()
        times = []
        try:
            for _ in range(n):
                t0 = time.perf_counter()
                await transport.send(DISCOVER.encode(), headers={"Mcp-Method": "server/discover",
                                                                 "MCP-Protocol-Version": "2026-07-28"})
                while not isinstance(await transport.inbound.receive(), ExchangeEnded):
                    pass
                times.append((time.perf_counter() - t0) * 1000)
        finally:
            await transport.aclose()
        return times

    return statistics.median(anyio.run(run)[n // 10:])  # the first tenth warms the connection


def baseline(repeat: int) -> float:
    return statistics.median(timed([PY, "-c", "pass"])[0] for _ in range(repeat))


def list_checks(repeat: int) -> list[float]:
    timed([*TC[:3], "--list-checks"])  # warm
    return [timed([*TC[:3], "--list-checks"])[0] for _ in range(repeat)]


def _spread(values: list[float], unit: float = 1.0, digits: int = 3) -> str:
    if not values:
        return "–"
    v = [x * unit for x in values]
    return f"{statistics.median(v):.{digits}f} ({min(v):.{digits}f}–{max(v):.{digits}f})"


def table(repeat: int) -> str:
    base = baseline(repeat)
    rows = ["| scenario | wall − tool, median (min–max) s | of which: end → next poll, median (min–max) ms "
            "| × `python -c pass` | peak RSS MiB |",
            "|---|---|---|---|---|"]
    http_rows = ["| HTTP server | exchange median in the full run ms | the transport alone, sequential ms "
                 "| plain `http.client`, no quick ACKs ms |",
                 "|---|---|---|---|"]
    for name, how in (("full suite over stdio", "stdio"), ("full suite over HTTP", "http"),
                      ("full suite over HTTP, head and body split, no TCP_NODELAY", "split")):
        if how == "stdio":
            m = measure([*TC, "--command", " ".join([*SERVER, "--transport", "stdio"])], repeat)
        else:
            extra = ["--no-tcp-nodelay"] if how == "split" else []
            with listening([*SERVER, "--transport", "http", *extra]) as url:
                m = measure([*TC, "--url", url], repeat)
                http_rows.append(f"| {'split writes, no TCP_NODELAY' if extra else 'plain'} "
                                 f"| {statistics.median(m.exchanges):.1f} | {transport_exchange_ms(url):.2f} "
                                 f"| {naive_exchange_ms(url):.1f} |")
        over = [w - TOOL_MS / 1000 for w in m.walls]
        rows.append(f"| {name} | {_spread(over)} | {_spread(m.waits, digits=0)} "
                    f"| {statistics.median(over) / base:.1f} | {m.peak:.1f} |")
    lc = list_checks(repeat)
    return (
        "\n".join(rows)
        + "\n\n" + "\n".join(http_rows)
        + f"\n\n`tasks-conformance --list-checks`: {_spread(lc)} s, {statistics.median(lc) / base:.1f} × "
        "`python -c pass`.\n"
        + f"\nBaseline `python -c pass`: {base:.3f} s; {repeat} runs each after one warm-up; bytecode cache on.\n"
    )


SHIMS_START = "<!-- shims: start -->"  # benchmarks/shims.py's section of the same file


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--write", type=Path, default=None, help="also write the table into this Markdown file")
    opts = ap.parse_args()
    text = table(opts.repeat)
    print(text)
    if opts.write is not None:
        # The section benchmarks/shims.py writes (between its markers) is kept as it was.
        before = opts.write.read_text(encoding="utf-8") if opts.write.exists() else ""
        kept = before[before.index(SHIMS_START):] if SHIMS_START in before else ""
        opts.write.write_text(
            "# Benchmarks\n\nGenerated by `python benchmarks/task_bound.py --write docs/benchmarks.md`; the "
            "figures are from the machine that ran it.\n\n## Task-bound: a full run against a 300 ms task tool\n\n"
            "Of what a run adds to the tool's 300 ms, 0.1 s is one poll interval: once the task is seen to end "
            "it is read twice, one interval apart (`tasks-terminal-status-immutable`). The reference server's "
            "subscription shows the end before the next poll is due, so that poll is the first of the two "
            "reads; without notifications it costs one interval more. Only the probes that must follow those "
            "reads come after them.\n\n"
            "Polls never come sooner than `pollIntervalMs` after the one before, so between the end and the "
            "poll that reads it lies anything from 0 to one interval: where the end falls between two polls, "
            "not how fast the tool is (the third column; the 300 ms task ends close to a poll, so a few "
            "milliseconds earlier or later on either side move it by up to 100 ms). The rest is start-up "
            "(over stdio, two interpreters: ours and the server's, which boots while ours imports), the "
            "exchanges, and teardown.\n\n"
            "The second table is per HTTP exchange. In a full run the probes overlap (the brief ones take "
            "turns, two at a time), so an exchange may also wait for others the single-threaded server is "
            "answering; the transport alone is the median of 300 exchanges one after another; the last "
            "column is what a client that never asks for quick ACKs waits, to show that the split server "
            "really stalls one.\n\n"
            + text
            + (f"\n{kept}" if kept else "")
        )


if __name__ == "__main__":
    main()
