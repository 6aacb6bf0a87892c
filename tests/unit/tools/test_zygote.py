"""The tests' zygote (fixtures/zygote.py, fixtures/zygote_launch.py) that tests start their
fixture clients and servers from: to whoever starts it, a forked process is the process itself
(its argv, environment, directory, streams, exit code and signals), and it never outlives its
launcher."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.zygote import LAUNCH, NO_ZYGOTE, forked, usable

pytestmark = pytest.mark.skipif(not usable(), reason=f"no zygote here (not Linux, or {NO_ZYGOTE} is set)")

CLIENT = """
import json, os, sys
line = sys.stdin.readline()
print(json.dumps({"argv": sys.argv, "env": os.environ.get("TC_ZYGOTE_PROBE"), "cwd": os.getcwd(),
                  "stdin": line, "name": __name__}), flush=True)
print("to stderr", file=sys.stderr)
raise SystemExit(3)
"""

SLEEPER = """
import os, sys, time
open(sys.argv[1], "w").write(str(os.getpid()))
time.sleep(60)
"""


CATCHER = """
import os, signal, sys, time
def on_term(signum, frame):
    open(sys.argv[1] + ".term", "w").write("term")
    raise SystemExit(7)
signal.signal(signal.SIGTERM, on_term)
open(sys.argv[1], "w").write(str(os.getpid()))
time.sleep(60)
"""


def _gone(pid: int, within_s: float = 10.0) -> bool:
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.02)
    return False


def _started(path: Path, proc: subprocess.Popen[bytes], within_s: float = 10.0) -> int:
    deadline = time.monotonic() + within_s
    while not (path.exists() and path.read_text()) and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.01)
    return int(path.read_text())


def test_a_forked_client_gets_its_argv_environment_directory_and_streams_and_exits_as_it_did(tmp_path: Path) -> None:
    script = tmp_path / "client.py"
    script.write_text(CLIENT)
    command = forked((sys.executable, str(script), "--flag", "http://127.0.0.1:1/mcp"))
    assert command[:4] == (sys.executable, "-I", "-S", str(LAUNCH))
    proc = subprocess.run(command, input="hello\n", capture_output=True, text=True, timeout=30, cwd=tmp_path,
                          env={**os.environ, "TC_ZYGOTE_PROBE": "seen"})
    assert proc.returncode == 3, proc.stderr
    seen = json.loads(proc.stdout)
    assert seen == {"argv": [str(script), "--flag", "http://127.0.0.1:1/mcp"], "env": "seen", "cwd": str(tmp_path),
                    "stdin": "hello\n", "name": "__main__"}
    assert proc.stderr == "to stderr\n"


@contextlib.contextmanager
def _launched(tmp_path: Path, source: str) -> Iterator[tuple[subprocess.Popen[bytes], int]]:
    """The script `source`, forked from the zygote: its launcher and, once it has started, the
    child's pid; the launcher is killed and reaped at the end whatever the test did."""
    script, marker = tmp_path / "client.py", tmp_path / "pid"
    script.write_text(source)
    proc = subprocess.Popen(forked((sys.executable, str(script), str(marker))), stdin=subprocess.DEVNULL)
    try:
        yield proc, _started(marker, proc)
    finally:
        proc.kill()
        proc.wait(timeout=10)


def test_a_signal_to_the_launcher_reaches_the_client_and_the_launcher_dies_of_it(tmp_path: Path) -> None:
    with _launched(tmp_path, SLEEPER) as (proc, child):
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=10) == -signal.SIGTERM
        assert _gone(child)


def test_a_client_that_handles_the_signal_exits_with_its_own_code(tmp_path: Path) -> None:
    with _launched(tmp_path, CATCHER) as (proc, _child):
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=10) == 7
        assert (tmp_path / "pid.term").read_text() == "term"


def test_a_client_whose_launcher_is_killed_goes_with_it(tmp_path: Path) -> None:
    with _launched(tmp_path, SLEEPER) as (proc, child):
        proc.kill()
        proc.wait(timeout=10)
        assert _gone(child)


def test_only_a_script_or_a_module_of_this_interpreter_is_forked() -> None:
    assert forked((sys.executable, "-c", "pass")) == (sys.executable, "-c", "pass")
    assert forked(("node", "client.js")) == ("node", "client.js")
    assert forked((sys.executable, "-m", "tasks_conformance.client.reference_client"))[2:4] == ("-S", str(LAUNCH))
