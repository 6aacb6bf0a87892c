"""The settings schema: every setting of a run declared once, as a field of `RunOptions`.

A field's `setting(...)` holds everything said about it: its default, long flag (and short one),
metavar, kind, help panel and help text, whether it is a secret, the environment variable that
stands in for it, where it applies (`applies`), the subjects under test it applies to
(`subjects`: a server, a client, or both; `client_help` words it for the client where its meaning
differs) and its pytest option. From it are derived:

* the main command's options and `demo`'s and `suite`'s shared ones (command_line.py, for cli.py),
  and `client`'s (the settings whose subjects include CLIENT),
* the Python API's keywords (api.py: the signature, and `RunSettings` below for editors),
* the config-file keys (config_file.py; a client's in its `[client]` table) and the suite target
  keys (suite.py; a target with `subject = "client"` takes the client's), with their checks,
* the pytest plugin's options (pytest_plugin.py) and the rows of `config show`.

The *kind* says what a value is (text, a path, a JSON document, a repeatable flag…); each
consumer converts by kind, so a new setting of an existing kind is one field here, plus its use
in config.py's builder (`RunConfig`). Stdlib only and cheap to import: the command line reads it
on every start.
"""

# ruff: noqa: E501  (one setting a line: its help reads best unbroken)
#
# No `from __future__ import annotations` here: the named tuples below would turn each string
# annotation into a compiled forward reference on every start (a few ms); real ones cost nothing.

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any, Final, NamedTuple, TypedDict, TypeVar

from tasks_conformance.core.eras import CLIENT_RUN_ERAS, SERVER_RUN_ERAS
from tasks_conformance.core.profiles import DEFAULT_PROFILE

T = TypeVar("T")

JsonSetting = str | Mapping[str, Any] | None
"""A JSON-valued setting in the API: a mapping, or what the flag takes (JSON text, @file or -)."""


class Kind(NamedTuple):
    """What a setting's value is. `cli`: the type typer converts the flag to; `api`: the type
    the Python API accepts (text, for the generated `RunSettings`). (Named tuples, not
    dataclasses, here: the command line imports this module on every start.)"""

    name: str
    cli: Any
    api: str
    repeatable: bool = False


TEXT = Kind("text", str | None, "str | None")
PATH = Kind("path", str | None, "str | os.PathLike[str] | None")
COMMAND = Kind("command", str | None, "str | Sequence[str | os.PathLike[str]] | None")  # also an argv
JSON = Kind("json", str | None, "JsonSetting")  # JSON text, @FILE or -; a mapping in the API and a table in files
INT = Kind("int", int, "int")
MS = Kind("ms", int, "int")  # milliseconds
BOOL = Kind("bool", bool, "bool")
MANY = Kind("many", list[str] | None, "Sequence[str]", repeatable=True)
ENV = Kind("env", list[str] | None, "Sequence[str] | Mapping[str, str]", repeatable=True)  # NAME=VALUE
HEADERS = Kind("headers", list[str] | None, "Sequence[str] | Mapping[str, str]", repeatable=True)  # Name: value
PROBES = Kind("probes", list[str] | None, "Sequence[str] | Mapping[str, str]", repeatable=True)  # ROLE=TOOL
PROBE_ARGS = Kind("probe-args", list[str] | None, "Sequence[str] | Mapping[str, JsonSetting]", repeatable=True)
KINDS: Final = (TEXT, PATH, COMMAND, JSON, INT, MS, BOOL, MANY, ENV, HEADERS, PROBES, PROBE_ARGS)

# Where a setting applies: the main command (RUN), `demo`, the `suite` command line (SUITE), the
# config file (FILE), a suite target (TARGET), the Python API (API). The pytest plugin's options
# are named by `pytest=`.
RUN, DEMO, SUITE, FILE, TARGET, API = "run", "demo", "suite", "file", "target", "api"
EVERYWHERE: Final = frozenset({RUN, API, FILE, TARGET})
ALSO_DEMO: Final = EVERYWHERE | {DEMO}
REPORT_SHAPE: Final = frozenset({RUN, API, FILE, DEMO, SUITE})  # shapes the reports: the suite's own flag, no target's
COMMAND_LINE: Final = frozenset({RUN, API})  # one run's file actions: no file key, no target key

