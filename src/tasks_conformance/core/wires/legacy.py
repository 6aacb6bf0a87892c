"""The 2025-11-25 wire (tasks in core): capabilities.tasks at initialize, tool-level
execution.taskSupport, params.task on tools/call, nested CreateTaskResult, tasks/result."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from tasks_conformance.core.protocol import ERR_INVALID_PARAMS, ERR_METHOD_NOT_FOUND, META_RELATED_TASK, get_path
from tasks_conformance.core.wires.base import (
    Level,
    UnknownIdProbe,
    Wire,
    WireDialect,
    declares_extension,
    has_task_param,
    may_run_as_task,
)

# The TTL the probes ask for; the server may grant another.
REQUESTED_TTL_MS = 60_000


def declared_tasks(server_capabilities: Any) -> Any:
    """The tasks capability, where 2025-11-25 puts it or where pre-release servers did."""
    return get_path(server_capabilities, "tasks") or get_path(server_capabilities, "experimental", "tasks")


class LegacyDialect(WireDialect):
    wire = Wire.LEGACY
    protocol_version = "2025-11-25"
    label = "2025-11-25 legacy"
    title = "2025-11-25 legacy tasks"
    requirement_families = ("LEG",)
    ttl_field = "ttl"
    poll_interval_field = "pollInterval"
    server_declaration = "capabilities.tasks.requests.tools.call"
    undeclared_refusal_code = ERR_METHOD_NOT_FOUND
    terminal_cancel_error = ERR_INVALID_PARAMS
    methods = frozenset({"tasks/get", "tasks/result", "tasks/list", "tasks/cancel"})
    removed_methods = ()
    related_task_meta = META_RELATED_TASK
    task_progress_meta = "progressToken"

    def task_capable_tools(self, tools: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
        """The tools whose execution.taskSupport is optional or required: a client MUST NOT send
        params.task for any other (absent means forbidden)."""
        return [t for t in tools if may_run_as_task(t)]

    def declare(self, method: str, params: dict[str, Any], *, tasks: bool) -> dict[str, Any]:
        """A task-augmented tools/call carries params.task (the TTL the probes ask for); every
        other request relies on the capabilities initialize declared for the session."""
        if method != "tools/call" or (tasks and "task" in params):
            return dict(params)
        if tasks:
            return {**params, "task": {"ttl": REQUESTED_TTL_MS}}
        return {k: v for k, v in params.items() if k != "task"}

    def cancelled_task(self, result: Any) -> dict[str, Any] | None:
        """tasks/cancel returns the task itself (CancelTaskResult is the Task)."""
        return result if isinstance(result, dict) else None

    def can_cancel(self, server_capabilities: Any) -> bool:
        """tasks/cancel is optional on 2025-11-25: only a server declaring tasks.cancel is asked."""
        return get_path(declared_tasks(server_capabilities), "cancel") is not None

    def can_list(self, server_capabilities: Any) -> bool:
        """tasks/list is optional on 2025-11-25: only a server declaring tasks.list is asked."""
        return get_path(declared_tasks(server_capabilities), "list") is not None

    def unknown_id_probes(self, task_id: str, server_capabilities: Any) -> tuple[UnknownIdProbe, ...]:
        probes = [
            UnknownIdProbe("tasks/get", {"taskId": task_id}, Level.MUST),
            UnknownIdProbe("tasks/result", {"taskId": task_id}, Level.MUST),
        ]
        if self.can_cancel(server_capabilities):
            probes.append(UnknownIdProbe("tasks/cancel", {"taskId": task_id}, Level.MUST))
        return tuple(probes)

    def declaration_mistakes(self, method: str, params: Any, meant: bool) -> list[str]:
        out = []
        if declares_extension(params):
            out.append("carries the extension declaration on 2025-11-25")
        if method == "tools/call" and has_task_param(params) != meant:
            out.append("params.task does not match the probe's intent")
        return out
