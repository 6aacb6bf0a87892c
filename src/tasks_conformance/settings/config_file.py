"""The config file: settings kept with the project instead of on every command line.

    # tasks-conformance.toml (or [tool.tasks-conformance] in pyproject.toml)
    command = ["python", "server.py"]
    tool-name = "long_job"
    timeout = 10000
    reporter = ["junit-xml=conformance.xml"]
    baseline = "conformance-baseline.toml"

Keys are the long flag names (`--tool-name` is `tool-name`, `--header` is `header`, `--check-id`
is `check-id`); each maps to a `RunOptions` field. Without --config, the file is
`tasks-conformance.toml` in the working directory, else `pyproject.toml` there if it has a
`[tool.tasks-conformance]` table. A client's settings (`tasks-conformance client`) are its
`[client]` table (`[tool.tasks-conformance.client]`), with the client's keys (`command`, `era`,
`scenario`, `timeout`, `profile`, `baseline`, the report keys…); the main command ignores that
table, and the client reads nothing else of the file. Precedence: flag > environment (the credential variables) >
file > default; a flag replaces the file's value, lists included. Paths in the file are relative
to the working directory, as on the command line.

`resolve` merges and says where each setting came from (`tasks-conformance config show`).
Stdlib only (tomllib, imported when there is a file to read), cheap to import.
"""

from __future__ import annotations

import difflib
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, fields, replace
from typing import Any

from tasks_conformance.core.errors import UsageError
from tasks_conformance.settings import (
    ACCESS_TOKEN_ENV,
    CLIENT,
    ERA,
    ERAS,
    FILE,
    HEADERS_ENV,
    RUN,
    SERVER,
    SETTINGS,
    Kind,
    RunOptions,
)
from tasks_conformance.settings.masking import masked
from tasks_conformance.settings.values import WrongForm, converted, split_argv, type_name

FILE_NAME = "tasks-conformance.toml"
PYPROJECT = "pyproject.toml"
TABLE = "tasks-conformance"  # [tool.tasks-conformance]
MAX_CONFIG_BYTES = 1024 * 1024


@dataclass(frozen=True)
class Key:
    name: str  # in the file: the long flag without its dashes
    field: str  # the RunOptions field
    kind: Kind  # what its value may be (settings/values.py converts it)
    secret: bool = False


def _keys(subject: str) -> tuple[Key, ...]:
    return tuple(Key(s.key, s.name, s.kind, secret=s.secret)
                 for s in SETTINGS.values() if FILE in s.applies and subject in s.subjects)


KEYS: tuple[Key, ...] = _keys(SERVER)
BY_NAME = {k.name: k for k in KEYS}
BY_FIELD = {k.field: k for k in KEYS}
CLIENT_TABLE = CLIENT  # [client]: the client's settings
CLIENT_BY_NAME = {k.name: k for k in _keys(CLIENT)}
# Command-line settings with no file key: a one-off action, or the file itself.
FLAG_ONLY = {s.name: s.key for s in SETTINGS.values() if FILE not in s.applies and RUN in s.applies}
# The target, and what belongs to the file's target only: a target given as a flag replaces all
# of these in the file (`--url` must not meet the file's `command`, nor its `args`).
TARGETS = ("url", "command", "tcp", "unix")
TARGET_FIELDS = (*TARGETS, "transport", "args", "command_args", "cwd", "env", "show_env")




@dataclass(frozen=True)
class ConfigFile:
    path: str
    values: dict[str, Any]  # RunOptions field -> value, converted
    era: str | None = None  # `era`: --era is no RunOptions field (it chooses how many runs are made)
    client: dict[str, Any] | None = None  # the [client] table's values, converted (None: no table)
    table: str = ""  # the table the settings are in: "" (the file's top level) or tool.tasks-conformance


@dataclass(frozen=True)
class Resolved:
    """The effective settings and, per RunOptions field, where its value came from."""

    options: RunOptions
    sources: dict[str, str]
    file: str | None
    era: str = "auto"  # --era, or the file's era
    era_source: str = "default"
    client_table: bool = False  # the file has a [client] table


def find(cwd: str | None = None) -> str | None:
    """tasks-conformance.toml in `cwd`, else its pyproject.toml if that has our table."""
    where = cwd or os.getcwd()
    own = os.path.join(where, FILE_NAME)
    if os.path.isfile(own):
        return own
    pyproject = os.path.join(where, PYPROJECT)
    if os.path.isfile(pyproject):
        try:
            with open(pyproject, "rb") as fh:
                data = fh.read()
        except OSError:
            return None
        if not _may_hold_our_table(data):
            return None
        import tomllib

        try:
            doc = tomllib.loads(data.decode("utf-8"))
        except (UnicodeDecodeError, tomllib.TOMLDecodeError):
            return None  # not ours to judge: only a pyproject with our table is a config file
        if isinstance(doc.get("tool"), dict) and TABLE in doc["tool"]:
            return pyproject
    return None


