"""The Python API: run the conformance checks from a test suite or a script.

    import tasks_conformance

    report = tasks_conformance.run(command=["python", "server.py"], tool_name="long_job")
    assert report.passed, report.failure_summary()

`run` and `run_async` take the command line's settings as keyword arguments, named as the fields
of `RunOptions` (`url`, `command`, `tool_name`, `tool_args`, `check_ids`, `timeout_ms`…): the
settings schema (settings/) declares them, and `RunSettings` types them for editors. They are
validated by the same `build_run_config` as the flags, so a bad value raises `ConfigError` with
the message the command line prints. The run is the runner's, unchanged; what comes back is a
`RunReport`: the `RunResult` every reporter reads, and the wire log it rests on.

`subject="client"` judges a tasks client instead, as `tasks-conformance client` does: `command`
is the client under test (started once per scenario with the scripted server's URL appended),
and the client's settings apply (`era`, `scenarios`, `timeout_ms` per scenario, `jobs`,
`profile`, `baseline`, the reports):

    report = tasks_conformance.run(subject="client", command=["node", "my-client.js"], era="both")

Importing this module is cheap: the runner (httpx, anyio and the checks) loads on the first run.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Coroutine, Mapping
from dataclasses import dataclass, fields, replace
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar, Unpack, cast

from tasks_conformance.settings import API, CLIENT, SERVER, SETTINGS, SUBJECTS, JsonSetting, RunSettings

if TYPE_CHECKING:
    from tasks_conformance.core.result import CheckResult, RunResult
    from tasks_conformance.core.wirelog import WireLog
    from tasks_conformance.reporters.output import ReportTargets
    from tasks_conformance.settings.client_config import ClientRunConfig
    from tasks_conformance.settings.config import RunConfig, RunOptions

__all__ = ["ConfigError", "JsonSetting", "RunReport", "RunSettings", "build_client_config", "build_config", "run",
           "run_async"]

Progress = Callable[[str], None]
P = ParamSpec("P")
T = TypeVar("T")


class ConfigError(ValueError):
    """The settings cannot be run; the message is the command line's usage error, word for word."""


@dataclass(frozen=True)
class RunReport:
    """One finished run: `result` (what every reporter reads) and `wire` (every frame, in order)."""

    result: RunResult
    wire: WireLog
    report_errors: tuple[str, ...] = ()  # third-party reporters that failed (never the run's outcome)

    @property
    def outcome(self) -> str:
        """passed | failed | incomplete, as the command line's exit code says it."""
        return self.result.outcome

    @property
    def passed(self) -> bool:
        return self.result.passed

    @property
    def exit_code(self) -> int:
        """The exit code the command line would have returned for this run."""
        from tasks_conformance.core.result import EXIT_CODES, EXIT_INTERRUPTED

        return EXIT_INTERRUPTED if self.result.interrupted else EXIT_CODES[self.result.outcome]

    @property
    def checks(self) -> list[CheckResult]:
        return self.result.checks

    def check(self, check_id: str) -> CheckResult:
        """The result of one check; KeyError when it was not selected."""
        for c in self.result.checks:
            if c.id == check_id:
                return c
        raise KeyError(check_id)

    @property
    def failed(self) -> list[CheckResult]:
        return [c for c in self.result.checks if c.bucket == "failed"]

    @property
    def could_not_run(self) -> list[CheckResult]:
        return [c for c in self.result.checks if c.bucket == "could-not-run"]

    def failure_summary(self) -> str:
        """What went wrong, for a test failure: the summary line, then each failed check (id,
        message, requirement ids), then why the run is incomplete if it is."""
        lines = [f"tasks-conformance {self.result.outcome} against {self.result.target}: {self.result.summary}"]
        for c in self.failed:
            cites = f" [{', '.join(c.requirements)}]" if c.requirements else ""
            lines.append(f"  FAILED {c.id}: {c.message}{cites}")
        for c in self.could_not_run:
            lines.append(f"  COULD NOT RUN {c.id}: {c.message}")
        if self.result.incompleteReason and not self.could_not_run:  # nothing tested (P-46), or interrupted
            lines.append(f"  {self.result.incompleteReason}")
        return "\n".join(lines)

    def wire_ndjson(self) -> str:
        """The wire log as NDJSON, secrets redacted: what --wire-log writes."""
        from io import StringIO

        from tasks_conformance.reporters import write_wire_log

        out = StringIO()
        write_wire_log(self.wire, out)
        return out.getvalue()


