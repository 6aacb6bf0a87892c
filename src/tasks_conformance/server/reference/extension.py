"""The 2026-07-28 wire of the reference server, with the ``io.modelcontextprotocol/tasks`` extension.

``ExtensionMixin`` checks the per-request envelope (``params._meta`` protocol version and client
capabilities, and over HTTP the routing headers), serves ``server/discover``, ``tools/list``,
``tools/call`` (synchronously, with an ``InputRequiredResult`` retry for input, or as a task
when the request declares the extension), ``tasks/get`` / ``tasks/update`` / ``tasks/cancel``
and ``subscriptions/listen``, and renders tasks in the extension's flat shapes.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
from typing import ClassVar

from tasks_conformance.server.reference.context import RequestContext
from tasks_conformance.server.reference.core import Handler, ServerCore, ToolIO
from tasks_conformance.server.reference.protocol import (
    HEADER_MISMATCH,
    INTERNAL_ERROR,
    INVALID_PARAMS,
    JSON,
    META_CLIENT_CAPS,
    META_PROTOCOL_VERSION,
    META_SERVER_INFO,
    META_SUBSCRIPTION_ID,
    METHOD_NOT_FOUND,
    TASKS_EXT,
    UNSUPPORTED_VERSION,
    RequestId,
    RpcError,
    decode_header_value,
    extension_meta,
    notification,
)
from tasks_conformance.server.reference.tasks import TaskRecord
from tasks_conformance.server.reference.tools import NAME_KEY, TOOLS, ToolSpec, user_name_request

TASK_METHODS = ("tasks/get", "tasks/update", "tasks/cancel")


class NeedInput(Exception):
    """A synchronous 2026-07-28 tools/call needs client input: answer with an InputRequiredResult."""

    def __init__(self, input_requests: JSON) -> None:
        super().__init__("input required")
        self.input_requests = input_requests


class MrtrInput(ToolIO):
    """A synchronous 2026-07-28 tools/call: answers come in params.inputResponses (MRTR retry)."""

    def __init__(self, server: ServerCore, ctx: RequestContext) -> None:
        self.server = server
        self.ctx = ctx
        self.era = "extension"
        self.client_caps = ctx.client_caps

    def _answer(self, key: str) -> JSON | None:
        responses = self.ctx.params.get("inputResponses")
        if isinstance(responses, dict) and isinstance(responses.get(key), dict):
            answer: JSON = responses[key]
            return answer
        return None

    async def ask_input(self, key: str, request: JSON) -> JSON:
        return (await self.ask_inputs({key: request}))[key]

    async def ask_inputs(self, requests: dict[str, JSON]) -> dict[str, JSON]:
        """Answers from params.inputResponses; an InputRequiredResult naming every unanswered key."""
        answers: dict[str, JSON] = {}
        missing: JSON = {}
        for key, request in requests.items():
            answer = self._answer(key)
            if answer is not None:
                answers[key] = answer
            else:
                self.server.require_input_capability("extension", self.ctx.client_caps, request)
                missing[key] = copy.deepcopy(request)
        if missing:
            raise NeedInput(missing)
        return answers


class ExtensionMixin(ServerCore):
    """The 2026-07-28 methods and the tasks extension, mixed into ``ReferenceServer``."""

    supports_tasks_extension: ClassVar[bool] = True

    # ------------------------------------------------------------------ envelope and dispatch
    async def handle_extension(self, ctx: RequestContext) -> JSON:
        meta = extension_meta(ctx.params)
        if meta is None:
            raise RpcError(
                INVALID_PARAMS,
                f'Missing params._meta["{META_PROTOCOL_VERSION}"]: every 2026-07-28 request carries its '
                "protocol version and client capabilities (or send initialize for 2025-11-25)",
                http_status=400,
            )
        version = meta.get(META_PROTOCOL_VERSION)
        if not isinstance(version, str):
            raise RpcError(INVALID_PARAMS, f"_meta[{META_PROTOCOL_VERSION!r}] must be a string", http_status=400)
        if ctx.headers is not None:
            self.validate_routing_headers(ctx, meta)
        if version not in self.extension_versions():
            raise self.unsupported_version_error(version)
        caps = meta.get(META_CLIENT_CAPS)
        if not isinstance(caps, dict):
            raise RpcError(
                INVALID_PARAMS,
                f'Missing or invalid params._meta["{META_CLIENT_CAPS}"] (required on every request; {{}} means none)',
                http_status=400,
            )
        ctx.client_caps = caps
        handler = self.extension_handlers().get(ctx.method)
        if handler is None:
            raise RpcError(METHOD_NOT_FOUND, f"Method not found: {ctx.method}")
        return self.finish_extension_result(await handler(ctx))

    def extension_handlers(self) -> dict[str, Handler]:
        handlers: dict[str, Handler] = {
            "server/discover": self.m_discover,
            "tools/list": self.m_tools_list,
            "tools/call": self.m_tools_call,
            "subscriptions/listen": self.m_listen,
        }
        if self.supports_tasks_extension:
            handlers["tasks/get"] = self.m_tasks_get
            handlers["tasks/update"] = self.m_tasks_update
            handlers["tasks/cancel"] = self.m_tasks_cancel
        return handlers

    def finish_extension_result(self, result: JSON) -> JSON:
        result.setdefault("resultType", "complete")
        meta = result.get("_meta")
        if not isinstance(meta, dict):
            meta = {}
            result["_meta"] = meta
        meta.setdefault(META_SERVER_INFO, self.server_info())
        return result

    def header_mismatch_error(self, message: str) -> RpcError:
        return RpcError(HEADER_MISMATCH, message, http_status=400)

    def unsupported_version_error(self, requested: str) -> RpcError:
        return RpcError(
            UNSUPPORTED_VERSION,
            f"Unsupported protocol version: {requested}",
            {"supported": self.extension_versions(), "requested": requested},
            http_status=400,
        )

    def expected_mcp_name(self, ctx: RequestContext) -> tuple[str | None, bool]:
        """(value Mcp-Name must equal, whether a missing header is an error)."""
        if ctx.method == "tools/call":
            name = ctx.params.get("name")
            return (name if isinstance(name, str) else None), True
        if ctx.method in TASK_METHODS:
            task_id = ctx.params.get("taskId")
            # The specification leaves open whether tasks/* must carry Mcp-Name, so a missing
            # header is tolerated; a value that differs from the taskId is not.
            return (task_id if isinstance(task_id, str) else None), False
        return None, False

    def validate_routing_headers(self, ctx: RequestContext, meta: JSON) -> None:
        headers = ctx.headers or {}
        version_header = headers.get("mcp-protocol-version")
        if version_header is None:
            raise self.header_mismatch_error("Missing required MCP-Protocol-Version header")
        if version_header.strip() != meta.get(META_PROTOCOL_VERSION):
            raise self.header_mismatch_error(
                f"Header mismatch: MCP-Protocol-Version header value {version_header.strip()!r} "
                f"does not match body value {meta.get(META_PROTOCOL_VERSION)!r}"
            )
        method_header = headers.get("mcp-method")
        if method_header is None:
            raise self.header_mismatch_error("Missing required Mcp-Method header")
        method_value = decode_header_value(method_header)
        if method_value != ctx.method:
            raise self.header_mismatch_error(
                f"Header mismatch: Mcp-Method header value {method_value!r} does not match body value {ctx.method!r}"
            )
        expected, required = self.expected_mcp_name(ctx)
        if expected is None:
            return
        name_header = headers.get("mcp-name")
        if name_header is None:
            if required:
                raise self.header_mismatch_error(f"Missing required Mcp-Name header for {ctx.method}")
            return
        name_value = decode_header_value(name_header)
        if name_value != expected:
            raise self.header_mismatch_error(
                f"Header mismatch: Mcp-Name header value {name_value!r} does not match body value {expected!r}"
            )

    # ------------------------------------------------------------------ the extension declaration
    def declares_tasks_extension(self, caps: JSON) -> bool:
        extensions = caps.get("extensions")
        return isinstance(extensions, dict) and isinstance(extensions.get(TASKS_EXT), dict)

    def require_tasks_declared(self, ctx: RequestContext) -> None:
        if not self.declares_tasks_extension(ctx.client_caps):
            raise self.missing_capability_error(
                {"extensions": {TASKS_EXT: {}}},
                f"{ctx.method} requires the {TASKS_EXT} extension in this request's "
                f"_meta[{META_CLIENT_CAPS!r}].extensions",
            )

    # ------------------------------------------------------------------ discovery and tools
    def discover_capabilities(self) -> JSON:
        caps: JSON = {"tools": {}}
        if self.supports_tasks_extension:
            caps["extensions"] = {TASKS_EXT: {}}
        return caps

    def extension_tool_descriptor(self, spec: ToolSpec) -> JSON:
        return spec.descriptor(legacy_execution=False)

    async def m_discover(self, ctx: RequestContext) -> JSON:
        return {
            "resultType": "complete",
            "supportedVersions": self.extension_versions(),
            "capabilities": self.discover_capabilities(),
            "instructions": self.instructions(),
            "ttlMs": 60_000,
            "cacheScope": "public",
        }

    async def m_tools_list(self, ctx: RequestContext) -> JSON:
        return {
            "resultType": "complete",
            "tools": [self.extension_tool_descriptor(spec) for spec in TOOLS],
            "ttlMs": 60_000,
            "cacheScope": "public",
        }

    async def m_tools_call(self, ctx: RequestContext) -> JSON:
        spec, arguments = self.parse_tool_call(ctx.params)
        if self.supports_tasks_extension and spec.task_support != "forbidden":
            declared = self.declares_tasks_extension(ctx.client_caps)
            if self.should_create_task(ctx, spec, declared):
                given: dict[str, JSON] = {}
                if spec.kind == "name_then_task":
                    # Input first, synchronously (MRTR); the retry that carries it creates the task.
                    try:
                        given = await MrtrInput(self, ctx).ask_inputs({NAME_KEY: user_name_request(spec.name)})
                    except NeedInput as need:
                        return {"resultType": "input_required", "inputRequests": need.input_requests}
                record = self.start_task("extension", spec, arguments, ctx, given_answers=given)
                return self.build_create_task_result(record)
            if spec.task_support == "required":
                return await self.on_undeclared_required_tool(ctx, spec, arguments)
        return await self.call_tool_sync_extension(ctx, spec, arguments)

    def should_create_task(self, ctx: RequestContext, spec: ToolSpec, declared: bool) -> bool:
        return declared

    async def on_undeclared_required_tool(self, ctx: RequestContext, spec: ToolSpec, arguments: JSON) -> JSON:
        raise self.missing_capability_error(
            {"extensions": {TASKS_EXT: {}}},
            f"Tool {spec.name!r} runs only as a task: declare the {TASKS_EXT} extension in this request's "
            f"_meta[{META_CLIENT_CAPS!r}].extensions",
        )

    async def call_tool_sync_extension(self, ctx: RequestContext, spec: ToolSpec, arguments: JSON) -> JSON:
        try:
            result = await self.execute_tool(spec, arguments, MrtrInput(self, ctx))
        except NeedInput as need:
            return {"resultType": "input_required", "inputRequests": need.input_requests}
        return {"resultType": "complete", **result}

    # ------------------------------------------------------------------ tasks/*
    async def m_tasks_get(self, ctx: RequestContext) -> JSON:
        self.require_tasks_declared(ctx)
        task_id = self.task_id_param(ctx)
        record = self.extension_lookup(ctx, task_id)
        if record is None:
            return self.on_unknown_task(ctx, task_id)
        return self.build_get_task_result(record)

    async def m_tasks_update(self, ctx: RequestContext) -> JSON:
        self.require_tasks_declared(ctx)
        task_id = self.task_id_param(ctx)
        responses = ctx.params.get("inputResponses")
        if not isinstance(responses, dict):
            raise RpcError(INVALID_PARAMS, "params.inputResponses must be an object")
        record = self.extension_lookup(ctx, task_id)
        if record is None:
            return self.on_unknown_task(ctx, task_id)
        if not record.terminal:
            self.apply_input_responses(record, responses)
        return self.build_update_ack(record)

    async def m_tasks_cancel(self, ctx: RequestContext) -> JSON:
        self.require_tasks_declared(ctx)
        task_id = self.task_id_param(ctx)
        record = self.extension_lookup(ctx, task_id)
        if record is None:
            return self.on_unknown_task(ctx, task_id)
        self.cancel_task(record)
        return self.build_cancel_ack(record)

    def cancel_task(self, record: TaskRecord) -> None:
        """Hook: what tasks/cancel does to the task before its ack (a no-op for a terminal task; the
        ack is the same). A fixture may let the task run on (S-EXT-MAY-07)."""
        record.cancel()

    def extension_lookup(self, ctx: RequestContext, task_id: str) -> TaskRecord | None:
        """The 2026-07-28 task, if it exists and the caller may see it (else: unknown)."""
        record = self.tasks.get(task_id, "extension")
        return record if record is not None and self.may_access(ctx, record) else None

    def may_access(self, ctx: RequestContext, record: TaskRecord) -> bool:
        """With bearer tokens, a task is its creator's alone (S-EXT-MUST-23)."""
        return record.principal == self.principal(ctx)

    def apply_input_responses(self, record: TaskRecord, responses: JSON) -> None:
        for key, value in responses.items():
            if isinstance(value, dict):
                record.answer(key, value)  # keys that are not outstanding are ignored

    def build_update_ack(self, record: TaskRecord) -> JSON:
        return {"resultType": "complete"}

    def build_cancel_ack(self, record: TaskRecord) -> JSON:
        return {"resultType": "complete"}

    # ------------------------------------------------------------------ task shapes
    def task_fields(self, record: TaskRecord) -> JSON:
        task: JSON = {
            "taskId": record.task_id,
            "status": record.status,
            "createdAt": self.format_timestamp(record.created_at),
            "lastUpdatedAt": self.format_timestamp(record.last_updated_at),
            "ttlMs": record.ttl_ms,
        }
        if record.poll_interval_ms is not None:
            task["pollIntervalMs"] = record.poll_interval_ms
        if record.status_message:
            task["statusMessage"] = record.status_message
        return task

    def build_create_task_result(self, record: TaskRecord) -> JSON:
        return {"resultType": "task", **self.task_fields(record)}

    def build_detailed_task(self, record: TaskRecord) -> JSON:
        task = self.task_fields(record)
        if record.status == "input_required":
            task["inputRequests"] = copy.deepcopy(record.outstanding_requests())
        elif record.status == "completed":
            task["result"] = {"resultType": "complete", **copy.deepcopy(record.result or {"content": []})}
        elif record.status == "failed":
            task["error"] = copy.deepcopy(record.error) or {"code": INTERNAL_ERROR, "message": "Task failed"}
        return task

    def build_get_task_result(self, record: TaskRecord) -> JSON:
        return {"resultType": "complete", **self.build_detailed_task(record)}

    def build_task_notification(self, record: TaskRecord, subscription_id: RequestId) -> JSON:
        return {**self.build_detailed_task(record), "_meta": {META_SUBSCRIPTION_ID: subscription_id}}

    # ------------------------------------------------------------------ subscriptions/listen
    async def m_listen(self, ctx: RequestContext) -> JSON:
        filters = ctx.params.get("notifications")
        if not isinstance(filters, dict):
            raise RpcError(INVALID_PARAMS, "params.notifications must be an object")
        task_ids = filters.get("taskIds")
        wants_tasks = task_ids is not None
        if wants_tasks:
            if not isinstance(task_ids, list) or not all(isinstance(t, str) for t in task_ids):
                raise RpcError(INVALID_PARAMS, "params.notifications.taskIds must be an array of strings")
            if self.supports_tasks_extension:
                self.require_tasks_declared(ctx)
        accepted: list[str] = []
        acknowledged: JSON = {}
        if wants_tasks and self.supports_tasks_extension and isinstance(task_ids, list):
            for task_id in task_ids[:100]:
                if task_id not in accepted and self.extension_lookup(ctx, task_id) is not None:
                    accepted.append(task_id)
            acknowledged["taskIds"] = accepted
        if ctx.stream is None:
            raise RpcError(INTERNAL_ERROR, "subscriptions/listen needs a stream")
        subscription_id = ctx.request_id
        await ctx.stream.send(
            notification(
                "notifications/subscriptions/acknowledged",
                {"notifications": acknowledged, "_meta": {META_SUBSCRIPTION_ID: subscription_id}},
            )
        )
        await self.stream_task_notifications(ctx, subscription_id, accepted)
        return {"resultType": "complete", "_meta": {META_SUBSCRIPTION_ID: subscription_id}}

    async def stream_task_notifications(
        self, ctx: RequestContext, subscription_id: RequestId, task_ids: list[str]
    ) -> None:
        """Send each task's state now and on every change, until all are terminal (bounded)."""
        if not task_ids or ctx.stream is None:
            return
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.config.max_wait_s
        seen: dict[str, int] = {}
        while True:
            changed = self.tasks.changed_event()
            still_open = 0
            for task_id in task_ids:
                record = self.tasks.get(task_id, "extension")
                if record is None:
                    continue
                if seen.get(task_id) != record.version:
                    seen[task_id] = record.version
                    await ctx.stream.send(
                        notification("notifications/tasks", self.build_task_notification(record, subscription_id))
                    )
                if not record.terminal:
                    still_open += 1
            remaining = deadline - loop.time()
            if still_open == 0 or remaining <= 0:
                return
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(changed.wait(), min(remaining, 1.0))
