"""One converter per kind of setting (settings.Kind): a value as the config file, a suite target
or the Python API gives it, in the form `RunOptions` holds (the form the flag's text takes). The
command line needs none: typer hands over the flag's text, which is that form already.

The forms a kind takes are the same wherever the value comes from: a TOML or JSON file gives
strings, integers, booleans, arrays and tables; the API gives those as Python objects, and also
tuples, any sequence or mapping, and path-like objects. A repeatable kind takes one string as a
list of one. A value of none of its kind's forms raises `WrongForm`, whose `words` each reader puts
in its own message (the file names the key, the API the keyword).

Stdlib only and cheap to import: the config file is read on every start that has one.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NamedTuple

from tasks_conformance.settings import (
    BOOL,
    COMMAND,
    ENV,
    HEADERS,
    INT,
    JSON,
    MANY,
    MS,
    PATH,
    PROBE_ARGS,
    PROBES,
    TEXT,
    Kind,
)


class WrongForm(ValueError):
    """A value none of its kind's forms describes; `words` says what the kind takes."""

    def __init__(self, words: str) -> None:
        super().__init__(words)
        self.words = words


class _Form(NamedTuple):
    words: str  # what the kind takes, as a message says it ("an integer")
    convert: Callable[[Any], Any]  # to the RunOptions form; raises _Wrong when the value has none


class _Wrong(Exception):
    pass


def _text(v: Any) -> str:
    if isinstance(v, str):
        return v
    raise _Wrong


def _path(v: Any) -> str:
    if isinstance(v, str | os.PathLike):
        return os.fspath(v)
    raise _Wrong


def _integer(v: Any) -> int:
    if isinstance(v, int) and not isinstance(v, bool):
        return v
    raise _Wrong


def _boolean(v: Any) -> bool:
    if isinstance(v, bool):
        return v
    raise _Wrong


def _items(v: Any) -> tuple[str, ...]:
    """A repeatable value: one string, or a sequence of strings."""
    if isinstance(v, str):
        return (v,)
    if isinstance(v, Sequence) and all(isinstance(x, str) for x in v):
        return tuple(v)
    raise _Wrong


def _scalar(v: Any) -> str:
    # A pair's value: text, or a number a file writes without quotes (PORT = 8080).
    if isinstance(v, str | int | float) and not isinstance(v, bool):
        return str(v)
    raise _Wrong


def _pairs(separator: str) -> Callable[[Any], tuple[str, ...]]:
    """A table of NAME -> value, or the flag's NAME<separator>VALUE strings."""
    def convert(v: Any) -> tuple[str, ...]:
        if isinstance(v, Mapping):
            return tuple(f"{k}{separator}{_scalar(x)}" for k, x in v.items())
        return _items(v)

    return convert


def _probe_args(v: Any) -> tuple[str, ...]:
    """Per role, the tool's arguments as a table or JSON text (as --probe-args ROLE=JSON)."""
    if isinstance(v, Mapping):
        return tuple(f"{k}={json.dumps(dict(x)) if isinstance(x, Mapping) else _text(x)}" for k, x in v.items())
    return _items(v)


def _json(v: Any) -> str:
    # A table is the JSON object itself; a string is what the flag takes (JSON, @FILE or -).
    if isinstance(v, Mapping):
        return json.dumps(dict(v))
    return _text(v)


def _command(v: Any) -> str | tuple[str, ...]:
    """A command line to split as a shell would, or an argv (its first item the program, taken as
    given): `split_argv` makes an argv the command and its arguments."""
    if isinstance(v, str):
        return v
    if isinstance(v, Sequence) and v and all(isinstance(x, str | os.PathLike) for x in v):
        return tuple(os.fspath(x) for x in v)
    raise _Wrong


STRING, INTEGER, BOOLEAN, STRINGS = "a string", "an integer", "true or false", "a string or an array of strings"
FORMS: dict[Kind, _Form] = {
    TEXT: _Form(STRING, _text),
    PATH: _Form(STRING, _path),
    COMMAND: _Form("a string or an array of strings (the argv)", _command),
    JSON: _Form("a table or a JSON string", _json),
    INT: _Form(INTEGER, _integer),
    MS: _Form(INTEGER + " (milliseconds)", _integer),
    BOOL: _Form(BOOLEAN, _boolean),
    MANY: _Form(STRINGS, _items),
    ENV: _Form("a table of NAME = \"value\" or an array of \"NAME=VALUE\" strings", _pairs("=")),
    HEADERS: _Form("a table of Name = \"value\" or an array of \"Name: value\" strings", _pairs(": ")),
    PROBES: _Form("a table of ROLE = \"TOOL\" or an array of \"ROLE=TOOL\" strings", _pairs("=")),
    PROBE_ARGS: _Form("a table of ROLE = {arguments} (or a JSON string) or an array of \"ROLE=JSON\" strings",
                      _probe_args),
}


def converted(kind: Kind, value: Any) -> Any:
    """`value` in the RunOptions form of `kind` (an argv: a tuple, for `split_argv`)."""
    form = FORMS[kind]
    try:
        return form.convert(value)
    except _Wrong:
        raise WrongForm(form.words) from None


def words(kind: Kind) -> str:
    """What a value of `kind` may be, as the messages say it."""
    return FORMS[kind].words


def split_argv(argv: Sequence[str], args: Sequence[str] = ()) -> tuple[str, tuple[str, ...]]:
    """An argv as RunOptions' `command` and `args` (`args` given as well go after its own): the
    program taken as given, never split at spaces (quoted for the builder, which splits a
    --command string that has any)."""
    import shlex

    program = argv[0]
    return shlex.quote(program) if " " in program else program, (*argv[1:], *args)


def type_name(value: Any) -> str:
    """What a value is, in the words of a TOML or JSON file."""
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a float"
    if isinstance(value, str):
        return "a string"
    if value is None:
        return "null"
    if isinstance(value, list | tuple):
        return "an array" if all(isinstance(v, str) for v in value) and value else "an array of other values"
    if isinstance(value, Mapping):
        return "a table"
    return type(value).__name__
