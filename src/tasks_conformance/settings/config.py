"""RunOptions -> build_run_config -> RunConfig: flags in, a validated run description out (or a UsageError).
RunOptions, the settings as given, is declared in settings/ (the schema). Pure and cheap to
import: no pydantic, no httpx. Only cli.py turns a UsageError into exit 2."""

from __future__ import annotations

import os
import shlex
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import urlsplit

from tasks_conformance.core.eras import Era
from tasks_conformance.core.errors import UsageError
from tasks_conformance.core.flag_values import (
    ReporterSpec,
    check_command,
    parse_env,
    parse_header,
    parse_hostport,
    parse_json_flag,
    parse_reporter,
    read_token,
)
from tasks_conformance.core.oauth_settings import OAuthCredentials, oauth_credentials
from tasks_conformance.core.profiles import DEFAULT_PROFILE
from tasks_conformance.core.redact import SECRET_NAME, Named
from tasks_conformance.core.wires import DIALECTS, TASK_WIRES
from tasks_conformance.settings import DEFAULT_MAX_MESSAGE_BYTES, RunOptions
from tasks_conformance.settings.commands import FORMAT, one_of
from tasks_conformance.settings.masking import masked_url, query_secrets, url_passwords
from tasks_conformance.settings.role_flags import merge_task_role, parse_probe_args, parse_probes, stdin_readers
from tasks_conformance.settings.selection import NO_CATALOG, Catalog, selection

if TYPE_CHECKING:
    from tasks_conformance.core.baseline import Baseline

__all__ = ["DEFAULT_MAX_MESSAGE_BYTES", "Catalog", "RunConfig", "RunOptions", "build_config", "build_run_config",
           "query_secrets", "show_env", "url_passwords"]

SUPPORTED_PROTOCOLS = tuple(d.protocol_version for d in DIALECTS.values())
EXPECT_WIRES = (*map(str, TASK_WIRES), "any")

_SECRET_NAME = SECRET_NAME  # the names whose values --show-env never shows (redact.py)

TransportKind = Literal["stdio", "http", "tcp", "unix"]
# For typing; EXPECT_WIRES (from the dialect registry) is what is checked, and a test holds them equal.
ExpectWire = Literal[Era, "any"]


