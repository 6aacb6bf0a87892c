"""Small shape helpers shared by the checks: timestamps, integers, task frames, error codes."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from tasks_conformance.core.protocol import DRAFT_CODES, RENUMBER_HINT, TASK_STATUSES
from tasks_conformance.core.wires import task_object
from tasks_conformance.server.evidence import Cancel, DeclaredCall, Evidence, Poll

if TYPE_CHECKING:
    from tasks_conformance.core.rpc.peer import Reply

TASK_NOTIFICATIONS = ("notifications/tasks", "notifications/tasks/status")
TASK_FIELDS = ("taskId", "status", "createdAt", "lastUpdatedAt")

_RFC3339 = re.compile(
    r"^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$"
)


def timestamp_problem(value: Any) -> tuple[str, str] | None:
    """None when RFC 3339; ("warn", why) for other ISO 8601 forms; ("fail", why) otherwise."""
    if not isinstance(value, str):
        return "fail", f"is {type(value).__name__}, not a string"
    if _RFC3339.match(value):
        try:
            datetime.fromisoformat(value.replace("z", "Z").replace("t", "T").replace("Z", "+00:00"))
            return None
        except ValueError:
            return "fail", f"{value[:40]!r} is not a real date-time"
    try:
        datetime.fromisoformat(value)
        return "warn", f"{value[:40]!r} is ISO 8601 but not RFC 3339 (no offset or other form)"
    except ValueError:
        return "fail", f"{value[:40]!r} is not an ISO 8601 date-time"


def instant(value: Any) -> datetime | None:
    """An RFC 3339 timestamp as an aware datetime, or None when it is not one (a naive ISO 8601
    form cannot be ordered against an aware one)."""
    if not isinstance(value, str) or not _RFC3339.match(value):
        return None
    try:
        return datetime.fromisoformat(value.replace("z", "Z").replace("t", "T").replace("Z", "+00:00"))
    except ValueError:
        return None


def is_int(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    return isinstance(value, int)


def describe_value(value: Any) -> str:
    if isinstance(value, str):
        return f"the string {value[:30]!r}"
    if isinstance(value, bool):
        return f"the boolean {str(value).lower()}"
    if isinstance(value, float):
        return f"the fractional number {value!r}"
    if value is None:
        return "null"
    return f"{type(value).__name__} {str(value)[:30]}"


def status_problem(task: dict[str, Any]) -> str | None:
    status = task.get("status")
    if not isinstance(status, str) or status not in TASK_STATUSES:
        return f"status {status!r} is not one of {', '.join(TASK_STATUSES)}"
    return None


def draft_code_hint(code: int | None) -> str | None:
    if code in DRAFT_CODES:
        return f"{code} is the pre-final draft number of {DRAFT_CODES[code]} ({RENUMBER_HINT})"
    return None


@dataclass(frozen=True)
class TaskFrame:
    """A task object the run saw: where it was, in which frame, with which fields."""

    where: str
    seq: int
    task: dict[str, Any]


def task_frames(ev: Evidence) -> list[TaskFrame]:
    """Every task object in the records of the declared-call, poll and cancel probes and in the
    task notifications: a check that reads them declares those probes."""
    out: list[TaskFrame] = []
    created = ev.get(DeclaredCall)
    if created.call is not None and created.call.ok and created.task_id:
        out.append(TaskFrame("CreateTaskResult", created.call.response_seq or created.call.request_seq,
                             created.created.fields))
    for n, reply in enumerate(ev.get(Poll).gets, start=1):
        if reply.ok:
            out.append(TaskFrame(f"tasks/get {n}", reply.response_seq or 0, reply.result))
    cancel = ev.get(Cancel)
    if cancel.after is not None and cancel.after.ok:
        out.append(TaskFrame("tasks/get after cancel", cancel.after.response_seq or 0, cancel.after.result))
    if cancel.cancel is not None and cancel.cancel.ok:
        cancelled = ev.dialect.cancelled_task(cancel.cancel.result)
        if cancelled is not None:
            out.append(TaskFrame("tasks/cancel result", cancel.cancel.response_seq or 0, cancelled))
    # The task the cancel probe created to cancel, where it could not cancel the ended probe task.
    if cancel.create is not None and cancel.create.ok:
        out.append(TaskFrame("second CreateTaskResult", cancel.create.response_seq or 0,
                             task_object(cancel.create.result)))
    for f in ev.notifications:
        msg = f.json()
        if isinstance(msg, dict) and msg.get("method") in TASK_NOTIFICATIONS:
            params = msg.get("params")
            if isinstance(params, dict):
                out.append(TaskFrame(str(msg["method"]), f.seq, params))
    return out


def reply_seqs(*replies: Reply | None) -> list[int]:
    out: list[int] = []
    for r in replies:
        if r is not None:
            out.extend(r.seqs())
    return out


def result_of(ev: Evidence, reply: Reply | None) -> Any:
    """The `result` member of a reply, read from its frame as it crossed the wire."""
    msg = ev.frame_json(reply.response_seq) if reply is not None else None
    return msg.get("result") if isinstance(msg, dict) else None


def missing_task_fields(task: dict[str, Any]) -> list[str]:
    return [k for k in TASK_FIELDS if k not in task]
