"""What the client under test did in one scenario of a client run, as every report shows it: its
exit status, how long it ran against which --timeout, what it sent, the outcome line exactly as it
printed it (or why that line could not be read), and the last lines of its stderr. Built by the
client runner (already redacted and bounded); the server mode has none.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any

from tasks_conformance.core.text import one_line

LINE_CHARS = 200  # what `line()` quotes of the outcome line or of a stderr line


class Limit(enum.Enum):
    """A bound of the client mode a client can reach (README: "Limits"): reaching one is a finding
    of its scenario, never silent. The value is the name reports give it."""

    STDIO_LINE = "stdio-line"
    """A line the client wrote to the stdio scripted server over MAX_LINE: discarded up to its newline."""
    STDIO_MESSAGES = "stdio-messages"
    """Messages to one stdio scripted server beyond its first MAX_MESSAGES: not read."""
    HTTP_BODY = "http-body"
    """An HTTP request body over MAX_BODY: not read on, answered 413."""
    SERVERS = "servers"
    """Scripted server processes beyond MAX_CONNECTIONS in one scenario: refused."""
    OUTCOME_LINE = "outcome-line"
    """A TASKS-CONFORMANCE-OUTCOME line over the outcome line limit: not read."""
    FRAME_BYTES = "frame-bytes"
    """Frames recorded once the wire log held its cap of bytes: kept without their bytes, not judged."""
    FRAMES = "frames"
    """Frames beyond the wire log's cap on frames: not kept, not judged."""


# What happens when a limit is reached, for people (the report's human line and the README's table).
LIMIT_EFFECT = {
    Limit.STDIO_LINE: "line(s) over {max} bytes discarded up to their newline, unread",
    Limit.STDIO_MESSAGES: "message(s) beyond the first {max} to one server process not read",
    Limit.HTTP_BODY: "request body(ies) over {max} bytes not read, answered 413",
    Limit.SERVERS: "server process(es) beyond {max} refused (their report connection closed)",
    Limit.OUTCOME_LINE: "TASKS-CONFORMANCE-OUTCOME line(s) over {max} bytes not read",
    Limit.FRAME_BYTES: "frame(s) over the wire log's {max} bytes kept without their bytes, not judged",
    Limit.FRAMES: "frame(s) beyond the wire log's {max} frames not kept, not judged",
}


@dataclass(frozen=True)
class LimitHit:
    """One limit a scenario's client reached: which, its value, and how many times."""

    limit: Limit
    max: int
    hits: int

    def to_json(self) -> dict[str, Any]:
        return {"limit": self.limit.value, "max": self.max, "hits": self.hits}

    def words(self) -> str:
        return f"limit {self.limit.value}: {self.hits} {LIMIT_EFFECT[self.limit].format(max=self.max)}"


@dataclass(frozen=True)
class ScenarioRecord:
    scenario: str
    era: str
    transport: str
    started: bool  # the client's process could be started
    exit_code: int | None  # None: it did not exit by itself (stopped at --timeout), or never started
    timed_out: bool
    duration_ms: int
    timeout_ms: int
    reached: bool  # it sent the scripted server at least one message
    messages: int  # the messages it sent (malformed ones included)
    connections: int  # the connections they came on (server processes, sessions)
    outcome_line: str | None = None  # the TASKS-CONFORMANCE-OUTCOME line as printed (its JSON part)
    outcome_problem: str | None = None  # why that line cannot be read
    stderr_tail: tuple[str, ...] = ()  # its last lines
    problem: str | None = None  # it could not be started, or the scripted server could not serve
    limits: tuple[LimitHit, ...] = ()  # the limits it reached (README: "Limits")
    # Descendants still alive after the client's end, outside its process group (`pid N: command`):
    # each was stopped (policy P-49).
    left_behind: tuple[str, ...] = ()
    descendants_tracked: bool = True  # False: this machine could not find descendants outside its group
    not_signalled: tuple[str, ...] = ()  # pids a scripted server's hello named that were not signalled

    @property
    def status(self) -> str:
        """How the client's process ended, in words."""
        if not self.started:
            return "not started"
        if self.timed_out:
            return f"stopped at --timeout {self.timeout_ms} ms"
        return f"exit {self.exit_code}"

    def to_json(self) -> dict[str, Any]:
        return {
            "scenario": self.scenario, "era": self.era, "transport": self.transport, "started": self.started,
            "exitCode": self.exit_code, "timedOut": self.timed_out, "durationMs": self.duration_ms,
            "timeoutMs": self.timeout_ms, "reached": self.reached, "messages": self.messages,
            "connections": self.connections, "outcomeLine": self.outcome_line, "outcomeProblem": self.outcome_problem,
            "stderrTail": list(self.stderr_tail), "problem": self.problem,
            "limits": [hit.to_json() for hit in self.limits],
            "leftBehind": list(self.left_behind),
            "descendantsTracked": self.descendants_tracked, "notSignalled": list(self.not_signalled),
        }

    def lines(self) -> list[str]:
        """The record for people: a head line, then the outcome line and the end of stderr."""
        head = (f"{self.scenario} ({self.era}, {self.transport}): {self.status} after {self.duration_ms} ms, "
                f"{self.messages} message(s) over {self.connections} connection(s)")
        out = [head + (f"; {self.problem}" if self.problem else "")]
        out += [f"  {hit.words()}" for hit in self.limits]
        if self.outcome_problem:
            out.append(f"  outcome line: {self.outcome_problem}: {one_line(self.outcome_line or '', LINE_CHARS)}")
        elif self.outcome_line is not None:
            out.append(f"  outcome line: {one_line(self.outcome_line, LINE_CHARS)}")
        else:
            out.append("  outcome line: none")
        out += [f"  stderr: {one_line(line, LINE_CHARS)}" for line in self.stderr_tail]
        out += [f"  left behind, stopped: {line}" for line in self.left_behind]
        if not self.descendants_tracked:
            out.append("  descendants outside its process group: not tracked on this system (no subreaper or "
                       "no /proc), so not stopped")
        out += [f"  not signalled: {line}" for line in self.not_signalled]
        return out
