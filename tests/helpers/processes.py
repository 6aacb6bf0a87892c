"""Servers the tests start, each on an ephemeral 127.0.0.1 port, and always stop."""

from __future__ import annotations

import contextlib
import os
import queue
import signal
import socket
import subprocess
import threading
import time
from typing import Any


def stop_process(proc: subprocess.Popen[Any], grace_s: float = 5) -> None:
    """SIGTERM, then SIGKILL after `grace_s`; always reaped, its pipes closed."""
    if proc.poll() is None:
        with contextlib.suppress(OSError):
            proc.terminate()
        try:
            proc.wait(timeout=grace_s)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=grace_s)
    for pipe in (proc.stdin, proc.stdout, proc.stderr):
        if pipe is not None:
            with contextlib.suppress(OSError):
                pipe.close()


def wait_listening(port: int, proc: subprocess.Popen[Any], within_s: float = 20) -> None:
    """Until something accepts on 127.0.0.1:`port`; fails if `proc` exits or `within_s` passes."""
    deadline = time.monotonic() + within_s
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            assert proc.poll() is None, f"the server exited with code {proc.returncode} before listening"
            assert time.monotonic() < deadline, f"nothing listened on port {port} within {within_s:.0f}s"
            time.sleep(0.05)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class HttpServer:
    """A server process that prints `READY <url>` once it listens."""

    def __init__(self, argv: list[str]) -> None:
        self.proc = subprocess.Popen(
            argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
            stdin=subprocess.DEVNULL,
        )
        lines: queue.Queue[str] = queue.Queue()

        def pump() -> None:
            assert self.proc.stdout is not None
            for line in self.proc.stdout:
                lines.put(line)

        threading.Thread(target=pump, daemon=True).start()
        try:
            line = lines.get(timeout=20)
        except queue.Empty:
            self.stop()
            raise RuntimeError(f"server did not become ready: {argv}") from None
        if not line.startswith("READY "):
            self.stop()
            raise RuntimeError(f"unexpected first line {line!r} from {argv}")
        self.url = line.split(None, 1)[1].strip()

    def stop(self) -> None:
        stop_process(self.proc)


def http_server(argv: list[str], *extra: str) -> HttpServer:
    return HttpServer([*argv, "--transport", "http", "--port", "0", *extra])


def _descendants(pid: int) -> list[int]:
    try:
        import psutil
    except ImportError:  # a test extra; without it only the tool's own process group is reached
        return []
    try:
        return [child.pid for child in psutil.Process(pid).children(recursive=True)]
    except psutil.Error:
        return []


def stop_tool(tool: subprocess.Popen[str]) -> tuple[str, str]:
    """Stop a hung tasks-conformance run and everything it started, by process id.

    SIGINT first (the tool then reaps its stdio server, which it runs in a session of its
    own), then SIGKILL to the tool's process group and to any descendant still alive."""
    children = _descendants(tool.pid)
    with contextlib.suppress(ProcessLookupError):
        tool.send_signal(signal.SIGINT)
    try:
        return tool.communicate(timeout=10)
    except subprocess.TimeoutExpired:
        pass
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(tool.pid, signal.SIGKILL)
    for pid in children:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)
    try:
        return tool.communicate(timeout=10)
    except subprocess.TimeoutExpired:
        return "", ""
