"""Reporters: turn a finished RunResult into text for people, CI and dashboards.

A reporter is a pure function of the RunResult and an output stream; it never runs while checks
run and never decides an exit code. Every reporter, built-in or not, is found the same way,
through the entry-point group `tasks_conformance.reporters`, and has one signature:

    def reporter(result: RunResult, out: TextIO) -> None

    # a third party's pyproject.toml
    [project.entry-points."tasks_conformance.reporters"]
    teamcity = "my_pkg.reporting:teamcity"

A reporter that also wants to know how to draw declares a keyword parameter named `options`
(`def teamcity(result, out, *, options: ReportOptions = PLAIN)`); it then receives the
`ReportOptions` the command line chose (colour, quiet, width). The built-in reporters do this,
so they can still be called with two arguments; a reporter without that parameter is called
with two. This keeps every plugin written for `fn(result, out)` working unchanged.

A built-in name (`BUILTIN_NAMES`) always means the built-in reporter: an entry point of another
distribution with that name is ignored. An error raised inside a third-party reporter becomes
`ReporterError` naming that reporter (it is not our bug and not the server's); an error in a
built-in reporter propagates as the tool's own fault.

Importing this module is cheap (stdlib only); importlib.metadata, rich and each reporter load
when first used.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from dataclasses import dataclass
from types import TracebackType
from typing import TYPE_CHECKING, Any, Literal, Protocol, TextIO, cast

from tasks_conformance.core.text import dumps

if TYPE_CHECKING:
    from importlib.metadata import EntryPoint

    from tasks_conformance.core.result import RunResult
    from tasks_conformance.core.wirelog import WireLog

__all__ = [
    "BUILTIN_NAMES",
    "ENTRY_POINT_GROUP",
    "PLAIN",
    "ProgressLine",
    "ReportOptions",
    "ReporterError",
    "ReporterFn",
    "UnknownReporterError",
    "available_reporters",
    "known_reporter",
    "load_reporter",
    "render",
    "schema_text",
    "write_wire_log",
]

ReporterFn = Callable[["RunResult", TextIO], None]
"""The reporter signature: write a report of the result to `out`."""

ENTRY_POINT_GROUP = "tasks_conformance.reporters"

BUILTIN_NAMES: tuple[str, ...] = ("human", "json", "json-summary", "junit-xml", "markdown", "badge", "html")

# The built-ins' entry points, as pyproject.toml declares them (a test keeps the two equal).
# Used only when the installed metadata lacks them: a source checkout whose package metadata
# predates these entry points (not reinstalled since) must still find the human reporter.
_BUILTIN_FALLBACK: dict[str, str] = {
    "human": "tasks_conformance.reporters.human:render_human",
    "json": "tasks_conformance.reporters.json_report:render_json",
    "json-summary": "tasks_conformance.reporters.json_report:render_json_summary",
    "junit-xml": "tasks_conformance.reporters.junit:render_junit",
    "markdown": "tasks_conformance.reporters.markdown:render_markdown",
    "badge": "tasks_conformance.reporters.badge:render_badge",
    "html": "tasks_conformance.reporters.html:render_html",
}


@dataclass(frozen=True)
class ReportOptions:
    """How reporters that ask for it draw. The CLI decides `color` (NO_COLOR, TTY)."""

    color: bool = False
    quiet: bool = False
    width: int | None = None
    verbose: bool = False  # human: the wire frames under each failed check
    suite_name: str | None = None  # junit-xml: the <testsuite> name (--junit-suite-name); None: derived


PLAIN = ReportOptions()
"""No colour, not quiet, default width: what a reporter gets when nobody chose."""


class _OptionsReporter(Protocol):
    def __call__(self, result: RunResult, out: TextIO, *, options: ReportOptions) -> None: ...


class ReporterError(Exception):
    """A reporter could not produce its report. `reporter` names it."""

    def __init__(self, reporter: str, message: str) -> None:
        super().__init__(message)
        self.reporter = reporter


class UnknownReporterError(ReporterError):
    """No installed entry point (and no built-in) has this name (a usage error)."""


class _Entry(Protocol):
    """What is used of an entry point: importlib.metadata's, or a built-in's own (_Builtin)."""

    @property
    def name(self) -> str: ...
    @property
    def value(self) -> str: ...
    @property
    def module(self) -> str: ...
    def load(self) -> Any: ...


@dataclass(frozen=True)
class _Builtin:
    """A built-in reporter, resolved without importlib.metadata: a built-in name always means
    ours, so a run that uses only built-ins never scans the installed distributions (tens of ms
    of every start, with importlib.metadata's own imports)."""

    name: str
    value: str

    @property
    def module(self) -> str:
        return self.value.partition(":")[0]

    def load(self) -> Any:
        import importlib

        return getattr(importlib.import_module(self.module), self.value.partition(":")[2])


def _is_ours(ep: _Entry) -> bool:
    return ep.module.startswith("tasks_conformance.")


def _entry_points() -> dict[str, EntryPoint]:
    """Every reporter by name: the installed entry points, built-in names kept for our own."""
    from importlib import metadata  # not at import time: it pulls in email, zipfile, csv ...

    found: dict[str, EntryPoint] = {}
    for ep in metadata.entry_points(group=ENTRY_POINT_GROUP):
        if ep.name in BUILTIN_NAMES and not _is_ours(ep):
            continue  # another distribution cannot replace a built-in
        found.setdefault(ep.name, ep)  # first one on sys.path wins, as for imports
    for name, value in _BUILTIN_FALLBACK.items():
        if name not in found:
            found[name] = metadata.EntryPoint(name=name, value=value, group=ENTRY_POINT_GROUP)
    return found


def known_reporter(name: str) -> bool:
    """True when some entry point (a built-in's included) provides `name`."""
    return name in BUILTIN_NAMES or name in _entry_points()


def available_reporters() -> list[str]:
    """Built-in names first (in their fixed order), then installed third-party ones, sorted."""
    extra = sorted(n for n in _entry_points() if n not in BUILTIN_NAMES)
    return [*BUILTIN_NAMES, *extra]


def _entry_point(name: str) -> _Entry:
    if name in BUILTIN_NAMES:
        return _Builtin(name, _BUILTIN_FALLBACK[name])
    ep = _entry_points().get(name)
    if ep is None:
        raise UnknownReporterError(
            name, f"unknown reporter {name!r}; available: {', '.join(available_reporters())}"
        )
    return ep


def load_reporter(name: str) -> ReporterFn:
    """The reporter called `name`. A third party's that cannot be loaded is a ReporterError."""
    return _load(_entry_point(name))


def _load(ep: _Entry) -> ReporterFn:
    if _is_ours(ep):
        fn = ep.load()  # failing to import our own module is our bug: let it propagate
    else:
        try:
            fn = ep.load()
        except Exception as exc:
            raise ReporterError(
                ep.name, f"reporter {ep.name!r} ({ep.value}) could not be loaded: {type(exc).__name__}: {exc}"
            ) from exc
    if not callable(fn):
        raise ReporterError(ep.name, f"reporter {ep.name!r} ({ep.value}) is not callable")
    reporter: ReporterFn = fn
    return reporter


def _wants_options(fn: ReporterFn) -> bool:
    """Does `fn` declare a keyword parameter called `options`?"""
    import inspect

    try:
        param = inspect.signature(fn).parameters.get("options")
    except (TypeError, ValueError):  # some callables have no introspectable signature
        return False
    return param is not None and param.kind in (param.KEYWORD_ONLY, param.POSITIONAL_OR_KEYWORD)


def _call(fn: ReporterFn, result: RunResult, out: TextIO, options: ReportOptions) -> None:
    if _wants_options(fn):
        cast(_OptionsReporter, fn)(result, out, options=options)
    else:
        fn(result, out)


def render(name: str, result: RunResult, out: TextIO, options: ReportOptions = PLAIN) -> None:
    """Write the report called `name` for `result` to `out`.

    Raises UnknownReporterError for a name nobody provides, and ReporterError when a third-party
    reporter fails to load or raises.
    """
    ep = _entry_point(name)
    fn = _load(ep)
    if _is_ours(ep):
        _call(fn, result, out, options)
        return
    try:
        _call(fn, result, out, options)
    except (Exception, SystemExit) as exc:  # a plugin must not choose the exit code either
        raise ReporterError(
            name, f"third-party reporter {name!r} raised {type(exc).__name__}: {exc}"
        ) from exc


def write_wire_log(wire: WireLog, out: TextIO) -> None:
    """The wire log as NDJSON: one `Frame.to_json()` object per line, in seq order."""
    for frame in wire:
        out.write(dumps(frame.to_json(wire.redactor)))
        out.write("\n")


_SCHEMA_FILES = {"json": "json.schema.json", "json-summary": "json-summary.schema.json",
                 "multi": "multi.schema.json"}


def schema_text(kind: Literal["json", "json-summary", "multi"]) -> str:
    """The shipped JSON Schema (2020-12) for the `json` or `json-summary` reporter's output;
    `multi`: their output for several runs at once (--era both, suite)."""
    filename = _SCHEMA_FILES.get(kind)
    if filename is None:
        raise ValueError(f"no schema for {kind!r}; choose one of: {', '.join(_SCHEMA_FILES)}")
    from importlib.resources import files

    text = (files("tasks_conformance") / "schemas" / filename).read_text(encoding="utf-8")
    if kind != "multi":
        return text
    # The multi schema $refs the single-run schemas by $id. Printed alone, a validator could not
    # resolve them (and would try to fetch a urn:), so they travel with it as embedded resources
    # (a compound schema document, JSON Schema 2020-12 §9.3): one file validates on its own.
    schema = json.loads(text)
    for single in ("json", "json-summary"):
        schema["$defs"][f"{single}-report"] = json.loads(schema_text(single))
    return json.dumps(schema, indent=2, ensure_ascii=False)


class ProgressLine:
    """A transient one-line status on stderr while a run is in progress.

    Shown only when enabled; by default that means stderr is an interactive terminal (not
    TERM=dumb). Otherwise every method is a no-op, so callers never need to check. Text passed
    to `update` may come from the server and is shown escaped, never interpreted.
    """

    def __init__(self, enabled: bool | None = None, *, file: TextIO | None = None) -> None:
        self._file = file
        self._enabled = enabled
        self._status: Any = None  # rich.live.Live while shown
        self._spinner: Any = None
        self._text = "starting"

    @property
    def active(self) -> bool:
        return self._status is not None

    def _want(self, file: TextIO) -> bool:
        if self._enabled is not None:
            return self._enabled
        import os

        if os.environ.get("TERM", "").lower() in ("dumb", "unknown"):
            return False
        try:
            return file.isatty()
        except (AttributeError, ValueError):
            return False

    def __enter__(self) -> ProgressLine:
        file = self._file if self._file is not None else sys.stderr
        if not self._want(file):
            return self
        from rich.console import Console
        from rich.live import Live
        from rich.spinner import Spinner

        console = Console(
            file=file,
            force_terminal=True,
            force_interactive=True,
            highlight=False,
            markup=False,
            emoji=False,
        )
        self._spinner = Spinner("dots", text=self._renderable(self._text), style="cyan")
        # Never redirect stdout: a report written there while the line is up must stay on stdout.
        # Other writes to our own stream are routed above the line instead of through it.
        self._status = Live(
            self._spinner,
            console=console,
            transient=True,
            refresh_per_second=12.5,
            redirect_stdout=False,
            redirect_stderr=file is sys.stderr,
        )
        self._status.start()
        return self

    def update(self, text: str) -> None:
        self._text = text
        if self._status is not None:
            self._spinner.update(text=self._renderable(text))
            self._status.refresh()

    def follow(self, source: Any) -> None:
        """Show `source` instead of fixed text: a renderable (with `__rich__`) that is read again
        at every redraw, so a clock in it ticks without updates (see progress.py)."""
        if self._status is not None:
            self._spinner.update(text=source)
            self._status.refresh()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        status, self._status = self._status, None
        if status is not None:
            status.stop()

    @staticmethod
    def _renderable(text: str) -> Any:
        from rich.text import Text

        from tasks_conformance.core.text import one_line

        # A Text object is never parsed as markup; one_line shows control characters as escapes.
        return Text(one_line(text, 200), no_wrap=True, overflow="ellipsis")
