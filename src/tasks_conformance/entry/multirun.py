"""Several runs in one invocation: `--era both` (one run per era) and `suite FILE` (one run per
target), combined into one report and one exit code.

Each run is the runner's own `execute`, unchanged and independent: its own connection, wire log
and result. This module only plans the runs, runs them with bounded concurrency in one event
loop, and combines what they return. Signals: a process has one handler per signal and event
loop, so the runs do not each watch SIGINT/SIGTERM; one watcher here sets an event that every
run shares (`execute(..., interrupt=event)`), and runs not yet started are reported as such.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, TextIO

from tasks_conformance.core.eras import SERVER_RUN_ERAS
from tasks_conformance.core.errors import UsageError

# The combined result is plain data below this module and the reporters (reporters/combined.py reads it).
from tasks_conformance.core.multirun_result import Combined, Kind, NamedRun
from tasks_conformance.core.result import RunResult
from tasks_conformance.core.wires import DIALECTS
from tasks_conformance.settings.config import RunConfig

if TYPE_CHECKING:
    from types import TracebackType

    from tasks_conformance.core.wirelog import WireLog
    from tasks_conformance.reporters.progress import RunProgress
    from tasks_conformance.settings.client_config import ClientRunConfig

ERA_CHOICES = SERVER_RUN_ERAS

# `--era both`: each era's run is the single run with `--expect-wire` naming that era's wire, so
# the session pins the era, and a server without it gets the same explained verdict as there.
ERA_WIRES: tuple[tuple[str, str], ...] = tuple((d.protocol_version, str(wire)) for wire, d in DIALECTS.items())


@dataclass(frozen=True)
class Planned:
    """One run to make: what reports call it, its configuration, and the era it pins if any."""

    name: str
    config: RunConfig
    era: str | None = None  # set by --era both (also inside a suite target with era = "both")
    target: str | None = None  # the suite target's name (without the era)
    client: ClientRunConfig | None = None  # a client target's run (`config` is then its reports' part)


def era_plan(config: RunConfig, era: str) -> list[Planned]:
    """`--era auto` is the one negotiated run; `--era legacy|extension` one run pinned by naming
    that wire (as --expect-wire does); `--era both` one run per era, each pinned so. Pinning flags
    of their own that name another era contradict it: a usage error."""
    if era not in ERA_CHOICES:
        raise UsageError(f"--era must be {', '.join(ERA_CHOICES[:-1])} or {ERA_CHOICES[-1]}, got {era!r}")
    if era == "auto":
        return [Planned("", config)]
    if era != "both":
        return [Planned("", pin_era(config, era))]
    if config.protocol_version is not None:
        raise UsageError("--era both runs each protocol version in turn; leave out --protocol-version")
    if config.expect_wire != "any":
        raise UsageError("--era both runs each wire in turn; leave out --expect-wire")
    return [Planned(version, replace(config, expect_wire=wire), era=version)  # type: ignore[arg-type]
            for version, wire in ERA_WIRES]


def pin_era(config: RunConfig, era: str) -> RunConfig:
    """The run on `era`'s wire only (`--era legacy|extension`): its --expect-wire; a
    --protocol-version or --expect-wire of the other era is a usage error."""
    version = dict((wire, v) for v, wire in ERA_WIRES)[era]
    if config.protocol_version is not None and config.protocol_version != version:
        raise UsageError(f"--era {era} runs {version}; --protocol-version {config.protocol_version} "
                         "names the other era")
    if config.expect_wire not in ("any", era):
        raise UsageError(f"--era {era} expects the {era} wire; --expect-wire {config.expect_wire} names the other")
    return replace(config, expect_wire=era)  # type: ignore[arg-type]  # one of ERA_WIRES' wires


Say = Callable[[int, str], None]
Follow = Callable[[int, "RunProgress"], None]


async def run_all(planned: Sequence[Planned], kind: Kind, *, jobs: int = 1, say: Say | None = None,
                  debug: bool = False, follow: Follow | None = None) -> Combined:
    """Run every planned run, at most `jobs` at a time, and return them combined (planned order).
    `follow`: given each run's RunProgress as it starts (the live display reads it)."""
    import anyio

    from tasks_conformance.reporters.progress import RunProgress
    from tasks_conformance.server.runner import execute

    interrupt = anyio.Event()
    limiter = anyio.CapacityLimiter(max(1, jobs))
    done: dict[int, NamedRun] = {}
    tell: Say = say or (lambda _i, _text: None)

    async def one(i: int, p: Planned) -> None:
        async with limiter:
            if interrupt.is_set():
                return  # reported below as never started
            tell(i, "starting")
            state = RunProgress(p.config.poll_timeout_s)

            def hear(text: str) -> None:
                state.say(text)
                tell(i, text)

            if follow is not None:
                follow(i, state)
            try:
                if p.client is not None:  # a client target: `tasks-conformance client`'s run, baseline included
                    from tasks_conformance.entry.client_run import execute_client_run

                    done[i] = _named(p, *_result_and_wire(await execute_client_run(p.client, hear)))
                    tell(i, f"done: {done[i].result.outcome}")
                    return
                ex = await execute(p.config, hear, state.on_frame if follow is not None else None,
                                   interrupt=interrupt)
                if p.config.baseline is not None:  # known failures, as in a single run
                    from tasks_conformance.core import baseline

                    pinned = p.config.expect_wire if p.config.expect_wire != "any" else None
                    ex = replace(ex, result=baseline.apply(ex.result, p.config.baseline, wire=pinned))
            except Exception as exc:  # our bug in one run must not lose every other run's report
                if debug:
                    raise
                done[i] = _named(p, _unfinished(p, "internal error in this run (a tasks-conformance bug, "
                                                f"run again with --debug): {type(exc).__name__}: {exc}"), None)
                tell(i, "internal error")
                return
            done[i] = _named(p, ex.result, ex.wire)
            tell(i, f"done: {ex.result.outcome}")

    async with anyio.create_task_group() as tg:

        async def watch_signals() -> None:
            with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
                async for _sig in signals:
                    interrupt.set()
                    return

        async def every_run() -> None:
            try:
                async with anyio.create_task_group() as runs:
                    for i, p in enumerate(planned):
                        runs.start_soon(one, i, p)
            finally:
                tg.cancel_scope.cancel()  # the runs are over: stop watching signals

        # Only the main thread may watch signals (as in runner.py); elsewhere the caller ends it.
        if threading.current_thread() is threading.main_thread():
            tg.start_soon(watch_signals)
        tg.start_soon(every_run)
    interrupted = interrupt.is_set()
    runs = tuple(
        # Never started: incomplete, with the reason; `interrupted` stays for the runs that were
        # (the combined document's own `interrupted` says the invocation was).
        done.get(i) or _named(p, _unfinished(p, "the run was interrupted before this one started"), None)
        for i, p in enumerate(planned)
    )
    return Combined(kind=kind, runs=runs, interrupted=interrupted)


