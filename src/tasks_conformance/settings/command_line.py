"""The settings as typer options: each command's signature is built from the settings that apply
to it (settings.applying), and typer reads it as if it were written out in cli.py. Imported by
cli.py only (it imports typer)."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Annotated, Any, TypeVar

import typer

from tasks_conformance.settings import ERA, SETTINGS, RunOptions, Setting, applying

F = TypeVar("F", bound=Callable[..., Any])


# One typer option per setting, shared by the commands that take it (typer copies it before use):
# building one costs about as much as the rest of its share of the start-up.
_ANNOTATIONS: dict[str, Any] = {}


def typer_option(spec: Setting) -> Any:
    """The typer option of a setting: its flags, metavar, help and panel."""
    return _annotation(spec).__metadata__[0]


def _annotation(spec: Setting) -> Any:
    if spec.name not in _ANNOTATIONS:
        option = typer.Option(*spec.flags, metavar=spec.metavar, help=spec.help, rich_help_panel=spec.panel)
        _ANNOTATIONS[spec.name] = Annotated[spec.kind.cli, option]
    return _ANNOTATIONS[spec.name]


def _parameter(spec: Setting) -> inspect.Parameter:
    default = None if spec.kind.repeatable else spec.default  # typer's "not given" for a list
    return inspect.Parameter(spec.name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=_annotation(spec))


def takes_settings(where: str, *own: inspect.Parameter) -> Callable[[F], F]:
    """A command taking, after its own parameters and `own`, the options of the settings that
    apply `where` (--era last) as keywords, which its **flags parameter receives."""
    def mark(fn: F) -> F:
        head = [p for p in inspect.signature(fn).parameters.values() if p.kind is not p.VAR_KEYWORD]
        specs = applying(where)
        params = [_parameter(spec) for spec in specs if spec is not ERA]
        era = [_parameter(ERA)] if ERA in specs else []
        fn.__signature__ = inspect.Signature([*head, *params, *own, *era])  # type: ignore[attr-defined]
        return fn

    return mark


def many(values: list[str] | None) -> tuple[str, ...]:
    return tuple(values or ())


def options_from(flags: dict[str, Any]) -> RunOptions:
    """The RunOptions a command's settings keywords give (a repeatable flag: a tuple)."""
    values: dict[str, Any] = {name: many(flags[name]) if spec.kind.repeatable else flags[name]
                              for name, spec in SETTINGS.items() if name in flags}
    return RunOptions(**values)
