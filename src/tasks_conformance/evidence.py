"""Evidence: what the probes saw, as plain data. Checks are pure functions of it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tasks_conformance.rpc.peer import Reply
from tasks_conformance.session.base import Intent
from tasks_conformance.session.connect import Discovered
from tasks_conformance.wirelog import Frame, WireLog


@dataclass
class ProbeRecord:
    name: str
    ran: bool = False
    not_run: str | None = None  # why the probe did not run (a precondition fell)
    blocked_by: str | None = None  # the check whose finding explains not_run, when there is one
    harness_problem: str | None = None  # our own fault (e.g. an override the transport cannot carry)
    replies: dict[str, Reply] = field(default_factory=dict)
    data: dict[str, Any] = field(default_factory=dict)
    elapsed_ms: int = 0

    def reply(self, label: str) -> Reply | None:
        return self.replies.get(label)


@dataclass
class ToolChoice:
    name: str | None
    reason: str  # why this tool (or why none)
    arguments: dict[str, Any] = field(default_factory=dict)


@dataclass
class Evidence:
    wire_log: WireLog
    discovered: Discovered
    transport: str
    expect_wire: str = "any"
    input_responses: dict[str, Any] | None = None
    tool: ToolChoice | None = None
    intents: list[Intent] = field(default_factory=list)
    probes: dict[str, ProbeRecord] = field(default_factory=dict)
    notifications: list[Frame] = field(default_factory=list)
    server_requests: list[Frame] = field(default_factory=list)
    # Inbound frames that answered nothing we asked (stray lines, unknown ids, duplicates), and
    # how many more of each kind the peer counted but did not keep (floods are bounded).
    unmatched: list[Frame] = field(default_factory=list)
    dropped_unmatched: int = 0
    dropped_notifications: int = 0
    poll_timeout_ms: int = 30_000

    @property
    def wire(self) -> str:
        return self.discovered.wire

    def probe(self, name: str) -> ProbeRecord:
        return self.probes.get(name) or ProbeRecord(name=name, not_run="the probe was not planned")

    @property
    def created_task_id(self) -> str | None:
        tid = self.probe("declared-call").data.get("task_id")
        return tid if isinstance(tid, str) else None

    def require_task_id(self) -> str:
        """The created task's id, for probes declared needs_task (the runner checked it exists)."""
        tid = self.created_task_id
        assert tid is not None, "a needs_task probe ran without a task"
        return tid

    def frame(self, seq: int | None) -> Frame | None:
        return self.wire_log.get(seq) if seq is not None else None
