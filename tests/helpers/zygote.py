"""The command a test gives the run for a fixture client or server (the reference ones or
breaking ones): `forked(argv)` starts it from this worker's zygote (fixtures/zygote.py, through
fixtures/zygote_launch.py) instead of a fresh interpreter, saving each the 60 to 110 ms of CPU its
imports cost. To the run it is the same process: the same streams, environment, directory, exit
code and signals.

Only where the process is not the subject: a test of what a client or server leaves behind, its
process group, how it starts or how long it takes to, runs the plain command. Where the zygote
cannot run (no AF_UNIX, passed descriptors or fork: not Linux), or TASKS_CONFORMANCE_NO_ZYGOTE is
set, `forked` returns argv itself, so every such test still runs, only slower.
"""

from __future__ import annotations

import atexit
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from helpers.paths import FIXTURES

ZYGOTE = FIXTURES / "zygote.py"
LAUNCH = FIXTURES / "zygote_launch.py"
NO_ZYGOTE = "TASKS_CONFORMANCE_NO_ZYGOTE"
START_S = 20.0  # its preload on a loaded two-core machine takes well under a second

_socket: str | None = None
_failed = False
_pid: int | None = None


def usable() -> bool:
    """Whether this machine and environment let a client fork from the zygote."""
    return (sys.platform == "linux" and hasattr(socket, "send_fds") and hasattr(os, "fork")
            and not os.environ.get(NO_ZYGOTE))


def _start() -> str | None:
    """This worker's zygote, started on first use and stopped (its process group) at exit."""
    global _socket, _failed, _pid
    if _socket is not None or _failed:
        return _socket
    folder = Path(tempfile.mkdtemp(prefix="tc-zygote-"))
    path = folder / "zygote.sock"
    log = (folder / "zygote.log").open("wb")
    proc = subprocess.Popen([sys.executable, str(ZYGOTE), str(path)], stdin=subprocess.DEVNULL,
                            stdout=log, stderr=log, start_new_session=True)
    log.close()
    _pid = proc.pid
    atexit.register(_stop, proc, folder)
    deadline = time.monotonic() + START_S
    while not path.exists() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    if not path.exists():
        _failed = True
        said = (folder / "zygote.log").read_text(errors="replace")[-2000:]
        raise RuntimeError(f"the tests' zygote did not start: {said}")
    _socket = str(path)
    return _socket


def server_launch(client: Sequence[str]) -> Callable[[Sequence[str]], tuple[str, ...]] | None:
    """How a client run's scripted stdio server is started (ClientConfig.server_launch): from the
    zygote too when the client itself is (neither process is the test's subject), saving each
    scenario the ~100 ms of CPU the server's interpreter spends on its imports; None, the plain
    command, for a client run as it is: a test of what a client leaves behind or of its process
    group has the run stop a server it leaked by its verified pid, which only a descendant has."""
    return forked if forked(client) != tuple(str(a) for a in client) else None


def cpu_s() -> float:
    """The CPU this worker's zygote and the children it reaped have used: not the worker's own
    children's, so the suite's time report (conftest.py) adds it to each test's CPU."""
    if _pid is None:
        return 0.0
    try:
        fields = Path(f"/proc/{_pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return 0.0
    # utime, stime, cutime, cstime: fields 14 to 17 of proc(5), the 12th to 15th after the name.
    return sum(int(f) for f in fields[11:15]) / os.sysconf("SC_CLK_TCK")


def _stop(proc: subprocess.Popen[bytes], folder: Path) -> None:
    for sig in (signal.SIGTERM, signal.SIGKILL):
        if proc.poll() is not None:
            break
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            break
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            continue
    shutil.rmtree(folder, ignore_errors=True)


def forked(argv: Sequence[str]) -> tuple[str, ...]:
    """argv (`python SCRIPT ...` or `python -m MODULE ...`) as a command that forks from the zygote."""
    argv = tuple(str(a) for a in argv)
    # A script or a module, as the fixture clients run; `-c CODE` (a test's own client) stays as it is.
    runs_a_file = len(argv) > 1 and (argv[1] == "-m" or argv[1].endswith(".py"))
    if not usable() or argv[0] != sys.executable or not runs_a_file:
        return argv
    path = _start()
    if path is None:
        return argv
    return (sys.executable, "-I", "-S", str(LAUNCH), path, *argv[1:])
