"""Did the server go away mid-run? Read once the traffic is over, from the replies the probes
kept: a request left unanswered because the connection was gone (`Reply.lost`), after which no
request was answered again, names the end; the transport (stdio) or the --server-command
process gives its exit code and the end of its output."""

from __future__ import annotations

from collections.abc import Iterable

from tasks_conformance.core.rpc.peer import Reply
from tasks_conformance.core.transports.base import Transport
from tasks_conformance.server.evidence import ProbeRecord
from tasks_conformance.server.evidence.server_gone import GoneHow, ServerGone
from tasks_conformance.server.managed import ServerExit

MAX_LOST = 50  # requests named as left unanswered


def server_gone(records: Iterable[ProbeRecord], transport: Transport | None,
                managed: ServerExit | None) -> ServerGone | None:
    """What ended the server's answers, or None when it answered to the end."""
    replies = [r for rec in records for r in rec.all_replies()]
    lost_replies = sorted((r for r in replies if r.lost), key=lambda r: r.request_seq)
    # Only requests that became frames: one never written (the pipe had closed) is not evidence.
    lost = sorted({r.request_seq for r in lost_replies if r.request_seq > 0})
    answered = [r for r in replies if r.response_seq is not None]
    if not lost or not answered:
        return None  # nothing lost, or it never worked (the connection problem, not a crash mid-run)
    last = max(answered, key=_response_seq)
    stream = transport is not None and not transport.uses_headers
    # A stream transport loses requests only when the connection ends. Over HTTP one exchange may
    # be dropped while the server lives on: it is gone only if a request sent after its last
    # answer was lost too (refused or dropped, and nothing answered again).
    if not stream and not any(seq > _response_seq(last) for seq in lost):
        return None
    exit_code = transport.exit_code() if transport is not None else None
    tail = transport.output_tail() if transport is not None else ""
    name = "stderr"
    if managed is not None and managed.exit_code is not None:
        exit_code, tail, name = managed.exit_code, managed.output_tail, "its output"
    how = GoneHow.EXITED if exit_code is not None else GoneHow.CLOSED if stream else GoneHow.UNREACHABLE
    return ServerGone(how=how, exit_code=exit_code, output_tail=_last_lines(tail), after_method=last.method,
                      after_seq=last.response_seq, lost_seqs=tuple(lost[:MAX_LOST]), output_name=name,
                      lost_methods=tuple(dict.fromkeys(r.method for r in lost_replies)))


def _response_seq(reply: Reply) -> int:
    return reply.response_seq or 0


def _last_lines(text: str, lines: int = 3, chars: int = 400) -> str:
    kept = [line.strip() for line in text.strip().splitlines() if line.strip()][-lines:]
    return " | ".join(kept)[-chars:]
