"""Small shape helpers shared by the checks: timestamps, integers, task frames, error codes."""

from __future__ import annotations

import re
from datetime import datetime
from typing import TYPE_CHECKING, Any

from tasks_conformance.protocol import DRAFT_CODES, RENUMBER_HINT, TASK_STATUSES

if TYPE_CHECKING:
    from tasks_conformance.evidence import Evidence
    from tasks_conformance.rpc.peer import Reply

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


def task_frames(ev: Evidence) -> list[tuple[str, int, dict[str, Any]]]:
    """Every task object the run saw: (where, frame seq, task fields)."""
    from tasks_conformance.probes.traffic import task_fields

    out: list[tuple[str, int, dict[str, Any]]] = []
    create = ev.probe("declared-call").reply("call")
    if create is not None and create.ok and ev.probe("declared-call").data.get("task_id"):
        out.append(("CreateTaskResult", create.response_seq or create.request_seq, task_fields(create.result)))
    poll = ev.probe("poll")
    for label, reply in poll.replies.items():
        if label.startswith("get#") and reply.ok:
            out.append((f"tasks/get {label[4:]}", reply.response_seq or 0, reply.result))
    cancel = ev.probe("cancel")
    after = cancel.reply("after")
    if after is not None and after.ok:
        out.append(("tasks/get after cancel", after.response_seq or 0, after.result))
    if ev.wire == "legacy":
        c = cancel.reply("cancel")
        if c is not None and c.ok:
            out.append(("tasks/cancel result", c.response_seq or 0, c.result))
        created = cancel.reply("create")
        if created is not None and created.ok:
            out.append(("second CreateTaskResult", created.response_seq or 0, task_fields(created.result)))
    for f in ev.notifications:
        msg = f.json()
        if isinstance(msg, dict) and msg.get("method") in ("notifications/tasks", "notifications/tasks/status"):
            params = msg.get("params")
            if isinstance(params, dict):
                out.append((str(msg["method"]), f.seq, params))
    return out


def reply_seqs(*replies: Reply | None) -> list[int]:
    out: list[int] = []
    for r in replies:
        if r is not None:
            out.extend(r.seqs())
    return out