@dataclass(frozen=True)
class RunConfig:
    transport: TransportKind
    url: str | None = None
    command: tuple[str, ...] = ()
    server_command: tuple[str, ...] = ()  # --server-command: started before the run, stopped after (server/managed.py)
    cwd: str | None = None
    env: dict[str, str] = field(default_factory=dict)
    show_env: tuple[str, ...] = ()  # -e names whose values reports may show (--show-env)
    tcp: tuple[str, int] | None = None
    unix: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    access_token: str | None = None
    protocol_version: str | None = None  # None: negotiate
    client_capabilities: dict[str, Any] | None = None
    expect_wire: ExpectWire = "any"
    profile: str = DEFAULT_PROFILE  # a key of profiles.PROFILES
    check_ids: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    areas: tuple[str, ...] = ()  # --area: spec areas or prefixes of them (core/areas.py)
    tool_name: str | None = None
    tool_args: dict[str, Any] = field(default_factory=dict)
    # The other probe roles (roles.py): role -> tool, role -> arguments; the task role is tool_name/tool_args.
    probes: dict[str, str] = field(default_factory=dict)
    probe_args: dict[str, dict[str, Any]] = field(default_factory=dict)
    input_responses: dict[str, Any] | None = None
    elicitation_response: dict[str, Any] | None = None
    sampling_response: dict[str, Any] | None = None
    timeout_ms: int = 30_000
    poll_timeout_ms: int = 30_000
    startup_timeout_ms: int | None = None  # --startup-timeout; None: as --timeout
    max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES
    format: Literal["human", "json"] | None = None
    reporters: tuple[ReporterSpec, ...] = ()
    quiet: bool = False
    verbose: bool = False
    wire_log: str | None = None
    debug: bool = False
    junit_suite_name: str | None = None  # --junit-suite-name; None: named after the target and era
    baseline: Baseline | None = None  # --baseline, read and checked (baseline.py applies it after the run)
    update_baseline: str | None = None  # --update-baseline PATH: written from the run's failures
    oauth: OAuthCredentials | None = None  # --refresh-token & co: the access token comes from a refresh
    # A second principal (--other-access-token, --other-header): the headers it sends instead of
    # the main credentials, to try the main principal's task with (HTTP only).
    other_headers: dict[str, str] = field(default_factory=dict)
    other_access_token: str | None = None

    @property
    def timeout_s(self) -> float:
        return self.timeout_ms / 1000.0

    @property
    def poll_timeout_s(self) -> float:
        return self.poll_timeout_ms / 1000.0

    @property
    def startup_timeout_s(self) -> float:
        """The handshake's allowance: a cold start is not a slow answer (never below --timeout)."""
        startup = self.startup_timeout_ms if self.startup_timeout_ms is not None else self.timeout_ms
        return max(startup, self.timeout_ms) / 1000.0

    def secrets(self) -> list[str]:
        """Every value the run must never print: tokens, credential headers and cookies (also
        each cookie's value on its own), URL passwords and secret-looking query values, every
        -e value not named by --show-env, passwords inside URL-shaped -e values and arguments, and the
        values of secret-looking flags on the server command line. A value given under a name
        (-e, header, query parameter, flag) is `Named`, so that the Redactor hides even a short
        one where it stands after that name."""
        from tasks_conformance.core.redact import SENSITIVE_HEADERS

        out: list[str] = []
        if self.access_token:
            out.append(self.access_token)
        if self.oauth is not None:
            out += self.oauth.secrets()
        for k, v in self.headers.items():
            if k.lower() in SENSITIVE_HEADERS or _SECRET_NAME.search(k):
                out.append(Named(v, k, any_case=True))
                parts = v.split(None, 1)  # "Bearer abc" -> also hide "abc" on its own
                if len(parts) == 2:
                    out.append(parts[1])
                if k.lower() in ("cookie", "set-cookie"):
                    for crumb in v.split(";"):
                        out.append(crumb.strip())
                        out.append(crumb.partition("=")[2].strip())
        if self.other_access_token:
            out.append(self.other_access_token)
        for k, v in self.other_headers.items():  # every --other-header value is a credential
            out += [Named(v, k, any_case=True), *v.split(None, 1)[1:]]
        for k, v in self.env.items():
            # Every -e value is hidden unless --show-env names it (never a secret-looking name's),
            # and a password written into a URL-shaped value is hidden even then.
            if k not in self.show_env or _SECRET_NAME.search(k):
                out.append(Named(v, k))
            out += url_passwords(v)
        if self.url:
            where = urlsplit(self.url)
            if where.password:
                out.append(where.password)
                out.append(f"{where.username}:{where.password}")
            out += query_secrets(self.url)
        args = list(self.command)
        for i, arg in enumerate(args):
            out += url_passwords(arg)
            name, eq, value = arg.partition("=")
            if name.startswith("-") and _SECRET_NAME.search(name):
                if eq:
                    out.append(Named(value, name))
                elif i + 1 < len(args):
                    out.append(args[i + 1])
        return [s for s in out if s]

    def target(self) -> str:
        if self.transport == "http":
            return self.url or ""
        if self.transport == "tcp" and self.tcp is not None:
            return f"tcp://{self.tcp[0]}:{self.tcp[1]}"
        if self.transport == "unix":
            return f"unix:{self.unix}"
        return shlex.join(self.command)




# The builder. Each step checks one group of flags and raises the UsageError a user sees; the
# steps run in a fixed order so that, given several mistakes, the first reported stays the same.


