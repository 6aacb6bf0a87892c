"""Bytes <-> JSON-RPC: the one encoder, a never-raising decoder, and an id finder for messages
that cannot be decoded whole.

Nothing here knows about pending requests or transports; the peer builds on it.
"""

from __future__ import annotations

import json
from typing import Any, Final

NO_ID: Final = object()
"""What `sniff_id` returns when no usable top-level "id" is found."""

SNIFF_BYTES: Final = 4096
"""How much of an unreadable message `sniff_id` looks at."""

_WS: Final = " \t\r\n"
# The first characters of the id values worth finding: a string, a number or null. true and
# false are left out (they never match a request), and so are objects and arrays.
_ID_STARTS: Final = '"-0123456789n'


def encode(msg: Any) -> bytes:
    """The one encoder for every outbound message: compact UTF-8 JSON."""
    return json.dumps(msg, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def parse_message(data: bytes) -> tuple[Any, str | None]:
    """(parsed JSON, None), or (None, why it is unreadable). Never raises; never caches."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return None, f"not valid UTF-8 (byte 0x{data[exc.start]:02x} at offset {exc.start})"
    try:
        return json.loads(text), None
    except RecursionError:
        return None, "JSON nested too deeply to parse"
    except json.JSONDecodeError as exc:
        return None, f"not valid JSON ({exc.msg}: char {exc.pos})"
    except ValueError as exc:
        return None, f"not valid JSON ({exc})"


def hashable_id(value: Any) -> bool:
    """Whether `value` can key the table of pending requests.

    bool is left out on purpose: True == 1 in Python, and id true is not request 1.
    """
    return (isinstance(value, (str, int, float)) and not isinstance(value, bool)) or value is None


def sniff_id(data: bytes) -> Any:
    """The top-level "id" of a message that cannot be parsed whole (invalid, too deep, too big),
    read from its first `SNIFF_BYTES` bytes without recursion; `NO_ID` when it is not there."""
    try:
        return _IdScanner(data[:SNIFF_BYTES].decode("utf-8", "replace")).find()
    except (ValueError, RecursionError):
        return NO_ID


class _IdScanner:
    """Walks the members of a top-level JSON object, skipping values without parsing them, so
    neither deep nesting nor a truncated tail stops it from finding an early "id"."""

    def __init__(self, text: str) -> None:
        self.s = text
        self.n = len(text)
        self.decoder = json.JSONDecoder()

    def find(self) -> Any:
        i = self._ws(0)
        if not self._at(i, "{"):
            return NO_ID
        i = self._ws(i + 1)
        while self._at(i, '"'):
            key, i = self.decoder.raw_decode(self.s, i)
            i = self._ws(i)
            if not self._at(i, ":"):
                return NO_ID
            i = self._ws(i + 1)
            if i >= self.n:
                return NO_ID
            if key == "id":
                return self._id_value(i)
            i = self._ws(self._skip_value(i))
            if not self._at(i, ","):
                return NO_ID
            i = self._ws(i + 1)
        return NO_ID

    def _id_value(self, i: int) -> Any:
        if self.s[i] not in _ID_STARTS:
            return NO_ID
        value, _end = self.decoder.raw_decode(self.s, i)
        return value

    def _skip_value(self, i: int) -> int:
        """The index just past the value starting at `i` (or the end of the text)."""
        if self.s[i] == '"':
            return int(self.decoder.raw_decode(self.s, i)[1])
        if self.s[i] in "{[":
            return self._skip_nested(i)
        while i < self.n and self.s[i] not in ",}":
            i += 1
        return i

    def _skip_nested(self, i: int) -> int:
        # Counts brackets instead of parsing, so the depth costs no recursion; strings are
        # decoded so that brackets inside them do not count.
        depth = 0
        while i < self.n:
            c = self.s[i]
            if c == '"':
                i = int(self.decoder.raw_decode(self.s, i)[1])
                continue
            if c in "{[":
                depth += 1
            elif c in "}]":
                depth -= 1
                if depth == 0:
                    return i + 1
            i += 1
        return i

    def _ws(self, i: int) -> int:
        while i < self.n and self.s[i] in _WS:
            i += 1
        return i

    def _at(self, i: int, char: str) -> bool:
        return i < self.n and self.s[i] == char
