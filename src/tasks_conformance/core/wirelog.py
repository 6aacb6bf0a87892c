"""The WireLog: every byte that crossed the wire, in order.

Transports append frames; checks read them. A frame keeps the raw bytes exactly as sent or
received (already redacted of the run's secrets), so verdicts rest on what was on the wire and
never on a re-serialisation of a parsed object.
"""

from __future__ import annotations

import base64
import contextlib
import contextvars
import enum
import json
import time
import weakref
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from tasks_conformance.core.redact import Redactor

Direction = Literal["out", "in"]
# stdio | http | sse | tcp | unix | stderr | event (a transport event such as an exit or an HTTP failure)
Channel = str


@dataclass(frozen=True)
class HttpMeta:
    method: str
    url: str
    status: int | None = None
    request_headers: tuple[tuple[str, str], ...] = ()
    response_headers: tuple[tuple[str, str], ...] = ()

    def header(self, name: str, *, response: bool = False) -> str | None:
        want = name.lower()
        for k, v in self.response_headers if response else self.request_headers:
            if k.lower() == want:
                return v
        return None

    def to_json(self) -> dict[str, Any]:
        return {
            "method": self.method,
            "url": self.url,
            "status": self.status,
            "requestHeaders": [list(h) for h in self.request_headers],
            "responseHeaders": [list(h) for h in self.response_headers],
        }


class FrameFlag(enum.Enum):
    """What is known about a frame, as a value code can test (its `note` is for people)."""

    NOT_JSON = "not-json"
    """An inbound message that is not valid UTF-8 JSON."""
    NOT_JSONRPC = "not-jsonrpc"
    """Valid JSON but no JSON-RPC message: neither a request, a notification nor a response
    with an id (a response with id null and an error, JSON-RPC's answer to an unreadable
    request, is not flagged)."""
    WRONG_CONTENT_TYPE = "wrong-content-type"
    """An HTTP body with bytes whose Content-Type is not application/json."""
    STRAY_RESPONSE = "stray-response"
    """A response to an id the client never sent."""
    DUPLICATE_RESPONSE = "duplicate-response"
    """A further response to a request that was already answered."""
    LATE_RESPONSE = "late-response"
    """The answer to a request whose wait had already timed out."""
    DROPPED_BYTES = "dropped-bytes"
    """The wire log was over its byte bound: the frame stays, its bytes were not kept."""
    OVERSIZE = "oversize"
    """A message over --max-message-bytes, discarded unread (the frame has no bytes)."""
    NO_NEWLINE = "no-newline"
    """The stream ended before the message's terminator: the newline of a line, the blank line
    of an SSE event."""


NO_FLAGS: frozenset[FrameFlag] = frozenset()


class Purpose(enum.Enum):
    """Why the harness sent a request, as a value code can test (the frame's `note` says it for
    people and is never read back)."""

    ERA_PROBE = "era-probe"
    """server/discover while negotiating the era (2026-07-28's first request)."""
    HANDSHAKE = "handshake"
    """initialize (2025-11-25), on the main connection or on a probe's own."""
    DISCOVERY = "discovery"
    """tools/list while discovering the server's tools."""
    TASK_CREATE = "task-create"
    """The declared tools/call that creates the run's probe task (the task the polls follow)."""
    POLL = "poll"
    """A tasks/get of the probe task while it runs; `FrameTag.poll` is its number (1, 2…)."""
    HEADER_MISMATCH = "header-mismatch"
    """A tasks/* request whose routing header (Mcp-Name, Mcp-Method) disagrees with its body on
    purpose (the negative routing probe)."""
    PROBE = "probe"
    """Any other request a probe sends (what it asks is in the probe's record)."""


@dataclass(frozen=True, slots=True)
class FrameTag:
    """The typed facts behind an outbound request, set where it is made (a session, a probe) and
    kept in memory only: never exported, so reports and the wire log file do not change."""

    purpose: Purpose
    poll: int | None = None  # Purpose.POLL: the poll's number, from 1
    # The connection that sent it (WireLog.connection_number): the run's main connection is the
    # first one numbered; a probe's connection of its own (a second session) has another number.
    connection: int | None = None

    @classmethod
    def polling(cls, number: int) -> FrameTag:
        return cls(Purpose.POLL, poll=number)

    def on(self, connection: int) -> FrameTag:
        """The same tag, sent over `connection`."""
        return replace(self, connection=connection)


# The tag of the next outbound frame recorded in this context: a transport records the frame of
# the request it sends (and the wire log's observer reads it then), so the tag reaches the
# frame through the context of the send (`tagging`) rather than through every transport.
_NEXT_TAG: contextvars.ContextVar[list[FrameTag] | None] = contextvars.ContextVar(
    "tasks_conformance_next_frame_tag", default=None
)


@contextlib.contextmanager
def tagging(tag: FrameTag | None) -> Iterator[None]:
    """Within the block, the first outbound frame recorded (in this task, or one it started)
    carries `tag`; only that one."""
    if tag is None:
        yield
        return
    token = _NEXT_TAG.set([tag])
    try:
        yield
    finally:
        _NEXT_TAG.reset(token)