def _options(settings: Mapping[str, Any]) -> RunOptions:
    """Keyword settings -> RunOptions, by each setting's kind (settings/values.py, the converter
    the config file and a suite target use too): a command as an argv list, JSON settings as
    mappings, pairs (env, headers, probes, probe_args) as mappings, paths as path-like objects,
    repeatable settings as any sequence. None leaves a setting at what None means for it."""
    from tasks_conformance.settings import RunOptions
    from tasks_conformance.settings.values import WrongForm, converted, split_argv

    unknown = sorted(set(settings) - {name for name, s in SETTINGS.items() if API in s.applies})
    if unknown:
        raise TypeError(f"unknown setting{'s' if len(unknown) > 1 else ''}: {', '.join(map(_did_you_mean, unknown))}")
    values: dict[str, Any] = {}
    for name, value in settings.items():
        if name == "command" and isinstance(value, list | tuple) and not value:
            raise ConfigError("--command: the command is empty")
        try:
            values[name] = value if value is None else converted(SETTINGS[name].kind, value)
        except WrongForm as exc:
            raise TypeError(f"{name} must be {exc.words}, got {type(value).__name__}") from None
    command = values.get("command")
    if isinstance(command, tuple):
        values["command"], values["args"] = split_argv(command, values.get("args", ()))
    return RunOptions(**values)


def _did_you_mean(name: str) -> str:
    """An unknown keyword, with the setting it was likely meant to be: the one whose flag it spells
    (`scenario` for `--scenario`, whose keyword is `scenarios`), else the closest name."""
    import difflib

    names = [n for n, s in SETTINGS.items() if API in s.applies]
    by_flag = [n for n in names if SETTINGS[n].key.replace("-", "_") == name.replace("-", "_")]
    close = by_flag or difflib.get_close_matches(name, names, n=1)
    return f"{name} (did you mean {close[0]}?)" if close else name


def _subject(settings: Mapping[str, Any]) -> str:
    """The subject the keywords name (`subject`, default a server); a keyword of the other
    subject's only is a ConfigError, as an option `client` lacks is a usage error there."""
    subject = settings.get("subject", SERVER)
    if subject not in SUBJECTS:
        raise ConfigError(f"subject must be {' or '.join(SUBJECTS)}, got {str(subject)[:40]!r}")
    other = [name for name in settings if name in SETTINGS and subject not in SETTINGS[name].subjects]
    if other:
        whose = "a client run (subject='client')" if subject == SERVER else "a server run"
        raise ConfigError(f"{other[0]} is a setting of {whose}, not of this one")
    return str(subject)


def _with_config_file(options: RunOptions, build: Callable[[RunOptions], T], subject: str = SERVER) -> T:
    """`build` over the settings with `config=PATH`: the file's settings under the keywords given
    (a keyword left at its default does not override the file; a client run reads the file's
    [client] table); an error about a value of the file names the file's key. The API reads a
    file only when `config` names one."""
    if options.config is None:
        return build(options)
    from tasks_conformance.settings.config import RunOptions
    from tasks_conformance.settings.config_file import resolve

    defaults = RunOptions()
    given = {f.name for f in fields(RunOptions) if getattr(options, f.name) != getattr(defaults, f.name)}
    resolved = resolve(options, given, discover=False, subject=subject)
    if resolved.era == "both":
        from tasks_conformance.core.errors import UsageError

        # One call is one run; --era both's two runs and combined report are the command line's.
        raise UsageError(f"{resolved.file}: era = {resolved.era!r} is for the command line; from Python, "
                         "call run() once per protocol_version")
    from tasks_conformance.core.errors import UsageError
    from tasks_conformance.settings.config_file import from_where

    try:
        if resolved.era != "auto" and subject == SERVER:  # legacy or extension: the one run pinned
            from tasks_conformance.entry.multirun import pin_era

            return cast(T, pin_era(cast("RunConfig", build(resolved.options)), resolved.era))
        return build(resolved.options)
    except UsageError as exc:
        raise from_where(exc, resolved) from None


def build_config(**settings: Any) -> RunConfig:
    """The settings (`run`'s keywords), validated as the command line validates its flags, check
    ids and categories against the registry; raises ConfigError with the command line's message."""
    from tasks_conformance.core.errors import UsageError
    from tasks_conformance.server.checks import CATEGORIES, ordered_checks
    from tasks_conformance.settings.config import Catalog, build_run_config

    if _subject(settings) != SERVER:
        raise ConfigError("build_config checks a server run's settings; use build_client_config for subject='client'")
    try:
        checks = ordered_checks()
        catalog = Catalog(tuple(c.id for c in checks), CATEGORIES, tuple(dict.fromkeys(c.area for c in checks)))
        return _with_config_file(_options(settings), lambda options: build_run_config(options, catalog))
    except UsageError as exc:
        raise ConfigError(str(exc)) from None


def build_client_config(**settings: Any) -> ClientRunConfig:
    """`subject="client"`'s settings, validated as `tasks-conformance client` validates its
    flags; raises ConfigError with the command line's message."""
    from tasks_conformance.core.errors import UsageError
    from tasks_conformance.entry.client_run import build_client

    try:
        return _with_config_file(_options(settings), build_client, CLIENT)
    except UsageError as exc:
        raise ConfigError(str(exc)) from None


