"""The protocol core of the reference server: both eras, transport-agnostic.

``ReferenceServer`` answers one JSON-RPC request at a time given a ``RequestContext``; the
transports (``stdio.py``, ``http.py``) decide the era of each message with ``route()``, call
``handle_initialize`` / ``handle_modern`` / ``handle_legacy`` / ``handle_uninitialized``, and
turn an ``RpcError`` into an error response (``http_status_for`` picks the HTTP status).

Hook points
-----------
Every rule the conformance CLI judges lives in one small method, so that a fixture subclass
(``fixtures/broken_server.py``) can break exactly one rule by overriding one method:

Configuration and advertising
  ``adjust_config(config)``             the effective ServerConfig (force an era, slow polling, ...)
  ``supports_legacy_tasks`` / ``supports_tasks_extension``   class flags: serve tasks at all
  ``server_info()``                     Implementation object (serverInfo)
  ``modern_versions()``                 versions served on the 2026-07-28 envelope
  ``discover_capabilities()``           ServerCapabilities in the server/discover result
  ``legacy_capabilities()``             ServerCapabilities in the 2025-11-25 InitializeResult
  ``legacy_tool_descriptor(spec)`` / ``modern_tool_descriptor(spec)``   tools/list entries

Extension wire (2026-07-28)
  ``validate_routing_headers(ctx, meta)``  HTTP MCP-Protocol-Version / Mcp-Method / Mcp-Name -> -32020
  ``expected_mcp_name(ctx)``            which body value Mcp-Name must equal, and whether it is required
  ``declares_tasks_extension(caps)``    does this request's clientCapabilities declare the extension
  ``require_tasks_declared(ctx)``       -32021 for undeclared tasks/* and task subscriptions
  ``should_create_task(ctx, spec, declared)``  answer tools/call with a CreateTaskResult?
  ``on_undeclared_required_tool(ctx, spec, arguments)``  -32021 for a task-only tool called undeclared
  ``missing_capability_error(required, message)``  the -32021 error body
  ``header_mismatch_error(message)``    the -32020 error body
  ``unsupported_version_error(requested)``  the -32022 error body
  ``task_fields(record)``               the flat Task fields (taskId, status, timestamps, ttlMs, ...)
  ``format_timestamp(ts)``              createdAt / lastUpdatedAt text
  ``build_create_task_result(record)``  the CreateTaskResult (resultType "task", flat)
  ``build_detailed_task(record)``       DetailedTask (inline result / error / inputRequests)
  ``build_get_task_result(record)``     tasks/get result (resultType "complete")
  ``build_task_notification(record, subscription_id)``  notifications/tasks params
  ``apply_input_responses(record, responses)``  tasks/update: deliver outstanding answers
  ``build_update_ack(record)`` / ``build_cancel_ack(record)``  the empty acks
  ``on_unknown_task(ctx, task_id)``     unknown taskId on any tasks/* (-32602)

Legacy wire (2025-11-25)
  ``legacy_create_task_result(record)`` ``{task: {...}}``
  ``legacy_task_object(record)``        flat Task with ttl / pollInterval
  ``legacy_result_payload(record, result)``  tasks/result payload (+ related-task _meta)
  ``legacy_cancel_result(record)``      tasks/cancel result
  ``on_legacy_cancel_terminal(ctx, record)``  -32602 for cancelling a terminal task
  ``on_legacy_required_without_task(ctx, spec)``  -32601 for a required tool called without task
  ``on_legacy_forbidden_with_task(ctx, spec)``    -32601 for a forbidden tool called with task

Both eras
  ``tool_duration_ms(spec, arguments, as_task=)``  how long a tool works
  ``execute_tool(spec, arguments, io)`` the tools themselves
  ``settle_tool_result(record, result)``  isError -> completed (extension) / failed (legacy)
  ``http_status_for(era, error)``       HTTP status of a JSON-RPC error
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import contextlib
import copy
from collections.abc import Awaitable, Callable
from typing import Any, ClassVar, Literal

from tasks_conformance import __version__
from tasks_conformance.reference.config import ServerConfig
from tasks_conformance.reference.context import Era, LegacySession, RequestContext, StreamClosed
from tasks_conformance.reference.protocol import (
    HEADER_MISMATCH,
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    JSON,
    LEGACY_VERSION,
    META_CLIENT_CAPS,
    META_PROTOCOL_VERSION,
    META_RELATED_TASK,
    META_SERVER_INFO,
    META_SUBSCRIPTION_ID,
    METHOD_NOT_FOUND,
    MISSING_CAPABILITY,
    MODERN_VERSION,
    PARSE_ERROR,
    TASKS_EXT,
    UNSUPPORTED_VERSION,
    RequestId,
    RpcError,
    decode_header_value,
    modern_meta,
    notification,
    rfc3339,
)
from tasks_conformance.reference.tasks import PendingInput, TaskEra, TaskRecord, TaskStore
from tasks_conformance.reference.tools import (
    CONFIRM_KEY,
    TOOLS,
    TOOLS_BY_NAME,
    ToolSpec,
    confirm_request,
    text_result,
)

Handler = Callable[[RequestContext], Awaitable[JSON]]
Route = Literal["initialize", "modern", "legacy", "uninitialized"]

LEGACY_PAGE_SIZE = 50
TASK_METHODS = ("tasks/get", "tasks/update", "tasks/cancel")


class NeedInput(Exception):
    """A synchronous 2026-07-28 tools/call needs client input: answer with an InputRequiredResult."""

    def __init__(self, input_requests: JSON) -> None:
        super().__init__("input required")
        self.input_requests = input_requests


class ToolIO:
    """How a running tool asks the client for input. Subclasses pick the mechanism."""

    async def ask_input(self, key: str, request: JSON) -> JSON:
        raise NotImplementedError


class TaskInput(ToolIO):
    """Inside a task: park in input_required until tasks/update (extension) or a
    tasks/result stream (legacy) delivers the answer."""

    def __init__(self, server: ReferenceServer, record: TaskRecord) -> None:
        self.server = server
        self.record = record

    async def ask_input(self, key: str, request: JSON) -> JSON:
        record = self.record
        if not self.server.client_can_elicit(record.client_caps):
            raise self.server.input_capability_error(record.era)
        if key in record.used_keys:  # keys are unique over the task's lifetime
            raise RpcError(INTERNAL_ERROR, f"input key {key!r} already used")
        future: asyncio.Future[JSON] = asyncio.get_running_loop().create_future()
        record.pending[key] = PendingInput(key, request, future)
        record.used_keys.add(key)
        record.set_status("input_required", f"Waiting for the client's answer to {key!r}")
        try:
            answer = await asyncio.wait_for(future, self.server.config.max_wait_s)
        except TimeoutError:
            raise RpcError(INTERNAL_ERROR, f"No answer to input request {key!r} arrived in time") from None
        finally:
            record.pending.pop(key, None)
        if record.status == "input_required" and not record.pending:
            record.set_status("working")
        return answer


class LegacySyncInput(ToolIO):
    """A plain (non-task) 2025-11-25 tools/call: send elicitation/create on the request's stream."""

    def __init__(self, server: ReferenceServer, ctx: RequestContext) -> None:
        self.server = server
        self.ctx = ctx

    async def ask_input(self, key: str, request: JSON) -> JSON:
        if not self.server.client_can_elicit(self.ctx.client_caps):
            raise self.server.input_capability_error("legacy")
        try:
            return await self.ctx.ask(
                request["method"], copy.deepcopy(request["params"]), self.server.config.ask_timeout_s
            )
        except (StreamClosed, TimeoutError):
            raise RpcError(INTERNAL_ERROR, "The client did not answer the elicitation request") from None


