"""The limits of the client mode a client can reach, with their values (README: "Limits", a test
holds the table to these), and the ones a scenario reached, as its record states them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from tasks_conformance.client import launch, stdio_relay
from tasks_conformance.client.scripted import http as scripted_http
from tasks_conformance.client.scripted import play
from tasks_conformance.core import wirelog
from tasks_conformance.core.scenario_record import Limit, LimitHit
from tasks_conformance.core.wirelog import FrameFlag, WireLog

LIMIT_VALUES: dict[Limit, int] = {
    Limit.STDIO_LINE: play.MAX_LINE,
    Limit.STDIO_MESSAGES: play.MAX_MESSAGES,
    Limit.HTTP_BODY: scripted_http.MAX_BODY,
    Limit.SERVERS: stdio_relay.MAX_CONNECTIONS,
    Limit.OUTCOME_LINE: launch.MAX_LINE,
    Limit.FRAME_BYTES: wirelog.MAX_FRAME_BYTES,
    Limit.FRAMES: wirelog.MAX_FRAMES,
}


def reached(counted: Mapping[Limit, int], wire: WireLog, seqs: Sequence[int],
            client: launch.ClientRun) -> tuple[LimitHit, ...]:
    """The limits one scenario's client reached: those its scripted server or relay counted, its
    outcome lines over the limit, and its frames the wire log kept without bytes or not at all."""
    hits = dict(counted)
    hits[Limit.OUTCOME_LINE] = client.long_outcome_lines
    frames = [wire.get(seq) for seq in seqs]
    hits[Limit.FRAME_BYTES] = sum(1 for f in frames if f is not None and FrameFlag.DROPPED_BYTES in f.flags)
    hits[Limit.FRAMES] = sum(1 for f in frames if f is None)
    values = {**LIMIT_VALUES, Limit.FRAME_BYTES: wire.max_bytes, Limit.FRAMES: wire.max_frames}
    return tuple(LimitHit(limit, values[limit], hits[limit]) for limit in Limit if hits.get(limit, 0) > 0)
