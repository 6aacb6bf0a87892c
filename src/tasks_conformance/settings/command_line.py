"""The settings as typer options: each command's signature is built from the settings that apply
to it (settings.applying), and typer reads it as if it were written out in cli.py; a command's
own options (settings/commands.py) are made here too (takes_options); and a command whose flags
another program declares (the reference server's argparse parser) gets them from that declaration
(takes_parser). The one place a typer option is made (tests/unit/settings/test_settings.py holds it). Imported
by the entry modules only (it imports typer)."""

from __future__ import annotations

import argparse
import inspect
from collections.abc import Callable
from typing import Annotated, Any, TypeVar

import typer

from tasks_conformance.settings import ERA, SERVER, SETTINGS, RunOptions, Setting, applying
from tasks_conformance.settings.commands import CommandOption

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


def command_parameter(option: CommandOption, callback: Callable[..., Any] | None = None) -> inspect.Parameter:
    """A command's own option as a keyword parameter; an eager one acts through `callback`."""
    if option.eager != (callback is not None):
        raise ValueError(f"{option.flag}: an eager option, and only one, takes a callback")
    kind: Any = option.kind.cli
    if option.default is None and kind in (int, bool):  # not given: None, the command's "its default"
        kind = kind | None
    extra: dict[str, Any] = {"callback": callback, "is_eager": True} if callback is not None else {}
    typer_option = typer.Option(*option.flags, metavar=option.metavar, help=option.help, **extra)
    return inspect.Parameter(option.name, inspect.Parameter.KEYWORD_ONLY, default=option.default,
                             annotation=Annotated[kind, typer_option])


def takes_options(*options: CommandOption) -> Callable[[F], F]:
    """A command taking, after its own parameters, `options` (none of them eager) as keywords,
    which its **flags parameter receives."""
    def mark(fn: F) -> F:
        head = [p for p in inspect.signature(fn).parameters.values() if p.kind is not p.VAR_KEYWORD]
        fn.__signature__ = inspect.Signature([*head, *map(command_parameter, options)])  # type: ignore[attr-defined]
        return fn

    return mark


def takes_parser(parser: argparse.ArgumentParser) -> Callable[[F], F]:
    """A command taking, after its own parameters, one option per flag of `parser` (its long flag,
    metavar, help and default), which its **flags parameter receives; `parser_argv` gives them back
    as arguments for the parser, which then validates them (one declaration, one validation)."""
    def mark(fn: F) -> F:
        head = [p for p in inspect.signature(fn).parameters.values() if p.kind is not p.VAR_KEYWORD]
        params = [_parser_parameter(action) for action in _flag_actions(parser)]
        fn.__signature__ = inspect.Signature([*head, *params])  # type: ignore[attr-defined]
        return fn

    return mark


def _flag_actions(parser: argparse.ArgumentParser) -> list[argparse.Action]:
    # The parser's actions are argparse's own record of what add_argument declared (no public list).
    return [a for a in parser._actions if a.option_strings and not isinstance(a, argparse._HelpAction)]


def _long_flag(action: argparse.Action) -> str:
    return max(action.option_strings, key=len)


def _parser_parameter(action: argparse.Action) -> inspect.Parameter:
    flag = _long_flag(action)
    name = flag[2:].replace("-", "_")
    if action.nargs == 0:  # a switch (store_true / store_false): given or not
        kind: Any = bool
        default: Any = False
        option = typer.Option(flag, help=action.help)
    else:
        metavar = str(action.metavar) if action.metavar else "|".join(map(str, action.choices or ())) or None
        option = typer.Option(flag, metavar=metavar, help=action.help)
        if isinstance(action, argparse._AppendAction):
            kind, default = list[str] | None, None
        elif isinstance(action.default, int) and not isinstance(action.default, bool):
            kind, default = int, action.default
        else:
            kind, default = str | None, action.default
    return inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=Annotated[kind, option])


def parser_argv(ctx: typer.Context, parser: argparse.ArgumentParser) -> list[str]:
    """The arguments for `parser` that give the flags the command line gave (its own defaults stand
    for the rest)."""
    argv: list[str] = []
    for action in _flag_actions(parser):
        flag = _long_flag(action)
        name = flag[2:].replace("-", "_")
        source = ctx.get_parameter_source(name)
        value = ctx.params.get(name)
        if source is None or source.name == "DEFAULT" or value is None:
            continue
        if action.nargs == 0:
            argv += [flag] if value else []
        elif isinstance(value, (list, tuple)):  # a repeated flag (a tuple on typer before 0.29)
            argv += [f"{flag}={item}" for item in value]
        else:
            argv.append(f"{flag}={value}")
    return argv


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
