"""Shared test helpers: run the tool in-process or as a subprocess, start HTTP servers on
ephemeral 127.0.0.1 ports and always stop them."""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import queue
import resource
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import anyio
import pytest
from suite_times import SuiteTimes
from suite_times import lines as times_lines

from tasks_conformance.server.runner import Execution, execute
from tasks_conformance.settings.config import build_config

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"
SHARED = ROOT.parent / "shared"
REFERENCE = [sys.executable, "-m", "tasks_conformance.server.reference"]
BROKEN = [sys.executable, str(FIXTURES / "broken_server.py")]
DEMO_INPUT = '{"confirm-1": {"action": "accept", "content": {"confirm": true}}}'


# The slow groups: `python -m pytest -q` leaves them out, `--full` (what .ci/run runs) keeps them.
SLOW_GROUPS = ("interop", "official", "hostile", "packaging", "slow")


def _keep_bytecode() -> None:
    """Every Python process the tests start (servers, clients, the command line, the workers) reads
    compiled modules from one cache under .pytest_cache, written by the first to import each.

    An editable install keeps no bytecode of its own, and where PYTHONDONTWRITEBYTECODE is set (as
    on the machines we measure on) each of the suite's thousands of processes compiled the package
    from source again: 12 to 26 ms of CPU of a process's 40 to 100 ms start (fixtures/broken_client.py,
    `python -m tasks_conformance --help`). The cache lives beside pytest's own, git-ignored, so the
    tree stays as free of bytecode as that setting meant it to be; a prefix the user set is kept."""
    if os.environ.get("PYTHONPYCACHEPREFIX"):
        return
    os.environ["PYTHONPYCACHEPREFIX"] = str(ROOT / ".pytest_cache" / "bytecode")
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)


_keep_bytecode()


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--full", action="store_true", default=False,
                     help=f"run every test, the slow groups too ({', '.join(SLOW_GROUPS)}); "
                     "the default is the fast run")


# The fast run's workers: a test often waits on a server's task and poll interval, so four workers
# keep two cores busy (measured on 2 cores: 308 s wall for 537 s of CPU, the cores 87 % busy).
FAST_WORKERS = 4


# Set for the workers of a --full run: the slow groups run whole on one worker (xdist's loadgroup),
# so the modules that start all their cases at once on a pool of their own may do so.
WHOLE_MODULES = "TASKS_CONFORMANCE_WHOLE_MODULES"


def starts_all_cases(module: ModuleType) -> bool:
    """Whether a module's pool may start every case at once: in one process, or on the --full
    worker that holds the whole module, which it does when the module as a whole is in a slow group
    (its pytestmark); a worker otherwise gets some of the module's tests only."""
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        return True
    if not os.environ.get(WHOLE_MODULES):
        return False
    marks = getattr(module, "pytestmark", [])
    return any(getattr(m, "name", None) in SLOW_GROUPS for m in (marks if isinstance(marks, list) else [marks]))


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config: pytest.Config) -> None:
    """The fast run spreads its tests over FAST_WORKERS processes (pytest-xdist), unless -n was
    given or xdist is not installed. --full too, with xdist's loadgroup: the slow groups run on one
    worker, one module after another as in one process (each starts its own pool of servers for its
    cases, the interop servers are not made to run twice at once, and two such pools at once
    overload two cores: servers then miss their start-up deadline), while the other workers take
    the fast tests one by one. A group chosen with -m stays in one process."""
    if config.getoption("-m") or not config.pluginmanager.hasplugin("xdist"):
        return
    if os.environ.get("PYTEST_XDIST_WORKER"):
        return
    if getattr(config.option, "numprocesses", None) is None and not os.environ.get("PYTEST_XDIST_WORKER"):
        config.option.numprocesses = FAST_WORKERS
        if config.getoption("--full"):
            config.option.dist = "loadgroup"
            os.environ[WHOLE_MODULES] = "1"  # the workers inherit it


def pytest_report_header(config: pytest.Config) -> str:
    if config.getoption("--full") or config.getoption("-m"):
        return "tasks-conformance: every selected test runs"
    return (f"tasks-conformance: fast run; the slow groups ({', '.join(SLOW_GROUPS)}) are left out "
            "(--full runs them)")


@pytest.hookimpl(tryfirst=True)  # before xdist's loadgroup reads the groups
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    # An explicit -m chooses for itself (e.g. -m interop runs only those).
    if config.getoption("-m"):
        return
    if config.getoption("--full"):
        for item in items:  # the slow groups on one worker, one after another (see pytest_cmdline_main)
            if any(item.get_closest_marker(g) for g in SLOW_GROUPS):
                _join_group(item, "slow-groups")
        return
    slow = [item for item in items if any(item.get_closest_marker(g) for g in SLOW_GROUPS)]
    if slow:
        config.hook.pytest_deselected(items=slow)
        kept = set(map(id, slow))
        items[:] = [item for item in items if id(item) not in kept]


