"""What a probe gets: the session, the run's settings, what discovery found, and the records
it writes into."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TypeVar

from tasks_conformance.config import RunConfig
from tasks_conformance.evidence import DeclaredCall, Discovery, ProbeRecord, ToolChoice
from tasks_conformance.session.base import Session
from tasks_conformance.wirelog import WireLog
from tasks_conformance.wires import WireDialect

R = TypeVar("R", bound=ProbeRecord)


@dataclass
class ProbeContext:
    session: Session
    config: RunConfig
    discovery: Discovery
    dialect: WireDialect
    wire_log: WireLog
    tool: ToolChoice | None = None
    records: dict[str, ProbeRecord] = field(default_factory=dict)
    roles: dict[str, ToolChoice] = field(default_factory=dict)  # the other probe roles (roles.py)

    def record(self, kind: type[R]) -> R:
        """The probe's record, created on first use."""
        rec = self.records.get(kind.probe)
        if not isinstance(rec, kind):
            rec = kind()
            self.records[kind.probe] = rec
        return rec

    @property
    def created_task_id(self) -> str | None:
        rec = self.records.get(DeclaredCall.probe)
        return rec.task_id if isinstance(rec, DeclaredCall) else None

    def require_task_id(self) -> str:
        """The created task's id, for probes declared needs_task (the runner checked it exists)."""
        tid = self.created_task_id
        assert tid is not None, "a needs_task probe ran without a task"
        return tid

    def tool_params(self) -> dict[str, object]:
        tool = self.tool
        assert tool is not None and tool.name is not None
        return {"name": tool.name, "arguments": dict(tool.arguments)}

    def role_params(self, role: str) -> dict[str, object]:
        """tools/call params for a probe role's tool (the runner checked the role has one)."""
        choice = self.roles.get(role)
        assert choice is not None and choice.name is not None, f"a {role} probe ran without its tool"
        return {"name": choice.name, "arguments": dict(choice.arguments)}
