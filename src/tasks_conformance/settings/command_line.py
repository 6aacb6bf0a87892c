"""The settings as typer options: each command's signature is built from the settings that apply
to it (settings.applying), and typer reads it as if it were written out in cli.py. Imported by
cli.py only (it imports typer)."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Annotated, Any, TypeVar

import typer

from tasks_conformance.settings import ERA, SERVER, SETTINGS, RunOptions, Setting, applying

F = TypeVar("F", bound=Callable[..., Any])


# One typer option per setting, shared by the commands that take it (typer copies it before use):
# building one costs about as much as the rest of its share of the start-up.
_ANNOTATIONS: dict[tuple[str, str], Any] = {}


def typer_option(spec: Setting, subject: str = SERVER) -> Any:
    """The typer option of a setting: its flags, metavar, help (the subject's) and panel."""
    return _annotation(spec, subject).__metadata__[0]


def _annotation(spec: Setting, subject: str) -> Any:
    if (spec.name, subject) not in _ANNOTATIONS:
        option = typer.Option(*spec.flags, metavar=spec.metavar_for(subject), help=spec.help_for(subject),
                              rich_help_panel=spec.panel)
        _ANNOTATIONS[spec.name, subject] = Annotated[spec.kind.cli, option]
    return _ANNOTATIONS[spec.name, subject]


def _parameter(spec: Setting, subject: str) -> inspect.Parameter:
    default = None if spec.kind.repeatable else spec.default  # typer's "not given" for a list
    return inspect.Parameter(spec.name, inspect.Parameter.KEYWORD_ONLY, default=default,
                             annotation=_annotation(spec, subject))


def takes_settings(where: str, *own: inspect.Parameter, subject: str = SERVER) -> Callable[[F], F]:
    """A command taking, after its own parameters and `own`, the options of the settings that
    apply `where` for `subject` (a server's --era last) as keywords, which its **flags
    parameter receives."""
    def mark(fn: F) -> F:
        head = [p for p in inspect.signature(fn).parameters.values() if p.kind is not p.VAR_KEYWORD]
        specs = applying(where, subject)
        params = [_parameter(spec, subject) for spec in specs if spec is not ERA]
        era = [_parameter(ERA, subject)] if ERA in specs else []
        fn.__signature__ = inspect.Signature([*head, *params, *own, *era])  # type: ignore[attr-defined]
        return fn

    return mark


def given_flags(ctx: typer.Context) -> frozenset[str]:
    """The parameters given on the command line (not left at their defaults)."""
    out = set()
    for name in ctx.params:
        source = ctx.get_parameter_source(name)
        if source is not None and source.name != "DEFAULT":
            out.add(name)
    return frozenset(out)


def many(values: list[str] | None) -> tuple[str, ...]:
    return tuple(values or ())


def options_from(flags: dict[str, Any], subject: str = SERVER) -> RunOptions:
    """The RunOptions a command's settings keywords give (a repeatable flag: a tuple); only the
    subject's settings (a server's --era is no RunOptions field, a client's is)."""
    values: dict[str, Any] = {name: many(flags[name]) if spec.kind.repeatable else flags[name]
                              for name, spec in SETTINGS.items() if name in flags and subject in spec.subjects}
    return RunOptions(**values)
