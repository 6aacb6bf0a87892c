"""Where reports go: every destination opened before any traffic (a bad path costs nothing),
what stdout gets, and writing them all once the run is over. The command line and the Python
API share it; they differ only in what stdout gets by default.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping
from typing import IO, TYPE_CHECKING, TextIO, cast

from tasks_conformance.core.errors import UsageError
from tasks_conformance.settings.config import RunConfig

if TYPE_CHECKING:
    from tasks_conformance.core.result import RunResult
    from tasks_conformance.core.wirelog import WireLog
    from tasks_conformance.reporters import ReportOptions


class ReportTargets:
    """Opens every report destination before any traffic, so a bad path costs nothing."""

    def __init__(self) -> None:
        self.stdout_reporter: str | None = None
        self.files: list[tuple[str, str, IO[str]]] = []
        self.wire_log: IO[str] | None = None

    @staticmethod
    def _open(path: str, flag: str, append: bool = False) -> IO[str]:
        try:
            return open(path, "a" if append else "w", encoding="utf-8", newline="\n")
        except OSError as exc:
            raise UsageError(f"{flag}: cannot write {path!r}: {exc.strerror}") from None

    def close(self) -> None:
        for _name, _path, fh in self.files:
            fh.close()
        if self.wire_log is not None:
            self.wire_log.close()


def prepare_reports(config: RunConfig) -> ReportTargets:
    from tasks_conformance.reporters import available_reporters, known_reporter

    targets = ReportTargets()
    try:
        for spec in config.reporters:
            if not known_reporter(spec.name):
                raise UsageError(
                    f"--reporter: unknown reporter {spec.name!r}; available: {', '.join(available_reporters())}"
                )
            if spec.path is None:
                if config.format is not None:
                    raise UsageError(
                        f"--reporter {spec.name} has no path and --format already chose stdout; "
                        f"write it to a file with --reporter {spec.name}=PATH"
                    )
                if targets.stdout_reporter is not None:
                    raise UsageError("only one --reporter may write to stdout; give the others a =PATH")
                targets.stdout_reporter = spec.name
            else:
                fh = ReportTargets._open(spec.path, "--reporter", spec.append)
                targets.files.append((spec.name, spec.path, fh))
        if config.wire_log:
            targets.wire_log = ReportTargets._open(config.wire_log, "--wire-log")
    except UsageError:
        targets.close()
        raise
    return targets


def in_ci(environ: Mapping[str, str] | None = None) -> bool:
    """CI=true (or any value but empty, 0, false, no): GitHub Actions, GitLab, CircleCI… set it."""
    value = (os.environ if environ is None else environ).get("CI", "")
    return value.strip().lower() not in ("", "0", "false", "no")


def stdout_report(config: RunConfig, stdout_reporter: str | None, *, tty: bool, ci: bool) -> str:
    """What stdout gets. An explicit choice wins (`--reporter NAME` without a path, or `--format`);
    otherwise the human report on a terminal, in CI (CI=true), or when the reports went to files
    (`--reporter NAME=PATH`): a build log is read by people. JSON only off a terminal, outside
    CI, with no report file asked for: a script piping the output."""
    if stdout_reporter is not None:
        return stdout_reporter
    if config.format is not None:
        return config.format
    if tty or ci or any(spec.path is not None for spec in config.reporters):
        return "human"
    return "json"


def want_color(stream: IO[str]) -> bool:
    if os.environ.get("NO_COLOR"):
        return False
    return stream.isatty()


def write_reports(config: RunConfig, targets: ReportTargets, result: RunResult, wire: WireLog,
                  stdout_name: str | None, stdout_options: ReportOptions) -> list[str]:
    """Every report and the wire log; returns what failed (a reporter never sets the exit code).
    stdout gets `stdout_name` (nothing when None); files get the plain, full report."""
    from tasks_conformance.reporters import ReportOptions, render, write_wire_log

    jobs: list[tuple[str, TextIO, ReportOptions]] = []
    if stdout_name is not None:
        jobs.append((stdout_name, sys.stdout, stdout_options))
    plain = ReportOptions(color=False, quiet=False, verbose=config.verbose, suite_name=config.junit_suite_name)
    jobs += [(name, cast(TextIO, fh), plain) for name, _path, fh in targets.files]
    problems = write_each(jobs, lambda name, out, options: render(name, result, out, options))
    if targets.wire_log is not None:
        write_wire_log(wire, cast(TextIO, targets.wire_log))
    sys.stdout.flush()
    return problems


def write_each(jobs: list[tuple[str, TextIO, ReportOptions]],
               write: Callable[[str, TextIO, ReportOptions], None]) -> list[str]:
    """`write` each (reporter, stream, options) job; returns the reporters that failed. A file
    appended to (NAME=+PATH) after earlier content gets a blank line first."""
    from tasks_conformance.reporters import ReporterError

    problems: list[str] = []
    for name, out, options in jobs:
        if out is not sys.stdout and out.tell() > 0:
            out.write("\n")
        try:
            write(name, out, options)
        except ReporterError as exc:
            problems.append(str(exc))
    return problems