# The subjects under test a setting applies to: a server (the main command, `demo`, `suite`) or a
# client (`tasks-conformance client`, `run(subject="client")`, a `[client]` table, a client target).
SERVER, CLIENT = "server", "client"
SUBJECTS: Final = (SERVER, CLIENT)
SERVER_ONLY: Final = frozenset({SERVER})
CLIENT_ONLY: Final = frozenset({CLIENT})
BOTH: Final = frozenset(SUBJECTS)

CLIENT_ERAS: Final = CLIENT_RUN_ERAS

# Help panels.
CONN, CHECKS, REPORT, BASELINE = "Connection", "Checks", "Reports", "Config and baseline"

ACCESS_TOKEN_ENV = "TASKS_CONFORMANCE_ACCESS_TOKEN"
HEADERS_ENV = "TASKS_CONFORMANCE_HEADERS"
DEFAULT_MAX_MESSAGE_BYTES = 16 * 1024 * 1024


class Setting(NamedTuple):
    """One setting, as declared. `name` is the RunOptions field (and the API keyword); `key`,
    the config-file and suite key, is the long flag without its dashes."""

    name: str
    default: Any
    flag: str
    metavar: str | None
    kind: Kind
    panel: str
    help: str
    short: str | None = None
    secret: bool = False
    env: str | None = None
    applies: frozenset[str] = EVERYWHERE
    pytest: str | None = None  # the pytest option: --tasks-conformance-<pytest> (a client's: -client-<pytest>)
    subjects: frozenset[str] = SERVER_ONLY
    client_help: str | None = None  # the help for the client subject, where the meaning differs
    client_metavar: str | None = None  # the metavar for the client subject, where the values differ

    def help_for(self, subject: str) -> str:
        return self.client_help if subject == CLIENT and self.client_help else self.help

    def metavar_for(self, subject: str) -> str | None:
        return self.client_metavar if subject == CLIENT and self.client_metavar else self.metavar

    @property
    def key(self) -> str:
        return self.flag[2:]

    @property
    def flags(self) -> tuple[str, ...]:
        return (self.short, self.flag) if self.short else (self.flag,)


def setting(default: T, flag: str, metavar: str | None, kind: Kind, panel: str, help: str, *,
            short: str | None = None, secret: bool = False, env: str | None = None,
            applies: frozenset[str] = EVERYWHERE, pytest: bool | str = False,
            subjects: frozenset[str] = SERVER_ONLY, client_help: str | None = None,
            client_metavar: str | None = None) -> T:
    """A RunOptions field declaring one setting (typed as its default, for the dataclass)."""
    spec = Setting("", default, flag, metavar, kind, panel, help, short, secret, env, applies,
                   flag[2:] if pytest is True else pytest or None, subjects, client_help, client_metavar)
    return field(default=default, metadata={"setting": spec})


