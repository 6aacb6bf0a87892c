"""One configured run from the command line: the server spawned early, the live progress line,
the baseline step, every report, and the exit code the result maps to."""

from __future__ import annotations

import shutil
import sys
from typing import TYPE_CHECKING

import typer

from tasks_conformance.core.result import EXIT_CODES, EXIT_INTERRUPTED
from tasks_conformance.reporters.output import (
    ReportTargets,
    in_ci,
    prepare_reports,
    stdout_report,
    want_color,
    write_reports,
)
from tasks_conformance.server.check_catalog import catalog

if TYPE_CHECKING:
    from tasks_conformance.server.runner import Execution
    from tasks_conformance.settings.config import RunConfig


def run_one(config: RunConfig) -> int:
    """Run a configured conformance check; returns the exit code."""
    import anyio

    from tasks_conformance.entry.launch import execute_soon  # spawns a stdio server before importing the runner
    from tasks_conformance.reporters import ProgressLine
    from tasks_conformance.reporters.progress import RunProgress

    targets = prepare_reports(config)
    try:
        live = sys.stderr.isatty() and not config.quiet and not in_ci()
        with ProgressLine(enabled=live) as line:
            # Phase, time, the task's status and polls, time left: read from the run as it goes.
            state = RunProgress(config.poll_timeout_s)
            line.follow(state)
            execution = anyio.run(execute_soon, config, state.say, state.on_frame if line.active else None)
        execution = _after_run(config, execution)
        if config.debug:
            _print_tracebacks(execution)
        for problem in _write_reports(config, targets, execution):
            typer.echo(f"tasks-conformance: reporter error: {problem}", err=True)
        if execution.result.interrupted:
            return EXIT_INTERRUPTED
        return EXIT_CODES[execution.result.outcome]
    finally:
        targets.close()


def _print_tracebacks(execution: Execution) -> None:
    """--debug: where each internal error of a probe or check was raised, on stderr, once each."""
    shown: set[str] = set()
    for check in execution.result.checks:
        where = check.details.get("traceback")
        if isinstance(where, str) and where not in shown:
            shown.add(where)
            typer.echo(f"tasks-conformance: internal error behind {check.id}:\n{where.rstrip()}", err=True)


def _after_run(config: RunConfig, execution: Execution) -> Execution:
    """The baseline applied to the result (--baseline), the baseline file written (--update-baseline)."""
    from tasks_conformance.entry.baseline_run import after_run

    execution, written = after_run(config, execution, catalog().check_ids)
    if written is not None:
        typer.echo(f"tasks-conformance: {written}", err=True)
    return execution


def _write_reports(config: RunConfig, targets: ReportTargets, execution: Execution) -> list[str]:
    """Every report and the wire log; stdout gets what the terminal, CI and the flags ask for."""
    from tasks_conformance.reporters import ReportOptions

    tty = sys.stdout.isatty()
    ci = in_ci()
    # --quiet: only the summary line on stdout, whatever the format (files stay full reports).
    stdout_name = "human" if config.quiet else stdout_report(config, targets.stdout_reporter, tty=tty, ci=ci)
    color = want_color(sys.stdout) and stdout_name == "human" and not ci
    width = shutil.get_terminal_size().columns if tty else None
    stdout_options = ReportOptions(color=color, quiet=config.quiet, width=width, verbose=config.verbose,
                                   suite_name=config.junit_suite_name)
    return write_reports(config, targets, execution.result, execution.wire, stdout_name, stdout_options)
