"""What the live progress line says: the phase, the time so far, the probe task's status and
poll count, and the time left before --poll-timeout.

`RunProgress` is fed two ways, neither of which changes the run: the runner's words (`say`, the
`progress` callback it already had) and every frame as the wire log records it (`on_frame`),
from which the poll requests (noted "poll #N") and the task's status in their answers are read,
and when a second session starts (a probe's connection of its own: the dual-era probe's
2025-11-25 session, the durability probe's brand-new connection, a second principal's).
`line()` renders it for a given moment, so tests read the text without waiting; `__rich__`
re-reads the clock each time the terminal line is redrawn, so the seconds tick on their own.

Shown on a terminal only (cli.py decides; never off a terminal, in CI or with --quiet).
Everything shown that came from the server (a status string) is bounded and escaped.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tasks_conformance.wirelog import Frame

_POLL_NOTE = re.compile(r"poll #(\d+)")
_CREATING_NOTE = "declared tools/call"
# The outbound notes of negotiation (era probe, initialize, tools/list).
_DISCOVERY_NOTES = ("era probe", "discovery", "initialize")
_TERMINAL = frozenset({"completed", "failed", "cancelled"})
# Inbound frames larger than this are not parsed for a status (the peer parses them anyway; the
# line does not need to hold up a flood).
_MAX_PARSE_BYTES = 256 * 1024
_MAX_WATCHED_IDS = 4_096
# A second connection's peer numbers its requests from an id of its own, far from the main
# session's (rpc/peer.py: `first_id`): a request id this far from every id seen so far is the first
# request of another session, and until that request is answered the session is starting.
_SESSION_ID_GAP = 100_000
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
        self._sessions: list[int] = []  # the first request id of each session seen, the main one first
        # The unanswered first request of a session starting (id -> its frame's seq, what the line says).
        self._starting: dict[int, tuple[int, str]] = {}

    # -- input ----------------------------------------------------------------------------------

    def say(self, text: str) -> None:
        """The runner's progress text."""
        if text.startswith("connecting"):
            self.phase = "connecting"
        elif text.startswith("probe: "):
            self.detail = text[len("probe: "):]
            if self.phase in ("connecting", "discovering"):
                self.phase = "probes"
        elif text == "judging":
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
        note = frame.note or ""
        if self.phase == "connecting" and (not note or note.startswith(_DISCOVERY_NOTES)):
            self.phase = "discovering"
        self._session_of(frame)
        poll = _POLL_NOTE.match(note)
        if poll is None and note != _CREATING_NOTE:
            return
        if poll is not None:
            self.polls = max(self.polls, int(poll.group(1)))
            if self.poll_started is None:
                self.poll_started = self._clock()
        message = frame.json()
        key = _key(message.get("id")) if isinstance(message, dict) else None
        if key is not None and len(self._watched) < _MAX_WATCHED_IDS:
            self._watched.add(key)

    def _session_of(self, frame: Frame) -> None:
        """Note a request that opens another session (its id far from every session's so far)."""
        message = frame.json()
        if not isinstance(message, dict) or not isinstance(message.get("method"), str):
            return
        rid = message.get("id")
        if not isinstance(rid, int) or isinstance(rid, bool):
            return  # a notification, or an id of another kind than the peers give
        if any(abs(rid - first) < _SESSION_ID_GAP for first in self._sessions):
            return
        if len(self._sessions) >= _MAX_SESSIONS:
            return  # bounded: a run opens a handful of sessions
        opened_before = bool(self._sessions)
        self._sessions.append(rid)
        if opened_before and self.phase not in ("connecting", "discovering", "reporting"):
            what = STARTING_SESSION if message["method"] == "initialize" else CONNECTING_SESSION
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
        from tasks_conformance.reporters._text import one_line

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