@dataclass(frozen=True)
class RunOptions:
    """What the flags said, before any checking: the one input of `config.build_run_config`,
    and the one declaration of every setting. Every repeatable setting is a tuple in the order
    given. The order of the fields is the order of `--help`, of the API's keywords and of
    `config show`."""

    url: str | None = setting(None, "--url", "URL", TEXT, CONN,
                 "Streamable HTTP endpoint, e.g. http://127.0.0.1:8000/mcp", pytest=True)
    command: str | None = setting(None, "--command", "CMD", COMMAND, CONN,
                 "Server command to spawn over stdio", pytest=True, subjects=BOTH,
                 client_help="The client under test, started once per scenario with the scripted server's URL appended (split like a shell would)")
    server_command: str | None = setting(None, "--server-command", "CMD", COMMAND, CONN,
                 "Start this server first (the one --url, --tcp or --unix reaches), wait until it listens, stop it after the run", pytest=True)
    args: tuple[str, ...] = setting((), "--args", "ARG", MANY, CONN,
                 "Argument for --command (repeatable)", subjects=BOTH)
    command_args: tuple[str, ...] = setting((), "--command-args", "ARG", MANY, CONN,
                 "Same as --args (repeatable)")
    transport: str | None = setting(None, "--transport", "http|stdio|tcp|unix", TEXT, CONN,
                 "Follows from the target; give it only to confirm", subjects=BOTH,
                 client_help="How the client reaches the scripted server: http (the default) or stdio", client_metavar="http|stdio")
    tcp: str | None = setting(None, "--tcp", "HOST:PORT", TEXT, CONN,
                 "Newline-delimited JSON-RPC over TCP")
    unix: str | None = setting(None, "--unix", "PATH", PATH, CONN,
                 "Unix socket path, newline-delimited JSON-RPC")
    cwd: str | None = setting(None, "--cwd", "DIR", PATH, CONN,
                 "Working directory for --command", subjects=BOTH)
    env: tuple[str, ...] = setting((), "--env", "NAME=VALUE", ENV, CONN,
                 "Added to the server's environment (repeatable); reports show [REDACTED] for every value unless --show-env NAME", short="-e", pytest=True, subjects=BOTH,
                 client_help="Added to the client's environment, in every scenario (repeatable); reports show [REDACTED] for every value unless --show-env NAME")
    show_env: tuple[str, ...] = setting((), "--show-env", "NAME", MANY, CONN,
                 "Let reports show this -e variable's value (repeatable; never a secret-looking name's, nor a password in a URL)", subjects=BOTH)
    headers: tuple[str, ...] = setting((), "--header", "'NAME: VALUE'", HEADERS, CONN,
                 "Sent on every HTTP request (repeatable; default: the lines of $TASKS_CONFORMANCE_HEADERS)", env=HEADERS_ENV, pytest=True)
    access_token: str | None = setting(None, "--access-token", "TOKEN|@FILE|-", TEXT, CONN,
                 "Bearer token for HTTP: the token, @FILE holding it, or - for stdin (default: $TASKS_CONFORMANCE_ACCESS_TOKEN)", secret=True, env=ACCESS_TOKEN_ENV)
    oauth_access_token: str | None = setting(None, "--oauth-access-token", "TOKEN|@FILE|-", TEXT, CONN,
                 "OAuth access token, sent as Bearer", secret=True)
    refresh_token: str | None = setting(None, "--refresh-token", "TOKEN|@FILE|-", TEXT, CONN,
                 "OAuth refresh token: an access token is fetched before the run and again on a 401 (token endpoint found from the server's OAuth metadata)", secret=True)
    client_id: str | None = setting(None, "--client-id", "ID", TEXT, CONN,
                 "OAuth client id for --refresh-token")
    client_secret: str | None = setting(None, "--client-secret", "SECRET|@FILE|-", TEXT, CONN,
                 "OAuth client secret for --refresh-token (none: a public client)", secret=True)
    credentials_file: str | None = setting(None, "--credentials-file", "PATH", PATH, CONN,
                 "JSON with refresh_token, client_id, client_secret and optionally token_endpoint (the flags win)")
    protocol_version: str | None = setting(None, "--protocol-version", "VERSION", TEXT, CONN,
                 "Pin the era: 2025-11-25 or 2026-07-28 (default: negotiate)", applies=ALSO_DEMO, pytest=True)
    client_capabilities: str | None = setting(None, "--client-capabilities", "JSON|@FILE|-", JSON, CONN,
                 "Client capabilities to declare: JSON, @FILE holding it, or - for stdin")
    timeout_ms: int = setting(30_000, "--timeout", "MS", MS, CONN,
                 "Per-request timeout in ms", pytest=True, subjects=BOTH,
                 client_help="At most this long per scenario's client, in ms")
    startup_timeout_ms: int | None = setting(None, "--startup-timeout", "MS", MS, CONN,
                 "How long the handshake (initialize, or a pinned server/discover; over stdio, also that of each further server process a check starts) and a --server-command server's start may take, in ms: a server slow to start (heavy imports, npx, a cold container) gets this instead of --timeout (default: --timeout)", pytest=True)
    max_message_bytes: int = setting(DEFAULT_MAX_MESSAGE_BYTES, "--max-message-bytes", "BYTES", INT, CONN,
                 "Largest message accepted from the server")
    profile: str = setting(DEFAULT_PROFILE, "--profile", "core|standard|full|durable", TEXT, CHECKS,
                 "core: the 8 checks every tasks server must pass | standard (default): every check, one whose probe role has no tool not applicable | full: every check, one whose probe role has no tool could not run (the run is incomplete until --probe ROLE=TOOL names it) | durable: standard plus a task surviving a restart of the server (stdio or --server-command only). The versioned profile id and a 0-100 score go into every report; the score never changes the exit code", applies=ALSO_DEMO, subjects=BOTH, client_metavar="core|standard|full",
                 client_help="core: the client checks of the MUST rules every tasks client meets | standard (default): every client check, one judged from the harness's optional outcome line not applicable without it | full: every client check, that one could not run without the line. The versioned profile id and a 0-100 score go into every report; the score never changes the exit code")
    check_ids: tuple[str, ...] = setting((), "--check-id", "ID", MANY, CHECKS,
                 "Run only this check (repeatable; within --profile; wins over --category)", applies=ALSO_DEMO, pytest=True)
    categories: tuple[str, ...] = setting((), "--category", "NAME", MANY, CHECKS,
                 "dispatch|creation|lifecycle|base (repeatable)", applies=ALSO_DEMO, pytest=True)
    areas: tuple[str, ...] = setting((), "--area", "AREA", MANY, CHECKS,
                 "Run only the checks of this spec area (repeatable; a prefix selects every area it begins, so input selects input and input_requests; --list-checks names each check's area)", applies=ALSO_DEMO, pytest=True, subjects=BOTH,
                 client_help="Run only the client checks of this spec area (repeatable; a prefix selects every area it begins; --list-scenarios names each scenario's checks), and, without --scenario, only the scenarios they read")
    expect_wire: str = setting("any", "--expect-wire", "legacy|extension|any", TEXT, CHECKS,
                 "Require this wire", applies=ALSO_DEMO, pytest=True)
    tool_name: str | None = setting(None, "--tool-name", "NAME", TEXT, CHECKS,
                 "The tool to run as a task", pytest="tool")
    tool_args: str | None = setting(None, "--tool-args", "JSON|@FILE|-", JSON, CHECKS,
                 "Arguments for the tool: a JSON object, @FILE or -", pytest=True)
    probes: tuple[str, ...] = setting((), "--probe", "ROLE=TOOL", PROBES, CHECKS,
                 "The tool for a probe role (repeatable): task, required, tool-error, fault, input, sync", pytest=True)
    probe_args: tuple[str, ...] = setting((), "--probe-args", "ROLE=JSON|@FILE|-", PROBE_ARGS, CHECKS,
                 "Arguments for a probe role's tool (repeatable)")
    input_responses: str | None = setting(None, "--input-responses", "JSON|@FILE|-", JSON, CHECKS,
                 "Answers keyed by inputRequests key: JSON, @file or -", pytest=True)
    elicitation_response: str | None = setting(None, "--elicitation-response", "JSON|@FILE|-", JSON, CHECKS,
                 "Answer to a server's elicitation/create: JSON, @file or - (default: decline)")
    sampling_response: str | None = setting(None, "--sampling-response", "JSON|@FILE|-", JSON, CHECKS,
                 "Answer to a server's sampling/createMessage: JSON, @file or - (default: -32601)")
    poll_timeout_ms: int = setting(30_000, "--poll-timeout", "MS", MS, CHECKS,
                 "Hard deadline in ms for polling a task", pytest=True)
    format: str | None = setting(None, "--format", "human|json", TEXT, REPORT,
                 "What stdout gets (default: human on a terminal, in CI (CI=true) or when a --reporter writes a file; json otherwise)", applies=REPORT_SHAPE, subjects=BOTH)
    reporters: tuple[str, ...] = setting((), "--reporter", "NAME[=PATH]", MANY, REPORT,
                 "human, json, json-summary, junit-xml, markdown or a plugin (repeatable); =PATH writes a file, =+PATH appends to it (markdown, human: e.g. $GITHUB_STEP_SUMMARY), no path: stdout", applies=REPORT_SHAPE, subjects=BOTH)
    quiet: bool = setting(False, "--quiet", None, BOOL, REPORT,
                 "Print only the summary line on stdout, whatever --format says (report files stay complete)", short="-q", applies=REPORT_SHAPE, subjects=BOTH)
    verbose: bool = setting(False, "--verbose", None, BOOL, REPORT,
                 "human report: show the wire frames (redacted) under each failed check", short="-v", applies=REPORT_SHAPE, subjects=BOTH)
    wire_log: str | None = setting(None, "--wire-log", "PATH", PATH, REPORT,
                 "Write every frame as NDJSON to PATH (secrets redacted)", applies=ALSO_DEMO, pytest=True, subjects=BOTH)
    junit_suite_name: str | None = setting(None, "--junit-suite-name", "NAME", TEXT, REPORT,
                 "Name of the junit-xml <testsuite> (default: tasks-conformance: TARGET (ERA))", applies=ALSO_DEMO, subjects=BOTH)
    debug: bool = setting(False, "--debug", None, BOOL, REPORT,
                 "Show a traceback if tasks-conformance itself fails", applies=REPORT_SHAPE, subjects=BOTH)
    config: str | None = setting(None, "--config", "FILE", PATH, BASELINE,
                 "Settings file (default: tasks-conformance.toml, else [tool.tasks-conformance] in pyproject.toml, in the working directory); flags override it", applies=COMMAND_LINE, pytest=True, subjects=BOTH,
                 client_help="Settings file (default: tasks-conformance.toml, else [tool.tasks-conformance] in pyproject.toml, in the working directory): a client's settings are its [client] table; flags override it")
    baseline: str | None = setting(None, "--baseline", "FILE", PATH, BASELINE,
                 "Known failures (TOML or JSON: check, optional era, reason, optional expires): reported as known, they do not fail the run", pytest=True, subjects=BOTH)
    strict_baseline: bool = setting(False, "--strict-baseline", None, BOOL, BASELINE,
                 "Fail the run when a baseline entry's check now passes (remove fixed entries)", subjects=BOTH)
    update_baseline: str | None = setting(None, "--update-baseline", "FILE", PATH, BASELINE,
                 "Write FILE from this run's failures (reasons of entries still failing are kept)", applies=COMMAND_LINE, subjects=BOTH)
    other_access_token: str | None = setting(None, "--other-access-token", "TOKEN|@FILE|-", TEXT, CONN,
                 "A second principal's bearer token: the task created with the main credentials must be hidden from it (HTTP; redacted like --access-token)", secret=True)
    other_headers: tuple[str, ...] = setting((), "--other-header", "'NAME: VALUE'", HEADERS, CONN,
                 "A header the second principal sends instead of the main credentials (repeatable; HTTP; every value redacted)")
    # The subject, and the settings of a client run only.
    subject: str = setting("server", "--subject", "server|client", TEXT, CONN,
                 "What is under test: a server (the default) or a client (then command is the client's, run by `tasks-conformance client`'s rules)", applies=frozenset({API, TARGET}), subjects=BOTH)
    era: str = setting("extension", "--era", "|".join(CLIENT_ERAS), TEXT, CONN,
                 "Which wire the scenarios speak: extension (2026-07-28, the default), legacy (2025-11-25) or both (every scenario once per era)", subjects=CLIENT_ONLY, pytest=True)
    scenarios: tuple[str, ...] = setting((), "--scenario", "NAME", MANY, CHECKS,
                 "Run only this scenario (repeatable; `tasks-conformance client --list-scenarios` names them)", subjects=CLIENT_ONLY, pytest="scenario")
    jobs: int = setting(0, "--jobs", "N", INT, CONN,
                 "Scenarios run at once (0, the default: the CPU count, at least 4: a scenario mostly waits on its task)", subjects=CLIENT_ONLY)


