"""A text/event-stream parser that works on raw bytes, fed one network chunk at a time.

It works on bytes rather than decoded text so that an event's data is kept exactly as sent,
invalid UTF-8 included, and so that the memory one event may take is bounded: past `limit`
bytes the parser stops and says so instead of buffering on.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SseEvent:
    """One dispatched event: its data lines joined by LF, and the last event id seen."""

    data: bytes
    event_id: str | None = None
    unterminated: bool = False  # the stream ended before the event's closing blank line


class SseParser:
    """Feed chunks with `feed`, then call `end` once the stream is over.

    Fields other than `data` and `id` are ignored; so are comments and lines without a colon.
    An event whose data is empty (a priming event carrying only an id, a keep-alive) is not a
    message: the SSE rules do not dispatch it, and neither does this parser.
    """

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.oversize = False  # an event outgrew `limit`; the parser ignores everything after
        self.event_id: str | None = None
        self._line = bytearray()  # the current, unfinished line
        self._data = bytearray()  # the current event's data lines, each followed by LF
        self._has_data = False
        self._skip_lf = False  # the previous chunk ended in CR: a leading LF belongs to it

    def feed(self, chunk: bytes) -> list[SseEvent]:
        """The events this chunk completes, in order (possibly none)."""
        events: list[SseEvent] = []
        if self.oversize:
            return events
        if self._skip_lf and chunk.startswith(b"\n"):
            chunk = chunk[1:]
        self._skip_lf = chunk.endswith(b"\r")
        if b"\r" in chunk:
            chunk = chunk.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        parts = chunk.split(b"\n")
        for i, part in enumerate(parts[:-1]):
            if i == 0 and self._line:
                self._line.extend(part)
                part = bytes(self._line)
                self._line.clear()
            self._field(part, events)
            if len(self._data) > self.limit:
                break
        self._line.extend(parts[-1])
        if len(self._data) + len(self._line) > self.limit:
            self._give_up()
        return events

    def end(self) -> list[SseEvent]:
        """The events the end of the stream completes: an unfinished last line is read as if a
        line break followed it, and an event still open is dispatched, marked unterminated."""
        events: list[SseEvent] = []
        if self.oversize:
            return events
        if self._line:
            line = bytes(self._line)
            self._line.clear()
            self._field(line, events)
        if self._has_data:
            self._dispatch(events, unterminated=True)
        return events

    def _field(self, raw: bytes, events: list[SseEvent]) -> None:
        if not raw:
            self._dispatch(events)
            return
        name, colon, value = raw.partition(b":")
        if not colon or not name:
            return  # a comment (":…") or a line without a field
        if value.startswith(b" "):
            value = value[1:]
        if name == b"data":
            self._data.extend(value)
            self._data.extend(b"\n")
            self._has_data = True
        elif name == b"id" and b"\0" not in value:
            self.event_id = value.decode("utf-8", "replace")

    def _dispatch(self, events: list[SseEvent], *, unterminated: bool = False) -> None:
        if self._has_data and len(self._data) > 1:
            events.append(SseEvent(bytes(self._data[:-1]), self.event_id, unterminated))
        self._data.clear()
        self._has_data = False

    def _give_up(self) -> None:
        self.oversize = True
        self._data.clear()
        self._line.clear()
        self._has_data = False
