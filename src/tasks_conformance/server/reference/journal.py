"""``--task-store FILE``: a durable task store for the reference server, as a journal.

Every confirmed state of a task (its creation, each status change, its result) is appended to
FILE as one JSON line and fsync'd before the server answers with it, so that a state a client
has seen survives the process. At start the journal is replayed: the last line of each task
wins, a torn last line (the process died mid-write) is ignored, tasks whose TTL has passed are
dropped, and the file is rewritten with one line per task (written aside, fsync'd, renamed), so
it stays small, unless another live process of the server appends to it too (a lock says so).
A task that was still working when the process ended cannot go on (its work died with it): it
comes back failed, saying so.

The store outlives the legacy session that created a task: such a task, replayed (or left by a
session that ended), may be read by any session, since the session that owned it is gone (a
bearer-token server still binds it to its token, kept as a digest, never the token itself).
"""

from __future__ import annotations

import json
import os
import time
from typing import IO, Any

from tasks_conformance.server.reference.protocol import INTERNAL_ERROR, JSON, TERMINAL_STATUSES
from tasks_conformance.server.reference.tasks import TaskRecord, journal_entry

#: Bounds on what a replay reads: nothing in the server reads without a limit.
MAX_JOURNAL_BYTES = 256 * 1024 * 1024
MAX_LINE_BYTES = 8 * 1024 * 1024
LOST_WORK = "The server restarted while the task ran; its work was lost"


def restore(entry: JSON) -> TaskRecord | None:
    """The task a journal line describes, ended if it was still running; None when the line is
    not a task or its TTL has passed."""
    task_id, era = entry.get("taskId"), entry.get("era")
    if not isinstance(task_id, str) or era not in ("legacy", "extension") or entry.get("gone"):
        return None
    ttl = entry.get("ttlMs")
    created = entry.get("createdAt")
    if not isinstance(created, (int, float)) or (isinstance(ttl, int) and created + ttl / 1000.0 <= time.time()):
        return None
    record = TaskRecord(era=era, ttl_ms=ttl if isinstance(ttl, int) else None,
                        poll_interval_ms=entry.get("pollIntervalMs"), task_id=task_id)
    record.adopted = True
    record.created_at = float(created)
    updated = entry.get("lastUpdatedAt")
    record.last_updated_at = float(updated) if isinstance(updated, (int, float)) else record.created_at
    principal = entry.get("principal")
    record.principal = principal if isinstance(principal, str) else None
    record.status = str(entry.get("status"))
    message = entry.get("statusMessage")
    record.status_message = message if isinstance(message, str) else None
    record.result = entry.get("result") if isinstance(entry.get("result"), dict) else None
    record.error = entry.get("error") if isinstance(entry.get("error"), dict) else None
    if record.status not in TERMINAL_STATUSES:
        record.status, record.status_message = "failed", LOST_WORK
        record.error = {"code": INTERNAL_ERROR, "message": LOST_WORK}
        record.last_updated_at = max(time.time(), record.last_updated_at)
    return record


class TaskJournal:
    """The append-only journal at ``path`` (see the module's doc)."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._fh: IO[bytes] | None = None

    def replay(self) -> list[JSON]:
        """The last line of each task, in order of first appearance; unreadable lines skipped."""
        try:
            with open(self.path, "rb") as fh:
                data = fh.read(MAX_JOURNAL_BYTES)
        except FileNotFoundError:
            return []
        latest: dict[str, JSON] = {}
        for line in data.split(b"\n"):
            # A torn last line (no newline yet) is not valid JSON: skipped like any other bad line.
            if not line.strip() or len(line) > MAX_LINE_BYTES:
                continue
            try:
                entry: Any = json.loads(line)
            except ValueError:
                continue
            if isinstance(entry, dict) and isinstance(entry.get("taskId"), str):
                latest[entry["taskId"]] = entry
        return list(latest.values())

    def open(self, records: list[TaskRecord]) -> None:
        """Append from here on; first rewrite the journal with `records` (atomically), unless
        another live process appends to it too (a second connection's server, over stdio): its
        lines would go to the file the rename replaced."""
        self._fh = open(self.path, "ab")  # noqa: SIM115 (open until close())
        if not _sole_writer(self._fh):
            return
        aside = f"{self.path}.new"
        with open(aside, "wb") as fh:
            fh.writelines(_line(journal_entry(r)) for r in records)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(aside, self.path)
        self._fh.close()
        self._fh = open(self.path, "ab")  # noqa: SIM115
        _sole_writer(self._fh)  # held until the process ends

    def append(self, entry: JSON) -> None:
        """One line, on disk (fsync'd) before the caller goes on."""
        if self._fh is None:
            return
        self._fh.write(_line(entry))
        self._fh.flush()
        os.fsync(self._fh.fileno())

    def close(self) -> None:
        if self._fh is not None:
            self._fh.close()
            self._fh = None


def _sole_writer(fh: IO[bytes]) -> bool:
    """Take the journal's lock (released when the process ends); False while another holds it, or
    where there are no such locks (then the journal is never rewritten)."""
    try:
        import fcntl
    except ImportError:
        return False
    try:
        fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return False
    return True


def _line(entry: JSON) -> bytes:
    return (json.dumps(entry, separators=(",", ":"), ensure_ascii=False) + "\n").encode("utf-8")
