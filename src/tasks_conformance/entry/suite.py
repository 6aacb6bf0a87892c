"""`tasks-conformance suite FILE`: many targets in one invocation, one combined report.

FILE is TOML (read with the standard library's `tomllib`) or JSON:

    [defaults]                 # optional: applies to every target (a target's own keys win)
    timeout = 10000

    [[targets]]
    name = "my-server"         # required, unique: what the reports call this target
    command = ["python", "server.py"]
    tool-name = "long_job"
    tool-args = {seconds = 2}  # a JSON-valued flag takes a table (or JSON text, or @FILE)

    [[targets]]
    name = "staging"
    url = "https://staging.example.com/mcp"
    access-token = "@token.txt"
    era = "both"               # this target runs once per era, reported as "staging (2025-11-25)"…

    [[targets]]
    name = "my-client"
    subject = "client"         # a tasks client, run as `tasks-conformance client` runs it
    command = "node my-client.js"
    era = "both"               # a client's era: extension (default), legacy or both (one run)

Keys are the main command's long flag names without the dashes (`tool-name`, `check-id`,
`timeout`, `header`, `era`…), each meaning what the flag means, plus `name`; a repeatable flag
takes a list (or one string), `env`, `header`, `other-header`, `probe` and `probe-args` also a
table (as in the config file). The flags that shape the combined report (`format`, `reporter`,
`quiet`, `verbose`, `debug`) belong to the `suite` command line, not to a target; `wire-log` is
per target. The keys come from the settings schema (settings/), as the main command's flags do,
so a flag added there is a key here. Relative paths (`@FILE`, `cwd`,
`wire-log`, `unix`) are relative to the working directory, as on the command line. A file cannot
read standard input (`-`): several targets would compete for it. Credentials from the
environment ($TASKS_CONFORMANCE_ACCESS_TOKEN, $TASKS_CONFORMANCE_HEADERS) are not applied to
suite targets: a suite may name servers of different owners, so each target names its own.

A target with `subject = "client"` takes the keys of `tasks-conformance client` instead (`command`
is the client under test; `era`, `scenario`, `jobs`, `timeout`, `profile`, `baseline`…, from the
same schema); a key of `defaults` that only a server run has does not reach it.

Every target is validated (its flags, exactly as the command line checks them) before anything
runs; the first problem is a usage error naming the file, the target and the key.
"""

from __future__ import annotations

import difflib
import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from tasks_conformance.core.eras import SERVER_RUN_ERAS
from tasks_conformance.core.errors import UsageError
from tasks_conformance.entry.multirun import Planned, era_plan
from tasks_conformance.settings import (
    CLIENT,
    ERA,
    RUN,
    SERVER,
    SUBJECTS,
    SUITE,
    TARGET,
    Kind,
    applying,
)
from tasks_conformance.settings.commands import FORMAT, one_of
from tasks_conformance.settings.config import RunConfig

_TOP_KEYS = ("defaults", "targets")


@dataclass(frozen=True)
class _Key:
    """A file key: the RunOptions field it sets (None: `era`) and the kind of its value."""

    field: str | None
    kind: Kind


def _keys(subject: str = SERVER) -> dict[str, _Key]:
    """Every key a target of the subject may have, from the settings schema: the long flags that
    apply to a suite target (settings.TARGET), and a server's `era`."""
    return {s.key: _Key(s.name if s is not ERA else None, s.kind) for s in applying(TARGET, subject)}


# Settings of one run that a suite target cannot have: the suite file is the settings file, and
# a baseline is written by a single run; and the flags of the suite command that shape its report.
_COMMAND_LINE_ONLY = [s.key for s in applying(RUN) if TARGET not in s.applies and SUITE not in s.applies]
_REPORT_KEYS = [s.key for s in applying(SUITE)]


def _closest(key: str, valid: Sequence[str]) -> str:
    """The hint after "unknown key K", worded as the config file's (config_file.py)."""
    if key in _COMMAND_LINE_ONLY:
        return f"; {key} is for a single run on the command line, not a suite target"
    close = difflib.get_close_matches(key, valid, n=1, cutoff=0.5)
    if not close:
        close = difflib.get_close_matches(key.replace("_", "-"), valid, n=1, cutoff=0.5)
    if close:
        return f"; did you mean {close[0]}?"
    return f"; valid keys: {', '.join(sorted(valid))}"


