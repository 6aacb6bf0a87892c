"""What the live progress line says: the phase, the time so far, the probe task's status and
poll count, and the time left before --poll-timeout.

`RunProgress` is fed two ways, neither of which changes the run: the runner's words (`say`, the
`progress` callback it already had) and every frame as the wire log records it (`on_frame`).
Frames are read by their typed tags (wirelog.FrameTag, set where each request is made), never by
their notes: the polls of the probe task (Purpose.POLL and its number), its creation, and the
connection each request went over, so that a second session is seen starting (a probe's
connection of its own: the dual-era probe's 2025-11-25 session, the durability probe's
brand-new connection, a second principal's). The task's status is read from the answers.
`line()` renders it for a given moment, so tests read the text without waiting; `__rich__`
re-reads the clock each time the terminal line is redrawn, so the seconds tick on their own.

Shown on a terminal only (cli.py decides; never off a terminal, in CI or with --quiet).
Everything shown that came from the server (a status string) is bounded and escaped.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from tasks_conformance.core.steps import Phase, Step
from tasks_conformance.core.wirelog import Purpose

if TYPE_CHECKING:
    from tasks_conformance.core.wirelog import Frame

# The requests of negotiation (era probe, initialize, tools/list).
_DISCOVERY = frozenset({Purpose.ERA_PROBE, Purpose.HANDSHAKE, Purpose.DISCOVERY})
# The requests whose answers carry the probe task's status.
_WATCHED = frozenset({Purpose.TASK_CREATE, Purpose.POLL})
_TERMINAL = frozenset({"completed", "failed", "cancelled"})
# Inbound frames larger than this are not parsed for a status (the peer parses them anyway; the
# line does not need to hold up a flood).
_MAX_PARSE_BYTES = 256 * 1024
_MAX_WATCHED_IDS = 4_096
_MAX_SESSIONS = 64
STARTING_SESSION = "starting a second session"  # its first request is initialize (2025-11-25)
CONNECTING_SESSION = "connecting a new session"  # its first request is the one it was opened for


class RunProgress:
    """The state behind the live line; `say` and `on_frame` never raise."""

    def __init__(self, poll_timeout_s: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.poll_timeout_s = poll_timeout_s
        self._clock = clock
        self.started = clock()
        self.phase = "connecting"
        self.detail = ""  # the probe under way, in the runner's words
        self.task_status: str | None = None
        self.polls = 0
        self.poll_started: float | None = None  # when the first tasks/get of the polling went out
        self._watched: set[Any] = set()  # JSON-RPC ids whose answer carries the task's status
        self._connections: list[int] = []  # the connections seen sending requests, the main one first
        # The unanswered first request of a session starting (its id -> its frame's seq, what the line says).
        self._starting: dict[Any, tuple[int, str]] = {}

    # -- input ----------------------------------------------------------------------------------

    def say(self, text: str) -> None:
        """The runner's progress: a Step's phase decides; any other text is shown as the detail."""
        step = text if isinstance(text, Step) else None
        phase = step.phase if step is not None else None
        if phase is Phase.CONNECTING:
            self.phase = "connecting"
        elif step is not None and phase is Phase.PROBE:
            self.detail = step.detail
            if self.phase in ("connecting", "discovering"):
                self.phase = "probes"
        elif phase is Phase.JUDGING:
            self.phase, self.detail = "reporting", ""
            self._starting.clear()
        else:
            self.detail = text

    def on_frame(self, frame: Frame) -> None:
        """Every frame the wire log records (outbound requests and inbound answers)."""
        try:
            if frame.direction == "out":
                self._outbound(frame)
            elif self._starting and frame.reply_to is not None:
                self._ended(frame.reply_to)  # over HTTP: the answer or failure of that POST
            if frame.direction == "in" and (self._watched or self._starting) and len(frame.data) <= _MAX_PARSE_BYTES:
                self._inbound(frame)
        except Exception:  # the line is a nicety: it must never disturb the run
            pass

    def _outbound(self, frame: Frame) -> None:
        tag = frame.tag  # None: not a request the harness made (a notification, an answer)
        if self.phase == "connecting" and (tag is None or tag.purpose in _DISCOVERY):
            self.phase = "discovering"
        if tag is None:
            return
        self._session_of(frame, tag.connection, tag.purpose)
        if tag.purpose not in _WATCHED:
            return
        if tag.purpose is Purpose.POLL:
            self.polls = max(self.polls, tag.poll or 0)
            if self.poll_started is None:
                self.poll_started = self._clock()
        message = frame.json()
        key = _key(message.get("id")) if isinstance(message, dict) else None
        if key is not None and len(self._watched) < _MAX_WATCHED_IDS:
            self._watched.add(key)

    def _session_of(self, frame: Frame, connection: int | None, purpose: Purpose) -> None:
        """Note a request that opens another session: the first one sent over a connection other
        than those seen so far (the first connection seen is the main one)."""
        if connection is None or connection in self._connections or len(self._connections) >= _MAX_SESSIONS:
            return  # bounded: a run opens a handful of connections
        message = frame.json()
        rid = _key(message.get("id")) if isinstance(message, dict) else None
        if rid is None:
            return  # no answer to wait for (a notification sent on a connection of its own)
        opened_before = bool(self._connections)
        self._connections.append(connection)
        if opened_before and self.phase not in ("connecting", "discovering", "reporting"):
            what = STARTING_SESSION if purpose is Purpose.HANDSHAKE else CONNECTING_SESSION
            self._starting[rid] = (frame.seq, what)

    def _ended(self, seq: int) -> None:
        for rid, (sent, _what) in list(self._starting.items()):
            if sent == seq:
                del self._starting[rid]

    def _inbound(self, frame: Frame) -> None:
        message = frame.json()
        key = _key(message.get("id")) if isinstance(message, dict) else None
        if key is not None:
            self._starting.pop(key, None)
        if key is None or key not in self._watched:
            return
        self._watched.discard(key)
        result = message.get("result")
        if not isinstance(result, dict):
            return
        nested = result.get("task")  # the legacy CreateTaskResult nests the task
        status = (nested if isinstance(nested, dict) else result).get("status")
        if isinstance(status, str):
            self.task_status = status
            if self.phase != "reporting" and status not in _TERMINAL:
                self.phase = "task running"
            elif self.phase == "task running":
                self.phase = "probes"

    # -- output ---------------------------------------------------------------------------------

    def line(self, now: float | None = None) -> str:
        """The line for the moment `now` (default: the clock's now)."""
        from tasks_conformance.core.text import one_line

        now = self._clock() if now is None else now
        parts = [self.phase, f"{max(now - self.started, 0.0):.1f}s"]
        if self.task_status is not None:
            status = one_line(self.task_status, 40)
            parts.append(f"task {status}" + (f", poll {self.polls}" if self.polls else ""))
            if self.poll_started is not None and self.task_status not in _TERMINAL and self.phase != "reporting":
                left = self.poll_started + self.poll_timeout_s - now
                parts.append(f"{max(left, 0.0):.0f}s left of --poll-timeout")
        # While the task runs, the poll count is the news; probes said meanwhile run beside it.
        # A session starting is what the run waits on (the probe said last may be long done).
        detail = next(reversed(self._starting.values()))[1] if self._starting else self.detail
        if detail and self.phase not in ("task running", "reporting"):
            parts.append(one_line(detail, 80))
        return " · ".join(parts)

    def __rich__(self) -> Any:
        from rich.text import Text

        # A Text is never parsed as markup; line() escaped what came from the server.
        return Text(self.line(), no_wrap=True, overflow="ellipsis")


def _key(value: Any) -> Any:
    """A JSON-RPC id as a set member (ids are strings or numbers; anything else never matches)."""
    return value if isinstance(value, (str, int)) and not isinstance(value, bool) else None
