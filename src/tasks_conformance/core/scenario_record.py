"""What the client under test did in one scenario of a client run, as every report shows it: its
exit status, how long it ran against which --timeout, what it sent, the outcome line exactly as it
printed it (or why that line could not be read), and the last lines of its stderr. Built by the
client runner (already redacted and bounded); the server mode has none.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tasks_conformance.core.text import one_line

LINE_CHARS = 200  # what `line()` quotes of the outcome line or of a stderr line


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
            "stderrTail": list(self.stderr_tail), "problem": self.problem, "leftBehind": list(self.left_behind),
            "descendantsTracked": self.descendants_tracked, "notSignalled": list(self.not_signalled),
        }

    def lines(self) -> list[str]:
        """The record for people: a head line, then the outcome line and the end of stderr."""
        head = (f"{self.scenario} ({self.era}, {self.transport}): {self.status} after {self.duration_ms} ms, "
                f"{self.messages} message(s) over {self.connections} connection(s)")
        out = [head + (f"; {self.problem}" if self.problem else "")]
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