@dataclass(frozen=True)
class SuiteFile:
    """The file, read and checked: every target's planned runs, in file order."""

    path: str
    targets: tuple[tuple[str, tuple[Planned, ...]], ...]  # (name, its runs: one, or one per era)

    def planned(self, shard: tuple[int, int] | None = None) -> list[Planned]:
        """The runs of the targets in this shard (index % N == I - 1, in file order)."""
        out: list[Planned] = []
        for index, (_name, runs) in enumerate(self.targets):
            if shard is None or index % shard[1] == shard[0] - 1:
                out.extend(runs)
        return out


def load(path: str) -> SuiteFile:
    """Read and validate FILE; every problem is a UsageError naming the file and the key."""
    data = _read(path)
    where = os.path.basename(path) or path
    unknown = [k for k in data if k not in _TOP_KEYS]
    if unknown:
        raise UsageError(f"{where}: unknown top-level key {unknown[0]!r}{_closest(unknown[0], _TOP_KEYS)}")
    defaults = data.get("defaults", {})
    if not isinstance(defaults, Mapping):
        raise UsageError(f"{where}: defaults must be a table of flags")
    targets = data.get("targets")
    if not isinstance(targets, list) or not targets:
        raise UsageError(f"{where}: no targets: add one [[targets]] table per server, each with a name")
    every_key = {**_keys(SERVER), **_keys(CLIENT)}
    _check_keys(f"{where}: defaults", defaults, every_key, allow_name=False)
    seen: set[str] = set()
    out: list[tuple[str, tuple[Planned, ...]]] = []
    for n, target in enumerate(targets, 1):
        if not isinstance(target, Mapping):
            raise UsageError(f"{where}: target {n} must be a table of flags")
        name = target.get("name")
        if not isinstance(name, str) or not name.strip():
            raise UsageError(f"{where}: target {n} needs a name (a non-empty string)")
        label = f"{where}: target {name!r}"
        if name in seen:
            raise UsageError(f"{label}: the name is used by another target; names must be unique")
        seen.add(name)
        subject = target.get("subject", defaults.get("subject", SERVER))
        if subject not in SUBJECTS:
            raise UsageError(f"{label}: subject must be {' or '.join(SUBJECTS)}, got {str(subject)[:40]!r}")
        keys = _keys(subject)
        merged = {**{k: v for k, v in defaults.items() if k in keys}, **target}
        _check_keys(label, merged, keys, allow_name=True)
        out.append((name, tuple(_plan(label, name, merged, keys))))
    return SuiteFile(path, tuple(out))


def _read(path: str) -> dict[str, Any]:
    suffix = Path(path).suffix.lower()
    if suffix not in (".toml", ".json"):
        raise UsageError(f"suite: {path!r} must be a .toml or .json file")
    try:
        raw = Path(path).read_bytes()
    except OSError as exc:
        raise UsageError(f"suite: cannot read {path!r}: {exc.strerror}") from None
    try:
        if suffix == ".toml":
            import tomllib

            data: Any = tomllib.loads(raw.decode("utf-8"))
        else:
            data = json.loads(raw)
    except (ValueError, UnicodeDecodeError) as exc:  # TOMLDecodeError and JSONDecodeError are ValueErrors
        raise UsageError(f"suite: {path!r} is not valid {suffix[1:].upper()}: {str(exc).splitlines()[0]}") from None
    if not isinstance(data, dict):
        raise UsageError(f"suite: {path!r} must hold an object with a targets list")
    return data


def _check_keys(label: str, table: Mapping[str, Any], keys: Mapping[str, _Key], *, allow_name: bool) -> None:
    valid = [*keys, *(["name"] if allow_name else [])]
    for key in table:
        if key in valid:
            continue
        if key == "name":
            raise UsageError(f"{label}: name belongs to each target (names must be unique), not to defaults")
        if key.replace("_", "-") in _REPORT_KEYS:
            raise UsageError(f"{label}: {key!r} shapes the combined report: give --{key} to the suite command")
        raise UsageError(f"{label}: unknown key {key!r}{_closest(key, valid)}")


