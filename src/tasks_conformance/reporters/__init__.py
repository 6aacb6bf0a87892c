"""Reporters: turn a finished RunResult into text for people, CI and dashboards.

A reporter is a pure function of the RunResult and an output stream; it never runs while checks
run and never decides an exit code. Built-in reporters (`BUILTIN_NAMES`) receive `ReportOptions`;
third-party reporters are found through the entry-point group `tasks_conformance.reporters`
and are called as `fn(result, out)`:

    # a third party's pyproject.toml
    [project.entry-points."tasks_conformance.reporters"]
    teamcity = "my_pkg.reporting:teamcity"     # def teamcity(result: RunResult, out: TextIO) -> None

Entry points are read only when a name is not built in, so the usual path never scans installed
distributions. A built-in name always means the built-in reporter. An error raised inside a
third-party reporter becomes `ReporterError` naming that reporter (it is not our bug and not the
server's); an error in a built-in reporter propagates as the tool's own fault.

Importing this module is cheap (stdlib only); rich and each reporter load when first used.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable
from dataclasses import dataclass
from types import TracebackType
from typing import TYPE_CHECKING, Any, Literal, TextIO

from tasks_conformance.reporters._text import dumps

if TYPE_CHECKING:
    from importlib.metadata import EntryPoint

    from tasks_conformance.result import RunResult
    from tasks_conformance.wirelog import WireLog

__all__ = [
    "BUILTIN_NAMES",
    "ENTRY_POINT_GROUP",
    "ProgressLine",
    "ReportOptions",
    "ReporterError",
    "ReporterFn",
    "UnknownReporterError",
    "available_reporters",
    "known_reporter",
    "render",
    "schema_text",
    "write_wire_log",
]

ReporterFn = Callable[["RunResult", TextIO], None]
"""The third-party reporter signature: write a report of the result to `out`."""

ENTRY_POINT_GROUP = "tasks_conformance.reporters"

BUILTIN_NAMES: tuple[str, ...] = ("human", "json", "json-summary", "junit-xml", "markdown")

# name -> (module, function); each function is `fn(result, out, options)`.
_BUILTINS: dict[str, tuple[str, str]] = {
    "human": ("tasks_conformance.reporters.human", "render_human"),
    "json": ("tasks_conformance.reporters.json_report", "render_json"),
    "json-summary": ("tasks_conformance.reporters.json_report", "render_json_summary"),
    "junit-xml": ("tasks_conformance.reporters.junit", "render_junit"),
    "markdown": ("tasks_conformance.reporters.markdown", "render_markdown"),
}


@dataclass(frozen=True)
class ReportOptions:
    """How built-in reporters draw. The CLI decides `color` (NO_COLOR, TTY, --color)."""

    color: bool = False
    quiet: bool = False
    width: int | None = None


class ReporterError(Exception):
    """A reporter could not produce its report. `reporter` names it."""

    def __init__(self, reporter: str, message: str) -> None:
        super().__init__(message)
        self.reporter = reporter


class UnknownReporterError(ReporterError):
    """No built-in reporter and no installed entry point has this name (a usage error)."""


def _entry_points() -> dict[str, EntryPoint]:
    from importlib import metadata  # not at import time: it pulls in email, zipfile, csv ...

    found: dict[str, EntryPoint] = {}
    for ep in metadata.entry_points(group=ENTRY_POINT_GROUP):
        # First one on sys.path wins, as for imports.
        found.setdefault(ep.name, ep)
    return found


def known_reporter(name: str) -> bool:
    """True when `name` is a built-in reporter or an installed entry point."""
    return name in _BUILTINS or name in _entry_points()


def available_reporters() -> list[str]:
    """Built-in names first (in their fixed order), then installed third-party ones, sorted."""
    extra = sorted(n for n in _entry_points() if n not in _BUILTINS)
    return [*BUILTIN_NAMES, *extra]


def _load_third_party(name: str) -> ReporterFn:
    ep = _entry_points().get(name)
    if ep is None:
        raise UnknownReporterError(
            name, f"unknown reporter {name!r}; available: {', '.join(available_reporters())}"
        )
    try:
        fn = ep.load()
    except Exception as exc:
        raise ReporterError(
            name, f"reporter {name!r} ({ep.value}) could not be loaded: {type(exc).__name__}: {exc}"
        ) from exc
    if not callable(fn):
        raise ReporterError(name, f"reporter {name!r} ({ep.value}) is not callable")
    reporter: ReporterFn = fn
    return reporter


def render(name: str, result: RunResult, out: TextIO, options: ReportOptions = ReportOptions()) -> None:
    """Write the report called `name` for `result` to `out`.

    Raises UnknownReporterError for a name nobody provides, and ReporterError when a third-party
    reporter fails to load or raises.
    """
    builtin = _BUILTINS.get(name)
    if builtin is not None:
        module, attr = builtin
        fn: Callable[[RunResult, TextIO, ReportOptions], None] = getattr(
            importlib.import_module(module), attr
        )
        fn(result, out, options)
        return
    third_party = _load_third_party(name)
    try:
        third_party(result, out)
    except (Exception, SystemExit) as exc:  # a plugin must not choose the exit code either
        raise ReporterError(
            name, f"third-party reporter {name!r} raised {type(exc).__name__}: {exc}"
        ) from exc


def write_wire_log(wire: WireLog, out: TextIO) -> None:
    """The wire log as NDJSON: one `Frame.to_json()` object per line, in seq order."""
    for frame in wire:
        out.write(dumps(frame.to_json(wire.redactor)))
        out.write("\n")


_SCHEMA_FILES = {"json": "json.schema.json", "json-summary": "json-summary.schema.json"}


def schema_text(kind: Literal["json", "json-summary"]) -> str:
    """The shipped JSON Schema (2020-12) for the `json` or `json-summary` reporter's output."""
    filename = _SCHEMA_FILES.get(kind)
    if filename is None:
        raise ValueError(f"no schema for {kind!r}; choose one of: {', '.join(_SCHEMA_FILES)}")
    from importlib.resources import files

    return (files("tasks_conformance") / "schemas" / filename).read_text(encoding="utf-8")


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

        from tasks_conformance.reporters._text import one_line

        # A Text object is never parsed as markup; one_line shows control characters as escapes.
        return Text(one_line(text, 200), no_wrap=True, overflow="ellipsis")
