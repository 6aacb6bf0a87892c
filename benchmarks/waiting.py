"""Waiting for a timed child exactly: `Popen.wait(timeout=…)`, and so `subprocess.run(…, timeout=…)`
without captured output, polls in steps that grow to 50 ms, which rounds a wall time of 0.12 s up
to the next step. A blocking wait with a watchdog that kills the child keeps the bound and the
precision."""

from __future__ import annotations

import subprocess
import threading
from collections.abc import Mapping, Sequence


def run_waited(argv: Sequence[str], *, env: Mapping[str, str] | None = None, limit_s: float = 120) -> int:
    """Run `argv` (output discarded) to its end, killed after `limit_s`; its exit code."""
    proc = subprocess.Popen(list(argv), env=None if env is None else dict(env), stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    watchdog = threading.Timer(limit_s, proc.kill)
    watchdog.start()
    try:
        return proc.wait()
    finally:
        watchdog.cancel()
