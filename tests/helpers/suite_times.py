"""The suite's time, by file and by test: collected by tests/conftest.py from every test's report
(the xdist workers' too), printed at the end of a --full run or a CI run, and written to
.pytest_cache/tasks-conformance-times.json for `python benchmarks/suite_time.py`."""

from __future__ import annotations

import json
import os
import platform
from collections import defaultdict
from pathlib import Path
from typing import Any

TIMES_FILE = Path(".pytest_cache") / "tasks-conformance-times.json"
SLOWEST = 20
FILES = 15
# The figures the README's set-up section gives, one entry per run kind ("full", "fast"), each
# recorded from a run's times file by `python benchmarks/suite_time.py --record`.
RECORDED_FILE = Path("docs") / "suite-times.json"
README_START, README_END = "<!-- suite-time: start -->", "<!-- suite-time: end -->"
RUN_KINDS = ("full", "fast")


def machine() -> dict[str, Any]:
    """What the figures were measured on."""
    return {"cpus": os.cpu_count(), "system": platform.system(), "python": platform.python_version()}


class SuiteTimes:
    def __init__(self) -> None:
        self.by_test: dict[str, float] = defaultdict(float)
        self.cpu_by_test: dict[str, float] = defaultdict(float)

    def add(self, nodeid: str, seconds: float, cpu_s: float = 0.0) -> None:
        self.by_test[nodeid] += seconds  # setup + call + teardown
        self.cpu_by_test[nodeid] += cpu_s

    def cpu_by_file(self) -> dict[str, float]:
        files: dict[str, float] = defaultdict(float)
        for nodeid, seconds in self.cpu_by_test.items():
            files[nodeid.split("::", 1)[0]] += seconds
        return dict(files)

    def by_file(self) -> dict[str, float]:
        files: dict[str, float] = defaultdict(float)
        for nodeid, seconds in self.by_test.items():
            files[nodeid.split("::", 1)[0]] += seconds
        return dict(files)

    def document(self, wall_s: float, run: str = "partial") -> dict[str, Any]:
        """`run`: "full" (--full), "fast" (the default selection) or "partial" (tests chosen by
        path, -k or -m), which no figure of the README may come from."""
        return {"run": run, "machine": machine(), "wallSeconds": round(wall_s, 1), "tests": len(self.by_test),
                "sumSeconds": round(sum(self.by_test.values()), 1),
                "cpuSeconds": round(sum(self.cpu_by_test.values()), 1),
                "files": {f: round(s, 2) for f, s in sorted(self.by_file().items(), key=lambda kv: -kv[1])},
                "cpuFiles": {f: round(s, 2) for f, s in sorted(self.cpu_by_file().items(), key=lambda kv: -kv[1])},
                "slowest": [[n, round(s, 2)] for n, s in sorted(self.by_test.items(), key=lambda kv: -kv[1])[:SLOWEST]],
                # The run is CPU-bound on two cores, so what to cut is what costs CPU, not what waits longest.
                "cpuHeaviest": [[n, round(s, 2)] for n, s in
                                sorted(self.cpu_by_test.items(), key=lambda kv: -kv[1])[:SLOWEST]]}

    def write(self, root: Path, wall_s: float, run: str = "partial") -> Path:
        path = root / TIMES_FILE
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(self.document(wall_s, run), indent=1) + "\n", encoding="utf-8")
        return path


def recorded_entry(doc: dict[str, Any], when: str) -> dict[str, Any]:
    """What the README keeps of a run's times file (a full or fast run's only)."""
    if doc.get("run") not in RUN_KINDS:
        raise ValueError(f"the times file is of a {doc.get('run', 'partial')!r} run: record a run of the whole "
                         "suite, `python -m pytest -q` (fast) or `python -m pytest -q --full`")
    return {"tests": doc["tests"], "wallSeconds": doc["wallSeconds"], "cpuSeconds": doc["cpuSeconds"],
            "machine": doc["machine"], "recorded": when}


def _minutes(seconds: float) -> str:
    n = max(1, round(seconds / 60))
    return f"about {n} minute{'s' if n != 1 else ''}"


def readme_block(recorded: dict[str, Any]) -> str:
    """The README's figures, from the recorded runs: the text between README_START and README_END."""
    full, fast = recorded["full"], recorded["fast"]
    m = full["machine"]
    sentences = (
        f"Measured on a {m['cpus']}-core machine with nothing else running ({m['system']}, Python {m['python']}; "
        f"recorded by `python benchmarks/suite_time.py --record` on {full['recorded']}): "
        f"{_minutes(full['wallSeconds'])} with every interop server and client installed (`.ci/run`'s test phase, "
        f"{full['tests']} tests in {full['wallSeconds']:.0f} s, {full['cpuSeconds']:.0f} s of CPU; without those "
        f"installs their tests skip and it is shorter). `python -m pytest -q` alone is the fast run, "
        f"{_minutes(fast['wallSeconds'])} there ({fast['tests']} tests in {fast['wallSeconds']:.0f} s, "
        f"{fast['cpuSeconds']:.0f} s of CPU, recorded on {fast['recorded']}; it keeps both cores busy, so a loaded "
        "machine takes longer).")
    return f"{README_START}\n{sentences}\n{README_END}"


def with_readme_block(readme: str, recorded: dict[str, Any]) -> str:
    start, end = readme.index(README_START), readme.index(README_END) + len(README_END)
    return readme[:start] + readme_block(recorded) + readme[end:]


def lines(doc: dict[str, Any], files: int = FILES) -> list[str]:
    """The report in lines: the totals, the slowest files, the slowest tests, those using the most CPU."""
    cpu = doc.get("cpuFiles", {})  # a file written before CPU was measured has none
    out = [f"suite time: {doc['wallSeconds']} s wall, {doc['tests']} tests, {doc['sumSeconds']} s of test time"
           + (f", {doc['cpuSeconds']} s of CPU" if cpu else "")]
    out.append(f"by file (the {files} slowest, s of test time" + (", s of CPU):" if cpu else "):"))
    out += [f"  {s:8.1f}" + (f"  {cpu.get(f, 0.0):8.1f}" if cpu else "") + f"  {f}"
            for f, s in list(doc["files"].items())[:files]]
    out.append(f"the {len(doc['slowest'])} slowest tests (s):")
    out += [f"  {s:8.2f}  {n}" for n, s in doc["slowest"]]
    if doc.get("cpuHeaviest"):  # a file written before it was kept has none
        out.append(f"the {len(doc['cpuHeaviest'])} tests using the most CPU (s, with the processes they started):")
        out += [f"  {s:8.2f}  {n}" for n, s in doc["cpuHeaviest"]]
    return out
