"""The 2025-11-25 wire of the reference server: the initialize handshake and legacy tasks.

``LegacyMixin`` answers ``initialize`` (opening a ``LegacySession``), serves ``ping``,
``tools/list`` and ``tools/call`` (synchronously, asking for input with ``elicitation/create``
on the request's stream, or as a task when ``params.task`` is given) and ``tasks/get`` /
``tasks/result`` / ``tasks/list`` / ``tasks/cancel``, scoped to the session that created each
task, and renders tasks in the 2025-11-25 shapes (``ttl`` / ``pollInterval``, ``{task: ...}``).
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import contextlib
import copy
from typing import Any, ClassVar

from tasks_conformance.server.reference.context import LegacySession, RequestContext, StreamClosed
from tasks_conformance.server.reference.core import Handler, ServerCore, ToolIO
from tasks_conformance.server.reference.protocol import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    JSON,
    LEGACY_VERSION,
    META_RELATED_TASK,
    METHOD_NOT_FOUND,
    UNSUPPORTED_VERSION,
    RpcError,
    notification,
)
from tasks_conformance.server.reference.tasks import PendingInput, TaskRecord
from tasks_conformance.server.reference.tools import TOOLS, ToolSpec


class LegacySyncInput(ToolIO):
    """A plain (non-task) 2025-11-25 tools/call: send elicitation/create on the request's stream."""

    def __init__(self, server: ServerCore, ctx: RequestContext) -> None:
        self.server = server
        self.ctx = ctx
        self.era = "legacy"
        self.client_caps = ctx.client_caps

    async def ask_input(self, key: str, request: JSON) -> JSON:
        self.server.require_input_capability("legacy", self.ctx.client_caps, request)
        try:
            return await self.ctx.ask(
                request["method"], copy.deepcopy(request["params"]), self.server.config.ask_timeout_s
            )
        except (StreamClosed, TimeoutError):
            raise RpcError(INTERNAL_ERROR, f"The client did not answer the {request['method']} request") from None


