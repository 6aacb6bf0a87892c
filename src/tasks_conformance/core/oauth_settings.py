"""The OAuth refresh flags, checked: --refresh-token, --client-id, --client-secret and
--credentials-file in, one `OAuthCredentials` (or None) out, or a UsageError.

Pure and cheap like config.py: no httpx, no OAuth library. The traffic is in oauth.py.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tasks_conformance.core.errors import UsageError
from tasks_conformance.core.flag_values import read_token

# The keys a --credentials-file may hold (others are ignored, so a file written for another
# tool can be reused).
FILE_KEYS = ("refresh_token", "client_id", "client_secret", "token_endpoint")


@dataclass(frozen=True)
class OAuthCredentials:
    """What a refresh_token grant needs. `token_endpoint` None: found from the server's
    protected resource metadata and its authorization server's metadata."""

    refresh_token: str
    client_id: str
    client_secret: str | None = None
    token_endpoint: str | None = None

    def secrets(self) -> list[str]:
        return [s for s in (self.refresh_token, self.client_secret) if s]

    def __repr__(self) -> str:  # a traceback or a debugger never shows the secrets
        return f"OAuthCredentials(client_id={self.client_id!r}, token_endpoint={self.token_endpoint!r})"


def oauth_credentials(
    *,
    url: str | None,
    refresh_token: str | None,
    client_id: str | None,
    client_secret: str | None,
    credentials_file: str | None,
    authorization_given: bool = False,
) -> OAuthCredentials | None:
    """The credentials the flags give, a flag winning over the file's value for the same key;
    None when no OAuth flag was given. `authorization_given`: an access token or an
    Authorization header came with them, which the refresh would contradict."""
    if not (refresh_token or client_id or client_secret or credentials_file):
        return None
    if refresh_token == "-" and client_secret == "-":
        raise UsageError("only one flag may read standard input (-), not --refresh-token and --client-secret")
    if authorization_given:
        raise UsageError("OAuth refresh gets the access token itself: give --refresh-token/--credentials-file "
                         "or --access-token/an Authorization header, not both")
    stored = _read_file(credentials_file) if credentials_file else {}
    token = read_token("--refresh-token", refresh_token) if refresh_token else stored.get("refresh_token")
    secret = read_token("--client-secret", client_secret) if client_secret else stored.get("client_secret")
    ident = client_id or stored.get("client_id")
    endpoint = stored.get("token_endpoint")
    where = " (or refresh_token in --credentials-file)" if credentials_file else ""
    if not url:
        raise UsageError("--refresh-token, --client-id, --client-secret and --credentials-file apply to --url only")
    if not token:
        raise UsageError(f"OAuth refresh needs --refresh-token{where}")
    if not ident:
        raise UsageError(f"OAuth refresh needs --client-id{where.replace('refresh_token', 'client_id')}")
    if endpoint is not None and not endpoint.startswith(("http://", "https://")):
        raise UsageError("--credentials-file: token_endpoint must be an http:// or https:// URL")
    return OAuthCredentials(refresh_token=token, client_id=ident, client_secret=secret or None, token_endpoint=endpoint)


def _read_file(path: str) -> dict[str, str]:
    """The file's known keys; every error names the file and the key, never a value."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"--credentials-file: cannot read {path!r}: {exc.strerror}") from None
    try:
        data: Any = json.loads(text)
    except ValueError:
        # The parser's message quotes the document, which holds secrets: say where, not what.
        raise UsageError(f"--credentials-file: {path!r} is not valid JSON") from None
    if not isinstance(data, dict):
        raise UsageError(f"--credentials-file: {path!r} must hold a JSON object with {', '.join(FILE_KEYS)}")
    out: dict[str, str] = {}
    for key in FILE_KEYS:
        value = data.get(key)
        if value is None:
            continue
        if not isinstance(value, str) or not value.strip():
            raise UsageError(f"--credentials-file: {key} in {path!r} must be a non-empty string")
        out[key] = value.strip()
    return out
