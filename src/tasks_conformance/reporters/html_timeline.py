"""The exchange of one run as the HTML report draws it: every frame with its time and lane, the
polls and their intervals beside the pollInterval the server asked for, each task's status
changes along its lane, and the pauses the axis leaves out (`breaks`: a long wait with no frame,
drawn narrow, so the frames spread over the plot instead of bunching beside it).

Plain data (dicts of str/int/float/list) for the report's embedded JSON. Everything read here
comes from typed fields (`Frame.lane`, `Frame.tag`) or from the wire data itself (a task's
`status`, its poll interval field): never from a note or a message. The bytes are the wire log's,
redacted by the run's redactor, and bounded per frame and in total so a flood stays a small file.
"""

from __future__ import annotations

import re
from itertools import pairwise
from typing import TYPE_CHECKING, Any

from tasks_conformance.core.wirelog import Purpose
from tasks_conformance.core.wires import DIALECTS
from tasks_conformance.core.wires.base import task_object

if TYPE_CHECKING:
    from collections.abc import Callable

    from tasks_conformance.core.wirelog import Frame, WireLog

# Bounds of what one report embeds: a frame's bytes beyond MAX_SHOWN_BYTES, and every frame's after
# MAX_TOTAL_BYTES, are left to the wire log (--wire-log); the frame itself (its mark) stays.
MAX_SHOWN_BYTES = 8 * 1024
MAX_TOTAL_BYTES = 4 * 1024 * 1024
MAX_FRAMES = 20_000  # marks beyond it are not drawn (the wire log keeps up to 100 000)
OTHER_LANE = "other"  # frames recorded outside any lane (a transport event before the first probe)
# A pause with no frame is a break of the axis when it is longer than BREAK_SHARE of the whole
# exchange (first frame to last) and than BREAK_MIN_MS; at most MAX_BREAKS, the longest.
BREAK_SHARE, BREAK_MIN_MS, MAX_BREAKS = 0.1, 250.0, 9

# The poll interval field of every wire (pollIntervalMs, pollInterval): read whichever the task has.
_INTERVAL_FIELDS = tuple(dict.fromkeys(d.poll_interval_field for d in DIALECTS.values()))
# Shown escaped, so an invisible or reordering character from a server is seen as what it is.
_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2066-\u2069"
                      "\ud800-\udfff\ufeff\ufffe\uffff\U000e0000-\U000e007f]")


def escaped(data: bytes) -> tuple[str, bool]:
    """(the bytes as text, control and invisible characters as \\u escapes; whether they were
    UTF-8). Bytes that are not UTF-8 are shown as \\xNN."""
    try:
        text, utf8 = data.decode("utf-8"), True
    except UnicodeDecodeError:
        text, utf8 = data.decode("utf-8", "backslashreplace"), False
    return inert(text), utf8


def inert(text: str) -> str:
    """`text` with control, invisible and reordering characters (a lone surrogate too) as \\u escapes."""
    return _CONTROL.sub(_escape, text)


def _escape(m: re.Match[str]) -> str:
    code = ord(m.group())
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\u{{{code:x}}}"


def _method(frame: Frame) -> str | None:
    msg = frame.json()
    if isinstance(msg, dict) and isinstance(msg.get("method"), str):
        return str(msg["method"])[:100]
    return None


def _task_state(frame: Frame) -> tuple[str, str, int | None] | None:
    """(taskId, status, poll interval ms) of the task object a frame carries, if any: a result's
    task (flat or under `task`) or a status notification's params."""
    msg = frame.json()
    if not isinstance(msg, dict):
        return None
    for part in ("result", "params"):
        task = task_object(msg.get(part))
        tid, status = task.get("taskId"), task.get("status")
        if isinstance(tid, str) and isinstance(status, str):
            interval = next((v for f in _INTERVAL_FIELDS if isinstance(v := task.get(f), int | float)
                             and not isinstance(v, bool)), None)
            return tid[:200], status[:100], int(interval) if interval is not None else None
    return None


