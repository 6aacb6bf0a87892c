"""A client run, for every entry point (the `client` command, the Python API, the pytest plugin,
`suite`): the settings checked (settings/client_config.py), the client runner, the baseline step
and the reports, each the server run's own code. Nothing here judges anything."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

from tasks_conformance.core.errors import UsageError
from tasks_conformance.settings.client_config import ClientCatalog, ClientRunConfig, build_client_run_config

if TYPE_CHECKING:
    from tasks_conformance.client.runner import ClientConfig, ClientExecution
    from tasks_conformance.settings import RunOptions

# The transports the client runner plays (`client demo` runs both).
BUILT_TRANSPORTS = ("http", "stdio")


def client_catalog() -> ClientCatalog:
    """The scenarios (with their eras) and client check ids a client run may name."""
    from tasks_conformance.client.checks import CLIENT_CHECKS
    from tasks_conformance.client.scenarios import SCENARIOS
    from tasks_conformance.core.wires import DIALECTS

    return ClientCatalog(scenarios={s.name: tuple(s.eras) for s in SCENARIOS},
                         eras=tuple(str(wire) for wire in DIALECTS), check_ids=tuple(CLIENT_CHECKS),
                         areas={c.id: c.area for c in CLIENT_CHECKS.values()},
                         reads={c.id: tuple(c.scenarios) for c in CLIENT_CHECKS.values()})


def build_client(options: RunOptions) -> ClientRunConfig:
    """The client run the options describe, checked; a UsageError names the first bad flag."""
    config = build_client_run_config(options, client_catalog())
    if config.transport not in BUILT_TRANSPORTS:
        raise UsageError(f"--transport must be {' or '.join(BUILT_TRANSPORTS)}, got {config.transport!r}")
    from tasks_conformance.client.scenarios import BY_NAME

    elsewhere = [s for s in config.scenarios if config.transport not in BY_NAME[s].transports]
    if elsewhere:
        raise UsageError(f"--scenario {elsewhere[0]}: a scenario of --transport "
                         f"{' or '.join(BY_NAME[elsewhere[0]].transports)} only")
    return config


def runner_config(config: ClientRunConfig) -> ClientConfig:
    """What the client runner takes."""
    from tasks_conformance.client.runner import ClientConfig, default_jobs

    return ClientConfig(command=config.command, eras=config.eras, scenarios=config.scenarios,  # type: ignore[arg-type]
                        timeout_s=config.timeout_ms / 1000, jobs=config.jobs or default_jobs(),
                        cwd=config.cwd, transport=config.transport, profile=config.profile,
                        env=dict(config.env), secrets=config.secrets(), debug=config.output.debug,
                        check_ids=config.check_ids)


async def execute_client_run(config: ClientRunConfig, progress: Callable[[str], None] | None = None,
                             *, say: Callable[[str], None] | None = None) -> ClientExecution:
    """Run the client through every planned scenario, then the baseline step (--baseline marks
    known failures; --update-baseline writes the file and `say`s so)."""
    from tasks_conformance.client.runner import execute_client
    from tasks_conformance.entry.baseline_run import after_run

    execution = await execute_client(runner_config(config), progress)
    execution, written = after_run(config.output, execution, client_catalog().check_ids)
    if written is not None and say is not None:
        say(written)
    return execution


def run_client_cli(config: ClientRunConfig) -> int:
    """`tasks-conformance client`: run, write every report as a server run writes them, and
    return the exit code."""
    import shutil

    import anyio

    from tasks_conformance.core.result import EXIT_CODES, EXIT_INTERRUPTED
    from tasks_conformance.reporters import ReportOptions
    from tasks_conformance.reporters.output import in_ci, prepare_reports, stdout_report, want_color, write_reports

    out = config.output
    targets = prepare_reports(out)  # every path opened before any traffic: a bad one costs nothing
    try:
        try:
            execution = anyio.run(lambda: execute_client_run(config, say=_tell))
        except KeyboardInterrupt:
            _tell("interrupted")
            return EXIT_INTERRUPTED
        tty, ci = sys.stdout.isatty(), in_ci()
        stdout_name = "human" if out.quiet else stdout_report(out, targets.stdout_reporter, tty=tty, ci=ci)
        options = ReportOptions(color=want_color(sys.stdout) and stdout_name == "human" and not ci, quiet=out.quiet,
                                width=shutil.get_terminal_size().columns if tty else None, verbose=out.verbose,
                                suite_name=out.junit_suite_name)
        for problem in write_reports(out, targets, execution.result, execution.wire, stdout_name, options):
            _tell(f"reporter error: {problem}")
        return EXIT_INTERRUPTED if execution.result.interrupted else EXIT_CODES[execution.result.outcome]
    finally:
        targets.close()


def _tell(text: str) -> None:
    print(f"tasks-conformance client: {text}", file=sys.stderr)