def _result_and_wire(execution: Any) -> tuple[RunResult, WireLog]:
    return execution.result, execution.wire


def _named(p: Planned, result: RunResult, wire: WireLog | None) -> NamedRun:
    return NamedRun(name=p.name, era=p.era, target=p.target, result=result, wire=wire)


def _unfinished(p: Planned, reason: str) -> RunResult:
    """The result of a run that produced none: incomplete, with the reason, target redacted."""
    from tasks_conformance import __version__
    from tasks_conformance.core.profiles import CLIENT_PROFILES, PROFILES
    from tasks_conformance.core.redact import Redactor
    from tasks_conformance.core.result import Discovery

    config = p.config
    profiles = CLIENT_PROFILES if p.client is not None else PROFILES  # a client target's id is the client's
    redactor = Redactor(config.secrets())
    return RunResult(outcome="incomplete", target=redactor.text(config.target()), durationMs=0,
                     discovery=Discovery(), checks=[], incompleteReason=redactor.text(reason),
                     toolVersion=__version__, profile=profiles[config.profile].id)


class MultiProgress:
    """A live table on stderr, one row per run with its latest status; only on a terminal.

    Disabled, every method is a no-op. Status text may come from the server: it is shown as
    rich `Text` (never parsed as markup), on one line, control characters escaped."""

    def __init__(self, names: Sequence[str], enabled: bool, file: TextIO | None = None) -> None:
        self._names = list(names)
        self._status = ["waiting"] * len(self._names)
        # A running run's row is its RunProgress line, as a single run's live line would read
        # (phase, time, task status and polls, time left of --poll-timeout).
        self._states: dict[int, RunProgress] = {}
        self._enabled = enabled
        self._file = file
        self._live: Any = None

    def __enter__(self) -> MultiProgress:
        if not self._enabled:
            return self
        import sys

        from rich.console import Console
        from rich.live import Live

        file = self._file if self._file is not None else sys.stderr
        console = Console(file=file, force_terminal=True, force_interactive=True, highlight=False, markup=False,
                          emoji=False)
        # get_renderable: each refresh draws the table anew, so the times in it keep moving.
        self._live = Live(console=console, transient=True, refresh_per_second=8, get_renderable=self._table,
                          redirect_stdout=False, redirect_stderr=file is sys.stderr)
        self._live.start()
        return self

    def follow(self, index: int, state: RunProgress) -> None:
        self._states[index] = state

    def update(self, index: int, text: str) -> None:
        self._status[index] = text
        if text.startswith("done") or text == "internal error":
            self._states.pop(index, None)  # finished: the outcome, not the last moment of the run
        if self._live is not None:
            self._live.refresh()

    def _table(self) -> Any:
        from rich.table import Table
        from rich.text import Text

        from tasks_conformance.core.text import one_line

        table = Table.grid(padding=(0, 2))
        for i, (name, status) in enumerate(zip(self._names, self._status, strict=True)):
            state = self._states.get(i)
            if state is not None:
                status = state.line()
            table.add_row(Text(one_line(name, 60), style="bold"), Text(one_line(status, 120), no_wrap=True,
                                                                      overflow="ellipsis"))
        return table

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        live, self._live = self._live, None
        if live is not None:
            live.stop()