def build_run_config(options: RunOptions, catalog: Catalog = NO_CATALOG) -> RunConfig:
    """Flags in, a validated run description out, or a UsageError naming the first bad flag."""
    kind = _transport(options)
    command = _server_command(options)
    headers, token = _headers(options)
    oauth = oauth_credentials(
        url=options.url, refresh_token=options.refresh_token, client_id=options.client_id,
        client_secret=options.client_secret, credentials_file=options.credentials_file,
        authorization_given=any(k.lower() == "authorization" for k in headers),
    )
    _check_versions(options)
    check_ids, categories, areas = selection(options, catalog)
    _check_limits(options)
    env = dict(parse_env(e) for e in options.env)
    tcp = parse_hostport(options.tcp) if options.tcp else None
    values = _JsonValues.parse(options)
    probes, probe_args = parse_probes(options.probes), parse_probe_args(options.probe_args)
    tool_name, tool_args = merge_task_role(options.tool_name, values.tool_args, probes, probe_args)
    baseline = _baseline(options, catalog)
    config = RunConfig(
        transport=kind,
        url=options.url,
        command=command,
        server_command=_argv("--server-command", options.server_command, options) if options.server_command else (),
        cwd=options.cwd,
        env=env,
        tcp=tcp, unix=options.unix, headers=headers, access_token=token,
        protocol_version=options.protocol_version,
        client_capabilities=values.client_capabilities,
        expect_wire=options.expect_wire,  # type: ignore[arg-type]  # checked in _check_versions
        profile=options.profile,
        check_ids=check_ids, categories=categories, areas=areas,
        tool_name=tool_name, tool_args=tool_args or {}, probes=probes, probe_args=probe_args,
        input_responses=values.input_responses, elicitation_response=values.elicitation_response,
        sampling_response=values.sampling_response,
        timeout_ms=options.timeout_ms, poll_timeout_ms=options.poll_timeout_ms,
        startup_timeout_ms=options.startup_timeout_ms, max_message_bytes=options.max_message_bytes,
        format=options.format,  # type: ignore[arg-type]  # checked in _check_limits
        reporters=tuple(parse_reporter(r) for r in options.reporters),
        quiet=options.quiet, verbose=options.verbose, wire_log=options.wire_log, debug=options.debug,
        junit_suite_name=options.junit_suite_name,
        baseline=baseline,
        update_baseline=options.update_baseline,
        oauth=oauth,
        **_other_credentials(options, kind, token),
    )
    return show_env(config, options.show_env) if options.show_env else config


def _baseline(o: RunOptions, catalog: Catalog) -> Baseline | None:
    """--junit-suite-name and the baseline flags; the baseline file read, its check ids checked."""
    if o.junit_suite_name is not None and not o.junit_suite_name.strip():
        raise UsageError("--junit-suite-name must not be empty")
    if o.strict_baseline and not o.baseline:
        raise UsageError("--strict-baseline needs --baseline FILE")
    if o.update_baseline is not None:
        folder = os.path.dirname(os.path.abspath(o.update_baseline))
        if not o.update_baseline.strip() or os.path.isdir(o.update_baseline):
            raise UsageError("--update-baseline needs a file name")
        # Checked before any traffic: a run whose baseline cannot be written is a run wasted.
        if not (os.path.isdir(folder) and os.access(folder, os.W_OK)):
            raise UsageError(f"--update-baseline: cannot write {o.update_baseline!r}: no writable directory {folder!r}")
    if not o.baseline:
        return None
    if (o.update_baseline is not None and not os.path.exists(o.baseline)
            and os.path.abspath(o.baseline) == os.path.abspath(o.update_baseline)):
        # The first --update-baseline of a project whose config file already names the
        # baseline: there is nothing to apply yet, and the run is what writes it.
        return None
    if not os.path.exists(o.baseline):
        raise UsageError(f"--baseline: cannot read {o.baseline!r}: no such file (--update-baseline {o.baseline} "
                         "writes it from a run's failures)")
    from tasks_conformance.core import baseline

    return baseline.load(o.baseline, catalog.check_ids, strict=o.strict_baseline)


