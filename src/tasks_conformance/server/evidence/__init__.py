"""Evidence: what the probes saw, as plain typed data. Checks are pure functions of it."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, TypeVar

from tasks_conformance.core.causes import Reason, harness
from tasks_conformance.core.wires import Wire, WireDialect
from tasks_conformance.server.evidence.discovery import Discovery
from tasks_conformance.server.evidence.records import (
    RECORD_TYPES,
    Base64Name,
    BaseHttp,
    BentEnvelope,
    Cancel,
    DeclaredCall,
    Durability,
    FaultTask,
    HttpOutcome,
    InputRequestSeen,
    InputTask,
    InputTie,
    Intent,
    InvalidId,
    LegacyDeclaresExtension,
    ListBadCursor,
    Listen,
    NameRouting,
    OtherPrincipal,
    Poll,
    ProbeRecord,
    RelatedMetaOverride,
    RemovedMethods,
    RequiredUndeclared,
    ResultWhileRunning,
    RoleTask,
    StaleInput,
    StopReason,
    SyncWithTask,
    TaskIds,
    TaskListing,
    TaskProgress,
    TerminalRereads,
    ToolErrorTask,
    UndeclaredCall,
    UndeclaredInput,
    UndeclaredTasks,
    UnknownIdAnswer,
    Update,
)
from tasks_conformance.server.evidence.restart import TaskReads, TaskRestart
from tasks_conformance.server.evidence.server_gone import GoneHow, ServerGone

if TYPE_CHECKING:
    from tasks_conformance.core.wirelog import Frame, WireLog

R = TypeVar("R", bound=ProbeRecord)


class UndeclaredProbe(LookupError):
    """A check read a probe record it did not declare: its verdict would depend on which other
    checks happened to be selected. A bug of ours, reported as such."""


@dataclass(frozen=True)
class ToolChoice:
    name: str | None
    reason: str  # why this tool (or why none)
    arguments: dict[str, Any] = field(default_factory=dict)
    # How the tool got its role: "flag" (named on the command line), "inferred" (from tool
    # metadata), "default" (another role's tool), "none" (no tool).
    source: str = "inferred"


@dataclass(frozen=True)
class Evidence:
    wire_log: WireLog
    discovery: Discovery
    transport: str
    expect_wire: str = "any"
    input_responses: dict[str, Any] | None = None
    tool: ToolChoice | None = None
    intents: tuple[Intent, ...] = ()
    records: dict[str, ProbeRecord] = field(default_factory=dict)
    notifications: tuple[Frame, ...] = ()
    server_requests: tuple[Frame, ...] = ()
    # Inbound frames that answered nothing we asked (stray lines, unknown ids, duplicates), and
    # how many more of each kind the peer counted but did not keep (floods are bounded).
    unmatched: tuple[Frame, ...] = ()
    dropped_unmatched: int = 0
    dropped_notifications: int = 0
    poll_timeout_ms: int = 30_000
    # The tool of each probe role the selected checks need (roles.py; the task role is `tool`),
    # and the profile, which decides what a role without a tool means.
    roles: dict[str, ToolChoice] = field(default_factory=dict)
    profile: str = "standard"
    # The probes a check may read; None while the runner itself looks (preconditions use it).
    readable: frozenset[str] | None = None
    # The server stopped answering mid-run (liveness.py): one check judges it, the others defer.
    server_gone: ServerGone | None = None

    @property
    def wire(self) -> Wire:
        return self.discovery.wire

    @property
    def dialect(self) -> WireDialect:
        """The dialect of the wire in use. Checks run only on a tasks wire, so it exists."""
        d = self.discovery.dialect
        if d is None:
            raise LookupError("no tasks wire: there is no dialect to ask")
        return d

    @property
    def tool_name(self) -> str:
        return self.tool.name if self.tool is not None and self.tool.name else "?"

    def restricted_to(self, probes: tuple[str, ...]) -> Evidence:
        return replace(self, readable=frozenset(probes))

    def get(self, kind: type[R]) -> R:
        """The record of one probe; an empty, not-run record when the probe was not planned."""
        if self.readable is not None and kind.probe not in self.readable:
            raise UndeclaredProbe(f"the check read probe {kind.probe!r} without declaring it")
        rec = self.records.get(kind.probe)
        if isinstance(rec, kind):
            return rec
        return kind(not_run=Reason(harness("the probe was not planned")))

    @property
    def created_task_id(self) -> str | None:
        rec = self.records.get(DeclaredCall.probe)
        return rec.task_id if isinstance(rec, DeclaredCall) else None

    def frame(self, seq: int | None) -> Frame | None:
        return self.wire_log.get(seq) if seq is not None else None

    def frame_json(self, seq: int | None) -> Any:
        """The JSON of a frame as it crossed the wire (never a re-parsed or patched copy)."""
        f = self.frame(seq)
        return f.json() if f is not None else None


__all__ = [
    "RECORD_TYPES",
    "Base64Name",
    "BaseHttp",
    "BentEnvelope",
    "Cancel",
    "DeclaredCall",
    "Discovery",
    "Durability",
    "Evidence",
    "FaultTask",
    "GoneHow",
    "HttpOutcome",
    "InputRequestSeen",
    "InputTask",
    "InputTie",
    "Intent",
    "InvalidId",
    "LegacyDeclaresExtension",
    "ListBadCursor",
    "Listen",
    "NameRouting",
    "OtherPrincipal",
    "Poll",
    "ProbeRecord",
    "RelatedMetaOverride",
    "RemovedMethods",
    "RequiredUndeclared",
    "ResultWhileRunning",
    "RoleTask",
    "ServerGone",
    "StaleInput",
    "StopReason",
    "SyncWithTask",
    "TaskIds",
    "TaskListing",
    "TaskProgress",
    "TaskReads",
    "TaskRestart",
    "TerminalRereads",
    "ToolChoice",
    "ToolErrorTask",
    "UndeclaredCall",
    "UndeclaredInput",
    "UndeclaredProbe",
    "UndeclaredTasks",
    "UnknownIdAnswer",
    "Update",
]
