"""One typed record per probe: what it sent and what came back, as named fields. Probes fill
their record while they run; checks read them afterwards and never write. A record names its
probe (`probe`), which is how checks declare what they read.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, ClassVar

from tasks_conformance.core.wires import CreatedTask

# Re-exported: the records' one import path stays this module (`X as X` marks the re-export).
from tasks_conformance.server.evidence.legacy_records import ListBadCursor as ListBadCursor
from tasks_conformance.server.evidence.legacy_records import RelatedMetaOverride as RelatedMetaOverride
from tasks_conformance.server.evidence.legacy_records import ResultWhileRunning as ResultWhileRunning
from tasks_conformance.server.evidence.legacy_records import TaskListing as TaskListing
from tasks_conformance.server.evidence.legacy_records import TaskProgress as TaskProgress
from tasks_conformance.server.evidence.record_base import InputRequestSeen as InputRequestSeen
from tasks_conformance.server.evidence.record_base import InputTie as InputTie
from tasks_conformance.server.evidence.record_base import ProbeRecord as ProbeRecord
from tasks_conformance.server.evidence.record_base import UnknownIdAnswer as UnknownIdAnswer
from tasks_conformance.server.evidence.record_base import Update as Update

if TYPE_CHECKING:
    # Annotations only: listing the checks must not import the JSON-RPC and transport layers.
    from tasks_conformance.core.rpc.peer import Reply

NO_TASK = CreatedTask(None, "none", {})


@dataclass(frozen=True)
class Intent:
    """What the harness meant to send in one outbound request (for declaration hygiene)."""

    seq: int
    method: str
    era: str
    declared: bool  # meant to declare tasks support (extension _meta, or legacy params.task)


@dataclass
class DeclaredCall(ProbeRecord):
    """tools/call with the tasks declaration (extension _meta, legacy params.task)."""

    probe: ClassVar[str] = "declared-call"
    call: Reply | None = None
    created: CreatedTask = NO_TASK

    @property
    def task_id(self) -> str | None:
        return self.created.task_id


@dataclass
class UndeclaredCall(ProbeRecord):
    """The same tools/call without the declaration."""

    probe: ClassVar[str] = "undeclared-call"
    call: Reply | None = None
    created: CreatedTask = NO_TASK


# Every poll's answer is kept for the checks; a server sending huge task frames many times a
# second must not grow memory without bound.
POLL_BYTE_BUDGET_MIB = 64


class StopReason(enum.StrEnum):
    """Why polling stopped."""

    TERMINAL = "terminal"
    POLL_TIMEOUT = "poll-timeout"
    STUCK_INPUT_REQUIRED = "stuck-input-required"
    POLL_BUDGET = "poll-budget"
    GET_ERROR = "get-error"


@dataclass
class Poll(ProbeRecord):
    probe: ClassVar[str] = "poll"
    gets: list[Reply] = field(default_factory=list)
    statuses: list[str] = field(default_factory=list)
    updates: list[Update] = field(default_factory=list)
    unanswered_keys: list[str] = field(default_factory=list)
    stop: StopReason | None = None
    result: Reply | None = None  # legacy tasks/result
    elicitations: list[int] = field(default_factory=list)  # legacy: server requests on that stream
    # Legacy: every input request tied to the task while it was live, with what ties it.
    input_requests: list[InputRequestSeen] = field(default_factory=list)
    # tasks/get errors the poller read as a rate limit (S-EXT-MAY-02) and retried after one interval;
    # not in `gets`, which holds the answers the checks judge.
    rate_limited: list[Reply] = field(default_factory=list)

    @property
    def final_status(self) -> str | None:
        return self.statuses[-1] if self.statuses else None

    @property
    def saw_input_required(self) -> bool:
        return "input_required" in self.statuses

    @property
    def last_get(self) -> Reply | None:
        return self.gets[-1] if self.gets else None


@dataclass
class InvalidId(ProbeRecord):
    """tasks/* on an id the server never issued."""

    probe: ClassVar[str] = "invalid-id"
    task_id: str | None = None
    answers: list[UnknownIdAnswer] = field(default_factory=list)


@dataclass
class NameRouting(ProbeRecord):
    """tasks/get whose Mcp-Name, then Mcp-Method, header disagrees with the body."""

    probe: ClassVar[str] = "name-routing"
    task_id: str | None = None
    sent_name: str | None = None
    name_mismatch: Reply | None = None
    method_mismatch: Reply | None = None


@dataclass
class Cancel(ProbeRecord):
    probe: ClassVar[str] = "cancel"
    no_cancel_capability: bool = False
    task_id: str | None = None
    status_before: str | None = None  # the probe task's last polled status
    create: Reply | None = None  # legacy: the fresh task created to be cancelled
    cancel: Reply | None = None
    after: Reply | None = None  # tasks/get right after the cancel
    cancel_terminal: Reply | None = None  # legacy: cancelling the probe task that already ended


@dataclass
class Listen(ProbeRecord):
    """subscriptions/listen for the task, declaring the extension."""

    probe: ClassVar[str] = "listen"
    task_id: str | None = None
    listen: Reply | None = None
    frames: list[int] = field(default_factory=list)  # notifications that arrived meanwhile


@dataclass
class UndeclaredTasks(ProbeRecord):
    """tasks/* and subscriptions/listen without the declaration, on the live task (sent last)."""

    probe: ClassVar[str] = "undeclared-tasks"
    task_id: str | None = None
    replies: dict[str, Reply] = field(default_factory=dict)  # by method, in the order sent
    listen_acks: list[int] = field(default_factory=list)


@dataclass
class RemovedMethods(ProbeRecord):
    """Methods the wire removed, asked anyway (with the declaration)."""

    probe: ClassVar[str] = "removed-methods"
    answers: dict[str, Reply] = field(default_factory=dict)  # by method, in the order sent


@dataclass
class TerminalRereads(ProbeRecord):
    """tasks/get on the probe task after its end was seen, spaced by the poll interval."""

    probe: ClassVar[str] = "terminal-rereads"
    task_id: str | None = None
    terminal_status: str | None = None
    # The notification that showed the task terminal before polling's last read was sent, and the
    # status it showed; when that is polling's final status, polling's last read is the first of
    # `gets`.
    sighted_seq: int | None = None
    sighted_status: str | None = None
    gets: list[Reply] = field(default_factory=list)


@dataclass
class BentEnvelope(ProbeRecord):
    """Requests whose 2026-07-28 envelope is wrong on purpose: a protocol version no server
    serves, and one without the client capabilities."""

    probe: ClassVar[str] = "bent-envelope"
    requested: str | None = None
    unserved: Reply | None = None
    no_capabilities: Reply | None = None


@dataclass
class Durability(ProbeRecord):
    """tasks/get on the new task straight after its CreateTaskResult, and over HTTP once more
    from a brand-new connection (its own pool, no cookies, only the declared headers)."""

    probe: ClassVar[str] = "durability"
    task_id: str | None = None
    immediate: Reply | None = None
    fresh: Reply | None = None
    fresh_not_applicable: str | None = None  # why no second connection was tried


@dataclass
class TaskIds(ProbeRecord):
    """A few more tasks created with the probe task's own declared call, for the ids the server
    mints (then cancelled, so they do not run on for nothing)."""

    probe: ClassVar[str] = "task-ids"
    ids: list[str] = field(default_factory=list)  # in creation order, the probe task's first
    calls: list[Reply] = field(default_factory=list)
    cancels: list[Reply] = field(default_factory=list)
    # Whether the run sent any credential (token, OAuth, header): without one no task can be bound
    # to an authorization context, which is when the 2025-11-25 id rule applies (S-LEG-MUST-22).
    credentials: bool = False


@dataclass
class UndeclaredInput(ProbeRecord):
    """A second task from the probe task's declared tools/call, whose requests declare no client
    capability but the extension (no elicitation, sampling or roots), read a few times and then
    cancelled: its inputRequests may ask for nothing."""

    probe: ClassVar[str] = "undeclared-input"
    task_id: str | None = None
    create: Reply | None = None
    gets: list[Reply] = field(default_factory=list)
    cancel: Reply | None = None


@dataclass
class StaleInput(ProbeRecord):
    """tasks/update on the probe task, after polling, with inputResponses it is not waiting for:
    a key already answered and a key it never asked."""

    probe: ClassVar[str] = "stale-input"
    task_id: str | None = None
    keys: list[str] = field(default_factory=list)  # answered before, then the unknown one
    update: Reply | None = None


@dataclass
class LegacyDeclaresExtension(ProbeRecord):
    """On a second connection: a 2025-11-25 initialize whose capabilities list the tasks
    extension, then the probe tool called the 2025-11-25 way, without params.task."""

    probe: ClassVar[str] = "legacy-declares-extension"
    # The second connection started a server process of its own (stdio): its initialize waited
    # --startup-timeout, and that is the setting to raise when it got no answer.
    fresh_process: bool = False
    # The transport cannot open a second connection at all (not a fault: the check does not apply).
    no_second_connection: bool = False
    initialize: Reply | None = None
    call: Reply | None = None


@dataclass
class OtherPrincipal(ProbeRecord):
    """The probe task asked for with a second principal's credentials (--other-access-token,
    --other-header), on an HTTP connection of its own (sent last)."""

    probe: ClassVar[str] = "other-principal"
    task_id: str | None = None
    # First, a request without any credentials (2026-07-28 tools/list; 2025-11-25 initialize):
    # a server that serves it authenticates no one, so it has no principals to keep tasks apart.
    anonymous: Reply | None = None
    initialize: Reply | None = None  # legacy: the second principal's own session
    replies: dict[str, Reply] = field(default_factory=dict)  # by method, in the order sent


@dataclass(frozen=True)
class HttpOutcome:
    """One HTTP exchange sent outside JSON-RPC (a notification, a GET, a DELETE)."""

    request_seq: int
    status: int | None
    messages: tuple[int, ...] = ()  # JSON-RPC messages in the response body
    body: bool = False  # the response had a body at all
    session_id: str | None = None  # an Mcp-Session-Id response header
    problem: str | None = None


@dataclass
class BaseHttp(ProbeRecord):
    """The 2026-07-28 HTTP endpoint, beyond served requests: a method nobody implements, a request
    from a foreign Origin, a notification, and GET and DELETE on the endpoint."""

    probe: ClassVar[str] = "base-http"
    unknown_method: Reply | None = None
    foreign_origin: Reply | None = None
    notification: HttpOutcome | None = None
    get: HttpOutcome | None = None
    delete: HttpOutcome | None = None


@dataclass
class Base64Name(ProbeRecord):
    """tasks/get whose Mcp-Name carries the task id base64-wrapped (=?base64?…?=), over HTTP."""

    probe: ClassVar[str] = "base64-name"
    task_id: str | None = None
    sent_name: str | None = None
    reply: Reply | None = None
    # After an error: the same tasks/get with the plain Mcp-Name, on the same session and principal;
    # an answer both get is about the request, not about decoding the header.
    control: Reply | None = None
# Probe roles (roles.py): traffic on a tool other than the task tool.


@dataclass
class RoleTask(ProbeRecord):
    """The role's tool called with the tasks declaration, and its task polled to the end (legacy:
    then tasks/result). Reused from the task tool's own call and poll when the role's tool and
    arguments are the task tool's, so that one tool is never run twice for one run."""

    probe: ClassVar[str] = "role-task"
    tool: str | None = None
    call: Reply | None = None
    created: CreatedTask = NO_TASK
    poll: Poll = field(default_factory=Poll)

    @property
    def task_id(self) -> str | None:
        return self.created.task_id

    def all_replies(self) -> list[Reply]:
        return super().all_replies() + self.poll.all_replies()


@dataclass
class ToolErrorTask(RoleTask):
    probe: ClassVar[str] = "tool-error-task"


@dataclass
class FaultTask(RoleTask):
    probe: ClassVar[str] = "fault-task"


@dataclass
class InputTask(RoleTask):
    probe: ClassVar[str] = "input-task"


@dataclass
class RequiredUndeclared(ProbeRecord):
    """The `required` role's tool called without a task (legacy: no params.task; extension: no
    declaration)."""

    probe: ClassVar[str] = "required-undeclared"
    tool: str | None = None
    call: Reply | None = None
    created: CreatedTask = NO_TASK


@dataclass
class SyncWithTask(ProbeRecord):
    """The `sync` role's tool (taskSupport forbidden or absent) called with params.task."""

    probe: ClassVar[str] = "sync-with-task"
    tool: str | None = None
    call: Reply | None = None
    created: CreatedTask = NO_TASK


RECORD_TYPES: dict[str, type[ProbeRecord]] = {
    r.probe: r for r in (DeclaredCall, UndeclaredCall, Poll, InvalidId, NameRouting, Cancel, Listen, UndeclaredTasks,
                         RemovedMethods, TerminalRereads, BentEnvelope,
                         ToolErrorTask, FaultTask, InputTask, RequiredUndeclared, SyncWithTask,
                         ResultWhileRunning, TaskListing, ListBadCursor, RelatedMetaOverride, TaskProgress,
                         Durability, TaskIds, UndeclaredInput, StaleInput, LegacyDeclaresExtension, OtherPrincipal,
                         BaseHttp, Base64Name)
}