def _setting(label: str, key: str, value: Any, spec: _Key) -> Any:
    """One file value in its RunOptions form (settings/values.py: the config file's converter)."""
    from tasks_conformance.settings.values import WrongForm, converted, type_name

    try:
        form = converted(spec.kind, value)
    except WrongForm as exc:
        raise UsageError(f"{label}: {key} must be {exc.words}, got {type_name(value)}") from None
    given = value.values() if isinstance(value, Mapping) else value if isinstance(value, list) else [value]
    if any(v == "-" for v in given):
        raise UsageError(f"{label}: {key} cannot read standard input (-) in a suite file; use @FILE")
    return form


def _plan(label: str, name: str, table: Mapping[str, Any], keys: Mapping[str, _Key]) -> list[Planned]:
    """The target's runs: its flags checked exactly as the command line checks them."""
    from tasks_conformance.entry.api import _options
    from tasks_conformance.server.check_catalog import catalog
    from tasks_conformance.settings.config import build_run_config

    settings = {spec.field: _setting(label, k, v, spec) for k, v in table.items()
                if (spec := keys.get(k)) is not None and spec.field is not None}
    if settings.get("subject") == CLIENT:
        from tasks_conformance.entry.client_run import build_client

        try:
            client = build_client(_options(settings))
        except UsageError as exc:
            raise UsageError(f"{label}: {exc}") from None
        return [Planned(name, client.output, target=name, client=client)]
    era = table.get(ERA.key, ERA.default)
    if not isinstance(era, str):
        raise UsageError(f"{label}: era must be {', '.join(SERVER_RUN_ERAS[:-1])} or {SERVER_RUN_ERAS[-1]}")
    try:
        config: RunConfig = build_run_config(_options(settings), catalog())
        runs = era_plan(config, era)
    except UsageError as exc:
        raise UsageError(f"{label}: {exc}") from None
    if len(runs) == 1:  # auto, or one era pinned
        return [replace(runs[0], name=name, target=name)]
    return [replace(p, name=f"{name} ({p.era})", target=name) for p in runs]


def parse_shard(value: str | None) -> tuple[int, int] | None:
    """`--shard I/N` (1 <= I <= N) as (I, N)."""
    if value is None:
        return None
    head, sep, tail = value.partition("/")
    try:
        index, total = int(head), int(tail)
    except ValueError:
        index = total = 0
    if not sep or total < 1 or not 1 <= index <= total:
        raise UsageError(f"--shard must be I/N with 1 <= I <= N (e.g. 1/3), got {value!r}")
    return index, total


def output_config(format: str | None, reporters: Sequence[str], *, quiet: bool, verbose: bool,
                  debug: bool) -> RunConfig:
    """The suite command's report flags, as the RunConfig `report_output` reads them."""
    from tasks_conformance.core.flag_values import parse_reporter

    one_of(FORMAT, format)
    return RunConfig(transport="stdio", format=format,  # type: ignore[arg-type]  # checked above
                     reporters=tuple(parse_reporter(r) for r in reporters), quiet=quiet, verbose=verbose,
                     debug=debug)


def default_jobs() -> int:
    return os.cpu_count() or 1


def run_suite(file: str, *, jobs: int | None, shard: str | None, format: str | None, reporters: Sequence[str],
              quiet: bool, verbose: bool, debug: bool) -> int:
    """The `suite` command: every check of the flags and the file first (usage errors before any
    traffic), then the targets of this shard, at most `jobs` at a time; returns the exit code."""
    from tasks_conformance.entry.multirun import run_combined

    out = output_config(format, reporters, quiet=quiet, verbose=verbose, debug=debug)
    if jobs is not None and jobs < 1:
        raise UsageError(f"--jobs must be at least 1, got {jobs}")
    where = parse_shard(shard)
    planned = load(file).planned(where)
    return run_combined(out, planned, "suite", jobs=jobs or default_jobs(), shard=shard)
