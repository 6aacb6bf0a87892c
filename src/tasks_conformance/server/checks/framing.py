"""Framing: every inbound frame is a JSON-RPC message that answers something asked, once."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tasks_conformance.core.causes import unmet
from tasks_conformance.core.protocol import (
    get_path,
)
from tasks_conformance.core.verdict import Verdict, could_not_run, failed, passed
from tasks_conformance.core.wires import Wire
from tasks_conformance.server.checks.engine.registry import check
from tasks_conformance.server.checks.engine.shapes import reply_seqs
from tasks_conformance.server.evidence import (
    DeclaredCall,
    Evidence,
    Poll,
)

if TYPE_CHECKING:
    from tasks_conformance.core.rpc.peer import Reply


import json

from tasks_conformance.core.protocol import META_SUBSCRIPTION_ID
from tasks_conformance.core.wirelog import Frame, FrameFlag
from tasks_conformance.server.checks.engine.common import NO_TASKS_WIRE, need_wire

STRAY = "responses to ids never sent"
UNSOLICITED = "notifications/tasks outside any subscription"
SHOWN_PER_KIND = 5

WIRE_FRAMING = check(
    id="tasks-wire-framing",
    area="framing",
    category="dispatch",
    title="Every inbound frame is a JSON-RPC message that answers something asked, once",
    description=(
        "Scans every inbound frame of the run: no non-JSON output on a stdio server's stdout, no response "
        "to an id the client never sent and no second response to one, JSON-RPC over HTTP only as "
        "application/json or text/event-stream, and (extension) no notifications/tasks outside a "
        "subscription that asked for them."
    ),
    # No precondition: noise on a server's stdout is worth naming even when no wire was found
    # (a server that prints "hello" and exits); the judge of Wire.NONE says so.
)


class Findings:
    """Problem frames by kind, in the order found."""

    def __init__(self) -> None:
        self.by_kind: dict[str, list[int]] = {}

    def note(self, kind: str, seq: int) -> None:
        self.by_kind.setdefault(kind, []).append(seq)


def _listened(ev: Evidence) -> tuple[set[str], set[str]]:
    """Ids of our subscriptions/listen requests, and the task ids they listened to."""
    listen_ids: set[str] = set()
    listened_tasks: set[str] = set()
    for f in ev.wire_log:
        msg = f.json() if f.direction == "out" else None
        if isinstance(msg, dict) and "id" in msg and msg.get("method") == "subscriptions/listen":
            listen_ids.add(json.dumps(msg["id"]))
            asked = get_path(msg, "params", "notifications", "taskIds")
            listened_tasks.update(t for t in asked or () if isinstance(t, str))
    return listen_ids, listened_tasks


def _unmatched_kind(ev: Evidence, f: Frame) -> str | None:
    """What is wrong with a frame the peer could not match, by the flag it set. An unflagged
    one is an error with id null, JSON-RPC's answer when the request's id could not be read."""
    if FrameFlag.OVERSIZE in f.flags:
        return "oversize messages nobody asked for"
    if FrameFlag.NOT_JSON in f.flags:
        return "lines of output that are not JSON" if ev.transport != "http" else "bodies that are not JSON"
    if FrameFlag.DUPLICATE_RESPONSE in f.flags:
        return "duplicate responses to one request"
    if FrameFlag.STRAY_RESPONSE in f.flags:
        return STRAY
    if FrameFlag.NOT_JSONRPC in f.flags:
        return "frames that are not JSON-RPC messages"
    return None


def _mislabelled(f: Frame) -> bool:
    """JSON-RPC under a wrong Content-Type; a proxy's plain-text error page is not a message."""
    if f.direction != "in" or FrameFlag.WRONG_CONTENT_TYPE not in f.flags:
        return False
    msg: Any = f.json()
    return isinstance(msg, dict) and "jsonrpc" in msg


def _unsolicited(ev: Evidence, findings: Findings, listen_ids: set[str], listened_tasks: set[str]) -> None:
    for f in ev.notifications:
        msg = f.json()
        if get_path(msg, "method") != "notifications/tasks":
            continue
        # About a task we subscribed to: tasks-subscription-notifications judges its tagging.
        if get_path(msg, "params", "taskId") in listened_tasks:
            continue
        if json.dumps(get_path(msg, "params", "_meta", META_SUBSCRIPTION_ID)) not in listen_ids:
            findings.note(UNSOLICITED, f.seq)


def _findings(ev: Evidence, *, subscriptions: bool) -> Findings:
    findings = Findings()
    for f in ev.unmatched:
        kind = _unmatched_kind(ev, f)
        if kind is not None:
            findings.note(kind, f.seq)
    for f in ev.wire_log:
        if _mislabelled(f):
            findings.note("JSON-RPC bodies under a wrong Content-Type", f.seq)
    if subscriptions:
        _unsolicited(ev, findings, *_listened(ev))
    return findings


