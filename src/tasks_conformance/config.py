"""RunConfig and build_config: flags in, a validated run description out (or a UsageError).

Pure and cheap to import: no pydantic, no httpx. Only cli.py turns a UsageError into exit 2.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

from tasks_conformance.errors import UsageError

PROTOCOL_LEGACY = "2025-11-25"
PROTOCOL_MODERN = "2026-07-28"
SUPPORTED_PROTOCOLS = (PROTOCOL_LEGACY, PROTOCOL_MODERN)
DEFAULT_MAX_MESSAGE_BYTES = 16 * 1024 * 1024

_SECRET_NAME = re.compile(r"TOKEN|SECRET|PASSW|KEY|AUTH|COOKIE|CREDENTIAL", re.IGNORECASE)

TransportKind = Literal["stdio", "http", "tcp", "unix"]
ExpectWire = Literal["legacy", "extension", "any"]


@dataclass(frozen=True)
class ReporterSpec:
    name: str
    path: str | None  # None: stdout


@dataclass(frozen=True)
class RunConfig:
    transport: TransportKind
    url: str | None = None
    command: tuple[str, ...] = ()
    cwd: str | None = None
    env: dict[str, str] = field(default_factory=dict)
    tcp: tuple[str, int] | None = None
    unix: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    access_token: str | None = None
    protocol_version: str | None = None  # None: negotiate
    client_capabilities: dict[str, Any] | None = None
    expect_wire: ExpectWire = "any"
    check_ids: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    tool_name: str | None = None
    tool_args: dict[str, Any] = field(default_factory=dict)
    input_responses: dict[str, Any] | None = None
    elicitation_response: dict[str, Any] | None = None
    sampling_response: dict[str, Any] | None = None
    timeout_ms: int = 30_000
    poll_timeout_ms: int = 30_000
    max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES
    format: Literal["human", "json"] | None = None
    reporters: tuple[ReporterSpec, ...] = ()
    quiet: bool = False
    wire_log: str | None = None
    debug: bool = False

    @property
    def timeout_s(self) -> float:
        return self.timeout_ms / 1000.0

    @property
    def poll_timeout_s(self) -> float:
        return self.poll_timeout_ms / 1000.0

    def secrets(self) -> list[str]:
        """Every value the run must never print: tokens, credential headers and cookies (also
        each cookie's value on its own), URL passwords, secret-looking --env values and the
        values of secret-looking flags on the server command line."""
        from tasks_conformance.redact import SENSITIVE_HEADERS

        out: list[str] = []
        if self.access_token:
            out.append(self.access_token)
        for k, v in self.headers.items():
            if k.lower() in SENSITIVE_HEADERS:
                out.append(v)
                parts = v.split(None, 1)  # "Bearer abc" -> also hide "abc" on its own
                if len(parts) == 2:
                    out.append(parts[1])
                if k.lower() in ("cookie", "set-cookie"):
                    for crumb in v.split(";"):
                        out.append(crumb.strip())
                        out.append(crumb.partition("=")[2].strip())
        for k, v in self.env.items():
            if _SECRET_NAME.search(k):
                out.append(v)
        if self.url:
            where = urlsplit(self.url)
            if where.password:
                out.append(where.password)
                out.append(f"{where.username}:{where.password}")
        args = list(self.command)
        for i, arg in enumerate(args):
            name, eq, value = arg.partition("=")
            if name.startswith("-") and _SECRET_NAME.search(name):
                if eq:
                    out.append(value)
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


def parse_json_flag(flag: str, value: str, *, want: type = dict) -> Any:
    """`<json|@file|->`: inline JSON, @path to a JSON file, or - for standard input."""
    text = value
    if value == "-":
        text = sys.stdin.read()
    elif value.startswith("@"):
        try:
            text = Path(value[1:]).read_text(encoding="utf-8")
        except OSError as exc:
            raise UsageError(f"{flag}: cannot read {value[1:]!r}: {exc.strerror}") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UsageError(f"{flag}: not valid JSON ({exc.msg} at line {exc.lineno} column {exc.colno})") from None
    if not isinstance(data, want):
        raise UsageError(f"{flag}: expected a JSON {'object' if want is dict else want.__name__}")
    return data


def parse_header(value: str) -> tuple[str, str]:
    name, sep, val = value.partition(":")
    name = name.strip()
    if not sep or not name or any(c.isspace() for c in name):
        raise UsageError(f"--header: expected 'Name: value', got {value.split(':')[0][:40]!r}…")
    return name, val.strip()


def parse_env(value: str) -> tuple[str, str]:
    key, sep, val = value.partition("=")
    if not sep or not key:
        raise UsageError(f"--env: expected KEY=VALUE, got {key[:40]!r}")
    return key, val


def parse_reporter(value: str) -> ReporterSpec:
    name, sep, path = value.partition("=")
    if not name:
        raise UsageError("--reporter: expected NAME or NAME=PATH")
    return ReporterSpec(name=name, path=path if sep and path else None)


def check_command(program: str, cwd: str | None, path: str | None = None) -> None:
    """A command that cannot be started is the user's mistake (exit 2), found before any traffic."""
    if cwd is not None and not os.path.isdir(cwd):
        raise UsageError(f"--cwd: {cwd!r} is not a directory")
    if os.sep in program or (os.altsep and os.altsep in program):
        path = program if os.path.isabs(program) or cwd is None else os.path.join(cwd, program)
        if not os.path.exists(path):
            raise UsageError(f"--command: {program!r} not found")
        if os.path.isdir(path):
            raise UsageError(f"--command: {program!r} is a directory, not a program")
        if not os.access(path, os.X_OK):
            raise UsageError(f"--command: {program!r} is not executable")
        return
    # The child is started with --env added to our environment, so look where it will look.
    if shutil.which(program, path=path) is None:
        raise UsageError(f"--command: {program!r} not found on PATH")


def parse_hostport(value: str) -> tuple[str, int]:
    host, sep, port = value.rpartition(":")
    if not sep or not host or not port.isdigit() or not (0 < int(port) < 65536):
        raise UsageError(f"--tcp: expected HOST:PORT, got {value!r}")
    return host.strip("[]"), int(port)


def build_config(
    *,
    url: str | None = None,
    command: str | None = None,
    args: list[str] | None = None,
    command_args: list[str] | None = None,
    transport: str | None = None,
    tcp: str | None = None,
    unix: str | None = None,
    cwd: str | None = None,
    env: list[str] | None = None,
    headers: list[str] | None = None,
    access_token: str | None = None,
    oauth_access_token: str | None = None,
    protocol_version: str | None = None,
    client_capabilities: str | None = None,
    expect_wire: str = "any",
    check_ids: list[str] | None = None,
    categories: list[str] | None = None,
    tool_name: str | None = None,
    tool_args: str | None = None,
    input_responses: str | None = None,
    elicitation_response: str | None = None,
    sampling_response: str | None = None,
    timeout_ms: int = 30_000,
    poll_timeout_ms: int = 30_000,
    max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
    format: str | None = None,
    reporters: list[str] | None = None,
    quiet: bool = False,
    wire_log: str | None = None,
    debug: bool = False,
    known_check_ids: tuple[str, ...] = (),
    known_categories: tuple[str, ...] = (),
) -> RunConfig:
    targets = [name for name, v in (("--url", url), ("--command", command), ("--tcp", tcp), ("--unix", unix)) if v]
    if len(targets) > 1:
        raise UsageError(f"give one target, not {' and '.join(targets)}")
    if not targets:
        raise UsageError("no target: give --url URL, --command CMD, --tcp HOST:PORT or --unix PATH")
    kind: TransportKind
    if url:
        kind = "http"
        if not (url.startswith("http://") or url.startswith("https://")):
            raise UsageError(f"--url must start with http:// or https://, got {url[:60]!r}")
    elif command:
        kind = "stdio"
    elif tcp:
        kind = "tcp"
    else:
        kind = "unix"
    if transport is not None and transport != kind:
        raise UsageError(f"--transport {transport} does not match the target given ({targets[0]})")

    cmd: tuple[str, ...] = ()
    if command:
        # `--command "node server.js"` is common; split it like a shell would, then add --args.
        try:
            cmd = tuple(shlex.split(command)) if (" " in command and not os.path.exists(command)) else (command,)
        except ValueError as exc:
            raise UsageError(f"--command: {exc}") from None
        cmd = cmd + tuple(args or ()) + tuple(command_args or ())
        env_path = next((e.partition("=")[2] for e in reversed(env or ()) if e.startswith("PATH=")), None)
        check_command(cmd[0], cwd, env_path)
    elif args or command_args:
        raise UsageError("--args/--command-args need --command")
    if (cwd or env) and not command:
        raise UsageError("--cwd and --env apply to --command only")

    hdrs: dict[str, str] = {}
    for h in headers or ():
        k, v = parse_header(h)
        hdrs[k] = v
    token = access_token or oauth_access_token
    if access_token and oauth_access_token and access_token != oauth_access_token:
        raise UsageError("give --access-token or --oauth-access-token, not both")
    if token:
        hdrs["Authorization"] = f"Bearer {token}"

    if protocol_version is not None and protocol_version not in SUPPORTED_PROTOCOLS:
        raise UsageError(
            f"--protocol-version must be one of {', '.join(SUPPORTED_PROTOCOLS)}, got {protocol_version!r}"
        )
    if expect_wire not in ("legacy", "extension", "any"):
        raise UsageError(f"--expect-wire must be legacy, extension or any, got {expect_wire!r}")

    ids = tuple(dict.fromkeys(check_ids or ()))
    unknown = [i for i in ids if known_check_ids and i not in known_check_ids]
    if unknown:
        raise UsageError(
            f"unknown --check-id {', '.join(unknown)}; valid ids: {', '.join(known_check_ids)}"
        )
    cats = tuple(dict.fromkeys(categories or ()))
    bad = [c for c in cats if known_categories and c not in known_categories]
    if bad:
        raise UsageError(f"unknown --category {', '.join(bad)}; valid categories: {', '.join(known_categories)}")

    for name, val in (("--timeout", timeout_ms), ("--poll-timeout", poll_timeout_ms)):
        if val <= 0:
            raise UsageError(f"{name} must be a positive number of milliseconds")
    if max_message_bytes < 1024:
        raise UsageError("--max-message-bytes must be at least 1024")
    if format is not None and format not in ("human", "json"):
        raise UsageError(f"--format must be human or json, got {format!r}")

    return RunConfig(
        transport=kind,
        url=url,
        command=cmd,
        cwd=cwd,
        env=dict(parse_env(e) for e in env or ()),
        tcp=parse_hostport(tcp) if tcp else None,
        unix=unix,
        headers=hdrs,
        access_token=token,
        protocol_version=protocol_version,
        client_capabilities=(
            parse_json_flag("--client-capabilities", client_capabilities) if client_capabilities else None
        ),
        expect_wire=expect_wire,  # type: ignore[arg-type]
        check_ids=ids,
        categories=cats,
        tool_name=tool_name,
        tool_args=parse_json_flag("--tool-args", tool_args) if tool_args else {},
        input_responses=parse_json_flag("--input-responses", input_responses) if input_responses else None,
        elicitation_response=(
            parse_json_flag("--elicitation-response", elicitation_response) if elicitation_response else None
        ),
        sampling_response=parse_json_flag("--sampling-response", sampling_response) if sampling_response else None,
        timeout_ms=timeout_ms,
        poll_timeout_ms=poll_timeout_ms,
        max_message_bytes=max_message_bytes,
        format=format,  # type: ignore[arg-type]
        reporters=tuple(parse_reporter(r) for r in reporters or ()),
        quiet=quiet,
        wire_log=wire_log,
        debug=debug,
    )
