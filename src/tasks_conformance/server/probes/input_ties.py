"""Which server->client input requests (elicitation, sampling) belong to a task, read from the wire
log once the task has been followed (S-LEG-MUST-13).

A request counts as the task's when its related-task _meta names the task, when it came on the
stream of a tasks/result for the task (HTTP says which request a stream answers), or when it
arrived while the task was live on no stream that names a request (stdio) and no tools/call of
ours was outstanding: such a request can only have been made for a task, so a missing _meta is
evidence, not a reason to look away. One that arrived while a tools/call of ours might have asked
it synchronously is kept as UNTOLD (the task may have asked; policy P-42), and one on another
request's stream is not the task's."""

from __future__ import annotations

from typing import Any

from tasks_conformance.core.protocol import META_RELATED_TASK, get_path
from tasks_conformance.core.wirelog import Frame, WireLog
from tasks_conformance.server.evidence import InputRequestSeen, InputTie

INPUT_METHODS = ("elicitation/create", "sampling/createMessage")
# The most requests kept per task: a server flooding requests must not grow the record.
MAX_TIED_REQUESTS = 50


def _calls_outstanding(frames: list[Frame]) -> list[tuple[int, int | None]]:
    """(sent, answered) seqs of every tools/call we sent that may have run synchronously (answered
    None while open); a call answered with a CreateTaskResult is left out."""
    sent: dict[Any, int] = {}
    spans: list[tuple[int, int | None]] = []
    for f in frames:
        msg = f.json()
        if not isinstance(msg, dict):
            continue
        if f.direction == "out" and msg.get("method") == "tools/call" and "id" in msg:
            key = repr(msg["id"])
            sent[key] = f.seq
        elif f.direction == "in" and "method" not in msg and repr(msg.get("id")) in sent:
            began = sent.pop(repr(msg.get("id")))
            # A call answered with a CreateTaskResult made a task and asked nothing itself.
            if not isinstance(get_path(msg, "result", "task"), dict):
                spans.append((began, f.seq))
    spans.extend((seq, None) for seq in sent.values())
    return spans


def _tie(log: WireLog, frame: Frame, task_id: str, spans: list[tuple[int, int | None]]) -> InputTie | None:
    named = get_path(frame.json(), "params", "_meta", META_RELATED_TASK, "taskId")
    if named == task_id:
        return InputTie.META
    if named is not None:
        return None  # made for another task: judged there, if it is ours
    if frame.reply_to is not None:
        asked = log.get(frame.reply_to)
        req = asked.json() if asked is not None else None
        on_result = get_path(req, "method") == "tasks/result" and get_path(req, "params", "taskId") == task_id
        return InputTie.STREAM if on_result else None
    during_call = any(sent < frame.seq and (answered is None or answered > frame.seq) for sent, answered in spans)
    return InputTie.UNTOLD if during_call else InputTie.LIVE


def tied_input_requests(log: WireLog, server_requests: list[Frame], task_id: str,
                        since: int) -> list[InputRequestSeen]:
    """The input requests that arrived after seq `since` (the task's creation) until now (the task
    has been followed to its end) and are tied to the task, in arrival order."""
    candidates = [f for f in server_requests if f.seq > since and get_path(f.json(), "method") in INPUT_METHODS]
    if not candidates:
        return []
    spans = _calls_outstanding(log.frames())
    out: list[InputRequestSeen] = []
    for f in candidates[:MAX_TIED_REQUESTS]:
        tie = _tie(log, f, task_id, spans)
        if tie is not None:
            out.append(InputRequestSeen(f.seq, str(get_path(f.json(), "method")), tie, tie is InputTie.META))
    return out
