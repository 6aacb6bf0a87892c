"""Task records and the per-server task store.

A ``TaskRecord`` holds the state of one task on either era; the server renders it into the
wire shape of the era that created it. Terminal states never change (a late result after a
cancel is dropped). The store is bounded and purges tasks whose TTL has elapsed.
"""

from __future__ import annotations

import asyncio
import secrets
import time
from collections.abc import Callable
from typing import Any, Protocol

from tasks_conformance.core.eras import Era
from tasks_conformance.server.reference.protocol import INTERNAL_ERROR, JSON, TERMINAL_STATUSES, RpcError


class TaskJournalLike(Protocol):
    """What the store writes to (journal.TaskJournal), so that this module does not import it."""

    def append(self, entry: JSON) -> None: ...
    def close(self) -> None: ...


def journal_entry(record: TaskRecord) -> JSON:
    """One task's confirmed state, as a journal line holds it."""
    return {
        "taskId": record.task_id, "era": record.era, "status": record.status,
        "statusMessage": record.status_message, "createdAt": record.created_at,
        "lastUpdatedAt": record.last_updated_at, "ttlMs": record.ttl_ms,
        "pollIntervalMs": record.poll_interval_ms, "principal": record.principal,
        "result": record.result, "error": record.error,
    }


class PendingInput:
    """One outstanding input request of a task (key -> ElicitRequest), answered through ``future``."""

    def __init__(self, key: str, request: JSON, future: asyncio.Future[JSON]) -> None:
        self.key = key
        self.request = request
        self.future = future
        self.asking = False  # legacy: currently sent to the client on some tasks/result stream


class TaskRecord:
    """The state of one task, whichever era created it; every change wakes the task's waiters."""

    def __init__(
        self,
        *,
        era: Era,
        ttl_ms: int | None,
        poll_interval_ms: int | None,
        owner: str | None = None,
        client_caps: JSON | None = None,
        task_id: str | None = None,
    ) -> None:
        now = time.time()
        self.task_id = task_id or secrets.token_urlsafe(18)
        self.era: Era = era
        self.owner = owner  # legacy: the session that created it
        self.principal: str | None = None  # the credential that created it (when the server checks any)
        self.client_caps: JSON = client_caps or {}
        self.status = "working"
        self.status_message: str | None = None
        self.created_at = now
        self.last_updated_at = now
        self.ttl_ms = ttl_ms
        self.poll_interval_ms = poll_interval_ms
        self.result: JSON | None = None  # the CallToolResult (without resultType)
        self.error: JSON | None = None  # the JSON-RPC error object
        self.pending: dict[str, PendingInput] = {}
        self.used_keys: set[str] = set()
        self.given_answers: dict[str, JSON] = {}  # input answered before the task was created
        self.runner: asyncio.Task[None] | None = None
        self.version = 0
        self.gone = False  # purged (TTL elapsed) or its session ended
        # Replayed from the task store, or left by its legacy session (--task-store): any session may read it.
        self.adopted = False
        self._changed = asyncio.Event()
        self.on_change: Callable[[], None] | None = None
        # Legacy: the progressToken of the creating tools/call, and the work done so far. Kept
        # apart from the status so that progress never moves lastUpdatedAt.
        self.progress_token: str | int | None = None
        self.progress: tuple[int, int] | None = None  # (done, total)
        self._progressed = asyncio.Event()

    # -- state ---------------------------------------------------------------------------
    @property
    def terminal(self) -> bool:
        return self.status in TERMINAL_STATUSES

    def expires_at(self) -> float | None:
        return None if self.ttl_ms is None else self.created_at + self.ttl_ms / 1000.0

    def _touch(self) -> None:
        self.last_updated_at = max(time.time(), self.last_updated_at)
        self.version += 1
        old, self._changed = self._changed, asyncio.Event()
        old.set()
        if self.on_change is not None:
            self.on_change()

    def discard(self) -> None:
        """The store dropped this record: stop the work and wake every waiter."""
        self.gone = True
        self.release()
        self._touch()

    def set_status(self, status: str, message: str | None = None) -> bool:
        """Move to ``status``; refused (False) once terminal."""
        if self.terminal:
            return False
        self.status = status
        self.status_message = message
        self._touch()
        return True

    def complete(self, result: JSON, *, status: str = "completed", message: str | None = None) -> bool:
        if self.terminal:
            return False
        self.result = result
        return self.set_status(status, message)

    def fail(self, error: JSON, message: str) -> bool:
        if self.terminal:
            return False
        self.error = error
        return self.set_status("failed", message)

    def cancel(self, message: str = "Cancelled by the client") -> bool:
        if not self.set_status("cancelled", message):
            return False
        self.release()
        return True

    def release(self) -> None:
        """Stop the work and drop outstanding input requests."""
        for pending in self.pending.values():
            if not pending.future.done():
                pending.future.cancel()
        self.pending.clear()
        runner = self.runner
        if runner is not None and not runner.done() and runner is not asyncio.current_task():
            runner.cancel()

    def answer(self, key: str, value: JSON) -> bool:
        """Deliver the client's answer to an outstanding input request; False if not outstanding."""
        pending = self.pending.get(key)
        if pending is None or pending.future.done():
            return False
        del self.pending[key]
        pending.future.set_result(value)
        if self.status == "input_required" and not self.pending:
            self.set_status("working")
        return True

    def outstanding_requests(self) -> JSON:
        return {key: p.request for key, p in self.pending.items()}

    def changed_event(self) -> asyncio.Event:
        return self._changed

    def report_progress(self, done: int, total: int) -> None:
        """Record progress of a task that has a progressToken; nothing once it is terminal."""
        if self.progress_token is None or self.terminal:
            return
        self.progress = (done, total)
        old, self._progressed = self._progressed, asyncio.Event()
        old.set()

    def progressed_event(self) -> asyncio.Event:
        return self._progressed


