"""Making untrusted text safe to show: one place, used by every reporter.

Any string in a RunResult may have come from the server under test (error messages, tool names,
task ids, serverInfo, echoed payloads). A hostile server can put terminal escape sequences (CSI
colour codes, OSC 8 hyperlinks, OSC 52 clipboard writes), C0/C1 control characters, Unicode
bidi overrides (Trojan Source) or invisible tag characters into them. Reporters never drop such
characters silently: they are rendered *visibly* as Python-style escapes (`\\x1b`, `\\x00`,
`\\u202e`), so the reader sees that something odd arrived and nothing reaches a terminal, an XML
parser or a Markdown renderer raw.

Stdlib only: importing this module must stay cheap.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

# Characters that never reach output raw:
#   C0 controls, DEL and C1 controls (ESC starts ANSI/OSC sequences; 0x9b is a one-byte CSI);
#   soft hyphen and the Unicode format characters that hide or reorder text (bidi embeddings,
#   overrides and isolates, zero-width characters, BOM, interlinear annotations, tag characters);
#   the line and paragraph separators; lone surrogates (they cannot be encoded at all); the
#   noncharacters U+FFFE and U+FFFF (not XML characters). Anything outside this set is legal XML.
_UNSAFE = re.compile(
    "["
    "\x00-\x1f\x7f-\x9f"
    "\u00ad\u0600-\u0605\u061c\u06dd\u070f\u08e2\u180e"
    "\u200b-\u200f\u2028-\u202e\u2060-\u206f"
    "\ufeff\ufff9-\ufffb"
    "\ud800-\udfff"
    "\U000110bd\U000110cd\U0001bca0-\U0001bca3\U0001d173-\U0001d17a"
    "\U000e0000-\U000e007f"
    "\ufffe\uffff"
    "]"
)
# The same, but tab and newline are left alone (for multi-line bodies).
_UNSAFE_KEEP_LINES = re.compile(
    "["
    "\x00-\x08\x0b-\x1f\x7f-\x9f"
    "\u00ad\u0600-\u0605\u061c\u06dd\u070f\u08e2\u180e"
    "\u200b-\u200f\u2028-\u202e\u2060-\u206f"
    "\ufeff\ufff9-\ufffb"
    "\ud800-\udfff"
    "\U000110bd\U000110cd\U0001bca0-\U0001bca3\U0001d173-\U0001d17a"
    "\U000e0000-\U000e007f"
    # U+FFFE and U+FFFF are not XML characters either.
    "\ufffe\uffff"
    "]"
)
_SHORT = {"\t": "\\t", "\n": "\\n", "\r": "\\r"}


def _escape_char(m: re.Match[str]) -> str:
    ch = m.group(0)
    short = _SHORT.get(ch)
    if short is not None:
        return short
    cp = ord(ch)
    if cp < 0x100:
        return f"\\x{cp:02x}"
    if cp < 0x10000:
        return f"\\u{cp:04x}"
    return f"\\U{cp:08x}"


def visible(text: object, *, keep_newlines: bool = False) -> str:
    """`text` as a string whose control and invisible characters are shown as escapes.

    With `keep_newlines`, tab and LF stay as they are and CRLF becomes LF (a multi-line body);
    otherwise they become `\\t`, `\\n`, `\\r`, so the result is always a single line.
    """
    s = text if isinstance(text, str) else str(text)
    if keep_newlines:
        return _UNSAFE_KEEP_LINES.sub(_escape_char, s.replace("\r\n", "\n"))
    return _UNSAFE.sub(_escape_char, s)


def one_line(text: object, limit: int | None = None) -> str:
    """`visible(text)` on one line, cut to `limit` characters with an ellipsis."""
    s = visible(text)
    if limit is not None and len(s) > limit:
        s = s[: max(0, limit - 1)] + "…"
    return s


def encodable(text: str, encoding: str | None) -> str:
    """`text` with characters the target stream cannot encode shown as backslash escapes."""
    enc = (encoding or "utf-8").lower().replace("_", "-")
    if enc in ("utf-8", "utf8", "utf-16", "utf-32"):
        return text
    try:
        return text.encode(enc, "backslashreplace").decode(enc)
    except LookupError:
        return text


def _json_escape(m: re.Match[str]) -> str:
    cp = ord(m.group(0))
    if cp < 0x10000:
        return f"\\u{cp:04x}"
    cp -= 0x10000
    return f"\\u{0xD800 + (cp >> 10):04x}\\u{0xDC00 + (cp & 0x3FF):04x}"


def dumps(value: Any, *, indent: int | None = None) -> str:
    """JSON text that is always valid, always encodable as UTF-8 and safe to `cat` in a terminal.

    `ensure_ascii=False` keeps non-ASCII text readable; json itself escapes C0 controls. What it
    leaves raw (DEL, C1 controls such as the one-byte CSI 0x9b, bidi overrides, invisible format
    characters, lone surrogates, which would make the UTF-8 encoder fail) is written as its
    `\\uXXXX` escape: the same string to any JSON reader. Such characters can only occur inside
    JSON strings, so the substitution cannot touch the document's structure.
    """
    try:
        text = json.dumps(value, indent=indent, ensure_ascii=False, allow_nan=False, default=str)
    except ValueError:
        # NaN/Infinity (Python's json reader accepts them from a server) or a reference cycle:
        # neither has a JSON spelling, so write them as strings instead of emitting invalid JSON.
        text = json.dumps(
            _json_safe(value, set()), indent=indent, ensure_ascii=False, allow_nan=False, default=str
        )
    return _UNSAFE_KEEP_LINES.sub(_json_escape, text)


def _json_safe(value: Any, active: set[int]) -> Any:
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if isinstance(value, dict | list | tuple):
        if id(value) in active:
            return "<cycle>"
        active.add(id(value))
        try:
            if isinstance(value, dict):
                return {str(k): _json_safe(v, active) for k, v in value.items()}
            return [_json_safe(v, active) for v in value]
        finally:
            active.discard(id(value))
    return value


# A string the client controls (a method, an id, a value of its outcome line) is quoted in a message
# at most this long (README: "Limits"); client/runner.py bounds a whole message, warning and detail.
SHOWN_CHARS = 80


def shown(value: object) -> str:
    """A value the client sent, as a message quotes it: on one line, control characters visible,
    at most SHOWN_CHARS characters (a longer one says how long it was, a string judged.py cut too)."""
    text = value if isinstance(value, str) else repr(value)
    length = getattr(value, "length", len(text))
    if length <= SHOWN_CHARS:
        return one_line(text)
    return one_line(text, SHOWN_CHARS) + f" ({length} characters)"
