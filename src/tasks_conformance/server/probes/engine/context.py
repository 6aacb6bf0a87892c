"""What a probe gets: the session, the run's settings, what discovery found, and the records
it writes into."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, TypeVar

from tasks_conformance.core.protocol import ERR_HEADER_MISMATCH, ERR_INVALID_PARAMS, ERR_MISSING_CAPABILITY
from tasks_conformance.core.wirelog import WireLog
from tasks_conformance.core.wires import WireDialect
from tasks_conformance.server.evidence import DeclaredCall, Discovery, ProbeRecord, ToolChoice
from tasks_conformance.server.probes import Precondition
from tasks_conformance.server.session.base import Session
from tasks_conformance.settings.config import RunConfig

if TYPE_CHECKING:
    from tasks_conformance.core.rpc.peer import Reply
    from tasks_conformance.server.managed import ManagedServer

# The longest a probe waits for a task's poll interval before reading it again: a server asking
# for minutes between polls gets a refused read judged, not a stalled run.
MAX_PACE_S = 2.0
# Errors that answer a read rather than refuse it for its pace: unknown task, undeclared, bad header.
NOT_RATE_LIMITS = frozenset({ERR_INVALID_PARAMS, ERR_MISSING_CAPABILITY, ERR_HEADER_MISMATCH})

R = TypeVar("R", bound=ProbeRecord)


class UndeclaredPrecondition(AssertionError):
    """A probe read a tool, the created task or its role's tool without declaring that it needs it
    (a tasks-conformance bug; probe_problems() finds it before any run)."""


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
    server: ManagedServer | None = None  # the --server-command server (the restart probe restarts it)
    # What the running probe declared it needs (ProbeSpec.preconditions); None: unrestricted (a
    # context a test builds). A read that assumes an undeclared precondition is refused.
    declared: frozenset[Precondition] | None = None

    def for_probe(self, preconditions: frozenset[Precondition]) -> ProbeContext:
        """This context as one probe sees it: the same session and records, its declarations."""
        return replace(self, declared=preconditions)

    def _assume(self, need: Precondition) -> None:
        if self.declared is not None and need not in self.declared:
            raise UndeclaredPrecondition(f"the probe reads a {need.value} it does not declare (needs_{need.value})")

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
        self._assume(Precondition.TASK)
        tid = self.created_task_id
        assert tid is not None, "a needs_task probe ran without a task"
        return tid

    async def read_tolerating_rate_limit(self, send: Callable[[], Awaitable[Reply]]) -> Reply:
        """Send a read of the created task; if the server refuses it with an error that may be a
        rate limit (S-EXT-MAY-02: reads sooner than pollIntervalMs, and other probes read the same
        task meanwhile), wait the poll interval (at most MAX_PACE_S) and send it once more. Unknown
        task (-32602), undeclared (-32021) and header (-32020) errors are answers, never retried."""
        import anyio

        reply = await send()
        if (reply.error is None or not self.dialect.may_rate_limit("tasks/get")
                or reply.error_code in NOT_RATE_LIMITS):
            return reply
        rec = self.records.get(DeclaredCall.probe)
        ms = self.dialect.poll_interval_ms(rec.created.fields if isinstance(rec, DeclaredCall) else None)
        await anyio.sleep(min((ms or 250.0) / 1000.0, MAX_PACE_S))
        return await send()

    def tool_params(self) -> dict[str, object]:
        """tools/call params for the probe tool, for probes declared needs_tool (or needs_task)."""
        self._assume(Precondition.TOOL)
        tool = self.tool
        assert tool is not None and tool.name is not None
        return {"name": tool.name, "arguments": dict(tool.arguments)}

    def role_params(self, role: str) -> dict[str, object]:
        """tools/call params for a probe role's tool (the runner checked the role has one)."""
        self._assume(Precondition.ROLE)
        choice = self.roles.get(role)
        assert choice is not None and choice.name is not None, f"a {role} probe ran without its tool"
        return {"name": choice.name, "arguments": dict(choice.arguments)}
