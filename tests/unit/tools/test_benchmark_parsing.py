"""What benchmarks/task_bound.py reads from a wire log (the figures docs/benchmarks.md quotes); no
timing is measured here."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

import pytest
from helpers.paths import ROOT


@pytest.fixture(scope="module")
def task_bound() -> ModuleType:
    spec = importlib.util.spec_from_file_location("task_bound", ROOT / "benchmarks" / "task_bound.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["task_bound"] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


def _log(tmp_path: Path, rows: list[dict[str, object]]) -> Path:
    path = tmp_path / "wire.ndjson"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _frame(seq: int, t: float, direction: str, msg: dict[str, object], note: str | None = None) -> dict[str, object]:
    row: dict[str, object] = {"seq": seq, "time": t, "direction": direction, "channel": "stdio",
                              "text": json.dumps(msg)}
    if note:
        row["note"] = note
    return row


def test_the_wait_runs_from_the_notification_of_the_end_to_the_next_poll(task_bound: ModuleType,
                                                                         tmp_path: Path) -> None:
    log = _log(tmp_path, [
        _frame(1, 0.100, "out", {"id": 5, "method": "tasks/get", "params": {"taskId": "t"}}, "poll #3"),
        _frame(2, 0.150, "in", {"method": "notifications/tasks", "params": {"taskId": "t", "status": "working"}}),
        _frame(3, 0.180, "in", {"method": "notifications/tasks", "params": {"taskId": "t", "status": "completed"}}),
        _frame(4, 0.190, "out", {"id": 6, "method": "tasks/get", "params": {"taskId": "u"}}, "poll #2"),
        _frame(5, 0.200, "out", {"id": 7, "method": "tasks/get", "params": {"taskId": "t"}}, "poll #4"),
    ])
    assert task_bound.end_to_read_ms(log) == pytest.approx(20.0)


def test_without_a_notification_of_the_end_there_is_no_wait_to_report(task_bound: ModuleType,
                                                                      tmp_path: Path) -> None:
    log = _log(tmp_path, [
        _frame(1, 0.100, "out", {"id": 5, "method": "tasks/get", "params": {"taskId": "t"}}, "poll #1"),
        _frame(2, 0.101, "in", {"id": 5, "result": {"status": "completed"}}),
    ])
    assert task_bound.end_to_read_ms(log) is None
