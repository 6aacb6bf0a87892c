"""The suite's time, by file and by test: collected by tests/conftest.py from every test's report
(the xdist workers' too), printed at the end of a --full run or a CI run, and written to
.pytest_cache/tasks-conformance-times.json for `python benchmarks/suite_time.py`."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any

TIMES_FILE = Path(".pytest_cache") / "tasks-conformance-times.json"
SLOWEST = 20
FILES = 15


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

    def document(self, wall_s: float) -> dict[str, Any]:
        return {"wallSeconds": round(wall_s, 1), "tests": len(self.by_test),
                "sumSeconds": round(sum(self.by_test.values()), 1),
                "cpuSeconds": round(sum(self.cpu_by_test.values()), 1),
                "files": {f: round(s, 2) for f, s in sorted(self.by_file().items(), key=lambda kv: -kv[1])},
                "cpuFiles": {f: round(s, 2) for f, s in sorted(self.cpu_by_file().items(), key=lambda kv: -kv[1])},
                "slowest": [[n, round(s, 2)] for n, s in sorted(self.by_test.items(), key=lambda kv: -kv[1])[:SLOWEST]]}

    def write(self, root: Path, wall_s: float) -> Path:
        path = root / TIMES_FILE
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(self.document(wall_s), indent=1) + "\n", encoding="utf-8")
        return path


def lines(doc: dict[str, Any], files: int = FILES) -> list[str]:
    """The report in lines: the totals, the slowest files, the slowest tests."""
    cpu = doc.get("cpuFiles", {})  # a file written before CPU was measured has none
    out = [f"suite time: {doc['wallSeconds']} s wall, {doc['tests']} tests, {doc['sumSeconds']} s of test time"
           + (f", {doc['cpuSeconds']} s of CPU" if cpu else "")]
    out.append(f"by file (the {files} slowest, s of test time" + (", s of CPU):" if cpu else "):"))
    out += [f"  {s:8.1f}" + (f"  {cpu.get(f, 0.0):8.1f}" if cpu else "") + f"  {f}"
            for f, s in list(doc["files"].items())[:files]]
    out.append(f"the {len(doc['slowest'])} slowest tests (s):")
    out += [f"  {s:8.2f}  {n}" for n, s in doc["slowest"]]
    return out