# The lane of the frames recorded in this context: the part of the run that caused them (a probe,
# a client scenario), so that a report can draw each part's exchange on its own line. Set where the
# part starts (`in_lane`), like the tag: no transport needs to know of it.
_LANE: contextvars.ContextVar[str | None] = contextvars.ContextVar("tasks_conformance_frame_lane", default=None)


@contextlib.contextmanager
def in_lane(name: str) -> Iterator[None]:
    """Within the block (and the tasks it starts), the frames recorded belong to lane `name`."""
    token = _LANE.set(name)
    try:
        yield
    finally:
        _LANE.reset(token)


@dataclass(slots=True)
class Frame:
    seq: int
    time: float  # seconds since the log was opened (monotonic)
    direction: Direction
    channel: Channel
    data: bytes
    http: HttpMeta | None = None
    # For an inbound HTTP frame: the seq of the outbound POST it answers.
    reply_to: int | None = None
    note: str | None = None
    flags: frozenset[FrameFlag] = NO_FLAGS
    # Why it was sent and over which connection (outbound requests of the harness); in memory
    # only: `to_json` leaves it out.
    tag: FrameTag | None = None
    # The part of the run it belongs to (`in_lane`; an answer takes its request's); in memory only,
    # unless the frame has a `connection`.
    lane: str | None = None
    # Client mode: the connection of the scripted server it crossed, numbered from 1 within its
    # lane (a server process the client spawned, a 2025-11-25 session); exported with its lane.
    connection: int | None = None
    _json: Any = field(default=None, repr=False, compare=False)
    _parsed: bool = field(default=False, repr=False, compare=False)
    # Client mode: the bounded copy of a large message the checks judge (client/judged.py), once made.
    judged_copy: Any = field(default=None, repr=False, compare=False)

    def add_flags(self, *flags: FrameFlag) -> None:
        """Flags found after the frame was recorded (the peer classifies what it reads)."""
        self.flags = self.flags.union(flags)

    def text(self) -> str:
        return self.data.decode("utf-8", "replace")

    def json(self) -> Any:
        """The frame parsed as JSON, or None when it is not valid JSON (never raises)."""
        if not self._parsed:
            self._parsed = True
            try:
                self._json = json.loads(self.data)
            except (ValueError, RecursionError):
                self._json = None
        return self._json

    def to_json(self, redactor: Redactor | None = None) -> dict[str, Any]:
        """The frame for export; with a redactor (the run's), its secrets are scrubbed."""
        data = redactor.data(self.data) if redactor is not None else self.data
        out: dict[str, Any] = {
            "seq": self.seq,
            "time": round(self.time, 6),
            "direction": self.direction,
            "channel": self.channel,
        }
        try:
            out["text"] = data.decode("utf-8")
        except UnicodeDecodeError:
            out["base64"] = base64.b64encode(data).decode("ascii")
        if self.http is not None:
            out["http"] = self.http.to_json()
        if self.reply_to is not None:
            out["replyTo"] = self.reply_to
        if self.note:
            out["note"] = self.note
        if self.flags:
            out["flags"] = sorted(flag.name for flag in self.flags)
        if self.connection is not None:
            out["lane"] = self.lane
            out["connection"] = self.connection
        return out


# Safety nets against a hostile server. The peer already lets go of what it does not keep (a
# notification flood past its own bounds), so these are reached only by pathological runs. A frame
# with slots costs ~150 bytes plus its data: 100 000 small frames stay well under 64 MB.
MAX_FRAMES = 100_000
MAX_FRAME_BYTES = 256 * 1024 * 1024


