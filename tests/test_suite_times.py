"""The suite's time report (tests/suite_times.py): by file, the slowest tests, written and read back."""

from __future__ import annotations

import json
from pathlib import Path

from suite_times import TIMES_FILE, SuiteTimes, lines


def test_times_add_up_by_file_and_the_slowest_come_first(tmp_path: Path) -> None:
    times = SuiteTimes()
    for nodeid, seconds in [("tests/a.py::t1", 1.0), ("tests/a.py::t1", 0.5), ("tests/a.py::t2", 0.25),
                            ("tests/b.py::t3", 3.0)]:
        times.add(nodeid, seconds)
    doc = json.loads(times.write(tmp_path, 9.0).read_text(encoding="utf-8"))
    assert (tmp_path / TIMES_FILE).is_file()
    assert doc["files"] == {"tests/b.py": 3.0, "tests/a.py": 1.75}
    assert doc["slowest"][0] == ["tests/b.py::t3", 3.0] and doc["slowest"][1] == ["tests/a.py::t1", 1.5]
    text = lines(doc, files=1)
    assert text[0].startswith("suite time: 9.0 s wall, 3 tests")
    assert any("tests/b.py" in line for line in text) and not any(line.endswith("  tests/a.py") for line in text)


def test_cpu_time_adds_up_by_file_beside_the_wall_time(tmp_path: Path) -> None:
    times = SuiteTimes()
    times.add("tests/a.py::t1", 1.0, 0.25)
    times.add("tests/a.py::t1", 0.5, 0.5)
    times.add("tests/b.py::t2", 3.0, 2.0)
    doc = json.loads(times.write(tmp_path, 9.0).read_text(encoding="utf-8"))
    assert doc["cpuSeconds"] == 2.8 and doc["cpuFiles"] == {"tests/b.py": 2.0, "tests/a.py": 0.75}
    text = lines(doc)
    assert text[0].endswith("4.5 s of test time, 2.8 s of CPU")
    assert any(line.split() == ["1.5", "0.8", "tests/a.py"] for line in text), text


def test_a_times_file_without_cpu_still_prints() -> None:
    doc = {"wallSeconds": 1.0, "tests": 1, "sumSeconds": 1.0, "files": {"tests/a.py": 1.0},
           "slowest": [["tests/a.py::t", 1.0]]}
    text = lines(doc)
    assert text[0] == "suite time: 1.0 s wall, 1 tests, 1.0 s of test time"
    assert any(line.split() == ["1.0", "tests/a.py"] for line in text)