ERAS: Final = SERVER_RUN_ERAS
ERA = Setting("era", "auto", "--era", "|".join(ERAS), TEXT, CONN, "auto (default): negotiate one era | legacy, extension: one run on that wire (2025-11-25 or 2026-07-28; as --expect-wire) | both: run the suite once on each and report both (exit code: the worse)",
              applies=frozenset({RUN, DEMO, FILE, TARGET}))
"""A server's --era is no RunOptions field: it chooses how many runs are made (multirun.py), not
how one runs. A client's (the `era` field) is: one client run plays every era it names."""

SETTINGS: Final[dict[str, Setting]] = {f.name: f.metadata["setting"]._replace(name=f.name) for f in fields(RunOptions)}
"""Every RunOptions field's setting, in declaration order."""


def applying(where: str, subject: str | None = SERVER) -> list[Setting]:
    """The settings that apply `where` (RUN, DEMO, SUITE, FILE, TARGET, API) for `subject` (SERVER,
    CLIENT; None: either), a server's era last. For CLIENT, RUN is `tasks-conformance client`,
    FILE its `[client]` table, TARGET a client target."""
    return [s for s in (*SETTINGS.values(), ERA) if where in s.applies and (subject is None or subject in s.subjects)]


def __getattr__(name: str) -> Any:
    """`RunSettings` at run time, built from the schema on first use (the Python API's import):
    its forward references cost the command line's start-up a few ms to compile."""
    if name != "RunSettings":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    typed = TypedDict("RunSettings", {s.name: s.kind.api for s in applying(API, None)},  # type: ignore[misc]
                      total=False)
    globals()[name] = typed
    return typed


