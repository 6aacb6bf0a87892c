"""One flag value at a time: JSON or @file or -, tokens, headers, -e pairs, reporters, HOST:PORT,
and whether a server command can be started. Each turns bad input into a one-line UsageError;
`config.build_run_config` puts them together.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tasks_conformance.core.errors import UsageError


@dataclass(frozen=True)
class ReporterSpec:
    name: str
    path: str | None  # None: stdout
    append: bool = False  # NAME=+PATH: add to the end of PATH (e.g. $GITHUB_STEP_SUMMARY)


# Reports that stay readable when one is added after another in the same file.
APPENDABLE_REPORTERS = ("markdown", "human")


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


def read_token(flag: str, value: str) -> str:
    """`TOKEN|@FILE|-`: the token itself, @path to a file holding it, or - for standard input
    (surrounding whitespace and the final newline dropped). Errors never quote the token."""
    if value == "-":
        text = sys.stdin.read()
        where = "standard input"
    elif value.startswith("@"):
        try:
            text = Path(value[1:]).read_text(encoding="utf-8")
        except OSError as exc:
            raise UsageError(f"{flag}: cannot read {value[1:]!r}: {exc.strerror}") from None
        where = repr(value[1:])
    else:
        return value
    token = text.strip()
    if not token:
        raise UsageError(f"{flag}: {where} holds no token")
    if any(c.isspace() for c in token):
        raise UsageError(f"{flag}: {where} holds more than one word; put the token alone in it")
    return token


_HEADER_NAME = re.compile(r"[A-Za-z0-9!#$%&'*+.^_`|~-]{1,40}")
_ENV_NAME = re.compile(r"[A-Z_][A-Z0-9_]{0,39}")


def read_small_file(flag: str, path: str, limit: int, shown: str | None = None) -> bytes:
    """The bytes of a settings file named by `flag` (a config or baseline file), read with a
    bound: a file that cannot be read, or is larger than `limit`, is a UsageError of one line."""
    try:
        with open(path, "rb") as fh:
            data = fh.read(limit + 1)
    except OSError as exc:
        raise UsageError(f"{flag}: cannot read {path!r}: {exc.strerror}") from None
    if len(data) > limit:
        raise UsageError(f"{flag} {shown or path}: larger than {limit // (1024 * 1024)} MiB")
    return data


def parse_header(value: str, *, flag: str = "--header") -> tuple[str, str]:
    name, sep, val = value.partition(":")
    name = name.strip()
    if not sep:
        # "Authorization Bearer …" without its colon: the rest is a credential, never echoed.
        # Only a first word that reads as a header name is shown, and only when more follows.
        words = value.split(None, 1)
        if len(words) == 2 and _HEADER_NAME.fullmatch(words[0]):
            raise UsageError(f"{flag}: expected 'Name: value', got {words[0]!r}… without a colon")
        raise UsageError(f"{flag}: expected 'Name: value', got a value without a colon (not shown)")
    if not name or any(c.isspace() for c in name):
        raise UsageError(f"{flag}: expected 'Name: value', got {name[:40]!r}…")
    return name, val.strip()


def parse_env(value: str) -> tuple[str, str]:
    key, sep, val = value.partition("=")
    if sep and not key:
        raise UsageError("--env: expected KEY=VALUE, got no KEY before '='")
    if not sep:
        # Without '=' it may be a value given without its name (-e "$TOKEN"): only a
        # conventional variable name is echoed.
        shown = repr(key) if _ENV_NAME.fullmatch(key) else "a value (not shown)"
        raise UsageError(f"--env: expected KEY=VALUE, got {shown} without '='")
    return key, val


def parse_reporter(value: str) -> ReporterSpec:
    """NAME (stdout), NAME=PATH (written afresh) or NAME=+PATH (appended; markdown and human only,
    for $GITHUB_STEP_SUMMARY; a file whose name starts with + is ./+name)."""
    name, sep, path = value.partition("=")
    if not name:
        raise UsageError("--reporter: expected NAME or NAME=PATH")
    append = path.startswith("+")
    if append:
        path = path[1:]
        if not path:
            raise UsageError(f"--reporter {name}=+: expected a path after the +")
        if name not in APPENDABLE_REPORTERS:
            raise UsageError(
                f"--reporter {name}=+{path}: only {' and '.join(APPENDABLE_REPORTERS)} reports can be appended to "
                "(a second document would make the file invalid)"
            )
    return ReporterSpec(name=name, path=path if sep and path else None, append=append)


def check_command(program: str, cwd: str | None, path: str | None = None, flag: str = "--command") -> None:
    """A command that cannot be started is the user's mistake (exit 2), found before any traffic."""
    if cwd is not None and not os.path.isdir(cwd):
        raise UsageError(f"--cwd: {cwd!r} is not a directory")
    if os.sep in program or (os.altsep and os.altsep in program):
        path = program if os.path.isabs(program) or cwd is None else os.path.join(cwd, program)
        if not os.path.exists(path):
            raise UsageError(f"{flag}: {program!r} not found")
        if os.path.isdir(path):
            raise UsageError(f"{flag}: {program!r} is a directory, not a program")
        if not os.access(path, os.X_OK):
            raise UsageError(f"{flag}: {program!r} is not executable")
        return
    # The child is started with --env added to our environment, so look where it will look.
    if shutil.which(program, path=path) is None:
        raise UsageError(f"{flag}: {program!r} not found on PATH")


def parse_hostport(value: str) -> tuple[str, int]:
    host, sep, port = value.rpartition(":")
    if not sep or not host or not port.isdigit() or not (0 < int(port) < 65536):
        raise UsageError(f"--tcp: expected HOST:PORT, got {value!r}")
    return host.strip("[]"), int(port)
