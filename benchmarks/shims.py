"""Is each speed shim worth keeping? Whole-process wall time with the shim on and off (issue 21,
item 6): a shim stays only where it saves at least 5 % of `--help` or of a full run. Not a test:
run it by hand.

Every run goes through the same small launcher (`python -c LAUNCHER MODE ARGS…`), which runs
`python -m tasks_conformance ARGS…` and, for an "off" mode, switches one shim off as its module is
imported (nothing is imported early, so the order of imports is the command line's own):

* `lean-httpx off`: `transports/lean_httpx.import_httpx` does nothing, so httpx is imported as
  any program imports it, its command-line client (`httpx._main`: click, rich, pygments) included.
* `plain-coercion off`: `entry/cli_coercion.install` does nothing, so typer converts every option
  through its pydantic adapters.
* `early-spawn off`: `entry/launch._early_transport` gives no early transport, so a stdio server is
  spawned only once the runner is imported.
* `gc-freeze off`: `gc.freeze` does nothing, so the interpreter's shutdown collects what the run built.

The modes take turns, run after run, so a change in the machine's load hits them alike; medians
are compared. The full runs are the reference server's `slow_compute` as a task, over stdio (a
server spawned per run) and over HTTP (one server, started first). Byte code is cached
(PYTHONDONTWRITEBYTECODE is unset, the cache is warmed first), so compilation is not measured.

    python benchmarks/shims.py [--repeat 20] [--write docs/benchmarks.md]
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from waiting import run_waited

PY = sys.executable
REF_STDIO = f"{PY} -m tasks_conformance.server.reference --transport stdio"

# argv: MODE, then the command line's own arguments. A mode names (module, what to do to it).
LAUNCHER = """
import runpy, sys
mode = sys.argv[1]
del sys.argv[1]
sys.argv[0] = "tasks_conformance"
OFF = {
    "lean-httpx off": ("tasks_conformance.core.transports.lean_httpx",
                       lambda m: setattr(m, "import_httpx", lambda: None)),
    "plain-coercion off": ("tasks_conformance.entry.cli_coercion",
                           lambda m: setattr(m, "install", lambda params: None)),
    "early-spawn off": ("tasks_conformance.entry.launch",
                        lambda m: setattr(m, "_early_transport", lambda config, wire: None)),
}
if mode == "gc-freeze off":
    import gc
    gc.freeze = lambda: None
if mode in OFF:
    name, switch_off = OFF[mode]

    class Finder:
        @staticmethod
        def find_spec(fullname, path=None, target=None):
            if fullname != name:
                return None
            from importlib.machinery import PathFinder
            spec = PathFinder.find_spec(fullname, path, target)
            run = spec.loader.exec_module

            def exec_module(module):
                run(module)
                switch_off(module)

            spec.loader.exec_module = exec_module
            return spec

    sys.meta_path.insert(0, Finder)
runpy.run_module("tasks_conformance", run_name="__main__", alter_sys=True)
"""

MODES = ["on", "lean-httpx off", "plain-coercion off", "early-spawn off", "gc-freeze off"]
PYCACHE = tempfile.mkdtemp(prefix="shims-pycache-")


def timed(mode: str, args: list[str]) -> tuple[float, float, int]:
    """Wall-clock and CPU seconds (the child's user + system) of one run, and its exit code."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = PYCACHE
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    code = run_waited([PY, "-c", LAUNCHER, mode, *args], env=env)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), code


def serve_http() -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen([PY, "-m", "tasks_conformance", "serve-reference", "--transport", "http"],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    assert proc.stdout is not None
    line = proc.stdout.readline()
    found = re.match(r"READY (\S+)", line)
    if not found:
        proc.kill()
        raise SystemExit(f"the reference server did not start: {line!r}")
    return proc, found.group(1)


def compare(label: str, args: list[str], modes: list[str], repeat: int) -> list[str]:
    """Markdown rows: one per mode, the first mode the reference the others are compared with."""
    for mode in modes:  # warm the byte-code cache and the page cache
        timed(mode, args)
    samples: dict[str, list[tuple[float, float, int]]] = {m: [] for m in modes}
    for _ in range(repeat):
        for mode in modes:
            samples[mode].append(timed(mode, args))
    on_wall = statistics.median(w for w, _c, _r in samples[modes[0]])
    on_cpu = statistics.median(c for _w, c, _r in samples[modes[0]])
    rows = []
    for mode in modes:
        walls = [w for w, _c, _r in samples[mode]]
        wall, cpu = statistics.median(walls), statistics.median(c for _w, c, _r in samples[mode])
        codes = ",".join(map(str, sorted({r for _w, _c, r in samples[mode]})))
        delta = "" if mode == modes[0] else f"{(wall - on_wall) / on_wall * 100:+.1f} %"
        cpu_delta = "" if mode == modes[0] else f"{(cpu - on_cpu) / on_cpu * 100:+.1f} %"
        rows.append(f"| {label} | {mode} | {wall:.3f} ({min(walls):.3f}–{max(walls):.3f}) | {delta} | {cpu:.3f} | "
                    f"{cpu_delta} | {codes} |")
        print(rows[-1], flush=True)
    return rows


HEADER = ["| command | shim | wall median (min–max) s | wall off − on | CPU median s | CPU off − on | exit |",
          "|---|---|---|---|---|---|---|"]
START, END = "<!-- shims: start -->", "<!-- shims: end -->"


def section(rows: list[str], repeat: int) -> str:
    return "\n".join([
        START,
        "## Speed shims: each on and off",
        "",
        "Generated by `python benchmarks/shims.py --write docs/benchmarks.md`. A shim stays only where it "
        "saves at least 5 % of `--help` or of a full run (issue 21): whole-process wall time, medians of "
        f"{repeat} runs of each mode, the modes alternated; CPU is the child's user + system time. "
        "`lean-httpx off`: httpx imported with its command-line client; `plain-coercion off`: typer converts "
        "every option through pydantic; `early-spawn off`: a stdio server spawned only after the runner's "
        "imports; `gc-freeze off`: the interpreter's shutdown collects what the run built. (The poller's idle "
        "work, which read the requirements registry in a wait between polls, measured 0 % on a quiet "
        "machine and was removed.)",
        "",
        *HEADER,
        *rows,
        "",
        END,
    ]) + "\n"


def write(path: Path, text: str) -> None:
    """Put the section into `path`, in place of the one there (task_bound.py keeps it when it
    rewrites the file)."""
    old = path.read_text(encoding="utf-8") if path.exists() else ""
    if START in old and END in old:
        head, rest = old.split(START, 1)
        old = head.rstrip("\n") + rest.split(END, 1)[1]
    path.write_text(old.rstrip("\n") + "\n\n" + text, encoding="utf-8")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--write", type=Path, default=None, help="also write the table into this Markdown file")
    opts = ap.parse_args()
    print("\n".join(HEADER), flush=True)
    rows = compare("`--help`", ["--help"], MODES, opts.repeat)
    rows += compare("full run over stdio", ["--command", REF_STDIO, "--tool-name", "slow_compute", "--format", "json"],
                    MODES, opts.repeat)
    server, url = serve_http()
    try:
        rows += compare("full run over HTTP", ["--url", url, "--tool-name", "slow_compute", "--format", "json"],
                        MODES, opts.repeat)
    finally:
        server.terminate()
        server.wait(timeout=10)
    if opts.write is not None:
        write(opts.write, section(rows, opts.repeat))


if __name__ == "__main__":
    main()
