"""The pytest plugin (entry point `pytest11`): conformance inside a server project's own tests.

Two ways in, both inert until used (importing this module loads only pytest and the stdlib):

* the `tasks_conformance` fixture, whose `check(...)` runs the checks with `tasks_conformance.run`'s
  keywords and fails the test with a summary of what failed:

      def test_tasks(tasks_conformance):
          tasks_conformance.check(command=["python", "server.py"], tool_name="long_job")

* `pytest --tasks-conformance-command "python server.py" --tasks-conformance-tool long_job` (or
  `--tasks-conformance-url URL`): every selected check becomes its own test item,
  `tasks-conformance::<check id>`, passed, failed with the check's message and evidence frames, or
  skipped with the reason (with --tasks-conformance-strict a check that could not run fails).
  One run serves them all; it starts with the first of them that runs. Without one of those two
  options no item is collected.

* `pytest --tasks-conformance-client-command "node my-client.js"`: the same for a tasks client
  (`tasks-conformance client`'s run): one item per client check, `tasks-conformance-client::<check
  id>`. Its options are the client's settings marked for the plugin (`--tasks-conformance-client-
  era`, `-scenario`, `-timeout`, `-baseline`, `-wire-log`, `-config`); with both a server and a
  client option, both runs are collected.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from collections.abc import Iterable

    from _pytest._code.code import ExceptionInfo, TerminalRepr

    from tasks_conformance.core.result import CheckResult
    from tasks_conformance.entry.api import RunReport
    from tasks_conformance.settings import Setting

GROUP = "tasks-conformance"
COLLECTOR_NAME = "tasks-conformance"
SERVER, CLIENT = "server", "client"  # the subjects (settings/), without importing the schema yet
COLLECTOR_NAMES = {SERVER: COLLECTOR_NAME, CLIENT: f"{COLLECTOR_NAME}-client"}


# The plugin's wording for its target options (the rest is the command line's help, word for word).
_NOTES = {"command": " (split like a shell would); collects one item per check", "url": "; collects one item per check"}


def plugin_options(subject: str = SERVER) -> list[tuple[str, Setting]]:
    """The run settings the plugin has an option for (settings/: `pytest=`), with the option: a
    server's --tasks-conformance-<name>, a client's --tasks-conformance-client-<name>."""
    from tasks_conformance.settings import SETTINGS

    prefix = f"--{COLLECTOR_NAMES[subject]}"
    return [(f"{prefix}-{spec.pytest}", spec) for spec in SETTINGS.values() if spec.pytest and subject in spec.subjects]


def pytest_addoption(parser: pytest.Parser) -> None:
    from tasks_conformance.settings import INT, MS

    group = parser.getgroup(GROUP, "MCP Tasks conformance (one test item per check)")
    options = [(option, spec, SERVER) for option, spec in plugin_options()]
    options += [(option, spec, CLIENT) for option, spec in plugin_options(CLIENT)]
    for option, spec, subject in options:
        help = spec.help_for(subject) + (_NOTES.get(spec.name, "") if subject == SERVER else "")
        if spec.kind.repeatable:
            group.addoption(option, metavar=spec.metavar, action="append", default=[], help=help)
        elif spec.kind in (INT, MS):
            group.addoption(option, metavar=spec.metavar, type=int, default=spec.default, help=help)
        else:
            group.addoption(option, metavar=spec.metavar, default=spec.default, help=help)
    group.addoption(STRICT, action="store_true", default=False,
                    help="A check that could not run fails its item instead of skipping (conformance not established)")


STRICT = f"--{GROUP}-strict"


def _settings(config: pytest.Config, subject: str = SERVER) -> dict[str, Any] | None:
    """The subject's run settings the options give, or None when no target option (nor a config
    file) was given for it."""
    given = {spec.name: config.getoption(option) for option, spec in plugin_options(subject)}
    if given["command"] is None and given.get("url") is None and given["config"] is None:
        return None
    settings = {name: value for name, value in given.items() if name != "command"}
    if subject == CLIENT:
        settings["subject"] = CLIENT
    if given["command"] is not None:
        try:
            settings["command"] = shlex.split(given["command"])
        except ValueError as exc:
            raise pytest.UsageError(f"--{COLLECTOR_NAMES[subject]}-command: {exc}") from None
    return settings


@dataclass
class _Session:
    """The one conformance run behind every item: settings checked at configure time, run once."""

    settings: dict[str, Any]
    check_ids: tuple[str, ...]
    report: RunReport | None = None
    error: BaseException | None = None
    ran: bool = field(default=False)

    def result(self) -> RunReport:
        if not self.ran:
            self.ran = True
            from tasks_conformance.entry.api import run

            try:
                self.report = run(**self.settings)
            except Exception as exc:  # every item reports it, not only the first
                self.error = exc
        if self.error is not None:
            raise RuntimeError(f"tasks-conformance could not run: {type(self.error).__name__}: {self.error}")
        assert self.report is not None
        if self.report.result.interrupted:
            raise KeyboardInterrupt  # Ctrl-C during the run stops pytest as it would anywhere else
        return self.report


_SESSIONS = pytest.StashKey[dict[str, _Session]]()  # subject -> its run


def _check_ids(settings: dict[str, Any], subject: str) -> tuple[str, ...]:
    """The checks the run will judge (its items), its settings checked as the command line's."""
    from tasks_conformance.entry.api import build_client_config, build_config

    if subject == CLIENT:
        from tasks_conformance.client.checks import CLIENT_CHECKS
        from tasks_conformance.entry.client_run import runner_config

        judges = runner_config(build_client_config(**settings)).judges
        return tuple(check.id for check in CLIENT_CHECKS.values() if judges(check))
    from tasks_conformance.server.runner import select_checks

    return tuple(spec.id for spec in select_checks(build_config(**settings)))