# The API's keywords for type checkers and editors (api.run_async takes **Unpack[RunSettings]).
# Generated from RunOptions: `python -m tasks_conformance.settings` rewrites it, and
# tests/unit/settings/test_settings.py fails while it is stale.
if TYPE_CHECKING:
    # --- generated: RunSettings ---
    class RunSettings(TypedDict, total=False):
        """The keywords of `run`/`run_async`: the settings, in their Python forms (see RunOptions)."""

        url: str | None
        command: str | Sequence[str | os.PathLike[str]] | None
        server_command: str | Sequence[str | os.PathLike[str]] | None
        args: Sequence[str]
        command_args: Sequence[str]
        transport: str | None
        tcp: str | None
        unix: str | os.PathLike[str] | None
        cwd: str | os.PathLike[str] | None
        env: Sequence[str] | Mapping[str, str]
        show_env: Sequence[str]
        headers: Sequence[str] | Mapping[str, str]
        access_token: str | None
        oauth_access_token: str | None
        refresh_token: str | None
        client_id: str | None
        client_secret: str | None
        credentials_file: str | os.PathLike[str] | None
        protocol_version: str | None
        client_capabilities: JsonSetting
        timeout_ms: int
        startup_timeout_ms: int
        max_message_bytes: int
        profile: str | None
        check_ids: Sequence[str]
        categories: Sequence[str]
        areas: Sequence[str]
        expect_wire: str | None
        tool_name: str | None
        tool_args: JsonSetting
        probes: Sequence[str] | Mapping[str, str]
        probe_args: Sequence[str] | Mapping[str, JsonSetting]
        input_responses: JsonSetting
        elicitation_response: JsonSetting
        sampling_response: JsonSetting
        poll_timeout_ms: int
        format: str | None
        reporters: Sequence[str]
        quiet: bool
        verbose: bool
        wire_log: str | os.PathLike[str] | None
        junit_suite_name: str | None
        debug: bool
        config: str | os.PathLike[str] | None
        baseline: str | os.PathLike[str] | None
        strict_baseline: bool
        update_baseline: str | os.PathLike[str] | None
        other_access_token: str | None
        other_headers: Sequence[str] | Mapping[str, str]
        subject: str | None
        era: str | None
        scenarios: Sequence[str]
        jobs: int
    # --- end: RunSettings ---
