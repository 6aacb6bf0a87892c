"""What every tasks wire has in common: the Wire names, a created task read leniently, and the
WireDialect interface that each era's module fills in."""

from __future__ import annotations

import enum
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, ClassVar

from tasks_conformance.core.protocol import EXT_TASKS, META_CLIENT_CAPS, get_path


class Wire(enum.StrEnum):
    """Which tasks wire a connection speaks. The values are the ones reports carry."""

    LEGACY = "legacy"
    EXTENSION = "extension"
    NONE = "none"


class Level(enum.StrEnum):
    MUST = "MUST"
    SHOULD = "SHOULD"


def task_object(result: Any) -> dict[str, Any]:
    """The task object inside a result, whichever way it is shaped (flat or under `task`)."""
    if not isinstance(result, dict):
        return {}
    if "taskId" not in result and isinstance(result.get("task"), dict):
        return dict(result["task"])
    return result


@dataclass(frozen=True)
class CreatedTask:
    """A task read from a creation result. Lenient on purpose: a wrongly shaped task is still
    followed, so each later check judges only its own rule. `shape` is flat, nested or none."""

    task_id: str | None
    shape: str
    fields: dict[str, Any]

    @classmethod
    def read(cls, result: Any) -> CreatedTask:
        if not isinstance(result, dict):
            return cls(None, "none", {})
        tid = result.get("taskId")
        if isinstance(tid, str):
            return cls(tid, "flat", task_object(result))
        nested = result.get("task")
        if isinstance(nested, dict) and isinstance(nested.get("taskId"), str):
            return cls(nested["taskId"], "nested", task_object(result))
        return cls(None, "none", {})


# Tool-level negotiation: a listed tool's execution.taskSupport. The 2025-11-25 wire defines it; a
# 2026-07-28 server may still list it. Both read the same field, so these read it for either era.
TASK_SUPPORT_VALUES: tuple[str, ...] = ("forbidden", "optional", "required")
TASK_CAPABLE: tuple[str, ...] = ("optional", "required")


def listed_task_support(tool: Any) -> Any:
    """A listed tool's execution.taskSupport exactly as it came (any JSON value; None when absent)."""
    return get_path(tool, "execution", "taskSupport")


def task_support(tool: Any) -> str | None:
    """A listed tool's execution.taskSupport when it is a string ("required", "optional" or
    "forbidden" from a server that keeps the rule; messages show any other string as it came),
    else None: absent, which 2025-11-25 reads as forbidden."""
    value = listed_task_support(tool)
    return value if isinstance(value, str) else None


def may_run_as_task(tool: Any) -> bool:
    """Whether the tool's execution.taskSupport lets a client call it as a task (optional or required)."""
    return task_support(tool) in TASK_CAPABLE


def declares_extension(params: Any) -> bool:
    """Whether request params declare the tasks extension in their per-request capabilities."""
    return get_path(params, "_meta", META_CLIENT_CAPS, "extensions", EXT_TASKS) is not None


def lists_extension(obj: Any, *where: str) -> bool:
    """Whether the `extensions` object at `where` in `obj` names the tasks extension (as a key,
    whatever its value): a client's per-request `_meta` capabilities, or initialize's capabilities."""
    extensions = get_path(obj, *where, "extensions")
    return isinstance(extensions, dict) and EXT_TASKS in extensions


def has_task_param(params: Any) -> bool:
    return isinstance(params, dict) and "task" in params


@dataclass(frozen=True)
class UnknownIdProbe:
    """One request a probe sends with a task id the server never issued, and how strongly the
    wire requires -32602 for it."""

    method: str
    params: dict[str, Any]
    level: Level