@WIRE_FRAMING.judge(Wire.EXTENSION, requires=("S-WIRE-01", "S-WIRE-02", "S-WIRE-03", "S-EXT-MUST-30"))
@WIRE_FRAMING.judge(Wire.LEGACY, requires=("S-WIRE-01", "S-WIRE-02", "S-WIRE-03"))
def wire_framing(ev: Evidence) -> Verdict:
    # Where task notifications come through subscriptions/listen, one nobody subscribed to is unsolicited.
    subscriptions = ev.dialect.defines("subscriptions/listen")
    findings = _findings(ev, subscriptions=subscriptions)
    if findings.by_kind:
        return _failure(ev, findings, subscriptions=subscriptions)
    inbound = sum(1 for f in ev.wire_log if f.direction == "in")
    return passed(f"all {inbound} inbound frames were JSON-RPC messages answering this client", judged=inbound)


@WIRE_FRAMING.judge(Wire.NONE, requires=("S-WIRE-01", "S-WIRE-02", "S-WIRE-03"))
def framing_without_a_wire(ev: Evidence) -> Verdict:
    """Without a wire only what did arrive can be judged: bad frames fail, else nothing to say."""
    findings = _findings(ev, subscriptions=False)
    if findings.by_kind:
        return _failure(ev, findings, subscriptions=False)
    return need_wire(ev) or could_not_run(NO_TASKS_WIRE, blocked_by="tasks-wire-resolvable")


# The kinds are plural phrases; one of a kind reads in the singular.
_SINGULAR = {
    "oversize messages nobody asked for": "oversize message nobody asked for",
    "lines of output that are not JSON": "line of output that is not JSON",
    "bodies that are not JSON": "body that is not JSON",
    "duplicate responses to one request": "duplicate response to one request",
    STRAY: "response to an id never sent",
    "frames that are not JSON-RPC messages": "frame that is not a JSON-RPC message",
}


def _one(kind: str) -> str:
    return _SINGULAR.get(kind, kind)


# The rule each kind of finding breaks (stdio output and HTTP bodies alike carry only messages).
_RULE = {
    STRAY: "S-WIRE-02", "duplicate responses to one request": "S-WIRE-02",
    "JSON-RPC bodies under a wrong Content-Type": "S-WIRE-03", UNSOLICITED: "S-EXT-MUST-30",
}


def _failure(ev: Evidence, findings: Findings, *, subscriptions: bool) -> Verdict:
    more = {STRAY: ev.dropped_unmatched, UNSOLICITED: ev.dropped_notifications if subscriptions else 0}
    parts = []
    for kind, seqs in findings.by_kind.items():
        count = len(seqs) + more.get(kind, 0)
        shown = ", ".join(map(str, seqs[:SHOWN_PER_KIND]))
        parts.append(f"{count} {_one(kind) if count == 1 else kind} "
                     f"(frames {shown}{'…' if count > SHOWN_PER_KIND else ''})")
    return failed(
        "; ".join(parts) + " — every inbound frame must be a JSON-RPC message answering the client",
        broken=tuple(dict.fromkeys(_RULE.get(kind, "S-WIRE-01") for kind in findings.by_kind)),
        evidence=[s for seqs in findings.by_kind.values() for s in seqs[:10]],
        details={"problems": {k: len(v) for k, v in findings.by_kind.items()},
                 "expected": "only JSON-RPC messages answering this client", "actual": parts},
    )


GET_PLAIN_JSON = check(
    id="tasks-legacy-get-plain-json",
    area="framing",
    category="lifecycle",
    title="Over HTTP, tasks/get is answered with plain JSON, not an SSE stream",
    description=(
        "A tasks/get response should not be turned into an SSE stream where that can be avoided (a SHOULD NOT: "
        "an SSE answer warns). Every poll's response Content-Type is read. HTTP only."
    ),
    probes=(DeclaredCall, Poll),
    transports=("http",),
    needs="task",
)


def _came_as_sse(ev: Evidence, reply: Reply) -> bool:
    frame = ev.frame(reply.response_seq)
    if frame is None or frame.http is None:
        return False
    ctype = frame.http.header("content-type", response=True) or ""
    return frame.channel == "sse" or ctype.split(";")[0].strip().lower() == "text/event-stream"


@GET_PLAIN_JSON.judge(Wire.LEGACY, requires=("S-LEG-SHOULD-08",))
def get_plain_json(ev: Evidence) -> Verdict:
    gets = [g for g in ev.get(Poll).gets if g.answered]
    if not gets:
        return could_not_run(unmet("no tasks/get was answered",
                                   "name a tool that runs as a task with --tool-name, so that its task is read"))
    streamed = [g for g in gets if _came_as_sse(ev, g)]
    seqs = reply_seqs(*(streamed or gets))[:20]
    if streamed:
        return passed(f"tasks/get was answered on all {len(gets)} polls, as SSE (see the warning)", evidence=seqs,
                      warnings=[
            f"{len(streamed)} of {len(gets)} tasks/get responses came as an SSE stream (text/event-stream) rather "
            "than plain JSON; a tasks/get response should not be upgraded to SSE where it can be avoided "
            "(S-LEG-SHOULD-08)"])
    return passed(f"all {len(gets)} tasks/get responses were plain JSON", evidence=seqs)