class TaskStore:
    """All tasks of one server instance, bounded in number and purged after their TTL."""

    def __init__(self, max_tasks: int) -> None:
        self._max = max_tasks
        self._tasks: dict[str, TaskRecord] = {}
        self._changed = asyncio.Event()
        # --task-store: what every confirmed state is written to (journal.py); None keeps tasks in memory.
        self.journal: TaskJournalLike | None = None

    def restore(self, records: list[TaskRecord]) -> None:
        """Tasks replayed from the task store, before the server serves anything."""
        for record in records[-self._max:]:
            self._watch(record)
            self._tasks[record.task_id] = record

    def _watch(self, record: TaskRecord) -> None:
        journal = self.journal

        def changed() -> None:
            if journal is not None:
                # Written before the change is answered: a state a client saw survives the process.
                journal.append({"taskId": record.task_id, "gone": True} if record.gone else journal_entry(record))
            self.notify()

        record.on_change = changed

    def notify(self) -> None:
        old, self._changed = self._changed, asyncio.Event()
        old.set()

    def changed_event(self) -> asyncio.Event:
        return self._changed

    def add(self, record: TaskRecord) -> None:
        self.purge_expired()
        if len(self._tasks) >= self._max:
            for old in [t for t in self._tasks.values() if t.terminal]:
                del self._tasks[old.task_id]
                old.discard()
                if len(self._tasks) < self._max:
                    break
        if len(self._tasks) >= self._max:
            raise RpcError(INTERNAL_ERROR, "Too many tasks; try again later")
        self._watch(record)
        self._tasks[record.task_id] = record
        if self.journal is not None:  # durable before the CreateTaskResult goes out
            self.journal.append(journal_entry(record))
        self.notify()

    def get(self, task_id: Any, era: Era, owner: str | None = None) -> TaskRecord | None:
        self.purge_expired()
        if not isinstance(task_id, str):
            return None
        record = self._tasks.get(task_id)
        if record is None or record.era != era:
            return None
        if era == "legacy" and record.owner != owner and not record.adopted:
            return None
        return record

    def list(self, era: Era, owner: str | None = None) -> list[TaskRecord]:
        self.purge_expired()
        return [t for t in self._tasks.values() if t.era == era and (era != "legacy" or t.owner == owner or t.adopted)]

    def running_count(self) -> int:
        return sum(1 for t in self._tasks.values() if not t.terminal)

    def purge_expired(self) -> None:
        now = time.time()
        expired = [t for t in self._tasks.values() if (exp := t.expires_at()) is not None and exp <= now]
        for record in expired:
            del self._tasks[record.task_id]
            record.discard()

    def drop_owner(self, owner: str) -> None:
        """A legacy session ended: its tasks go with it, unless the store is durable (they outlive it)."""
        for record in [t for t in self._tasks.values() if t.owner == owner]:
            if self.journal is not None:
                record.adopted = True
                continue
            del self._tasks[record.task_id]
            record.discard()

    def close(self) -> None:
        for record in self._tasks.values():
            record.on_change = None  # the work stops with the server: that is no state to record
            record.release()
        self._tasks.clear()
        if self.journal is not None:
            self.journal.close()
