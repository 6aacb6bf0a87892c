"""pytest's hooks for this suite: the fast run and --full, the workers, the suite's time report,
one bytecode cache for every process; and the one shared fixture. What tests share otherwise is in
helpers/."""

from __future__ import annotations

import importlib
import os
import resource
import sys
import time
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers.groups import SLOW_GROUPS, WHOLE_MODULES, whole_module
from helpers.paths import REFERENCE, ROOT
from helpers.processes import HttpServer, http_server
from helpers.sampling import MARKER as MATRIX
from helpers.sampling import SHARE as MATRIX_SHARE
from helpers.sampling import left_out as matrix_left_out
from helpers.sampling import machine_bound as matrix_machine_bound
from helpers.suite_times import SuiteTimes
from helpers.suite_times import lines as times_lines
from helpers.zygote import cpu_s as zygote_cpu_s

from tasks_conformance.reporters import ENTRY_POINT_GROUP


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


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config: pytest.Config) -> None:
    """The fast run spreads its tests over FAST_WORKERS processes (pytest-xdist), unless -n was
    given or xdist is not installed. --full too, with xdist's loadgroup: the modules in a slow group
    as a whole (helpers.groups.whole_module) run on one worker, one module after another as in one
    process (each starts its own pool of servers for its cases, the interop servers are not made to
    run twice at once, and two such pools at once overload two cores: servers then miss their
    start-up deadline), while the other workers take every other test one by one, those marked
    slow on their own too (they joined the one worker until 2026-12-07, which then held the run's
    wall time: 714 s, where the other tests made some 210 s of work for each of the other three).
    So test_report_stability's pool runs beside the other workers' client matrices, on a loaded
    machine: its stored reports mask what timing decides (FLAKY), and a case that still differs
    runs again on its own before it fails (QUIET_RERUNS there).

    The fast run schedules with xdist's worksteal: an idle worker takes tests queued on a busy one,
    so the run does not end on one worker's last slow tests (measured 2026-12-07, 2 cores: 115 and
    116 s against 130 and 123 s with the default load schedule).
    A slow group chosen with -m stays in one process; another -m expression (-m matrix) gets the
    fast run's workers."""
    if not config.pluginmanager.hasplugin("xdist") or os.environ.get("PYTEST_XDIST_WORKER"):
        return
    chosen = config.getoption("-m") or ""
    if any(group in chosen for group in SLOW_GROUPS):
        return
    if getattr(config.option, "numprocesses", None) is None:
        config.option.numprocesses = FAST_WORKERS
        if config.getoption("--full") and not chosen:
            config.option.dist = "loadgroup"
            os.environ[WHOLE_MODULES] = "1"  # the workers inherit it
        elif getattr(config.option, "dist", "no") == "no":
            config.option.dist = "worksteal"


def pytest_report_header(config: pytest.Config) -> str:
    if config.getoption("--full") or config.getoption("-m"):
        return "tasks-conformance: every selected test runs"
    return (f"tasks-conformance: fast run; the slow groups ({', '.join(SLOW_GROUPS)}) are left out, and "
            f"of each test marked {MATRIX} one case in {MATRIX_SHARE} runs (--full runs every test, "
            f"-m {MATRIX} every case of the matrices)")


@pytest.hookimpl(tryfirst=True)  # before xdist's loadgroup reads the groups
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    bound = matrix_machine_bound(items, (str(ROOT), sys.prefix, sys.executable))
    if bound:
        raise pytest.UsageError(f"a matrix case's id names a path of this checkout, so its fast-run sample would "
                                f"change with where the tree is: give its parametrize ids ({bound[0]})")
    # An explicit -m chooses for itself (e.g. -m interop runs only those).
    if config.getoption("-m"):
        return
    if config.getoption("--full"):
        for item in items:  # the whole-module slow groups on one worker, one after another (pytest_cmdline_main)
            if whole_module(getattr(item, "module", None)):
                _join_group(item, "slow-groups")
        return
    slow = [item for item in items if any(item.get_closest_marker(g) for g in SLOW_GROUPS)]
    slow_ids = set(map(id, slow))
    sampled_out = matrix_left_out(item for item in items if id(item) not in slow_ids)
    dropped = slow + sampled_out
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        gone = set(map(id, dropped))
        items[:] = [item for item in items if id(item) not in gone]


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
    """This process's CPU, its reaped children's and its zygote's (whose forked fixtures it reaps
    itself, so they are not this process's children)."""
    own, reaped = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + reaped.ru_utime + reaped.ru_stime + zygote_cpu_s()


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


@pytest.fixture
def reference_http() -> Iterator[HttpServer]:
    server = http_server(REFERENCE)
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def example_plugin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """tests/plugin_pkg (a third-party reporter) made importable with its entry points, without
    pip: a dist-info on sys.path.

    The entry points come from the package's own pyproject.toml, plus one that cannot load.
    """
    meta = tomllib.loads((ROOT / "tests" / "plugin_pkg" / "pyproject.toml").read_text(encoding="utf-8"))
    project = meta["project"]
    site = tmp_path / "site"
    (site / "tc_example_reporter").mkdir(parents=True)
    src = ROOT / "tests" / "plugin_pkg" / "tc_example_reporter" / "__init__.py"
    (site / "tc_example_reporter" / "__init__.py").write_text(src.read_text(encoding="utf-8"))
    dist = site / f"tc_example_reporter-{project['version']}.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {project['name']}\nVersion: {project['version']}\n"
    )
    eps = dict(project["entry-points"][ENTRY_POINT_GROUP])
    eps["example-missing"] = "tc_example_reporter_not_installed:render"
    lines = [f"[{ENTRY_POINT_GROUP}]", *(f"{k} = {v}" for k, v in eps.items())]
    (dist / "entry_points.txt").write_text("\n".join(lines) + "\n")
    monkeypatch.syspath_prepend(str(site))
    sys.modules.pop("tc_example_reporter", None)
    try:
        module = importlib.import_module("tc_example_reporter")
        module.CALLS.clear()
        yield module
    finally:
        sys.modules.pop("tc_example_reporter", None)
