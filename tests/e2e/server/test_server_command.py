"""--server-command: the run starts an HTTP (or TCP, Unix) server, waits until it listens, tests
it and stops its whole process group; a server that exits or never listens is one cause."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path

import psutil
import pytest
from helpers.paths import ROOT

import tasks_conformance


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _cli(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "tasks_conformance", *args], capture_output=True, text=True,
                          timeout=timeout, cwd=ROOT)


def _gone(pid: int) -> bool:
    return not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE


def test_the_server_is_started_tested_and_stopped(tmp_path: Path) -> None:
    port, pidfile = _free_port(), tmp_path / "server.pid"
    # The shell writes its pid, then becomes the server: that pid is the server's.
    server = (f"sh -c 'echo $$ > {pidfile}; exec {sys.executable} -m tasks_conformance.server.reference "
              f"--transport http --port {port}'")
    proc = _cli("--server-command", server, "--url", f"http://127.0.0.1:{port}/mcp", "--tool-name", "slow_compute",
                "--format", "json")
    assert proc.returncode == 0, proc.stdout[-1500:] + proc.stderr
    assert json.loads(proc.stdout)["outcome"] == "passed"
    assert _gone(int(pidfile.read_text()))
    with socket.socket() as s:  # nothing listens there any more
        assert s.connect_ex(("127.0.0.1", port)) != 0


def test_a_server_that_exits_first_is_one_cause_with_its_output_and_no_secret() -> None:
    port = _free_port()
    server = (f"{sys.executable} -c \"import os,sys; print('boom', os.environ['API_KEY'], file=sys.stderr); "
              "sys.exit(4)\"")
    proc = _cli("--server-command", server, "-e", "API_KEY=s3cr3t-value-123", "--url", f"http://127.0.0.1:{port}/mcp",
                "--format", "json")
    assert proc.returncode == 3, proc.stderr
    (cause,) = json.loads(proc.stdout)["incompleteCauses"]
    assert "exited with code 4 before it listened" in cause["cause"] and "boom" in cause["cause"]
    # The run started that server itself: the fix is the command, never "start the server".
    assert cause["fix"].startswith("the run started the server itself with --server-command: correct that command")
    assert "s3cr3t-value-123" not in proc.stdout + proc.stderr


def test_a_server_that_never_listens_is_stopped_at_the_timeout(tmp_path: Path) -> None:
    port, pidfile = _free_port(), tmp_path / "server.pid"
    proc = _cli("--server-command", f"sh -c 'echo $$ > {pidfile}; exec sleep 60'", "--url",
                f"http://127.0.0.1:{port}/mcp", "--timeout", "800", "--format", "json")
    assert proc.returncode == 3
    (cause,) = json.loads(proc.stdout)["incompleteCauses"]
    assert "did not listen at the target within --startup-timeout" in cause["cause"]
    assert "--server-command" in cause["fix"] and "raise --startup-timeout" in cause["fix"]
    assert "start the server or correct the target" not in proc.stdout
    assert _gone(int(pidfile.read_text()))


@pytest.mark.parametrize(("args", "says"), [
    (("--server-command", "x", "--command", "y"), "a --command server is started by the run itself"),
    (("--server-command", "no-such-program-here", "--url", "http://127.0.0.1:9/mcp"),
     "--server-command: 'no-such-program-here' not found"),
])
def test_server_command_usage_errors(args: tuple[str, ...], says: str) -> None:
    proc = _cli(*args)
    assert proc.returncode == 2 and says in proc.stderr, proc.stderr


def test_the_api_takes_it_as_an_argv() -> None:
    port = _free_port()
    report = tasks_conformance.run(
        server_command=[sys.executable, "-m", "tasks_conformance.server.reference", "--transport", "http",
                        "--port", str(port)],
        url=f"http://127.0.0.1:{port}/mcp", tool_name="slow_compute")
    assert report.outcome == "passed"
