"""The 2026-07-28 tasks extension (io.modelcontextprotocol/tasks, SEP-2663): per-request `_meta`
declaration, flat CreateTaskResult, inlined results, tasks/update, subscriptions."""

from __future__ import annotations

from typing import Any

from tasks_conformance.core.protocol import ERR_MISSING_CAPABILITY, EXT_TASKS, META_CLIENT_CAPS, get_path
from tasks_conformance.core.wires.base import (
    Level,
    UnknownIdProbe,
    Wire,
    WireDialect,
    declares_extension,
    has_task_param,
)


def with_extension(capabilities: Any, *, declared: bool) -> dict[str, Any]:
    """Client capabilities with the tasks extension listed (`declared`) or left out; an
    `extensions` member left empty is dropped."""
    caps = dict(capabilities) if isinstance(capabilities, dict) else {}
    extensions = dict(caps.get("extensions") or {})
    if declared:
        extensions[EXT_TASKS] = {}
    else:
        extensions.pop(EXT_TASKS, None)
    if extensions:
        caps["extensions"] = extensions
    else:
        caps.pop("extensions", None)
    return caps


class ExtensionDialect(WireDialect):
    wire = Wire.EXTENSION
    protocol_version = "2026-07-28"
    label = "2026-07-28 extension"
    title = f"2026-07-28 extension ({EXT_TASKS})"
    requirement_families = ("EXT", "CORE")
    ttl_field = "ttlMs"
    poll_interval_field = "pollIntervalMs"
    server_declaration = f'extensions["{EXT_TASKS}"]'
    undeclared_refusal_code = ERR_MISSING_CAPABILITY
    terminal_cancel_error = None
    methods = frozenset({"tasks/get", "tasks/update", "tasks/cancel", "subscriptions/listen"})
    removed_methods = ("tasks/result", "tasks/list")

    def declare(self, method: str, params: dict[str, Any], *, tasks: bool) -> dict[str, Any]:
        """Every request declares the extension itself, among the client capabilities in its `_meta`
        (`extensions["io.modelcontextprotocol/tasks"]`); left out, the request is undeclared."""
        meta = dict(params.get("_meta") or {})
        meta[META_CLIENT_CAPS] = with_extension(meta.get(META_CLIENT_CAPS), declared=tasks)
        return {**params, "_meta": meta}

    def self_contained(self, method: str) -> bool:
        return True

    def may_rate_limit(self, method: str) -> bool:
        """Polls that come faster than pollIntervalMs may be rate-limited (S-EXT-MAY-02)."""
        return method == "tasks/get"

    def input_requests(self, task: Any) -> dict[str, Any]:
        """The task's inputRequests, answered by tasks/update ({} when it lists none)."""
        outstanding = get_path(task, "inputRequests")
        return outstanding if isinstance(outstanding, dict) else {}

    def unknown_id_probes(self, task_id: str, server_capabilities: Any) -> tuple[UnknownIdProbe, ...]:
        return (
            UnknownIdProbe("tasks/get", {"taskId": task_id}, Level.MUST),
            UnknownIdProbe("tasks/update", {"taskId": task_id, "inputResponses": {}}, Level.SHOULD),
            UnknownIdProbe("tasks/cancel", {"taskId": task_id}, Level.SHOULD),
        )

    def declaration_mistakes(self, method: str, params: Any, meant: bool) -> list[str]:
        out = []
        if has_task_param(params):
            out.append("carries a legacy params.task on the extension wire")
        if declares_extension(params) != meant:
            out.append(
                f"{'lacks' if meant else 'carries'} the extension declaration the probe "
                f"{'meant' if meant else 'did not mean'} to send"
            )
        return out
