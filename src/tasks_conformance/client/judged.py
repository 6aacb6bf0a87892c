"""What the checks judge of one frame the client sent: its JSON, parsed from the frame's bytes and
kept bounded. A client's real message is small; one over JUDGED_BYTES (a flood of 1 MiB POSTs or
4 MiB lines) is judged on a copy whose strings keep their first KEPT_CHARS characters (a `Cut`,
which remembers how long the string was) and whose first MAX_NODES values only are kept, never on
the whole parse: the wire log already holds the frame's bytes, and a second, parsed copy of every
such message (for `[{}, {}, …]` twenty times the bytes) would grow without the wire log's bound
(README: "Limits"). The frame keeps the bounded copy (`Frame.judged_copy`), never the whole parse.
"""

from __future__ import annotations

import json
from typing import Any

from tasks_conformance.core.wirelog import Frame

JUDGED_BYTES = 64 * 1024  # a message up to this size is judged whole
KEPT_CHARS = 4096  # of a larger message, a string keeps this many characters
MAX_NODES = 10_000  # and this many values
MAX_DEPTH = 64  # nested deeper than this, a value is not kept


class Cut(str):
    """A string the client sent, of which only the first KEPT_CHARS characters are kept; `length`
    is how long it was (evidence.shown() says so)."""

    length: int

    @classmethod
    def of(cls, text: str) -> Cut:
        cut = cls(text[:KEPT_CHARS])
        cut.length = len(text)
        return cut


def message_of(frame: Frame) -> Any:
    """The frame's JSON (None: not JSON, or the frame kept no bytes): whole, and cached on the
    frame, for a message up to JUDGED_BYTES; bounded, and not cached, for a larger one."""
    if len(frame.data) <= JUDGED_BYTES:
        return frame.json()
    if frame.judged_copy is None:
        try:
            value = json.loads(frame.data)
        except (ValueError, RecursionError):
            value = None
        # Made once (parsing a flood's every message again for each reader cost seconds after --timeout).
        frame.judged_copy = (_bounded(value, [MAX_NODES], 0),)
    return frame.judged_copy[0]


def _bounded(value: Any, budget: list[int], depth: int) -> Any:
    budget[0] -= 1
    if isinstance(value, str):
        return Cut.of(value) if len(value) > KEPT_CHARS else value
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for key, item in value.items():
            if budget[0] <= 0 or depth >= MAX_DEPTH:
                break
            out[Cut.of(key) if len(key) > KEPT_CHARS else key] = _bounded(item, budget, depth + 1)
        return out
    if isinstance(value, list):
        kept: list[Any] = []
        for item in value:
            if budget[0] <= 0 or depth >= MAX_DEPTH:
                break
            kept.append(_bounded(item, budget, depth + 1))
        return kept
    return value