class MrtrInput(ToolIO):
    """A synchronous 2026-07-28 tools/call: answers come in params.inputResponses (MRTR retry)."""

    def __init__(self, server: ReferenceServer, ctx: RequestContext) -> None:
        self.server = server
        self.ctx = ctx

    async def ask_input(self, key: str, request: JSON) -> JSON:
        responses = self.ctx.params.get("inputResponses")
        if isinstance(responses, dict) and isinstance(responses.get(key), dict):
            answer: JSON = responses[key]
            return answer
        if not self.server.client_can_elicit(self.ctx.client_caps):
            raise self.server.input_capability_error("modern")
        raise NeedInput({key: copy.deepcopy(request)})


class ReferenceServer:
    """A small, spec-compliant MCP server for both tasks wires. See the module docstring for hooks."""

    supports_legacy_tasks: ClassVar[bool] = True
    supports_tasks_extension: ClassVar[bool] = True

    def __init__(self, config: ServerConfig | None = None) -> None:
        self.config = self.adjust_config(config or ServerConfig())
        self.tasks = TaskStore(self.config.max_tasks)
        self._sweeper: asyncio.Task[None] | None = None

    # ------------------------------------------------------------------ lifecycle
    def adjust_config(self, config: ServerConfig) -> ServerConfig:
        return config

    async def start(self) -> None:
        if self._sweeper is None:
            self._sweeper = asyncio.create_task(self._sweep())

    async def aclose(self) -> None:
        if self._sweeper is not None:
            self._sweeper.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._sweeper
            self._sweeper = None
        self.tasks.close()

    async def _sweep(self) -> None:
        while True:
            await asyncio.sleep(1.0)
            self.tasks.purge_expired()

    # ------------------------------------------------------------------ identity / advertising
    def server_info(self) -> JSON:
        return {"name": "tasks-conformance-reference", "version": __version__}

    def modern_versions(self) -> list[str]:
        return [MODERN_VERSION]

    def discover_capabilities(self) -> JSON:
        caps: JSON = {"tools": {}}
        if self.supports_tasks_extension:
            caps["extensions"] = {TASKS_EXT: {}}
        return caps

    def legacy_capabilities(self) -> JSON:
        caps: JSON = {"tools": {}}
        if self.supports_legacy_tasks:
            caps["tasks"] = {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}
        return caps

    def legacy_tool_descriptor(self, spec: ToolSpec) -> JSON:
        return spec.descriptor(legacy_execution=self.supports_legacy_tasks)

    def modern_tool_descriptor(self, spec: ToolSpec) -> JSON:
        return spec.descriptor(legacy_execution=False)

    def instructions(self) -> str:
        return (
            "Reference server of tasks-conformance. Task-capable tools: slow_compute, long_job (task only), "
            "tool_error, rpc_error, confirm_action (needs elicitation), destructive_op (destructive)."
        )

    # ------------------------------------------------------------------ era routing
    def route(self, method: str, params: JSON, *, has_session: bool) -> Route:
        """Which rules serve this request (the transport supplies whether a legacy session exists)."""
        is_modern = modern_meta(params) is not None
        if method == "initialize" and not is_modern:
            return "initialize"
        if is_modern and self.config.modern_enabled:
            return "modern"
        if has_session:
            return "legacy"
        if not self.config.modern_enabled:
            return "uninitialized"
        return "modern"

    def wants_stream(self, era: Era, method: str, params: JSON) -> bool:
        """HTTP: answer with SSE (so that messages can precede the response) instead of JSON."""
        if era == "modern":
            return method == "subscriptions/listen"
        if method == "tasks/result":
            return True
        if method == "tools/call" and "task" not in params:
            spec = TOOLS_BY_NAME.get(params.get("name"))  # type: ignore[arg-type]
            return spec is not None and spec.needs_input
        return False

    def http_status_for(self, era: Era, error: RpcError) -> int:
        if error.http_status is not None:
            return error.http_status
        if error.code in (PARSE_ERROR, INVALID_REQUEST):
            return 400
        if era == "modern":
            if error.code == METHOD_NOT_FOUND:
                return 404
            if error.code in (HEADER_MISMATCH, MISSING_CAPABILITY, UNSUPPORTED_VERSION):
                return 400
        return 200

    # ------------------------------------------------------------------ legacy handshake
    def handle_initialize(self, params: JSON, session_id: str) -> tuple[JSON, LegacySession]:
        if not self.config.legacy_enabled:
            requested = params.get("protocolVersion")
            raise RpcError(
                UNSUPPORTED_VERSION,
                "This server does not support the initialize handshake; it speaks "
                + ", ".join(self.modern_versions())
                + " (use server/discover and per-request _meta)",
                {
                    "supported": self.modern_versions(),
                    "requested": requested if isinstance(requested, str) else "",
                },
                http_status=400,
            )
        caps = params.get("capabilities")
        session = LegacySession(
            session_id,
            caps if isinstance(caps, dict) else {},
            params.get("clientInfo"),
            params.get("protocolVersion"),
        )
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

    # ================================================================== 2026-07-28 (modern)
    async def handle_modern(self, ctx: RequestContext) -> JSON:
        meta = modern_meta(ctx.params)
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
        if version not in self.modern_versions():
            raise self.unsupported_version_error(version)
        caps = meta.get(META_CLIENT_CAPS)
        if not isinstance(caps, dict):
            raise RpcError(
                INVALID_PARAMS,
                f'Missing or invalid params._meta["{META_CLIENT_CAPS}"] (required on every request; {{}} means none)',
                http_status=400,
            )
        ctx.client_caps = caps
        handler = self.modern_handlers().get(ctx.method)
        if handler is None:
            raise RpcError(METHOD_NOT_FOUND, f"Method not found: {ctx.method}")
        return self.finish_modern_result(await handler(ctx))

    def modern_handlers(self) -> dict[str, Handler]:
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

    def finish_modern_result(self, result: JSON) -> JSON:
        result.setdefault("resultType", "complete")
        meta = result.get("_meta")
        if not isinstance(meta, dict):
            meta = {}
            result["_meta"] = meta
        meta.setdefault(META_SERVER_INFO, self.server_info())
        return result

    # -- envelope / headers ---------------------------------------------------------
    def header_mismatch_error(self, message: str) -> RpcError:
        return RpcError(HEADER_MISMATCH, message, http_status=400)

    def unsupported_version_error(self, requested: str) -> RpcError:
        return RpcError(
            UNSUPPORTED_VERSION,
            f"Unsupported protocol version: {requested}",
            {"supported": self.modern_versions(), "requested": requested},
            http_status=400,
        )

    def missing_capability_error(self, required: JSON, message: str) -> RpcError:
        return RpcError(MISSING_CAPABILITY, message, {"requiredCapabilities": required}, http_status=400)

    def expected_mcp_name(self, ctx: RequestContext) -> tuple[str | None, bool]:
        """(value Mcp-Name must equal, whether a missing header is an error)."""
        if ctx.method == "tools/call":
            name = ctx.params.get("name")
            return (name if isinstance(name, str) else None), True
        if ctx.method in TASK_METHODS:
            task_id = ctx.params.get("taskId")
            # Missing Mcp-Name on tasks/* is tolerated (policy P-03); a mismatch is not.
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

    # -- capabilities -----------------------------------------------------------------
    def declares_tasks_extension(self, caps: JSON) -> bool:
        extensions = caps.get("extensions")
        return isinstance(extensions, dict) and isinstance(extensions.get(TASKS_EXT), dict)

    def client_can_elicit(self, caps: JSON) -> bool:
        elicitation = caps.get("elicitation")
        if not isinstance(elicitation, dict):
            return False
        return not elicitation or "form" in elicitation  # {} means form mode (2025-11-25 compatibility)

    def input_capability_error(self, era: TaskEra) -> RpcError:
        message = "confirm_action needs to ask the user, but the client did not declare the elicitation capability"
        if era == "modern":
            return self.missing_capability_error({"elicitation": {"form": {}}}, message + " in this request")
        return RpcError(INTERNAL_ERROR, message + " at initialize")

    def require_tasks_declared(self, ctx: RequestContext) -> None:
        if not self.declares_tasks_extension(ctx.client_caps):
            raise self.missing_capability_error(
                {"extensions": {TASKS_EXT: {}}},
                f"{ctx.method} requires the {TASKS_EXT} extension in this request's "
                f"_meta[{META_CLIENT_CAPS!r}].extensions",
            )

    # -- handlers ---------------------------------------------------------------------
    async def m_discover(self, ctx: RequestContext) -> JSON:
        return {
            "resultType": "complete",
            "supportedVersions": self.modern_versions(),
            "capabilities": self.discover_capabilities(),
            "instructions": self.instructions(),
            "ttlMs": 60_000,
            "cacheScope": "public",
        }

    async def m_tools_list(self, ctx: RequestContext) -> JSON:
        return {
            "resultType": "complete",
            "tools": [self.modern_tool_descriptor(spec) for spec in TOOLS],
            "ttlMs": 60_000,
            "cacheScope": "public",
        }

    async def m_tools_call(self, ctx: RequestContext) -> JSON:
        spec, arguments = self.parse_tool_call(ctx.params)
        if self.supports_tasks_extension and spec.task_support != "forbidden":
            declared = self.declares_tasks_extension(ctx.client_caps)
            if self.should_create_task(ctx, spec, declared):
                record = self.start_task("modern", spec, arguments, ctx)
                return self.build_create_task_result(record)
            if spec.task_support == "required":
                return await self.on_undeclared_required_tool(ctx, spec, arguments)
        return await self.call_tool_sync_modern(ctx, spec, arguments)

    def should_create_task(self, ctx: RequestContext, spec: ToolSpec, declared: bool) -> bool:
        return declared

    async def on_undeclared_required_tool(self, ctx: RequestContext, spec: ToolSpec, arguments: JSON) -> JSON:
        raise self.missing_capability_error(
            {"extensions": {TASKS_EXT: {}}},
            f"Tool {spec.name!r} runs only as a task: declare the {TASKS_EXT} extension in this request's "
            f"_meta[{META_CLIENT_CAPS!r}].extensions",
        )

    async def call_tool_sync_modern(self, ctx: RequestContext, spec: ToolSpec, arguments: JSON) -> JSON:
        try:
            result = await self.execute_tool(spec, arguments, MrtrInput(self, ctx))
        except NeedInput as need:
            return {"resultType": "input_required", "inputRequests": need.input_requests}
        return {"resultType": "complete", **result}

    async def m_tasks_get(self, ctx: RequestContext) -> JSON:
        self.require_tasks_declared(ctx)
        task_id = self.task_id_param(ctx)
        record = self.tasks.get(task_id, "modern")
        if record is None:
            return self.on_unknown_task(ctx, task_id)
        return self.build_get_task_result(record)

    async def m_tasks_update(self, ctx: RequestContext) -> JSON:
        self.require_tasks_declared(ctx)
        task_id = self.task_id_param(ctx)
        responses = ctx.params.get("inputResponses")
        if not isinstance(responses, dict):
            raise RpcError(INVALID_PARAMS, "params.inputResponses must be an object")
        record = self.tasks.get(task_id, "modern")
        if record is None:
            return self.on_unknown_task(ctx, task_id)
        if not record.terminal:
            self.apply_input_responses(record, responses)
        return self.build_update_ack(record)

    async def m_tasks_cancel(self, ctx: RequestContext) -> JSON:
        self.require_tasks_declared(ctx)
        task_id = self.task_id_param(ctx)
        record = self.tasks.get(task_id, "modern")
        if record is None:
            return self.on_unknown_task(ctx, task_id)
        record.cancel()  # no-op for a terminal task; the ack is the same
        return self.build_cancel_ack(record)

    def task_id_param(self, ctx: RequestContext) -> str:
        task_id = ctx.params.get("taskId")
        if not isinstance(task_id, str):
            raise RpcError(INVALID_PARAMS, "params.taskId must be a string")
        return task_id

    def unknown_task_error(self, task_id: str) -> RpcError:
        return RpcError(INVALID_PARAMS, f"Unknown task: {task_id}")

    def on_unknown_task(self, ctx: RequestContext, task_id: str) -> JSON:
        raise self.unknown_task_error(task_id)

    def apply_input_responses(self, record: TaskRecord, responses: JSON) -> None:
        for key, value in responses.items():
            if isinstance(value, dict):
                record.answer(key, value)  # keys that are not outstanding are ignored

    def build_update_ack(self, record: TaskRecord) -> JSON:
        return {"resultType": "complete"}

    def build_cancel_ack(self, record: TaskRecord) -> JSON:
        return {"resultType": "complete"}

    # -- task shapes (extension) --------------------------------------------------------
    def format_timestamp(self, ts: float) -> str:
        return rfc3339(ts)

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

    # -- subscriptions/listen ------------------------------------------------------------
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
                if task_id not in accepted and self.tasks.get(task_id, "modern") is not None:
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
                record = self.tasks.get(task_id, "modern")
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

    # ================================================================== 2025-11-25 (legacy)
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
                record = self.start_task("legacy", spec, arguments, ctx, ttl_ms=ttl)
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

    def legacy_owner(self, ctx: RequestContext) -> str | None:
        return ctx.session.session_id if ctx.session is not None else None

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
        page = records[offset : offset + LEGACY_PAGE_SIZE]
        result: JSON = {"tasks": [self.legacy_task_object(r) for r in page]}
        if offset + LEGACY_PAGE_SIZE < len(records):
            result["nextCursor"] = self.encode_cursor(offset + LEGACY_PAGE_SIZE)
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
        try:
            while True:
                if record.terminal:
                    return self.legacy_task_payload(record)
                if record.gone:
                    raise RpcError(INVALID_PARAMS, f"Task {record.task_id} expired")
                remaining = deadline - loop.time()
                if remaining <= 0:
                    raise RpcError(INTERNAL_ERROR, f"Task {record.task_id} did not finish in time")
                changed = record.changed_event()
                if (asker is None or asker.done()) and ctx.stream is not None:
                    pending = next((p for p in record.pending.values() if not p.asking), None)
                    asker = asyncio.create_task(self._legacy_ask(ctx, record, pending)) if pending else None
                waiter = asyncio.create_task(changed.wait())
                waitables: set[asyncio.Future[Any]] = {waiter}
                if asker is not None:
                    waitables.add(asker)
                try:
                    await asyncio.wait(waitables, timeout=min(remaining, 1.0), return_when=asyncio.FIRST_COMPLETED)
                finally:
                    waiter.cancel()
        finally:
            if asker is not None and not asker.done():
                asker.cancel()

    async def _legacy_ask(self, ctx: RequestContext, record: TaskRecord, pending: PendingInput) -> None:
        """Send one outstanding input request of a task on this tasks/result stream."""
        pending.asking = True
        try:
            params = copy.deepcopy(pending.request.get("params") or {})
            params["_meta"] = {META_RELATED_TASK: {"taskId": record.task_id}}
            try:
                answer = await ctx.ask(str(pending.request["method"]), params, self.config.ask_timeout_s)
            except RpcError:
                answer = {"action": "cancel"}  # the client refused the request
            except (StreamClosed, TimeoutError):
                return
            record.answer(pending.key, answer)
        finally:
            pending.asking = False

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

    # ================================================================== tools (both eras)
    def parse_tool_call(self, params: JSON) -> tuple[ToolSpec, JSON]:
        name = params.get("name")
        if not isinstance(name, str):
            raise RpcError(INVALID_PARAMS, "params.name must be a string")
        spec = TOOLS_BY_NAME.get(name)
        if spec is None:
            raise RpcError(INVALID_PARAMS, f"Unknown tool: {name}")
        arguments = params.get("arguments")
        if arguments is None:
            arguments = {}
        if not isinstance(arguments, dict):
            raise RpcError(INVALID_PARAMS, "params.arguments must be an object")
        if spec.takes_text and not isinstance(arguments.get("text"), str):
            raise RpcError(INVALID_PARAMS, f"{name} needs a string argument 'text'")
        duration = arguments.get("durationMs")
        if duration is not None and (not isinstance(duration, int) or isinstance(duration, bool) or duration < 0):
            raise RpcError(INVALID_PARAMS, "arguments.durationMs must be a non-negative integer")
        return spec, arguments

    def tool_duration_ms(self, spec: ToolSpec, arguments: JSON, *, as_task: bool) -> int:
        duration = arguments.get("durationMs")
        if isinstance(duration, int) and not isinstance(duration, bool) and duration >= 0:
            return min(duration, self.config.max_tool_duration_ms)
        return min(self.config.task_duration_ms, self.config.max_tool_duration_ms)

    async def execute_tool(self, spec: ToolSpec, arguments: JSON, io: ToolIO) -> JSON:
        """Run one tool; returns a CallToolResult (without resultType) or raises RpcError."""
        if spec.name == "echo":
            return text_result(str(arguments.get("text", "")))
        duration = self.tool_duration_ms(spec, arguments, as_task=isinstance(io, TaskInput))
        if spec.name == "confirm_action":
            answer = await io.ask_input(CONFIRM_KEY, confirm_request())
            await asyncio.sleep(min(duration, 100) / 1000.0)  # a short working phase after the answer
            content = answer.get("content")
            if answer.get("action") == "accept" and not (isinstance(content, dict) and content.get("confirm") is False):
                return text_result("confirm_action: confirmed by the user; action performed")
            return text_result(f"confirm_action: not confirmed (action={answer.get('action')!r}); nothing done")
        await asyncio.sleep(duration / 1000.0)
        if spec.name == "tool_error":
            return text_result("tool_error: the tool reported a failure (simulated)", is_error=True)
        if spec.name == "rpc_error":
            raise RpcError(INTERNAL_ERROR, "rpc_error: the tool failed with a JSON-RPC error (simulated)")
        if spec.name == "destructive_op":
            return text_result(f"destructive_op: pretended to delete something after {duration} ms")
        return text_result(f"{spec.name}: finished after {duration} ms")

    def start_task(
        self, era: TaskEra, spec: ToolSpec, arguments: JSON, ctx: RequestContext, *, ttl_ms: int | None = None
    ) -> TaskRecord:
        """Create and store the task (durable before the CreateTaskResult goes out), then run it."""
        if self.tasks.running_count() >= self.config.max_running_tasks:
            raise RpcError(INTERNAL_ERROR, "Too many running tasks; try again later")
        record = TaskRecord(
            era=era,
            tool=spec.name,
            ttl_ms=self.config.ttl_ms if ttl_ms is None else ttl_ms,
            poll_interval_ms=self.config.poll_interval_ms,
            owner=self.legacy_owner(ctx) if era == "legacy" else None,
            client_caps=ctx.client_caps,
        )
        self.tasks.add(record)
        record.runner = asyncio.create_task(self._run_task(record, spec, arguments))
        return record

    async def _run_task(self, record: TaskRecord, spec: ToolSpec, arguments: JSON) -> None:
        try:
            result = await self.execute_tool(spec, arguments, TaskInput(self, record))
        except RpcError as exc:
            record.fail(exc.to_json(), f"{spec.name} failed: {exc.message}")
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # a bug in a tool must not kill the server
            record.fail({"code": INTERNAL_ERROR, "message": "Internal error"}, f"{spec.name} crashed: {exc!r}")
        else:
            self.settle_tool_result(record, result)

    def settle_tool_result(self, record: TaskRecord, result: JSON) -> None:
        if result.get("isError") is True and record.era == "legacy":
            # 2025-11-25: a tool error is a task failure; tasks/result still returns the CallToolResult.
            record.complete(result, status="failed", message="The tool reported an error (isError: true)")
        else:
            # Extension: isError is still "completed" (S-EXT-MUST-13).
            record.complete(result)