# -- the command line's side: progress, reports, exit code --------------------------------------


def run_combined(out: RunConfig, planned: Sequence[Planned], kind: Kind, *, jobs: int = 1,
                 shard: str | None = None) -> int:
    """Run `planned` and write the combined reports `out` asks for (its reporters, format, quiet,
    verbose, wire log, JUnit suite name); returns the exit code. Report paths are opened first,
    so a bad one is a usage error before any traffic."""
    import functools
    import sys

    import anyio

    from tasks_conformance.reporters.output import ReportTargets, in_ci, prepare_reports

    targets = prepare_reports(out)
    logs: dict[str, tuple[Any, list[int]]] = {}  # path -> (file, the runs it logs: era both has two)
    try:
        if kind == "suite":  # each target's own wire-log, opened before any traffic like the reports
            for i, p in enumerate(planned):
                path = p.config.wire_log
                if path and path not in logs:
                    logs[path] = (ReportTargets._open(path, f"target {p.target or p.name!r}: wire-log"), [])
                if path:
                    logs[path][1].append(i)
        live = sys.stderr.isatty() and not out.quiet and not in_ci()
        with MultiProgress([p.name for p in planned], enabled=live) as progress:
            combined = anyio.run(functools.partial(run_all, planned, kind, jobs=jobs, say=progress.update,
                                                   debug=out.debug, follow=progress.follow if live else None))
        combined = replace(combined, shard=shard)
        if kind == "eras" and out.update_baseline is not None:
            print(f"tasks-conformance: {update_baseline(out.update_baseline, combined)}", file=sys.stderr)
        for fh, indices in logs.values():
            write_wire_logs(replace(combined, runs=tuple(combined.runs[i] for i in indices)), fh)
        for problem in write_combined(out, targets, combined):
            print(f"tasks-conformance: reporter error: {problem}", file=sys.stderr)
        return combined.exit_code
    finally:
        targets.close()
        for fh, _indices in logs.values():
            fh.close()


def update_baseline(path: str, combined: Combined) -> str:
    """--update-baseline with --era both: the file written from each era's run in turn. Each
    write keeps the entries of the other era, so the file ends with the failures of both."""
    from tasks_conformance.core import baseline
    from tasks_conformance.server.check_catalog import catalog

    if combined.interrupted or any(r.result.interrupted or r.wire is None for r in combined.runs):
        return f"--update-baseline: the run was interrupted; {path} left as it was"
    n = 0
    for run in combined.runs:
        # Pinned to the run's era: a server that does not speak it still gets entries for that era.
        n = baseline.update(path, run.result, catalog().check_ids, era=run.era)
    return f"wrote {n} baseline entr{'y' if n == 1 else 'ies'} to {path}"


def write_combined(out: RunConfig, targets: Any, combined: Combined) -> list[str]:
    """Every report and the wire log, as `report_output.write_reports` writes one run's; returns
    the third-party reporters that failed."""
    import shutil
    import sys
    from typing import cast

    from tasks_conformance.reporters import ReportOptions
    from tasks_conformance.reporters.combined import render_combined
    from tasks_conformance.reporters.output import in_ci, stdout_report, want_color, write_each

    tty, ci = sys.stdout.isatty(), in_ci()
    stdout_name = "human" if out.quiet else stdout_report(out, targets.stdout_reporter, tty=tty, ci=ci)
    color = want_color(sys.stdout) and stdout_name == "human" and not ci
    width = shutil.get_terminal_size().columns if tty else None
    jobs: list[tuple[str, TextIO, ReportOptions]] = [(stdout_name, sys.stdout, ReportOptions(
        color=color, quiet=out.quiet, width=width, verbose=out.verbose, suite_name=out.junit_suite_name))]
    plain = ReportOptions(verbose=out.verbose, suite_name=out.junit_suite_name)
    jobs += [(name, cast(TextIO, fh), plain) for name, _path, fh in targets.files]
    problems = write_each(jobs, lambda name, stream, options: render_combined(name, combined, stream, options))
    if targets.wire_log is not None:
        write_wire_logs(combined, cast(TextIO, targets.wire_log))
    sys.stdout.flush()
    return problems


def write_wire_logs(combined: Combined, stream: TextIO) -> None:
    """Every run's frames as NDJSON, run after run; each line names its run in `run` (the era or
    the target), since each run numbers its frames from 1."""
    from tasks_conformance.core.text import dumps

    for run in combined.runs:
        if run.wire is None:
            continue
        for frame in run.wire:
            stream.write(dumps({"run": run.name, **frame.to_json(run.wire.redactor)}))
            stream.write("\n")
