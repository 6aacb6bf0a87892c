"""When a task may be deleted, from what the wire showed: its TTL, measured from its creation.

A server may delete a task once its TTL has run out (S-EXT-MAY-04, S-LEG-MAY-03) and may revise
the TTL on any read (S-EXT-MAY-03), so the deadline is the latest TTL seen, counted from when our
creating request went out. The server created the task after that, so the true deadline is never
earlier: a read sent after this deadline may legally find the task gone, and the probes that need
an ended task aim their reads before it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from tasks_conformance.core.protocol import ERR_INVALID_PARAMS

if TYPE_CHECKING:
    from tasks_conformance.core.rpc.peer import Reply
    from tasks_conformance.core.wirelog import WireLog
    from tasks_conformance.core.wires import WireDialect

@dataclass(frozen=True)
class Expiry:
    """The earliest time, on the wire log's clock, the server may delete the task; None where no
    finite TTL was seen (null, absent) or the creating request is not in the log."""

    deadline_s: float | None
    ttl_ms: float | None

    def reached(self, sent_at_s: float | None) -> bool:
        """Whether a request sent at `sent_at_s` went out once the TTL had run out."""
        return self.deadline_s is not None and sent_at_s is not None and sent_at_s >= self.deadline_s

    def left_s(self, now_s: float) -> float | None:
        """Seconds until the deadline (negative once past); None without one."""
        return None if self.deadline_s is None else self.deadline_s - now_s

    def describe(self, dialect: WireDialect) -> str:
        if self.ttl_ms is None:
            return f"no finite {dialect.ttl_field}"
        return f"{dialect.ttl_field} {self.ttl_ms:g} ms"


def task_expiry(wire_log: WireLog, dialect: WireDialect, created: Reply | None, reads: Iterable[Reply]) -> Expiry:
    """The task's deadline: the TTL of the last answer that carried one (creation first, then the
    reads in order), from the time the creating request was sent."""
    if created is None:
        return Expiry(None, None)
    ttl: float | None = None
    for reply in (created, *reads):
        if reply.ok:
            ttl = dialect.ttl_ms(reply.result)
    sent = wire_log.get(created.request_seq)
    if ttl is None or sent is None:
        return Expiry(None, ttl)
    return Expiry(sent.time + ttl / 1000, ttl)


def not_found(reply: Reply) -> bool:
    """The answer a server gives for a task it does not have (deleted, purged, never known)."""
    return reply.error_code == ERR_INVALID_PARAMS


def sent_at(wire_log: WireLog, reply: Reply) -> float | None:
    frame = wire_log.get(reply.request_seq)
    return frame.time if frame is not None else None


def deleted_after_ttl(wire_log: WireLog, expiry: Expiry, reply: Reply) -> bool:
    """A "not found" to a request sent once the task's TTL had run out: the freedom to delete it."""
    return not_found(reply) and expiry.reached(sent_at(wire_log, reply))
