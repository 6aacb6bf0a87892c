"""The tool run by the tests: a server run in this process, the command line as a process."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
from typer.testing import CliRunner

from helpers.zygote import forked
from tasks_conformance.entry.cli import run_cli
from tasks_conformance.server.checks import CATEGORIES
from tasks_conformance.server.runner import Execution, execute
from tasks_conformance.settings.config import build_config


def run(**kwargs: Any) -> Execution:
    """Build a RunConfig from flag-like keywords and execute it in this process."""
    kwargs.setdefault("timeout_ms", 5_000)
    kwargs.setdefault("poll_timeout_ms", 5_000)
    from tasks_conformance.server.checks import CHECKS

    config = build_config(known_check_ids=tuple(CHECKS), known_categories=CATEGORIES, **kwargs)
    return anyio.run(execute, config)


def stdio(argv: Sequence[str], *extra: str, process: bool = False) -> dict[str, Any]:
    """The run's settings for a stdio server: `argv`, forked from the tests' zygote unless its
    process is the test's subject (`process`: its exit, its crash, its restart, what it was given)."""
    command = list(argv) if process else list(forked(argv))
    return {"command": command[0], "args": [*command[1:], "--transport", "stdio", *extra]}


def verdicts(ex: Execution) -> dict[str, str]:
    return {c.id: c.bucket for c in ex.result.checks}


def cli(*args: str, timeout: float = 60, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    full_env = {**os.environ, "NO_COLOR": "1", **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "tasks_conformance", *args], capture_output=True, text=True, timeout=timeout,
        env=full_env, stdin=subprocess.DEVNULL,
    )


def tool(*args: str, env: Mapping[str, str | None] | None = None) -> subprocess.CompletedProcess[str]:
    """What cli() returns, from the tool run in this process (run_cli, the console script's entry
    minus leaving the process), for a test whose subject is what the tool prints, writes and exits
    with, not its interpreter: no Python start and imports per run. `env` overlays the environment
    as cli()'s does, for the run only. Signals, terminals, process groups and imports stay cli()'s."""
    res = invoke(*args, env=env)
    return subprocess.CompletedProcess(["tasks-conformance", *args], res.code, res.stdout, res.stderr)


def interrupt_once_started(argv: list[str], started: Path) -> subprocess.CompletedProcess[str]:
    """Run the tool as its own process, send it SIGINT once `started` exists (a server writes it when
    it starts), and return what it printed; the process is always reaped."""
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            stdin=subprocess.DEVNULL, env={**os.environ, "NO_COLOR": "1"})
    try:
        deadline = time.monotonic() + 30
        while not started.exists() and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.05)
        assert started.exists(), "the server never started"
        proc.send_signal(signal.SIGINT)
        stdout, stderr = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate(timeout=10)
    return subprocess.CompletedProcess(argv, proc.returncode, stdout, stderr)


PREFIX = "tasks-conformance: error: "


@dataclass(frozen=True)
class Outcome:
    code: int
    stdout: str
    stderr: str


def invoke(*args: str, stdin: str | None = None, env: Mapping[str, str | None] | None = None) -> Outcome:
    """What the console script does, minus leaving the process: same entry, same streams. `env`
    overlays the environment for the run only (an empty value is kept as empty, as cli() does; None
    removes the variable)."""
    runner = CliRunner()
    with runner.isolation(input=stdin, env={"NO_COLOR": "1", **(env or {})}) as (out, err, _mixed):
        code = run_cli(list(args))
        sys.stdout.flush()
        sys.stderr.flush()
        return Outcome(code, out.getvalue().decode(), err.getvalue().decode())


def usage_error(*args: str) -> str:
    """The one stderr line of a usage error, without the common prefix."""
    res = invoke(*args)
    assert res.code == 2, res
    assert res.stdout == "" and "Traceback" not in res.stderr
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1, res.stderr
    assert lines[0].startswith(PREFIX)
    return lines[0].removeprefix(PREFIX)