class WireDialect:
    """Everything that differs between the tasks wires, in one place per era.

    Probes and checks ask the dialect instead of comparing era names, so a third wire is one
    more module in this package.
    """

    wire: ClassVar[Wire]
    protocol_version: ClassVar[str]
    label: ClassVar[str]  # for messages: "2026-07-28 extension"
    title: ClassVar[str]  # for headings: "2026-07-28 extension (io.modelcontextprotocol/tasks)"
    # The id families of this wire's rules in requirements.toml (S-EXT-…), which fix their era.
    requirement_families: ClassVar[tuple[str, ...]]
    ttl_field: ClassVar[str]
    poll_interval_field: ClassVar[str]
    # Where the server declares tasks, for messages.
    server_declaration: ClassVar[str]
    # The error a task-only request gets when it was sent without the declaration.
    undeclared_refusal_code: ClassVar[int]
    # The error tasks/cancel gets for a task that already ended; None where that cancel is acked
    # as a no-op. (A probe then cancels a task still running, and the ended one to see the error.)
    terminal_cancel_error: ClassVar[int | None]
    # The task requests this wire defines, by method name (ask `defines`).
    methods: ClassVar[frozenset[str]]
    # Methods of an earlier era that this wire removed: they must be unknown to the server.
    removed_methods: ClassVar[tuple[str, ...]]
    # The _meta key that names the task a request relates to; None where the wire has none.
    related_task_meta: ClassVar[str | None] = None
    # The _meta key of a progress token that stays valid for the task's whole life; None where
    # tasks report no progress (the extension does not support progress for tasks).
    task_progress_meta: ClassVar[str | None] = None

    @property
    def foreign_fields(self) -> tuple[str, ...]:
        """The TTL and poll-interval names of the other eras: seeing one here is a mistake."""
        return tuple(
            name for d in DIALECT_TYPES if d.wire is not self.wire
            for name in (d.ttl_field, d.poll_interval_field)
        )

    def era_of_field(self, name: str) -> str:
        for d in DIALECT_TYPES:
            if name in (d.ttl_field, d.poll_interval_field):
                return d.label
        return "unknown"

    def defines(self, method: str) -> bool:
        """Whether this wire defines the request `method`: tasks/result (which blocks until the
        task ends, returns its outcome and carries its input requests on its stream), tasks/list,
        tasks/update, subscriptions/listen…"""
        return method in self.methods

    def may_rate_limit(self, method: str) -> bool:
        """Whether the server may refuse a `method` request that comes sooner than the task's poll
        interval (a rate limit), so the client waits one interval and asks again before it
        believes the error."""
        return False

    def cancelled_task(self, result: Any) -> dict[str, Any] | None:
        """The task a tasks/cancel result returns; None where the result is an empty ack."""
        return None

    def input_requests(self, task: Any) -> dict[str, Any] | None:
        """The input requests a task in input_required waits on, as its task object lists them; None
        on a wire whose tasks do not list them (they come as server requests on the tasks/result
        stream, which the client's peer answers)."""
        return None

    def task_capable_tools(self, tools: Iterable[dict[str, Any]]) -> list[dict[str, Any]] | None:
        """Tool-level negotiation: the listed tools a client may call as tasks, in their order.
        None on a wire without it, where the client declares tasks per request and the server
        decides (a client then cannot tell from tools/list which tool runs as a task)."""
        return None

    def declare(self, method: str, params: dict[str, Any], *, tasks: bool) -> dict[str, Any]:
        """The params of a `method` request as this wire sends them with the tasks declaration
        (`tasks`) or without it. Sessions ask it for every request; a new dict, `params` untouched."""
        raise NotImplementedError

    def self_contained(self, method: str) -> bool:
        """Whether a `method` request stands on its own: it carries the protocol version and the
        client's capabilities (the tasks declaration among them, so one request may leave tasks
        out) in its `_meta` and, over HTTP, the Mcp-Method/Mcp-Name routing headers, with no
        session behind it. False where a session opened by initialize stands behind it."""
        return False

    def declaration_mistakes(self, method: str, params: Any, meant: bool) -> list[str]:
        """How an outbound request's declaration differs from what the probe meant to send."""
        raise NotImplementedError

    def can_cancel(self, server_capabilities: Any) -> bool:
        return True

    def can_list(self, server_capabilities: Any) -> bool:
        return False

    def unknown_id_probes(self, task_id: str, server_capabilities: Any) -> tuple[UnknownIdProbe, ...]:
        raise NotImplementedError

    def ttl_ms(self, task: Any) -> float | None:
        """The task's TTL in milliseconds from its createdAt, as a task object (or a creation
        result) says; None where it is unlimited (null), absent or malformed (no deadline)."""
        value = get_path(task_object(task) if isinstance(task, dict) else task, self.ttl_field)
        if isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0:
            return float(value)
        return None

    def poll_interval_ms(self, task: Any) -> float | None:
        value = get_path(task, self.poll_interval_field)
        if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0:
            return float(value)
        return None


# Filled by wires/__init__.py once every era's module is imported (no import cycle).
DIALECT_TYPES: list[type[WireDialect]] = []
