"""`tasks-conformance call`: the reference client calls a tool as a task on either wire, follows it
to its end and says how it ended; exit 0 only when the task completed."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REFERENCE, HttpServer

ROOT = Path(__file__).resolve().parent.parent


def _call(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "tasks_conformance", "call", *args], capture_output=True, text=True,
                          timeout=60, cwd=ROOT)


@pytest.mark.parametrize("era", ["extension", "legacy"])
def test_a_task_is_followed_to_its_end_on_either_wire(reference_http: HttpServer, era: str) -> None:
    proc = _call("--url", reference_http.url, "--tool-name", "slow_compute", "--era", era, "--format", "json")
    assert proc.returncode == 0, proc.stderr
    outcome = json.loads(proc.stdout)
    assert outcome["status"] == "completed" and outcome["isError"] is False and outcome["error"] is None
    assert "finished" in json.dumps(outcome["result"])
    human = _call("--url", reference_http.url, "--tool-name", "slow_compute", "--era", era)
    assert human.returncode == 0 and human.stdout.startswith("completed: slow_compute")


@pytest.mark.parametrize("era", ["extension", "legacy"])
def test_a_stdio_server_is_spawned_and_its_task_followed_to_its_end(era: str) -> None:
    command = shlex.join(REFERENCE)
    proc = _call("--command", command, "--tool-name", "slow_compute", "--era", era, "--format", "json")
    assert proc.returncode == 0, proc.stderr
    outcome = json.loads(proc.stdout)
    assert outcome["status"] == "completed" and outcome["error"] is None and "finished" in json.dumps(outcome["result"])


def test_a_stdio_server_that_cannot_start_is_one_line_and_exit_1() -> None:
    proc = _call("--command", "/nonexistent/server", "--tool-name", "x")
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert proc.stdout.startswith("unknown: error -32603") and "cannot start the server" in proc.stdout


def test_a_cancelled_task_exits_1(reference_http: HttpServer) -> None:
    proc = _call("--url", reference_http.url, "--tool-name", "slow_compute", "--cancel-after", "0")
    assert proc.returncode == 1 and proc.stdout.strip() == "cancelled", proc.stdout + proc.stderr


def test_a_server_that_is_not_there_is_one_line_and_exit_1() -> None:
    proc = _call("--url", "http://127.0.0.1:9/mcp", "--tool-name", "x", "--timeout", "2000")
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert proc.stdout.startswith("unknown: error -32603")


@pytest.mark.parametrize(("args", "says"), [
    (("--tool-name", "x"), "give --url (a Streamable HTTP server) or --command"),
    (("--url", "http://127.0.0.1:9/mcp", "--command", "x", "--tool-name", "x"), "not both"),
    (("--url", "http://127.0.0.1:9/mcp"), "--tool-name is required"),
    (("--url", "http://127.0.0.1:9/mcp", "--tool-name", "x", "--era", "modern"), "--era must be"),
    (("--url", "http://127.0.0.1:9/mcp", "--tool-name", "x", "--tool-args", "{bad"), "--tool-args: not valid JSON"),
])
def test_usage_errors_are_one_line_and_exit_2(args: tuple[str, ...], says: str) -> None:
    proc = _call(*args)
    assert proc.returncode == 2 and says in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