async def run_async(*, progress: Progress | None = None, **settings: Unpack[RunSettings]) -> RunReport:
    """Run the conformance checks against one server (or, with `subject="client"`, one client)
    and return the `RunReport`.

    The keywords are the command line's flags (`--tool-name` is `tool_name`, `--timeout` is
    `timeout_ms`, a repeatable flag takes a sequence), checked by the same code with the same
    messages: a bad value raises `ConfigError`. Python forms are accepted too: `command` as an
    argv list (never split at spaces), `env` and `headers` as mappings, `probes` as {role: tool}
    and `probe_args` as {role: arguments} as well as "ROLE=VALUE" strings, the JSON settings
    (`tool_args`, `input_responses`, `client_capabilities`, `elicitation_response`,
    `sampling_response`) as mappings as well as JSON text, `@file` or `-`.

    Reports named by `reporters` (NAME=PATH) and `wire_log` are written as the command line
    writes them; a reporter without a path, or `format`, writes to standard output (nothing does
    otherwise). A third-party reporter that fails is named in `RunReport.report_errors`.
    `progress`, when given, is called with a short status text as the run goes.

    `baseline` (a file of known failures) marks the failures it lists as known: they do not
    fail the run; `update_baseline` writes such a file from this run's failures. `config` names
    a config file (tasks-conformance.toml, or a pyproject.toml with [tool.tasks-conformance]):
    its settings apply where a keyword is left at its default.
    """
    if _subject(settings) == CLIENT:
        return await _run_client(build_client_config(**settings), progress)
    from tasks_conformance.server.runner import execute

    run_config = build_config(**settings)
    targets = _open_reports(run_config)
    try:
        from tasks_conformance.core.errors import UsageError
        from tasks_conformance.entry.baseline_run import after_run

        execution = await execute(run_config, progress)
        try:
            execution, _written = after_run(run_config, execution)
        except UsageError as exc:
            raise ConfigError(str(exc)) from None
        return _reported(run_config, targets, RunReport(result=execution.result, wire=execution.wire))
    finally:
        if targets is not None:
            targets.close()


async def _run_client(config: ClientRunConfig, progress: Progress | None) -> RunReport:
    """A client run: the client runner, the baseline step and the reports, as the command line's."""
    from tasks_conformance.core.errors import UsageError
    from tasks_conformance.entry.client_run import execute_client_run

    targets = _open_reports(config.output)
    try:
        try:
            execution = await execute_client_run(config, progress)
        except UsageError as exc:  # --update-baseline's file cannot be written
            raise ConfigError(str(exc)) from None
        return _reported(config.output, targets, RunReport(result=execution.result, wire=execution.wire))
    finally:
        if targets is not None:
            targets.close()


def _signature() -> inspect.Signature:
    """run_async's signature as `inspect` and `help()` show it: every setting a keyword, with its
    default (from the schema), then `progress`."""
    keyword = inspect.Parameter.KEYWORD_ONLY
    params = [inspect.Parameter(s.name, keyword, default=s.default, annotation=s.kind.api)
              for s in SETTINGS.values() if API in s.applies]  # both subjects': `subject` says which
    params.append(inspect.Parameter("progress", keyword, default=None, annotation="Progress | None"))
    return inspect.Signature(params, return_annotation="RunReport")


run_async.__signature__ = _signature()  # type: ignore[attr-defined]


def _blocking(fn: Callable[P, Coroutine[Any, Any, T]]) -> Callable[P, T]:
    """`fn` run to completion in an event loop of its own: the same signature, synchronous."""

    @functools.wraps(fn)
    def blocking(*args: P.args, **kwargs: P.kwargs) -> T:
        import anyio

        return anyio.run(functools.partial(fn, *args, **kwargs))

    return blocking


run = _blocking(run_async)
run.__name__ = run.__qualname__ = "run"
run.__doc__ = """Run the conformance checks and return the `RunReport`: `run_async` for synchronous code.

It runs its own event loop, so from code that already runs in one, await `run_async` instead.
The keywords are `run_async`'s (the command line's flags); a bad value raises `ConfigError`."""


# Reports: the command line's own preparation (known reporter names, one writer of stdout,
# every file opened before any traffic so that a bad path costs nothing, the same messages);
# only the default differs: the API writes nothing to stdout unless asked.


def _open_reports(config: RunConfig) -> ReportTargets | None:
    if not (config.reporters or config.wire_log or config.format):
        return None
    from tasks_conformance.core.errors import UsageError
    from tasks_conformance.reporters.output import prepare_reports

    try:
        return prepare_reports(config)
    except UsageError as exc:
        raise ConfigError(str(exc)) from None


def _reported(config: RunConfig, targets: ReportTargets | None, report: RunReport) -> RunReport:
    """The report, with the problems of writing the reports asked for (none asked: as it is)."""
    problems = _write_reports(config, targets, report) if targets is not None else []
    return replace(report, report_errors=tuple(problems)) if problems else report


def _write_reports(config: RunConfig, targets: ReportTargets, report: RunReport) -> list[str]:
    """Every report asked for and the wire log; stdout gets a report only when one was asked for."""
    from tasks_conformance.reporters import PLAIN
    from tasks_conformance.reporters.output import write_reports

    stdout_name = targets.stdout_reporter or config.format
    return write_reports(config, targets, report.result, report.wire, stdout_name, PLAIN)
