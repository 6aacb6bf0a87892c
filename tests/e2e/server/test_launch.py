"""launch.execute_soon: a stdio server spawned before the runner is imported is the run's first
connection, a spawn failure reads as before, and a process the run never adopted is reaped."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from helpers.paths import REFERENCE

from tasks_conformance.entry import launch
from tasks_conformance.server.checks import CATEGORIES, CHECKS
from tasks_conformance.settings.config import RunConfig, build_config


def _config(**flags: Any) -> RunConfig:
    flags.setdefault("timeout_ms", 10_000)
    return build_config(known_check_ids=tuple(CHECKS), known_categories=CATEGORIES, **flags)


def _spy(monkeypatch: pytest.MonkeyPatch) -> list[launch.EarlyStdioTransport]:
    made: list[launch.EarlyStdioTransport] = []
    real = launch._early_transport

    def spy(config: RunConfig, wire: Any) -> launch.EarlyStdioTransport | None:
        t = real(config, wire)
        if t is not None:
            made.append(t)
        return t

    monkeypatch.setattr(launch, "_early_transport", spy)
    return made


def test_the_early_process_is_the_runs_connection(monkeypatch: pytest.MonkeyPatch) -> None:
    made = _spy(monkeypatch)
    config = _config(command=REFERENCE[0], args=[*REFERENCE[1:], "--transport", "stdio"],
                     check_ids=["tasks-wire-resolvable"])
    ex = anyio.run(launch.execute_soon, config)
    assert ex.result.outcome == "passed"
    (early,) = made
    assert early.adopted and early.process is not None and early.process.returncode is not None  # reaped
    # One server for the whole run: the first frame went to the process spawned early.
    assert ex.wire.get(1) is not None and ex.wire.get(1).channel == "stdio"


def test_a_command_that_cannot_start_reads_as_before(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    made = _spy(monkeypatch)
    script = tmp_path / "server"
    script.write_text("#!/no/such/interpreter\n")  # exists and is executable, but exec fails
    script.chmod(0o755)
    config = _config(command=str(script), check_ids=["tasks-wire-resolvable"])
    ex = anyio.run(launch.execute_soon, config)
    from tasks_conformance.server.runner import execute

    plain = anyio.run(execute, config)  # what the runner alone reports
    assert ex.result.outcome == plain.result.outcome == "incomplete"
    assert ex.result.incompleteReason == plain.result.incompleteReason
    assert "cannot start the server" in (ex.result.incompleteReason or "")
    assert made[0].adopted and made[0].process is None


def test_a_process_never_adopted_is_stopped_and_reaped(monkeypatch: pytest.MonkeyPatch) -> None:
    made = _spy(monkeypatch)
    import tasks_conformance.server.runner as runner

    async def broken_execute(*_a: Any, **_k: Any) -> Any:
        raise RuntimeError("the runner failed before connecting")

    monkeypatch.setattr(runner, "execute", broken_execute)
    sleeper = _config(command=sys.executable, args=["-c", "import time; time.sleep(60)"])
    with pytest.raises(RuntimeError, match="before connecting"):
        anyio.run(launch.execute_soon, sleeper)
    (early,) = made
    assert not early.adopted
    assert early.process is not None and early.process.returncode is not None


def test_http_runs_spawn_nothing_early(monkeypatch: pytest.MonkeyPatch) -> None:
    made = _spy(monkeypatch)
    config = _config(url="http://127.0.0.1:9/mcp", check_ids=["tasks-wire-resolvable"], timeout_ms=2_000)
    anyio.run(launch.execute_soon, config)
    assert made == []


def test_the_server_is_spawned_before_the_checks_and_runner_are_imported() -> None:
    # Order, not time: what the command line does first on a plain stdio run.
    code = (
        "import sys\n"
        "events = []\n"
        "class Watch:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name in ('tasks_conformance.server.checks', 'tasks_conformance.server.runner'):\n"
        "            events.append(name)\n"
        "sys.meta_path.insert(0, Watch())\n"
        "import anyio\n"
        "real = anyio.open_process\n"
        "async def spy(*a, **k):\n"
        "    events.append('spawn')\n"
        "    return await real(*a, **k)\n"
        "anyio.open_process = spy\n"
        "from tasks_conformance.entry.cli import run_cli\n"
        "run_cli(sys.argv[1:])\n"
        "print(events)\n"
    )
    import subprocess

    server = f"{sys.executable} -m tasks_conformance.server.reference --transport stdio"
    proc = subprocess.run([sys.executable, "-c", code, "--command", server, "--format", "json", "--quiet"],
                          capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    last = proc.stdout.splitlines()[-1]
    assert last == "['spawn', 'tasks_conformance.server.runner', 'tasks_conformance.server.checks']", proc.stderr[-800:]