class LegacyMixin(ServerCore):
    """The 2025-11-25 handshake and methods, mixed into ``ReferenceServer``."""

    supports_legacy_tasks: ClassVar[bool] = True

    # ------------------------------------------------------------------ handshake and advertising
    def handle_initialize(self, params: JSON, session_id: str) -> tuple[JSON, LegacySession]:
        if not self.config.legacy_enabled:
            requested = params.get("protocolVersion")
            raise RpcError(
                UNSUPPORTED_VERSION,
                "This server does not support the initialize handshake; it speaks "
                + ", ".join(self.extension_versions())
                + " (use server/discover and per-request _meta)",
                {
                    "supported": self.extension_versions(),
                    "requested": requested if isinstance(requested, str) else "",
                },
                http_status=400,
            )
        caps = params.get("capabilities")
        session = LegacySession(session_id, caps if isinstance(caps, dict) else {})
        result: JSON = {
            "protocolVersion": LEGACY_VERSION,
            "capabilities": self.legacy_capabilities(),
            "serverInfo": self.server_info(),
            "instructions": self.instructions(),
        }
        return result, session

    async def handle_uninitialized(self, ctx: RequestContext) -> JSON:
        """A legacy-only server before initialize."""
        if ctx.method == "ping":
            return {}
        if ctx.method in self.legacy_handlers():
            raise RpcError(INVALID_REQUEST, "Server not initialized: send initialize first")
        raise RpcError(METHOD_NOT_FOUND, f"Method not found: {ctx.method}")

    def legacy_capabilities(self) -> JSON:
        caps: JSON = {"tools": {}}
        if self.supports_legacy_tasks:
            caps["tasks"] = {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}
        return caps

    def legacy_tool_descriptor(self, spec: ToolSpec) -> JSON:
        return spec.descriptor(legacy_execution=self.supports_legacy_tasks)

    # ------------------------------------------------------------------ dispatch and tools
    async def handle_legacy(self, ctx: RequestContext) -> JSON:
        handler = self.legacy_handlers().get(ctx.method)
        if handler is None:
            raise RpcError(METHOD_NOT_FOUND, f"Method not found: {ctx.method}")
        return await handler(ctx)

    def legacy_handlers(self) -> dict[str, Handler]:
        handlers: dict[str, Handler] = {
            "ping": self.l_ping,
            "tools/list": self.l_tools_list,
            "tools/call": self.l_tools_call,
        }
        if self.supports_legacy_tasks:
            handlers["tasks/get"] = self.l_tasks_get
            handlers["tasks/result"] = self.l_tasks_result
            handlers["tasks/list"] = self.l_tasks_list
            handlers["tasks/cancel"] = self.l_tasks_cancel
        return handlers

    async def l_ping(self, ctx: RequestContext) -> JSON:
        return {}

    async def l_tools_list(self, ctx: RequestContext) -> JSON:
        return {"tools": [self.legacy_tool_descriptor(spec) for spec in TOOLS]}

    async def l_tools_call(self, ctx: RequestContext) -> JSON:
        spec, arguments = self.parse_tool_call(ctx.params)
        task_param = ctx.params.get("task")
        if self.supports_legacy_tasks:
            if task_param is not None:
                if not isinstance(task_param, dict):
                    raise RpcError(INVALID_PARAMS, "params.task must be an object")
                if spec.task_support == "forbidden":
                    return await self.on_legacy_forbidden_with_task(ctx, spec)
                ttl = self.legacy_ttl(task_param.get("ttl"))
                record = self.start_task("legacy", spec, arguments, ctx, ttl_ms=ttl, owner=self.legacy_owner(ctx))
                record.progress_token = self.progress_token(ctx)
                return self.legacy_create_task_result(record)
            if spec.task_support == "required":
                await self.on_legacy_required_without_task(ctx, spec)
        return await self.execute_tool(spec, arguments, LegacySyncInput(self, ctx))

    async def on_legacy_required_without_task(self, ctx: RequestContext, spec: ToolSpec) -> None:
        raise RpcError(
            METHOD_NOT_FOUND,
            f'Tool {spec.name!r} requires task-augmented execution (execution.taskSupport is "required"): '
            "call it with params.task",
        )

    async def on_legacy_forbidden_with_task(self, ctx: RequestContext, spec: ToolSpec) -> JSON:
        raise RpcError(
            METHOD_NOT_FOUND,
            f"Tool {spec.name!r} does not support task-augmented execution (execution.taskSupport is "
            '"forbidden"): call it without params.task',
        )

    def legacy_ttl(self, requested: Any) -> int:
        if requested is None:
            return self.config.ttl_ms
        if not isinstance(requested, int) or isinstance(requested, bool):
            raise RpcError(INVALID_PARAMS, "params.task.ttl must be an integer number of milliseconds")
        return max(1_000, min(requested, max(self.config.ttl_ms, 3_600_000)))

    @staticmethod
    def progress_token(ctx: RequestContext) -> str | int | None:
        meta = ctx.params.get("_meta")
        token = meta.get("progressToken") if isinstance(meta, dict) else None
        if isinstance(token, str) or (isinstance(token, int) and not isinstance(token, bool)):
            return token
        return None

    def legacy_owner(self, ctx: RequestContext) -> str | None:
        return ctx.session.session_id if ctx.session is not None else None

    # ------------------------------------------------------------------ tasks/* (scoped to the session)
    async def l_tasks_get(self, ctx: RequestContext) -> JSON:
        record = self.legacy_lookup(ctx)
        return self.legacy_task_object(record)

    async def l_tasks_list(self, ctx: RequestContext) -> JSON:
        cursor = ctx.params.get("cursor")
        offset = 0
        if cursor is not None:
            decoded = self.decode_cursor(cursor)
            if decoded is None:
                raise RpcError(INVALID_PARAMS, f"Invalid cursor: {cursor!r}")
            offset = decoded
        records = self.tasks.list("legacy", self.legacy_owner(ctx))
        size = self.config.list_page_size
        page = records[offset : offset + size]
        result: JSON = {"tasks": [self.legacy_task_object(r) for r in page]}
        if offset + size < len(records):
            result["nextCursor"] = self.encode_cursor(offset + size)
        return result

    @staticmethod
    def encode_cursor(offset: int) -> str:
        return base64.urlsafe_b64encode(f"tasks:{offset}".encode()).decode().rstrip("=")

    @staticmethod
    def decode_cursor(cursor: Any) -> int | None:
        if not isinstance(cursor, str) or len(cursor) > 64:
            return None
        try:
            text = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
        except (binascii.Error, UnicodeDecodeError, ValueError):
            return None
        prefix, _, number = text.partition(":")
        if prefix != "tasks" or not number.isdigit():
            return None
        return int(number)

    async def l_tasks_cancel(self, ctx: RequestContext) -> JSON:
        record = self.legacy_lookup(ctx)
        if record.terminal:
            return self.on_legacy_cancel_terminal(ctx, record)
        record.cancel()
        return self.legacy_cancel_result(record)

    def on_legacy_cancel_terminal(self, ctx: RequestContext, record: TaskRecord) -> JSON:
        raise RpcError(
            INVALID_PARAMS,
            f"Task {record.task_id} is already {record.status}; a terminal task cannot be cancelled",
        )

    def legacy_lookup(self, ctx: RequestContext) -> TaskRecord:
        task_id = self.task_id_param(ctx)
        record = self.tasks.get(task_id, "legacy", self.legacy_owner(ctx))
        if record is None:
            self.on_unknown_task(ctx, task_id)
            raise self.unknown_task_error(task_id)
        return record

    async def l_tasks_result(self, ctx: RequestContext) -> JSON:
        record = self.legacy_lookup(ctx)
        if not record.terminal and ctx.stream is not None:
            await ctx.stream.begin()  # blocking: answer on a stream, so input requests can precede the result
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.config.max_wait_s
        asker: asyncio.Task[None] | None = None
        sent_progress: tuple[int, int] | None = None
        try:
            while True:
                if record.terminal:
                    return self.legacy_task_payload(record)
                if record.gone:
                    raise RpcError(INVALID_PARAMS, f"Task {record.task_id} expired")
                remaining = deadline - loop.time()
                if remaining <= 0:
                    raise RpcError(INTERNAL_ERROR, f"Task {record.task_id} did not finish in time")
                changed, progressed = record.changed_event(), record.progressed_event()
                if record.progress != sent_progress and ctx.stream is not None:
                    # The task's progress travels on the stream of a tasks/result that waits for it,
                    # and only while the task runs: progress stops once it is terminal.
                    sent_progress = record.progress
                    with contextlib.suppress(StreamClosed):
                        await ctx.stream.send(self.legacy_progress_notification(record))
                if (asker is None or asker.done()) and ctx.stream is not None:
                    pending = next((p for p in record.pending.values() if not p.asking), None)
                    asker = asyncio.create_task(self._legacy_ask(ctx, record, pending)) if pending else None
                waiters = [asyncio.create_task(changed.wait()), asyncio.create_task(progressed.wait())]
                waitables: set[asyncio.Future[Any]] = set(waiters)
                if asker is not None:
                    waitables.add(asker)
                try:
                    await asyncio.wait(waitables, timeout=min(remaining, 1.0), return_when=asyncio.FIRST_COMPLETED)
                finally:
                    for waiter in waiters:
                        waiter.cancel()
        finally:
            if asker is not None and not asker.done():
                asker.cancel()

    async def _legacy_ask(self, ctx: RequestContext, record: TaskRecord, pending: PendingInput) -> None:
        """Send one outstanding input request of a task on this tasks/result stream."""
        pending.asking = True
        try:
            params = copy.deepcopy(pending.request.get("params") or {})
            params["_meta"] = self.legacy_input_meta(record)
            try:
                answer = await ctx.ask(str(pending.request["method"]), params, self.config.ask_timeout_s)
            except RpcError:
                answer = {"action": "cancel"}  # the client refused the request
            except (StreamClosed, TimeoutError):
                return
            record.answer(pending.key, answer)
        finally:
            pending.asking = False

    def legacy_input_meta(self, record: TaskRecord) -> JSON:
        """The _meta of a server request made for a task: it names the task (S-LEG-MUST-13)."""
        return {META_RELATED_TASK: {"taskId": record.task_id}}

    def legacy_progress_notification(self, record: TaskRecord) -> JSON:
        done, total = record.progress or (0, 0)
        return notification("notifications/progress", {
            "progressToken": record.progress_token, "progress": done, "total": total,
            "message": f"step {done} of {total}",
            # A notification about a task says which task it is about.
            "_meta": {META_RELATED_TASK: {"taskId": record.task_id}},
        })

    # ------------------------------------------------------------------ task shapes
    def legacy_task_payload(self, record: TaskRecord) -> JSON:
        if record.status == "cancelled":
            raise RpcError(
                INTERNAL_ERROR,
                f"Task {record.task_id} was cancelled; it has no result",
                {"taskId": record.task_id, "status": "cancelled"},
            )
        if record.result is not None:
            return self.legacy_result_payload(record, copy.deepcopy(record.result))
        error = record.error or {"code": INTERNAL_ERROR, "message": "Task failed"}
        raise RpcError(
            int(error.get("code", INTERNAL_ERROR)),
            str(error.get("message", "")),
            error.get("data"),
            include_data="data" in error,
        )

    def legacy_result_payload(self, record: TaskRecord, result: JSON) -> JSON:
        meta = result.get("_meta")
        meta = dict(meta) if isinstance(meta, dict) else {}
        meta[META_RELATED_TASK] = {"taskId": record.task_id}
        result["_meta"] = meta
        return result

    def legacy_task_object(self, record: TaskRecord) -> JSON:
        task: JSON = {
            "taskId": record.task_id,
            "status": record.status,
            "createdAt": self.format_timestamp(record.created_at),
            "lastUpdatedAt": self.format_timestamp(record.last_updated_at),
            "ttl": record.ttl_ms,
        }
        if record.poll_interval_ms is not None:
            task["pollInterval"] = record.poll_interval_ms
        if record.status_message:
            task["statusMessage"] = record.status_message
        return task

    def legacy_create_task_result(self, record: TaskRecord) -> JSON:
        return {"task": self.legacy_task_object(record)}

    def legacy_cancel_result(self, record: TaskRecord) -> JSON:
        return self.legacy_task_object(record)