def _frame_data(frame: Frame, wire: WireLog, budget: list[int]) -> dict[str, Any]:
    data = wire.redactor.data(frame.data)
    shown = data[: min(MAX_SHOWN_BYTES, max(budget[0], 0))]
    budget[0] -= len(shown)
    text, utf8 = escaped(shown)
    out: dict[str, Any] = {
        "seq": frame.seq, "t": round(frame.time * 1000, 3), "dir": frame.direction, "channel": frame.channel,
        "lane": frame.lane or OTHER_LANE, "size": len(frame.data), "text": text, "utf8": utf8,
        "cut": len(shown) < len(data),
    }
    if frame.tag is not None:
        out["purpose"] = frame.tag.purpose.value
        if frame.tag.poll is not None:
            out["poll"] = frame.tag.poll
    method = _method(frame)
    if method is not None:
        out["method"] = inert(wire.redactor.text(method))
    if frame.http is not None:
        out["http"] = f"{frame.http.method} {frame.http.status or ''}".strip()[:40]
    if frame.reply_to is not None:
        out["replyTo"] = frame.reply_to
    if frame.note:
        out["note"] = inert(frame.note[:500])  # redacted when recorded
    if frame.flags:
        out["flags"] = sorted(f.value for f in frame.flags)
    return out


def timeline(wire: WireLog | None) -> dict[str, Any]:
    """Lanes (in the order they first speak), frames, polls with their intervals, status changes."""
    if wire is None:
        return {"lanes": [], "frames": [], "polls": [], "statuses": [], "duration": 0, "omitted": 0, "breaks": []}
    frames = wire.frames()
    omitted = max(0, len(frames) - MAX_FRAMES) + wire.dropped
    frames = frames[:MAX_FRAMES]
    budget = [MAX_TOTAL_BYTES]
    rows = [_frame_data(f, wire, budget) for f in frames]
    redact = wire.redactor.text
    lanes = list(dict.fromkeys(r["lane"] for r in rows))
    return {
        "lanes": lanes, "frames": rows, "polls": _polls(frames), "statuses": _statuses(frames, redact),
        "duration": round(max((f.time for f in frames), default=0.0) * 1000, 3), "omitted": omitted,
        "breaks": breaks([r["t"] for r in rows]),
    }


def breaks(times: list[float]) -> list[dict[str, float]]:
    """The pauses the time axis leaves out, in time order: {from, to} in ms, each from a frame's
    time to the next frame's, where no frame crossed for longer than BREAK_SHARE of the exchange
    (and BREAK_MIN_MS). A run that waits (a TTL running out, a slow task) before its last frames
    would otherwise draw every other frame in a sliver of the plot."""
    ts = sorted(times)
    if len(ts) < 2:
        return []
    least = max(BREAK_MIN_MS, BREAK_SHARE * (ts[-1] - ts[0]))
    pauses = sorted(((b - a, a, b) for a, b in pairwise(ts) if b - a > least), reverse=True)
    return [{"from": a, "to": b} for _gap, a, b in sorted(pauses[:MAX_BREAKS], key=lambda p: p[1])]


def _polls(frames: list[Frame]) -> list[dict[str, Any]]:
    """Each poll the harness sent, with the time since the previous one on its lane and the poll
    interval the server asked for in the last task it showed on that lane before it."""
    asked: dict[str, int] = {}  # lane -> the latest poll interval a task on it carried
    last_poll: dict[str, float] = {}
    out: list[dict[str, Any]] = []
    for f in frames:
        lane = f.lane or OTHER_LANE
        if f.tag is not None and f.tag.purpose is Purpose.POLL:
            since = last_poll.get(lane)
            out.append({"seq": f.seq, "lane": lane, "t": round(f.time * 1000, 3), "n": f.tag.poll,
                        "sinceMs": round((f.time - since) * 1000, 1) if since is not None else None,
                        "askedMs": asked.get(lane)})
            last_poll[lane] = f.time
            continue
        state = _task_state(f)
        if state is not None and state[2] is not None:
            asked[lane] = state[2]
    return out


def _statuses(frames: list[Frame], redact: Callable[[str], str]) -> list[dict[str, Any]]:
    """Where a task's status changes on a lane: the first frame showing each new status."""
    seen: dict[tuple[str, str], str] = {}
    out: list[dict[str, Any]] = []
    for f in frames:
        state = _task_state(f)
        if state is None:
            continue
        lane, (tid, status, _interval) = f.lane or OTHER_LANE, state
        if seen.get((lane, tid)) != status:
            seen[(lane, tid)] = status
            out.append({"seq": f.seq, "lane": lane, "t": round(f.time * 1000, 3),
                        "taskId": inert(redact(tid)), "status": inert(redact(status))})
    return out
