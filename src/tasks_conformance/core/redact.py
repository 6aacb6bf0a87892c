"""Secret redaction, in one place (tokens, Authorization, cookies, OAuth credentials)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from typing import Any

REDACTED = "[REDACTED]"

SENSITIVE_HEADERS = frozenset(
    {"authorization", "proxy-authorization", "cookie", "set-cookie", "x-api-key", "api-key", "x-auth-token"}
)

# Names (of -e variables, headers, server flags) whose values are secrets even when --show-env
# names them. Substrings where no harmless word holds them (…TOKEN…, …PASSW…, …PWD…, KEY, AUTH,
# COOKIE, CREDENTIAL, JWT, BEARER, PRIVATE); PASS only where it ends a word of the name (MY_PASS,
# DBPASS, dbPass, PASS_FILE) and is not BYPASS, COMPASS & co, so that FTP_PASSIVE, PASSTHROUGH or
# TESTS_PASSED can still be shown; a session id (SESSION_ID, PHPSESSID), not SESSION_TIMEOUT.
SECRET_NAME = re.compile(
    r"TOKEN|SECRET|PASSW|PASSPHRASE|PASSCODE|PWD|KEY|AUTH|COOKIE|CREDENTIAL|JWT|BEARER|PRIVATE"
    r"|SESS(?:ION)?[-_.]?ID(?![A-Z])"
    r"|(?<!BY)(?<!COM)(?<!SUR)(?<!TRES)(?<!OVER)(?<!UNDER)PASS(?![A-Z])",
    re.IGNORECASE,
)

# A secret at least this long is scrubbed wherever it occurs, inside other text too.
ANYWHERE_LEN = 6
# A shorter one, from this length on, is scrubbed where it stands as a whole token.
WORD_LEN = 3
_LITERALS = frozenset({"true", "false", "null"})
# Where a value stands after its own name: NAME=v, NAME: v, "NAME": "v", 'NAME'='v', ?name=v&…
_SEPARATOR = r"\\?[\"']?[ \t]*[=:][ \t]*\\?[\"']?"  # quotes JSON-escaped too (a frame's string)
_VALUE_ENDS = r"(?![^\s\"'&;,)}\]\\])"


class Named(str):
    """A secret value that knows the name it is given under (an -e variable, a header, a query
    parameter, a server flag). It is a plain string to everyone else; the Redactor also hides
    it where it stands as the value of that name, which is the only place a value too short or
    too common to scrub from any text (DEBUG=1, PIN=1234) can be hidden without false matches.
    The name is matched as written (environment variables, query parameters), or in any case
    with `any_case` (header names: HTTP/2 writes them in lower case)."""

    name: str
    any_case: bool

    def __new__(cls, value: str, name: str, *, any_case: bool = False) -> Named:
        self = super().__new__(cls, value)
        self.name = name
        self.any_case = any_case
        return self

    def __reduce__(self) -> tuple[Any, ...]:
        return (_named, (str(self), self.name, self.any_case))


def _named(value: str, name: str, any_case: bool) -> Named:
    return Named(value, name, any_case=any_case)


def _forms(s: str) -> set[str]:
    """`s` and the forms a server may echo it in (JSON-escaped, "\\/" for "/")."""
    escaped = json.dumps(s)[1:-1]
    return {s, escaped, escaped.replace("/", "\\/"), json.dumps(s, ensure_ascii=False)[1:-1]}


def _standing(literal: str, word: str) -> str:
    """The pattern `literal` where no character of the class `word` comes right before it, or a
    JSON escape does (in a frame, a string's line break is a backslash and an "n"). The checks
    follow the literal (fixed-width lookbehinds) so that the search can skip ahead to it."""
    return f"{literal}(?:(?<!{word}{literal})|(?<=\\\\[nrtbf]{literal}))"


def _word(s: str) -> str:
    """A pattern for `s` standing as a whole token: no letter or digit right before or after it
    (where its own edge is a letter or digit; "_", punctuation and a JSON escape end a word)."""
    literal = re.escape(s)
    after = r"(?![^\W_])" if s[-1].isalnum() else ""
    return (_standing(literal, r"[^\W_]") if s[0].isalnum() else literal) + after


class Redactor:
    """Knows the run's secret values and scrubs them from any text or header map.

    Built once per run from the flags (access tokens, Authorization/Cookie header values, every
    -e value not shown), so that a secret that the server echoes back is scrubbed as well. Each
    secret is scrubbed in its JSON-escaped forms too, case-sensitively, by its length:

    - 6 characters or more: everywhere, inside other text too;
    - 3 to 5 characters holding a letter: where it stands as a whole token, that is with no
      letter or digit right before or after it ("abcd" is hidden in "token abcd", "API_TOKEN=abcd",
      "?key=abcd&x=1", "Bearer abcd", "x_abcd", never in "abcde" or "xabcd");
    - anything shorter, a value without a letter (8080, 1234, 3.11, ---), or a JSON literal
      (true, false, null): only where it stands as the value of its own name, when the secret is
      `Named` (NAME=1, NAME: 1, "NAME": "1", 'NAME': '1', ?name=1&…, and a JSON member or header
      of that name). Anywhere else such a value is everyday text (a number, a version, a flag, an
      id), and hiding every "1" or "true" would destroy the reports and the wire log.

    The empty value is nothing to hide.
    """

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        self._secrets: list[str] = []  # scrubbed anywhere, longest first
        self._words: set[str] = set()  # scrubbed as whole tokens
        self._word_re: re.Pattern[str] | None = None
        # (name, any case?) -> the forms of its values; a name in any case is kept in lower case
        self._named: dict[tuple[str, bool], set[str]] = {}
        self._named_re: re.Pattern[str] | None = None
        self.add(*secrets)

    def add(self, *secrets: str) -> None:
        """Secrets learnt during the run (an access token an OAuth refresh issued): from now
        on every output scrubs them too. Frames keep their raw bytes and are redacted on the way
        out, so a frame recorded before a token was known is still scrubbed of it."""
        anywhere: set[str] = set(self._secrets)
        named_before = {k: len(v) for k, v in self._named.items()}
        words_before = len(self._words)
        for s in secrets:
            if not s:
                continue
            forms = _forms(s)
            if isinstance(s, Named) and s.name:
                key = (s.name.lower(), True) if s.any_case else (s.name, False)
                self._named.setdefault(key, set()).update(forms)
            if len(s) >= ANYWHERE_LEN and s not in _LITERALS:
                anywhere.update(forms)
            elif len(s) >= WORD_LEN and s not in _LITERALS and any(c.isalpha() for c in s):
                self._words.update(f for f in forms if f)
        # Longest first so that a token contained in a longer secret is still fully hidden.
        self._secrets = sorted(anywhere, key=len, reverse=True)
        if len(self._words) != words_before:
            words = sorted(self._words, key=len, reverse=True)
            self._word_re = re.compile("|".join(_word(w) for w in words))
        if {k: len(v) for k, v in self._named.items()} != named_before:
            branches = []
            for i, ((name, any_case), values) in enumerate(self._named.items()):
                literal = f"(?i:{re.escape(name)})" if any_case else re.escape(name)
                head = _standing(literal, r"[\w-]") + _SEPARATOR
                alternatives = "|".join(re.escape(v) for v in sorted(values, key=len, reverse=True))
                branches.append(f"(?P<n{i}>{head})(?:{alternatives}){_VALUE_ENDS}")
            self._named_re = re.compile("|".join(branches))

    @property
    def secrets(self) -> tuple[str, ...]:
        return (*self._secrets, *sorted(self._words, key=len, reverse=True))

    def text(self, value: str) -> str:
        for s in self._secrets:
            if s in value:
                value = value.replace(s, REDACTED)
        if self._word_re is not None:
            value = self._word_re.sub(REDACTED, value)
        if self._named_re is not None:
            value = self._named_re.sub(self._keep_name, value)
        return value

    @staticmethod
    def _keep_name(m: re.Match[str]) -> str:
        return (m.group(m.lastgroup) if m.lastgroup else "") + REDACTED

    def _named_value(self, name: str, value: Any) -> bool:
        """Whether `value` is a secret given under `name` (a JSON member, a header)."""
        forms = self._named.get((name, False), set()) | self._named.get((name.lower(), True), set())
        if not forms:
            return False
        if isinstance(value, str):
            return value in forms
        return (value is None or isinstance(value, (bool, int, float))) and json.dumps(value) in forms

    def data(self, value: bytes) -> bytes:
        for s in self._secrets:
            raw = s.encode("utf-8", "surrogateescape")
            if raw in value:
                value = value.replace(raw, REDACTED.encode())
        if self._word_re is None and self._named_re is None:
            return value
        # Bytes that are not UTF-8 survive the round trip unchanged (surrogateescape).
        return self.text(value.decode("utf-8", "surrogateescape")).encode("utf-8", "surrogateescape")

    def json(self, value: Any, _depth: int = 0) -> Any:
        """A JSON-safe value with every string scrubbed (bounded depth: server data can be deep)."""
        if isinstance(value, str):
            return self.text(value)
        if _depth > 64:
            return "[too deep]"
        if isinstance(value, dict):
            return {self.text(str(k)): REDACTED if self._named_value(str(k), v) else self.json(v, _depth + 1)
                    for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [self.json(v, _depth + 1) for v in value]
        return value

    def headers(self, headers: Mapping[str, str] | Iterable[tuple[str, str]]) -> list[tuple[str, str]]:
        items = headers.items() if isinstance(headers, Mapping) else headers
        out: list[tuple[str, str]] = []
        for k, v in items:
            if k.lower() in SENSITIVE_HEADERS or self._named_value(k, v):
                out.append((k, REDACTED))
            else:
                out.append((k, self.text(v)))
        return out
