"""The suite's time report (tests/helpers/suite_times.py): by file, the slowest tests, written and read back;
the README's figures are the recorded ones."""

from __future__ import annotations

import json
from pathlib import Path
from types import ModuleType

import pytest
from helpers.paths import ROOT, load_module
from helpers.suite_times import (
    README_END,
    README_START,
    RECORDED_FILE,
    RUN_KINDS,
    TIMES_FILE,
    SuiteTimes,
    lines,
    readme_block,
    with_readme_block,
)


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
    assert doc["cpuHeaviest"] == [["tests/b.py::t2", 2.0], ["tests/a.py::t1", 0.75]]
    heaviest = text.index("the 2 tests using the most CPU (s, with the processes they started):")
    assert text[heaviest + 1].split() == ["2.00", "tests/b.py::t2"], text


def test_a_times_file_without_cpu_still_prints() -> None:
    doc = {"wallSeconds": 1.0, "tests": 1, "sumSeconds": 1.0, "files": {"tests/a.py": 1.0},
           "slowest": [["tests/a.py::t", 1.0]]}
    text = lines(doc)
    assert text[0] == "suite time: 1.0 s wall, 1 tests, 1.0 s of test time"
    assert any(line.split() == ["1.0", "tests/a.py"] for line in text)


def test_the_readme_gives_the_recorded_figures() -> None:
    """The set-up section's figures are generated from docs/suite-times.json, which
    `python benchmarks/suite_time.py --record` writes from a whole run's times file."""
    recorded = json.loads((ROOT / RECORDED_FILE).read_text(encoding="utf-8"))
    assert set(recorded) == set(RUN_KINDS)
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert readme.count(README_START) == 1
    assert with_readme_block(readme, recorded) == readme, "run python benchmarks/suite_time.py --record"
    block = readme_block(recorded)
    assert f"{recorded['full']['tests']} tests in {recorded['full']['wallSeconds']:.0f} s" in block
    assert f"{recorded['fast']['tests']} tests in {recorded['fast']['wallSeconds']:.0f} s" in block


def test_record_keeps_a_whole_run_and_rewrites_the_readme_but_refuses_a_partial_one(tmp_path: Path) -> None:
    bench = _bench()
    recorded_file, readme = tmp_path / "suite-times.json", tmp_path / "README.md"
    recorded_file.write_text((ROOT / RECORDED_FILE).read_text(encoding="utf-8"), encoding="utf-8")
    readme.write_text(f"before\n{README_START}\nold\n{README_END}\nafter\n", encoding="utf-8")
    times = SuiteTimes()
    times.add("tests/a.py::t", 2.0, 1.5)
    fast = times.write(tmp_path / "fast", 123.4, "fast")
    assert "fast run (1 tests in 123.4 s)" in bench.record(fast, recorded_file, readme)
    kept = json.loads(recorded_file.read_text(encoding="utf-8"))["fast"]
    assert (kept["tests"], kept["wallSeconds"], kept["cpuSeconds"]) == (1, 123.4, 1.5)
    text = readme.read_text(encoding="utf-8")
    assert text.startswith("before\n") and text.endswith("\nafter\n") and "1 tests in 123 s" in text
    partial = times.write(tmp_path / "partial", 1.0)
    with pytest.raises(ValueError, match="a 'partial' run"):
        bench.record(partial, recorded_file, readme)
    assert readme.read_text(encoding="utf-8") == text


def _bench() -> ModuleType:
    return load_module(ROOT / "benchmarks" / "suite_time.py", "suite_time_bench")