@pytest.hookimpl(trylast=True)
def pytest_configure(config: pytest.Config) -> None:
    from tasks_conformance.entry.api import ConfigError

    sessions: dict[str, _Session] = {}
    for subject in COLLECTOR_NAMES:
        settings = _settings(config, subject)
        if settings is None:
            continue
        try:
            sessions[subject] = _Session(settings, _check_ids(settings, subject))
        except ConfigError as exc:
            raise pytest.UsageError(f"{COLLECTOR_NAMES[subject]}: {exc}") from None
    if sessions:
        config.stash[_SESSIONS] = sessions


@pytest.hookimpl(tryfirst=True)  # before -k/-m deselection, so they apply to the checks too
def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    for subject in config.stash.get(_SESSIONS, {}):
        name = COLLECTOR_NAMES[subject]
        # A path of its own (never opened) so that reports place the checks under "tasks-conformance".
        collector = ConformanceCollector.from_parent(session, name=name, nodeid=name, path=config.rootpath / name)
        collector.subject = subject
        checks = list(collector.collect())
        # Reported like any collected node, so "collected N items" and the collect hooks count them.
        nodes: list[pytest.Item | pytest.Collector] = list(checks)
        session.ihook.pytest_collectreport(report=pytest.CollectReport(collector.nodeid, "passed", None, nodes))
        items.extend(checks)


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    for subject, state in config.stash.get(_SESSIONS, {}).items():
        if state.report is None:
            continue
        result = state.report.result
        terminalreporter.write_sep("-", COLLECTOR_NAMES[subject])
        terminalreporter.write_line(f"{result.outcome}: {result.summary} ({result.target})")
        if result.incompleteReason:
            terminalreporter.write_line(result.incompleteReason)


class ConformanceCollector(pytest.Collector):
    """The checks of one subject's run, one item each."""

    subject: str = SERVER

    def collect(self) -> Iterable[pytest.Item]:
        state = self.config.stash[_SESSIONS][self.subject]
        return [ConformanceItem.from_parent(self, name=check_id) for check_id in state.check_ids]

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, None, self.name


class CheckFailed(Exception):
    """A conformance check failed; carries its result for the failure report."""

    def __init__(self, check: CheckResult) -> None:
        super().__init__(check.message)
        self.check = check


