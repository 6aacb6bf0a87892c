"""RunOptions -> build_client_run_config -> ClientRunConfig: a client run's settings checked, as
`config.build_run_config` checks a server run's (a UsageError naming the first bad flag).

The client's settings are the schema's fields whose subjects include CLIENT (settings/): its
`command`, `era`, `scenarios`, `timeout_ms` (per scenario), `jobs`, `transport`, `profile`,
`env` and `show_env` (the client's -e variables, hidden in every output as the server's are),
and the report and baseline settings the server's runs have. What reports and the baseline read
is a `RunConfig` (`output`), so the server's report writers and baseline step serve a client run
unchanged. The scenarios and checks are the client subject's (client/, a layer above): the
caller passes their names in a `ClientCatalog`, as a server run's caller passes a `Catalog`.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field

from tasks_conformance.core.areas import matching
from tasks_conformance.core.errors import UsageError
from tasks_conformance.core.flag_values import parse_env, parse_reporter
from tasks_conformance.core.profiles import CLIENT_PROFILES
from tasks_conformance.settings import CLIENT, CLIENT_ERAS, SETTINGS, RunOptions
from tasks_conformance.settings.commands import FORMAT, one_of
from tasks_conformance.settings.config import Catalog, RunConfig, _baseline, show_env

CLIENT_TRANSPORTS = ("http", "stdio")


@dataclass(frozen=True)
class ClientCatalog:
    """What a client run may name: each scenario with its eras, every era (the registry's order),
    and the client check ids (for the baseline file)."""

    scenarios: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    eras: tuple[str, ...] = ("extension", "legacy")
    check_ids: tuple[str, ...] = ()
    areas: Mapping[str, str] = field(default_factory=dict)  # check id -> its spec area
    reads: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # check id -> its scenarios (none: every one)


@dataclass(frozen=True)
class ClientRunConfig:
    """A client run, checked: the client's argv and how to run it, and `output` (reports, wire
    log, baseline) in the form the server's report and baseline code reads."""

    command: tuple[str, ...]
    transport: str
    eras: tuple[str, ...]
    scenarios: tuple[str, ...]
    timeout_ms: int
    jobs: int  # 0: the CPU count
    profile: str
    cwd: str | None
    output: RunConfig
    env: Mapping[str, str] = field(default_factory=dict)  # -e: added to the client's environment
    check_ids: tuple[str, ...] = ()  # --area's checks (empty: every check of the profile)

    def secrets(self) -> tuple[str, ...]:
        """What no output may show: every -e value not named by --show-env, and the values of
        secret-looking flags on the client's command line (the server run's rules, `RunConfig.secrets`)."""
        return tuple(self.output.secrets())


def client_fields() -> frozenset[str]:
    """The RunOptions fields a client run reads."""
    return frozenset(name for name, spec in SETTINGS.items() if CLIENT in spec.subjects)


def build_client_run_config(options: RunOptions, catalog: ClientCatalog) -> ClientRunConfig:
    """Flags in, a checked client run out, or a UsageError naming the first bad flag."""
    if options.command is None:
        raise UsageError("--command is required (or --list-scenarios, or `client demo`)")
    transport = options.transport or "http"
    if transport not in CLIENT_TRANSPORTS:
        raise UsageError(f"--transport must be http or stdio, got {transport!r}")
    if options.era not in CLIENT_ERAS:
        raise UsageError(f"--era must be one of {', '.join(CLIENT_ERAS)}, got {options.era!r}")
    eras = catalog.eras if options.era == "both" else (options.era,)
    scenarios = tuple(dict.fromkeys(options.scenarios))
    unknown = [s for s in scenarios if s not in catalog.scenarios]
    if unknown:
        raise UsageError(f"--scenario: unknown {unknown[0]!r}; `tasks-conformance client --list-scenarios` names them")
    elsewhere = [s for s in scenarios if not set(catalog.scenarios[s]) & set(eras)]
    if elsewhere:
        raise UsageError(f"--scenario {elsewhere[0]}: a scenario of --era {catalog.scenarios[elsewhere[0]][0]}, "
                         f"not of --era {options.era}")
    check_ids, scenarios = _by_area(options, catalog, eras, scenarios)
    if options.timeout_ms <= 0:
        raise UsageError("--timeout must be a positive number of milliseconds")
    if options.jobs < 0:
        raise UsageError("--jobs must be at least 1 (or 0, the CPU count)")
    if options.profile not in CLIENT_PROFILES:
        raise UsageError(f"unknown --profile {options.profile!r}; valid client profiles: {', '.join(CLIENT_PROFILES)}")
    one_of(FORMAT, options.format)
    argv = _argv(options.command) + options.args
    env = dict(parse_env(e) for e in options.env)
    baseline = _baseline(options, Catalog(catalog.check_ids))
    output = RunConfig(transport="stdio", command=argv, cwd=options.cwd, env=env, profile=options.profile,
                       timeout_ms=options.timeout_ms, format=options.format,  # type: ignore[arg-type]  # checked above
                       reporters=tuple(parse_reporter(r) for r in options.reporters), quiet=options.quiet,
                       verbose=options.verbose, wire_log=options.wire_log, debug=options.debug,
                       junit_suite_name=options.junit_suite_name, baseline=baseline,
                       update_baseline=options.update_baseline)
    if options.show_env:
        output = show_env(output, options.show_env)
    return ClientRunConfig(command=argv, transport=transport, eras=eras, scenarios=scenarios,
                           timeout_ms=options.timeout_ms, jobs=options.jobs, profile=options.profile,
                           cwd=options.cwd, output=output, env=env, check_ids=check_ids)


def _by_area(options: RunOptions, catalog: ClientCatalog, eras: tuple[str, ...],
             scenarios: tuple[str, ...]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """--area: the client checks of the areas it names (by prefix, as the server's), and, when no
    --scenario was given, the scenarios of the chosen eras they read (all, where one of them reads
    every scenario)."""
    areas = tuple(dict.fromkeys(options.areas))
    if not areas:
        return (), scenarios
    known = tuple(dict.fromkeys(catalog.areas.values()))
    none = [a for a in areas if not matching(a, known)]
    if none:
        raise UsageError(f"--area {', '.join(none)} names no client check's spec area; the areas: {', '.join(known)}")
    chosen = tuple(c for c, area in catalog.areas.items() if any(matching(a, (area,)) for a in areas))
    if scenarios or any(not catalog.reads.get(c) for c in chosen):
        return chosen, scenarios
    read = dict.fromkeys(s for c in chosen for s in catalog.reads[c] if set(catalog.scenarios.get(s, ())) & set(eras))
    if not read:
        raise UsageError(f"--area {', '.join(areas)}: its checks read no scenario of --era {options.era}")
    return chosen, tuple(read)


def _argv(command: str) -> tuple[str, ...]:
    """The client command split as a shell would (quotes respected; bare spaces split, as the
    official runner splits them). Whether it starts is the run's to find out: a client that
    cannot start is a could-not-run with its cause, as one that never connects is."""
    try:
        argv = tuple(shlex.split(command))
    except ValueError as exc:
        raise UsageError(f"--command: {exc}") from None
    if not argv:
        raise UsageError("--command is empty")
    return argv