class WireLog:
    """Append-only, ordered record of frames. One per run; never shared between runs."""

    def __init__(
        self,
        redactor: Redactor | None = None,
        *,
        max_frames: int = MAX_FRAMES,
        max_bytes: int = MAX_FRAME_BYTES,
        clock_start: float | None = None,  # a time.monotonic() frame times count from (default: now)
    ) -> None:
        self._t0 = time.monotonic() if clock_start is None else clock_start
        self._frames: dict[int, Frame] = {}  # seq -> frame, in seq order
        self._redactor = redactor or Redactor()
        self._max_frames = max_frames
        self._max_bytes = max_bytes
        self._bytes = 0
        self._next_seq = 1
        self.dropped = 0  # frames not kept because the log was full
        # Told of every frame as it is recorded (the live progress line reads the run from it).
        self.observer: Callable[[Frame], None] | None = None
        self.discarded = 0  # frames let go of with discard() (e.g. a notification flood)
        # Connections numbered so far (weakly: a closed connection's transport may go; its number
        # is never given again).
        self._connections: weakref.WeakKeyDictionary[object, int] = weakref.WeakKeyDictionary()
        self._connections_numbered = 0

    @property
    def redactor(self) -> Redactor:
        return self._redactor

    @property
    def max_bytes(self) -> int:
        """The bytes of frames it keeps at most (a frame past them is kept without its bytes)."""
        return self._max_bytes

    @property
    def max_frames(self) -> int:
        """The frames it keeps at most."""
        return self._max_frames

    def elapsed(self) -> float:
        return time.monotonic() - self._t0

    def connection_number(self, connection: object) -> int:
        """The number of one connection of the run (its transport): the same each time it is asked,
        1 for the first connection numbered, 2 for the next… (`FrameTag.connection`)."""
        number = self._connections.get(connection)
        if number is None:
            self._connections_numbered += 1
            number = self._connections[connection] = self._connections_numbered
        return number

    def record(
        self,
        direction: Direction,
        channel: Channel,
        data: bytes,
        *,
        http: HttpMeta | None = None,
        reply_to: int | None = None,
        note: str | None = None,
        flags: Iterable[FrameFlag] = (),
        tag: FrameTag | None = None,
        connection: int | None = None,
    ) -> Frame:
        """Append one frame; the first outbound frame in a `tagging` block takes its tag (unless
        given one here)."""
        if direction == "out":
            pending = _NEXT_TAG.get()
            if pending:
                set_by_block = pending.pop()
                tag = tag if tag is not None else set_by_block
        seq = self._next_seq
        kept_flags = frozenset(flags)
        self._next_seq += 1
        # The bytes are kept exactly as they crossed the wire, secrets included, because checks
        # judge them; every way out of the process (export, reports) redacts (see to_json).
        if self._bytes + len(data) > self._max_bytes:
            # Bounded in bytes: the frame stays (so its seq resolves) but not its data.
            note = f"{note + '; ' if note else ''}{len(data)} bytes not kept: the wire log is full"
            data = b""
            kept_flags |= {FrameFlag.DROPPED_BYTES}
        frame = Frame(
            seq=seq,
            time=self.elapsed(),
            direction=direction,
            channel=channel,
            data=data,
            http=http,
            reply_to=reply_to,
            note=self._redactor.text(note) if note else None,
            flags=kept_flags,
            tag=tag,
            lane=self._lane_of(direction, reply_to),
            connection=connection,
        )
        if len(self._frames) < self._max_frames:
            self._frames[seq] = frame
            self._bytes += len(data)
        else:
            # Bounded: a flood of frames cannot exhaust memory; the count of what was lost is kept.
            self.dropped += 1
        if self.observer is not None:
            self.observer(frame)
        return frame

    def _lane_of(self, direction: Direction, reply_to: int | None) -> str | None:
        request = self._frames.get(reply_to) if direction == "in" and reply_to is not None else None
        if request is not None and request.lane is not None:
            return request.lane
        return _LANE.get()

    def answers(self, response_seq: int, request_seq: int) -> None:
        """The frame `response_seq` answers `request_seq` (the peer matched them): it joins the
        request's lane, whichever task read it off the wire."""
        response, request = self._frames.get(response_seq), self._frames.get(request_seq)
        if response is not None and request is not None and request.lane is not None:
            response.lane = request.lane

    def discard(self, frame: Frame) -> None:
        """Let go of a frame nobody will judge (the peer's bounds decide); it is counted."""
        if self._frames.pop(frame.seq, None) is not None:
            self._bytes -= len(frame.data)
            self.discarded += 1

    def __iter__(self) -> Iterator[Frame]:
        return iter(list(self._frames.values()))

    def __len__(self) -> int:
        return len(self._frames)

    def get(self, seq: int) -> Frame | None:
        return self._frames.get(seq)

    def frames(self) -> list[Frame]:
        return list(self._frames.values())

    def redacted_text(self, frame: Frame) -> str:
        """A frame's bytes as text for a report, with the run's secrets scrubbed."""
        return self._redactor.text(frame.text())


# What a check result shows of the frames it rests on (the wire log export has them all).
MAX_FRAME_TEXT = 2_000
MAX_FRAMES_PER_CHECK = 20


def frames_text(wire: WireLog, seqs: list[int]) -> list[str]:
    """The frames a verdict rests on, as text for a report (redacted, at most MAX_FRAMES_PER_CHECK,
    each cut at MAX_FRAME_TEXT characters)."""
    out: list[str] = []
    for seq in seqs[:MAX_FRAMES_PER_CHECK]:
        f = wire.get(seq)
        if f is None:
            continue
        text = wire.redacted_text(f)
        if len(text) > MAX_FRAME_TEXT:
            text = text[:MAX_FRAME_TEXT] + f"… ({len(f.data)} bytes)"
        head = f"#{f.seq} {f.direction} {f.channel}"
        if f.http is not None:
            head += f" {f.http.method} {f.http.status or ''}".rstrip()
        if f.note:
            head += f" [{f.note}]"
        out.append(f"{head}: {text}")
    if len(seqs) > MAX_FRAMES_PER_CHECK:
        out.append(f"… {len(seqs) - MAX_FRAMES_PER_CHECK} more frames in the wire log")
    return out