class ConformanceItem(pytest.Item):
    """One conformance check: its verdict, from the run it shares with the other items."""

    def runtest(self) -> None:
        subject = self.parent.subject if isinstance(self.parent, ConformanceCollector) else SERVER
        check = self.config.stash[_SESSIONS][subject].result().check(self.name)
        _junit_classname(self, check.section)
        self.user_properties.append(("category", check.category))
        if check.requirements:
            self.user_properties.append(("requirements", " ".join(check.requirements)))
        if check.bucket == "could-not-run" and self.config.getoption(STRICT):
            pytest.fail(f"could-not-run: {check.message}", pytrace=False)
        if check.status == "skipped":
            # Reported at the item (as a skip mark would be), not at this line of the plugin.
            # A deferral names the check it defers to ("deferred to OWNER: …").
            reason = f"deferred to {check.deferredTo}" if check.deferredTo else check.skipReason
            raise pytest.skip.Exception(f"{reason}: {check.message}", _use_item_location=True)
        if check.bucket == "known" and check.baseline is not None:
            raise pytest.skip.Exception(f"known failure: {check.baseline.reason}", _use_item_location=True)
        if check.status == "failed":
            raise CheckFailed(check)

    def repr_failure(self, excinfo: ExceptionInfo[BaseException], style: Any = None) -> str | TerminalRepr:
        if isinstance(excinfo.value, CheckFailed):
            return describe_failure(excinfo.value.check)
        if isinstance(excinfo.value, RuntimeError) and str(excinfo.value).startswith("tasks-conformance"):
            return str(excinfo.value)
        return super().repr_failure(excinfo, style=style)

    def reportinfo(self) -> tuple[Path, int, str]:
        return self.path, 0, f"{self.parent.name if self.parent else COLLECTOR_NAME}: {self.name}"


def _junit_classname(item: pytest.Item, area: str) -> None:
    """The item's JUnit classname is its check's spec area, as the command line's junit-xml has it
    (pytest's own would be the collector's name for every check). pytest has no public hook for it
    on an item that takes no fixtures: its junitxml plugin's reporter is asked directly, and a
    pytest without it keeps its own classname."""
    try:
        from _pytest.junitxml import xml_key
    except ImportError:
        return
    xml = item.config.stash.get(xml_key, None)
    if xml is not None:
        xml.node_reporter(item.nodeid).add_attribute("classname", f"tasks_conformance.{area}")


def describe_failure(check: CheckResult) -> str:
    """A failed check for a person: id and title, message, requirement ids, warnings, frames."""
    lines = [f"{check.id}: {check.title}", f"  {check.message}"]
    if check.requirements:
        lines.append(f"  requirements: {', '.join(check.requirements)}")
    lines += [f"  warning: {w.text}" for w in check.warnings]
    if check.frames:
        lines.append("  evidence frames:")
        lines += [f"    {frame}" for frame in check.frames]
    return "\n".join(lines)


class ConformanceFixture:
    """What the `tasks_conformance` fixture gives a test: `check` (run and fail on a failure) and
    `run` (run and return the report). Both take `tasks_conformance.run`'s keywords."""

    def run(self, **settings: Any) -> RunReport:
        """Run and return the report; a setting the command line would refuse fails the test."""
        from tasks_conformance.entry.api import ConfigError, run

        try:
            report: RunReport = run(**settings)
        except ConfigError as exc:
            pytest.fail(f"tasks-conformance: {exc}", pytrace=False)
        return report

    def check(self, *, allow_incomplete: bool = False, **settings: Any) -> RunReport:
        """Run, and fail the test unless every selected check passed (or was not applicable).
        An incomplete run (a check could not run) fails too, unless `allow_incomplete`."""
        report = self.run(**settings)
        if report.outcome == "failed" or (report.outcome == "incomplete" and not allow_incomplete):
            pytest.fail(report.failure_summary(), pytrace=False)
        return report


@pytest.fixture
def tasks_conformance() -> ConformanceFixture:
    """Run MCP Tasks conformance checks from a test: `tasks_conformance.check(command=[...], tool_name=...)`."""
    return ConformanceFixture()