# Where a TOML document can open tool.tasks-conformance: a key path `tool.tasks-conformance` (a
# table header or a dotted key; parts may be quoted), a `[tool]` table (any of its keys), or a
# `tool = {...}` inline table.
_OUR_TABLE_MAY_OPEN = (
    rb"""["']?tool["']?\s*\.\s*["']?tasks-conformance"""
    rb"""|^\s*\[\s*["']?tool["']?\s*\]"""
    rb"""|^\s*["']?tool["']?\s*="""
)


def _may_hold_our_table(data: bytes) -> bool:
    """False when the pyproject cannot hold [tool.tasks-conformance], so it need not be parsed.

    Most pyprojects (ours included) have other [tool.*] tables only, and every run looks for a
    config file before its first frame: parsing one costs the import of tomllib and the parse,
    a few ms. A key spelled with escapes ("tasks\\u002Dconformance") is not seen; TOML allows
    it, no pyproject writes it."""
    return re.search(_OUR_TABLE_MAY_OPEN, data, re.MULTILINE) is not None


def _display(path: str) -> str:
    rel = os.path.relpath(path) if os.path.isabs(path) else path
    return rel if not rel.startswith("..") else path


def load(path: str) -> ConfigFile:
    """Read a config file; a missing file, bad TOML, an unknown key or a wrong type is a
    UsageError of one line naming the file and the key."""
    shown = _display(path)
    from tasks_conformance.core.flag_values import read_small_file

    data = read_small_file("--config", path, MAX_CONFIG_BYTES, shown)
    import tomllib

    try:
        doc = tomllib.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise UsageError(f"{shown}: not valid TOML: {str(exc).splitlines()[0]}") from None
    table: Any = doc
    tool_table = doc.get("tool")
    if os.path.basename(path) == PYPROJECT or (isinstance(tool_table, dict) and TABLE in tool_table):
        tool = doc.get("tool")
        table = tool.get(TABLE) if isinstance(tool, dict) else None
        if table is None:
            raise UsageError(f"{shown}: no [tool.{TABLE}] table")
        if not isinstance(table, dict):
            raise UsageError(f"{shown}: tool.{TABLE} must be a table")
        shown = f"{shown} [tool.{TABLE}]"
    era = table.get(ERA.key)
    if era is not None and era not in ERAS:
        got = repr(era[:40]) if isinstance(era, str) else type_name(era)
        words = f"{', '.join(repr(e) for e in ERAS[:-1])} or {ERAS[-1]!r}"
        raise UsageError(f"{shown}: {ERA.key} must be {words}, got {got}")
    client = table.get(CLIENT_TABLE)
    if client is not None and not isinstance(client, dict):
        raise UsageError(f"{shown}: {CLIENT_TABLE} must be a table ([{CLIENT_TABLE}]) of the client's settings")
    values = _values({k: v for k, v in table.items() if k not in (ERA.key, CLIENT_TABLE)}, shown, BY_NAME)
    client_values = _values(client, f"{shown} [{CLIENT_TABLE}]", CLIENT_BY_NAME) if client is not None else None
    return ConfigFile(path, values, era, client_values, f"tool.{TABLE}" if table is not doc else "")


