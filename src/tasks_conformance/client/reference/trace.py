"""What one reference-client call did, step by step, for `tasks-conformance call` to say: the era,
whether a task was created (or why the call stayed a plain one), each status seen, every input
request and the answer sent, a cancel and why, and why the call stopped. The flows fill it; the
harness outcome line never carries it."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Literal

from tasks_conformance.core.text import one_line

JSON = dict[str, Any]

# How an input request was answered: the user's answer under its key, the "*" answer, the first
# answer shaped for its method; declined (no answer fitted an elicitation); or not answered at all
# (no answer fitted a request that cannot be declined: the task was cancelled instead).
AnsweredBy = Literal["key", "*", "shape", "declined", "unanswered"]
# Why the call stopped.
StopReason = Literal["terminal", "result", "plain", "timeout", "gone", "transport", "invalid", "unanswerable",
                     "abandoned", "error", "cancelled"]
STOPS: dict[str, str] = {
    "terminal": "the task reached a terminal status",
    "result": "tasks/result gave the task's outcome",
    "plain": "the call's own reply was its outcome (no task)",
    "timeout": "--timeout ran out",
    "gone": "the server no longer knows the task",
    "transport": "the exchange with the server failed",
    "invalid": "the server's reply was not a valid answer",
    "unanswerable": "an input request had no answer this client could send",
    "abandoned": "the client left the task",
    "error": "the server answered the call with a JSON-RPC error",
    "cancelled": "the call was cancelled while in flight, as asked",
}
MAX_SHOWN = 200  # statuses and inputs kept, at most (the flows bound their loops more loosely)


@dataclass(frozen=True)
class InputAnswer:
    key: str | None  # None: a 2025-11-25 elicitation, which has no key
    method: str | None
    message: str | None  # what the request asked, when it says
    answer: JSON | None  # what was sent (None: nothing was)
    answered_by: AnsweredBy

    def to_json(self) -> JSON:
        return {"key": self.key, "method": self.method, "message": self.message, "answer": self.answer,
                "answeredBy": self.answered_by}


@dataclass
class CallTrace:
    era: str
    protocol_version: str
    task_id: str | None = None
    plain_reason: str | None = None  # why no task was created, when none was
    statuses: list[str] = field(default_factory=list)
    polls: int = 0
    inputs: list[InputAnswer] = field(default_factory=list)
    cancel_reason: str | None = None  # why tasks/cancel was sent (None: it was not)
    cancel_reply: str | None = None  # what the server answered it, or why it was not sent
    stop: StopReason | None = None
    failure: str | None = None  # a transport failure, in words

    def saw(self, status: str) -> None:
        if len(self.statuses) < MAX_SHOWN:
            self.statuses.append(status)

    def asked(self, key: str | None, request: Any, answer: JSON | None, by: AnsweredBy) -> None:
        if len(self.inputs) >= MAX_SHOWN:
            return
        method = request.get("method") if isinstance(request, dict) else None
        params = request.get("params") if isinstance(request, dict) else None
        message = params.get("message") if isinstance(params, dict) else None
        self.inputs.append(InputAnswer(key, method if isinstance(method, str) else None,
                                       one_line(message, 300) if isinstance(message, str) else None, answer, by))

    def stopped(self, why: StopReason) -> None:
        if self.stop is None:  # the first reason is the one that stopped it
            self.stop = why

    def to_json(self) -> JSON:
        return {
            "era": self.era, "protocolVersion": self.protocol_version,
            "taskCreated": self.task_id is not None, "taskId": self.task_id, "plainCallReason": self.plain_reason,
            "statuses": list(self.statuses), "polls": self.polls,
            "inputs": [i.to_json() for i in self.inputs],
            "cancel": None if self.cancel_reason is None and self.cancel_reply is None
            else {"reason": self.cancel_reason, "sent": self.cancel_reason is not None, "reply": self.cancel_reply},
            "stopReason": self.stop, "failure": self.failure,
        }

    def lines(self) -> list[str]:
        """The trace in words, one line each, for the terminal."""
        out = [f"era: {self.era} ({self.protocol_version})"]
        if self.task_id is not None:
            out.append(f"task: {one_line(self.task_id, 120)} created")
        else:
            out.append("task: none created" + (f": {self.plain_reason}" if self.plain_reason else ""))
        if self.statuses:
            out.append(f"statuses: {' -> '.join(_runs(self.statuses))} ({self.polls} tasks/get)")
        for i in self.inputs:
            out.append("input: " + _input_line(i))
        if self.cancel_reason is not None:
            out.append(f"cancel: tasks/cancel sent ({self.cancel_reason})"
                       + (f"; the server answered {self.cancel_reply}" if self.cancel_reply else ""))
        elif self.cancel_reply is not None:
            out.append(f"cancel: {self.cancel_reply}")
        if self.stop is not None:
            out.append(f"stopped: {STOPS[self.stop]}" + (f": {self.failure}" if self.failure else ""))
        return out


def _runs(statuses: list[str]) -> list[str]:
    """Repeats folded: working x3."""
    out: list[str] = []
    count = 0
    for n, status in enumerate(statuses):
        count += 1
        if n + 1 == len(statuses) or statuses[n + 1] != status:
            out.append(one_line(status, 40) + (f" x{count}" if count > 1 else ""))
            count = 0
    return out


def _input_line(i: InputAnswer) -> str:
    asked = f"{i.method or 'a request'}" + (f" {i.key!r}" if i.key is not None else "")
    if i.message:
        asked += f" ({one_line(i.message, 120)})"
    sent = one_line(json.dumps(i.answer, ensure_ascii=False), 200) if i.answer is not None else None
    how = {"key": "the answer given for its key", "*": 'the "*" answer',
           "shape": f"the first answer shaped for {i.method}", "declined": "declined: no answer given fits it",
           "unanswered": "not answered: no answer given fits it"}
    return f"{asked}: {how[i.answered_by]}" + (f", sent {sent}" if sent and i.answered_by != "declined" else "")