def _join_group(item: pytest.Item, group: str) -> None:
    """Put an item in an xdist group, so that loadgroup sends it to the group's one worker.

    The master schedules by the "@group" suffix of the node ids the workers collected, and xdist's
    worker writes no suffix here: a worker parses the command line again, without the --dist the
    master set in pytest_cmdline_main, so its loadgroup is off; and xdist 3.8 writes the suffix to
    `item._nodeid`, which pytest 9.2 no longer reads (it keeps a NodeId in `_id`). Without the
    suffix the groups spread over every worker, each of which started its module's whole pool of
    servers at once: the interop servers missed their start-up deadline on two cores."""
    item.add_marker(pytest.mark.xdist_group(group))
    if not os.environ.get("PYTEST_XDIST_WORKER") or item.nodeid.endswith(f"@{group}"):
        return
    ident = getattr(item, "_id", None)
    parse = getattr(type(ident), "parse", None)
    if ident is not None and callable(parse):  # pytest >= 9.2
        item._id = parse(f"{item.nodeid}@{group}")
    else:
        setattr(item, "_nodeid", f"{item.nodeid}@{group}")  # noqa: B010 - pytest < 9.2 keeps the id there


_TIMES = SuiteTimes()
_STARTED = time.monotonic()


_CPU_KEY = "tasks-conformance-cpu-s"
_CPU_START = pytest.StashKey[float]()


def _cpu_s() -> float:
    own, reaped = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + reaped.ru_utime + reaped.ru_stime


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    """Each phase's CPU time rides on its report (user_properties reach the xdist controller)."""
    outcome = yield
    report = outcome.get_result()
    if call.when == "setup":
        item.stash[_CPU_START] = _cpu_s()
    started = item.stash.get(_CPU_START, None)
    if started is not None:
        now = _cpu_s()
        report.user_properties.append((_CPU_KEY, now - started))
        item.stash[_CPU_START] = now


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    cpu = sum(v for k, v in report.user_properties if k == _CPU_KEY)
    _TIMES.add(report.nodeid, report.duration, cpu)


def _run_kind(config: pytest.Config) -> str:
    """"full" or "fast" for a run of the whole suite (the README's figures come from those only),
    "partial" where paths, -k, -m or --deselect chose the tests."""
    whole = [Path(a).resolve() for a in config.args] in ([ROOT / "tests"], [ROOT])
    if not whole or config.option.keyword or config.option.markexpr or config.option.deselect:
        return "partial"
    return "full" if config.getoption("--full") else "fast"


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    """The suite's time by file and its slowest tests: written after every run (not on a worker),
    printed after a --full or CI run (issue 32: budgets anyone can see)."""
    if os.environ.get("PYTEST_XDIST_WORKER") or not _TIMES.by_test:
        return
    path = _TIMES.write(ROOT, time.monotonic() - _STARTED, _run_kind(config))
    if config.getoption("--full") or os.environ.get("CI"):
        for line in times_lines(_TIMES.document(time.monotonic() - _STARTED)):
            terminalreporter.write_line(line)
        terminalreporter.write_line(f"(written to {path.relative_to(ROOT)}; python benchmarks/suite_time.py prints it)")


def load_module(path: Path, name: str) -> ModuleType:
    """A module of the repository that is no package's (a fixture, a benchmark), loaded by its path."""
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run(**kwargs: Any) -> Execution:
    """Build a RunConfig from flag-like keywords and execute it in this process."""
    kwargs.setdefault("timeout_ms", 5_000)
    kwargs.setdefault("poll_timeout_ms", 5_000)
    from tasks_conformance.server.checks import CATEGORIES, CHECKS

    config = build_config(known_check_ids=tuple(CHECKS), known_categories=CATEGORIES, **kwargs)
    return anyio.run(execute, config)


def stdio(argv: list[str], *extra: str) -> dict[str, Any]:
    return {"command": argv[0], "args": [*argv[1:], "--transport", "stdio", *extra]}


def verdicts(ex: Execution) -> dict[str, str]:
    return {c.id: c.bucket for c in ex.result.checks}


def cli(*args: str, timeout: float = 60, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    full_env = {**os.environ, "NO_COLOR": "1", **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "tasks_conformance", *args], capture_output=True, text=True, timeout=timeout,
        env=full_env, stdin=subprocess.DEVNULL,
    )


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


@pytest.fixture
def reference_http() -> Iterator[HttpServer]:
    server = http_server(REFERENCE)
    try:
        yield server
    finally:
        server.stop()


def load_json(text: str) -> Any:
    return json.loads(text)


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
