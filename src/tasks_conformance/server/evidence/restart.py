"""The record of the restart probe (`tasks-task-survives-restart`, profile durable): the tasks read
before the server was stopped, and the same reads over a new connection once it ran again.

Kept beside records.py, and registered in its RECORD_TYPES on import (the package imports it).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from tasks_conformance.server.evidence.records import RECORD_TYPES, ProbeRecord

if TYPE_CHECKING:
    from tasks_conformance.core.rpc.peer import Reply


@dataclass
class TaskReads:
    """One task read once: tasks/get, and on a wire with tasks/result (2025-11-25) that too."""

    get: Reply | None = None
    payload: Reply | None = None  # tasks/result; None where the wire has no such method

    def seqs(self) -> list[int]:
        return [s for r in (self.get, self.payload) if r is not None for s in r.seqs()]


@dataclass
class TaskRestart(ProbeRecord):
    """Two tasks read, the server stopped and started again, both read again on a new connection."""

    probe: ClassVar[str] = "task-restart"
    # Why the tool cannot restart the server (it does not start it): the check is not applicable.
    not_applicable: str | None = None
    ended_id: str | None = None  # the probe task, followed to its end by the poll
    working_id: str | None = None  # a second task of the same call, meant to be working at the stop
    working_call: Reply | None = None  # the tools/call that created it
    before_ended: TaskReads | None = None
    before_working: TaskReads | None = None
    # What went wrong stopping the server, starting it again or connecting to it again (the run's
    # environment, not the claim): the check could not run.
    restart_problem: str | None = None
    stopped_ms: int = 0  # how long the server took to exit after SIGTERM
    after_ended: TaskReads | None = None
    after_working: TaskReads | None = None


RECORD_TYPES[TaskRestart.probe] = TaskRestart