def show_env(config: RunConfig, names: tuple[str, ...]) -> RunConfig:
    """`config` letting reports show the values of the -e variables `names` (--show-env); each
    must be one of them. The builder applies RunOptions.show_env with it."""
    unknown = [name for name in names if name not in config.env]
    if unknown:
        raise UsageError(f"--show-env {', '.join(unknown)}: no -e NAME=VALUE gives it")
    return replace(config, show_env=tuple(dict.fromkeys(names)))


def _transport(o: RunOptions) -> TransportKind:
    """Exactly one target, and the transport it implies (which --transport may only confirm)."""
    flags = (("--url", o.url), ("--command", o.command), ("--tcp", o.tcp), ("--unix", o.unix))
    if empty := [name for name, value in flags if isinstance(value, str) and not value.strip()]:
        raise UsageError(f"{empty[0]} is empty")  # given, but nothing in it: as "   " is, never "no target"
    given = [name for name, value in flags if value]
    if len(given) > 1:
        raise UsageError(f"give one target, not {' and '.join(given)}")
    if not given:
        raise UsageError("no target: give --url URL, --command CMD, --tcp HOST:PORT or --unix PATH")
    kind: TransportKind
    if o.url:
        kind = "http"
        if not (o.url.startswith("http://") or o.url.startswith("https://")):
            # A password or a secret query value in the mistyped URL is not echoed.
            raise UsageError(f"--url must start with http:// or https://, got {masked_url(o.url)[:60]!r}")
    elif o.command:
        kind = "stdio"
    elif o.tcp:
        kind = "tcp"
    else:
        kind = "unix"
    if o.transport is not None and o.transport != kind:
        raise UsageError(f"--transport {o.transport} does not match the target given ({given[0]})")
    return kind


def _server_command(o: RunOptions) -> tuple[str, ...]:
    """The argv to spawn, checked to be startable; the flags that only make sense with it."""
    if o.server_command and o.command:
        raise UsageError("--server-command starts the server that --url, --tcp or --unix reaches; a --command "
                         "server is started by the run itself")
    if o.command:  # `--command "node server.js"` is common: split like a shell would, then add --args
        cmd = _argv("--command", o.command, o) + o.args + o.command_args
    elif o.args or o.command_args:
        raise UsageError("--args/--command-args need --command")
    if (o.cwd or o.env) and not (o.command or o.server_command):
        raise UsageError("--cwd and --env apply to --command and --server-command only")
    return cmd if o.command else ()


def _argv(flag: str, text: str | Sequence[str], o: RunOptions) -> tuple[str, ...]:
    """A command split like a shell would (an existing path with spaces kept whole; an argv taken
    as it is), its program checked to be startable with --cwd and the PATH of --env."""
    try:
        cmd = (tuple(os.fspath(a) for a in text) if not isinstance(text, str)
               else tuple(shlex.split(text)) if " " in text and not os.path.exists(text) else (text,))
    except ValueError as exc:
        raise UsageError(f"{flag}: {exc}") from None
    if not cmd:
        raise UsageError(f"{flag} is empty")
    path = next((e.partition("=")[2] for e in reversed(o.env) if e.startswith("PATH=")), None)
    check_command(cmd[0], o.cwd, path, flag)
    return cmd


def _headers(o: RunOptions) -> tuple[dict[str, str], str | None]:
    """--header values, plus the bearer token as an Authorization header; returns the token too."""
    headers: dict[str, str] = {}
    for h in o.headers:
        k, v = parse_header(h)
        headers[k] = v
    stdin_flags = [name for name, value in (("--access-token", o.access_token), ("--oauth-access-token",
                   o.oauth_access_token), *_json_flags(o)) if value == "-"] + stdin_readers(o.probe_args)
    if len(stdin_flags) > 1:
        raise UsageError(f"only one flag may read standard input (-), not {' and '.join(stdin_flags)}")
    access = read_token("--access-token", o.access_token) if o.access_token else None
    oauth = read_token("--oauth-access-token", o.oauth_access_token) if o.oauth_access_token else None
    token = access or oauth
    if access and oauth and access != oauth:
        raise UsageError("give --access-token or --oauth-access-token, not both")
    if token:
        headers["Authorization"] = f"Bearer {token}"
    return headers, token


