"""Secret redaction, in one place (tokens, Authorization, cookies, OAuth credentials)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

REDACTED = "[REDACTED]"

SENSITIVE_HEADERS = frozenset(
    {"authorization", "proxy-authorization", "cookie", "set-cookie", "x-api-key", "api-key", "x-auth-token"}
)


class Redactor:
    """Knows the run's secret values and scrubs them from any text or header map.

    Built once per run from the flags (access tokens, Authorization/Cookie header values),
    so that a secret that the server echoes back is scrubbed as well.
    """

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        # Each secret also in the forms a server may echo it in (JSON-escaped, "\/" for "/").
        # Longest first so that a token contained in a longer secret is still fully hidden.
        # Very short values and JSON literals are not treated as secrets: hiding every "true"
        # would only make the reports unreadable.
        self._secrets: list[str] = []
        self.add(*secrets)

    def add(self, *secrets: str) -> None:
        """Secrets learnt during the run (an access token an OAuth refresh issued): from now
        on every output scrubs them too. Frames keep their raw bytes and are redacted on the way
        out, so a frame recorded before a token was known is still scrubbed of it."""
        forms: set[str] = set(self._secrets)
        for s in secrets:
            if not s or len(s) < 6 or s in ("true", "false", "null"):
                continue
            escaped = json.dumps(s)[1:-1]
            forms.update({s, escaped, escaped.replace("/", "\\/"), json.dumps(s, ensure_ascii=False)[1:-1]})
        self._secrets = sorted(forms, key=len, reverse=True)

    @property
    def secrets(self) -> tuple[str, ...]:
        return tuple(self._secrets)

    def text(self, value: str) -> str:
        for s in self._secrets:
            if s in value:
                value = value.replace(s, REDACTED)
        return value

    def data(self, value: bytes) -> bytes:
        for s in self._secrets:
            raw = s.encode("utf-8", "surrogateescape")
            if raw in value:
                value = value.replace(raw, REDACTED.encode())
        return value

    def json(self, value: Any, _depth: int = 0) -> Any:
        """A JSON-safe value with every string scrubbed (bounded depth: server data can be deep)."""
        if isinstance(value, str):
            return self.text(value)
        if _depth > 64:
            return "[too deep]"
        if isinstance(value, dict):
            return {self.text(str(k)): self.json(v, _depth + 1) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [self.json(v, _depth + 1) for v in value]
        return value

    def headers(self, headers: Mapping[str, str] | Iterable[tuple[str, str]]) -> list[tuple[str, str]]:
        items = headers.items() if isinstance(headers, Mapping) else headers
        out: list[tuple[str, str]] = []
        for k, v in items:
            if k.lower() in SENSITIVE_HEADERS:
                out.append((k, REDACTED))
            else:
                out.append((k, self.text(v)))
        return out
