"""The server went away mid-run: what the transport saw, as fields (the crash check judges it)."""

from __future__ import annotations

import enum
from dataclasses import dataclass


class GoneHow(enum.StrEnum):
    """How the server stopped answering."""

    EXITED = "exited"  # its process ended (stdio, or --server-command)
    CLOSED = "closed"  # the stdio connection closed while the process ran
    UNREACHABLE = "unreachable"  # HTTP: connections refused or dropped, and nothing answered again


@dataclass(frozen=True)
class ServerGone:
    """The server answered requests, then stopped: its last answer was frame `after_seq`, and the
    requests `lost_seqs` went unanswered because the connection was gone."""

    how: GoneHow
    exit_code: int | None  # its own exit code, when known
    output_tail: str  # the end of its stderr (stdio) or output (--server-command), redacted
    after_method: str | None  # the request whose answer was the last one the server sent
    after_seq: int | None  # that answer's frame
    lost_seqs: tuple[int, ...]  # the requests left without an answer (bounded)
    lost_methods: tuple[str, ...] = ()  # their methods, each once, in the order they were sent
    output_name: str = "stderr"  # what `output_tail` is the end of

    def statement(self) -> str:
        """One sentence: "the server exited with code 1 after tasks/cancel; stderr: …"."""
        if self.how is GoneHow.EXITED:
            what = f"the server exited with code {self.exit_code}" if self.exit_code is not None \
                else "the server exited"
        elif self.how is GoneHow.CLOSED:
            what = "the server closed the connection"
        else:
            what = "the server stopped accepting connections (refused or dropped)"
        after = f" after answering {self.after_method}" if self.after_method else ""
        lost = len(self.lost_seqs)
        methods = f" ({', '.join(self.lost_methods[:4])})" if self.lost_methods else ""
        tail = f"; {self.output_name}: {self.output_tail}" if self.output_tail else ""
        went = f"{lost} request{' was' if lost == 1 else 's were'} left unanswered"
        return f"{what}{after}; {went}{methods}{tail}"