def _other_credentials(o: RunOptions, kind: TransportKind, main_token: str | None) -> dict[str, Any]:
    """--other-access-token and --other-header: the second principal's headers (HTTP only)."""
    if not (o.other_access_token or o.other_headers):
        return {}
    if kind != "http":
        raise UsageError("--other-access-token and --other-header apply to --url only")
    if o.other_access_token == "-" and "-" in (o.access_token, o.oauth_access_token,
                                               *(v for _, v in _json_flags(o))):
        raise UsageError("only one flag may read standard input (-), not --other-access-token and another")
    headers = dict(parse_header(h, flag="--other-header") for h in o.other_headers)
    token = read_token("--other-access-token", o.other_access_token) if o.other_access_token else None
    if token:
        if token == main_token:
            raise UsageError("--other-access-token must differ from the main access token")
        headers["Authorization"] = f"Bearer {token}"
    return {"other_headers": headers, "other_access_token": token}


def _check_versions(o: RunOptions) -> None:
    if o.protocol_version is not None and o.protocol_version not in SUPPORTED_PROTOCOLS:
        raise UsageError(
            f"--protocol-version must be one of {', '.join(SUPPORTED_PROTOCOLS)}, got {o.protocol_version!r}"
        )
    if o.expect_wire not in EXPECT_WIRES:
        raise UsageError(f"--expect-wire must be {', '.join(EXPECT_WIRES[:-1])} or {EXPECT_WIRES[-1]}, "
                         f"got {o.expect_wire!r}")


def _check_limits(o: RunOptions) -> None:
    """Timeouts, the message size bound and the stdout format."""
    for name, val in (("--timeout", o.timeout_ms), ("--poll-timeout", o.poll_timeout_ms),
                      ("--startup-timeout", o.startup_timeout_ms)):
        if val is not None and val <= 0:
            raise UsageError(f"{name} must be a positive number of milliseconds")
    if o.max_message_bytes < 1024:
        raise UsageError("--max-message-bytes must be at least 1024")
    one_of(FORMAT, o.format)


def _json_flags(o: RunOptions) -> list[tuple[str, str | None]]:
    return [("--client-capabilities", o.client_capabilities), ("--tool-args", o.tool_args),
            ("--input-responses", o.input_responses), ("--elicitation-response", o.elicitation_response),
            ("--sampling-response", o.sampling_response)]


@dataclass(frozen=True)
class _JsonValues:
    """The JSON-valued flags, parsed (inline, @file or -); None where a flag was not given."""

    client_capabilities: dict[str, Any] | None
    tool_args: dict[str, Any] | None
    input_responses: dict[str, Any] | None
    elicitation_response: dict[str, Any] | None
    sampling_response: dict[str, Any] | None

    @classmethod
    def parse(cls, o: RunOptions) -> _JsonValues:
        def parsed(flag: str, value: str | None) -> dict[str, Any] | None:
            return parse_json_flag(flag, value) if value else None

        # Keyword arguments are evaluated in order: the first bad flag is the one reported.
        return cls(
            client_capabilities=parsed("--client-capabilities", o.client_capabilities),
            tool_args=parsed("--tool-args", o.tool_args),
            input_responses=parsed("--input-responses", o.input_responses),
            elicitation_response=parsed("--elicitation-response", o.elicitation_response),
            sampling_response=parsed("--sampling-response", o.sampling_response),
        )


def build_config(
    *, known_check_ids: tuple[str, ...] = (), known_categories: tuple[str, ...] = (), **flags: Any
) -> RunConfig:
    """The older keyword form: `RunOptions` fields as keywords (lists allowed for repeatable
    flags). Kept because tests/helpers/runs.py builds its runs this way."""
    fields: dict[str, Any] = {k: tuple(v) if isinstance(v, list) else v for k, v in flags.items()}
    return build_run_config(RunOptions(**fields), Catalog(known_check_ids, known_categories))
