"""Secrets inside settings: the URL passwords and secret-looking query values a run must hide,
and each setting's value as `config show` may print it. Pure and cheap: regular expressions."""

from __future__ import annotations

import os
import re
from typing import Any
from urllib.parse import urlsplit

from tasks_conformance.core.redact import SECRET_NAME, Named
from tasks_conformance.settings import SETTINGS, RunOptions

# Query parameter names whose values are secrets (api_key, access_token, X-Amz-Signature, sig,
# code, password, pass, pwd, auth, client_secret, sessionId, jwt…). Hiding a harmless value costs
# a [REDACTED] in a report; printing a key costs the key.
SECRET_QUERY_NAME = re.compile(
    r"key|token|secret|pass|pwd|auth|sig|code|credential|session|cookie|jwt|bearer|private|nonce|salt",
    re.IGNORECASE,
)


# user:password@ inside any URL-shaped value (postgres://u:pw@db/x, https://u:pw@host/…).
_URL_PASSWORD = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://([^/\s:@]*):([^@\s/]+)@")


def url_passwords(text: str) -> list[str]:
    """The passwords (and user:password pairs) written into URL-shaped parts of `text`."""
    out: list[str] = []
    for m in _URL_PASSWORD.finditer(text):
        out += [m.group(2), f"{m.group(1)}:{m.group(2)}"]
    return out


def query_secrets(url: str) -> list[str]:
    """The values of secret-looking query parameters of `url`, as written and percent-decoded."""
    from urllib.parse import unquote_plus

    out: list[str] = []
    for pair in urlsplit(url).query.split("&"):
        name, eq, value = pair.partition("=")
        if eq and value and SECRET_QUERY_NAME.search(unquote_plus(name)):
            out += [Named(value, name), Named(unquote_plus(value), unquote_plus(name))]
    return out


def masked_url(url: str) -> str:
    """`url` with its password and secret-looking query values replaced by [REDACTED]."""
    from urllib.parse import urlunsplit

    from tasks_conformance.core.redact import REDACTED

    parts = urlsplit(url)
    netloc = parts.netloc
    if parts.password:
        netloc = netloc.replace(f":{parts.password}@", f":{REDACTED}@", 1)
    query = []
    for pair in parts.query.split("&") if parts.query else []:
        name, eq, value = pair.partition("=")
        query.append(f"{name}={REDACTED}" if eq and value and SECRET_QUERY_NAME.search(name) else pair)
    return urlunsplit((parts.scheme, netloc, parts.path, "&".join(query), parts.fragment))


def masked(field: str, value: Any, options: RunOptions) -> Any:
    """`value` as `config show` may print it: secrets replaced by [REDACTED]."""
    from tasks_conformance.core.redact import REDACTED, SENSITIVE_HEADERS

    if value is None or value == () or value == "":
        return value
    spec = SETTINGS.get(field)
    if spec is not None and spec.secret:
        # @FILE and - name where the token is, not the token.
        return value if value == "-" or str(value).startswith("@") else REDACTED
    if field == "url":
        return masked_url(value)
    if field == "env":
        out = []
        for item in value:
            name, _eq, val = item.partition("=")
            shown = name in options.show_env and not SECRET_NAME.search(name) and not url_passwords(val)
            out.append(item if shown else f"{name}={REDACTED}")
        return tuple(out)
    if field == "headers":
        out = []
        for item in value:
            name, _sep, _val = item.partition(":")
            secret = name.strip().lower() in SENSITIVE_HEADERS or SECRET_NAME.search(name)
            out.append(f"{name.strip()}: {REDACTED}" if secret else item)
        return tuple(out)
    if field == "other_headers":  # a second principal's credentials: every value is secret
        return tuple(f"{item.partition(':')[0].strip()}: {REDACTED}" for item in value)
    if field == "command" and isinstance(value, str):
        import shlex

        # `--command "server --token abc"`: judged word by word, as the builder splits it.
        try:
            words = shlex.split(value) if " " in value and not os.path.exists(value) else [value]
        except ValueError:
            words = [value]
        hidden = masked("args", tuple(words), options)
        return value if list(hidden) == words else shlex.join(hidden)
    if field in ("command", "args", "command_args"):
        args = list(value) if isinstance(value, tuple) else [value]
        out = []
        hide_next = False
        for arg in args:
            if hide_next:
                out.append(REDACTED)
                hide_next = False
                continue
            for pw in url_passwords(arg):
                arg = arg.replace(f":{pw}@", f":{REDACTED}@") if ":" not in pw else arg
            name, eq, _v = arg.partition("=")
            if name.startswith("-") and SECRET_NAME.search(name):
                if eq:
                    arg = f"{name}={REDACTED}"
                else:
                    hide_next = True
            out.append(arg)
        return tuple(out) if isinstance(value, tuple) else out[0]
    return value