def _values(table: Mapping[str, Any], shown: str, keys: Mapping[str, Key]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, raw in table.items():
        key = keys.get(name)
        if key is None:
            if name in FLAG_ONLY.values():
                raise UsageError(f"{shown}: {name} cannot be set in a config file; give --{name} on the command line")
            close = difflib.get_close_matches(name, [*keys, *([ERA.key] if keys is BY_NAME else [])], n=1)
            hint = f"; did you mean {close[0]}?" if close else "; keys are the long flag names, e.g. tool-name"
            raise UsageError(f"{shown}: unknown key {name[:60]!r}{hint}")
        try:
            out[key.field] = converted(key.kind, raw)
        except WrongForm as exc:
            raise UsageError(f"{shown}: {name} must be {exc.words}, got {type_name(raw)}") from None
    return out


def credentials_from_environment(
    access_token: str | None, oauth_access_token: str | None, headers: Iterable[str] | None,
    environ: Mapping[str, str] | None = None,
) -> tuple[str | None, list[str] | None]:
    """Without a token, $TASKS_CONFORMANCE_ACCESS_TOKEN; without headers, the non-empty lines
    of $TASKS_CONFORMANCE_HEADERS. A value given always wins."""
    env = os.environ if environ is None else environ
    if access_token is None and oauth_access_token is None:
        access_token = env.get(ACCESS_TOKEN_ENV, "").strip() or None
    header_list = list(headers) if headers else None
    if not header_list:
        header_list = [line.strip() for line in env.get(HEADERS_ENV, "").splitlines() if line.strip()] or None
    return access_token, header_list


def _flag(field: str) -> str:
    key = BY_FIELD.get(field)
    return f"--{key.name}" if key else f"--{FLAG_ONLY.get(field, field.replace('_', '-'))}"


def resolve(
    flags: RunOptions,
    given: Iterable[str],
    *,
    cwd: str | None = None,
    environ: Mapping[str, str] | None = None,
    discover: bool = True,
    era: str | None = None,
    subject: str = SERVER,
) -> Resolved:
    """The effective RunOptions: `given` (RunOptions fields set on the command line) from
    `flags`, then the credential variables of `environ` (only for an HTTP target; None: no
    environment), then the config file (`flags.config`, or found in `cwd` when `discover`),
    then the defaults. `era`: --era when given on the command line (it wins over the file's).
    `subject`: CLIENT reads the client's settings and the file's [client] table only."""
    given = set(given)
    target_flag = any(name in given for name in TARGETS)
    path = flags.config
    if path is None and discover:
        path = find(cwd)
    file = load(path) if path is not None else None
    # Where a value came from: the file and its table ([client], [tool.tasks-conformance]…).
    label = f"file {_display(path)}" if path is not None else ""
    from_file = (file.values if subject == SERVER else file.client or {}) if file is not None else {}
    prefix = f"{file.table}." if file is not None and file.table else ""
    if subject == CLIENT:
        label += f" [{prefix}{CLIENT_TABLE}]"
    elif prefix:
        label += f" [{prefix.rstrip('.')}]"
    values: dict[str, Any] = {}
    sources: dict[str, str] = {}
    defaults = RunOptions()
    for f in fields(RunOptions):
        if subject not in SETTINGS[f.name].subjects:
            values[f.name], sources[f.name] = getattr(defaults, f.name), "default"
        elif f.name in given:
            values[f.name], sources[f.name] = getattr(flags, f.name), f"flag {_flag(f.name)}"
        elif f.name in from_file and not (target_flag and f.name in TARGET_FIELDS):
            values[f.name], sources[f.name] = from_file[f.name], label
        else:
            values[f.name], sources[f.name] = getattr(defaults, f.name), "default"
    # A command given as an argv in the file: its first item is the program, never split.
    if isinstance(values["command"], tuple):
        argv = values["command"]
        values["command"], with_args = split_argv(argv, values["args"])
        if "args" not in given:
            values["args"] = with_args
            if sources["args"] == "default" and len(argv) > 1:
                sources["args"] = label
    if environ is not None and values["url"]:
        token, headers = credentials_from_environment(
            values["access_token"], values["oauth_access_token"], values["headers"] or None, environ,
        )
        oauth = any(values[name] for name in ("refresh_token", "client_id", "client_secret", "credentials_file"))
        # An OAuth refresh gets the access token: $TASKS_CONFORMANCE_ACCESS_TOKEN is not used then.
        if token is not None and token != values["access_token"] and not oauth:
            values["access_token"], sources["access_token"] = token, f"environment ${ACCESS_TOKEN_ENV}"
        if headers and tuple(headers) != values["headers"]:
            values["headers"], sources["headers"] = tuple(headers), f"environment ${HEADERS_ENV}"
    if path is not None and "config" not in given:
        values["config"], sources["config"] = path, "found in the working directory"
    era_value, era_source = "auto", "default"
    if era is not None:
        era_value, era_source = era, "flag --era"
    elif file is not None and file.era is not None and subject == SERVER:
        era_value, era_source = file.era, label
    return Resolved(replace(defaults, **values), sources, path, era_value, era_source,
                    file is not None and file.client is not None)


_LEADING_FLAG = re.compile(r"--[a-z][a-z0-9-]*")


def from_where(exc: UsageError, resolved: Resolved) -> UsageError:
    """A setting's error as its source would have it: the settings' steps name the flag
    ("--baseline: cannot read …"), and when the value came from the config file the error names
    the file, its table and the key instead ("tasks-conformance.toml [client]: baseline: cannot
    read …"), as the file's own errors do. Any other error is returned as it is."""
    text = str(exc)
    found = _LEADING_FLAG.match(text)
    name = next((n for n, spec in SETTINGS.items() if found and spec.flag == found.group()), None)
    source = resolved.sources.get(name or "", "")
    if found is None or name is None or not source.startswith("file "):
        return exc
    return UsageError(f"{source.removeprefix('file ')}: {SETTINGS[name].key}{text[found.end():]}")


# `tasks-conformance config show` is settings/config_show.py.
_masked = masked  # `config show`'s masking, in settings/masking.py (tests reach it here)
