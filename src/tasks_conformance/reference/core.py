"""What both protocol eras of the reference server share: its base class ``ServerCore``.

``ServerCore`` owns the config and the task store, routes each message to an era, maps
JSON-RPC errors to HTTP statuses, holds the errors and parameters that both eras use, and runs
the tools, synchronously or as tasks. It serves no method itself: ``modern.py`` (2026-07-28)
and ``legacy.py`` (2025-11-25) add the wire of each era on top of it, and ``server.py``
combines the two into ``ReferenceServer``.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from typing import Literal

from tasks_conformance import __version__
from tasks_conformance.reference.config import ServerConfig
from tasks_conformance.reference.context import Era, RequestContext
from tasks_conformance.reference.protocol import (
    HEADER_MISMATCH,
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    JSON,
    METHOD_NOT_FOUND,
    MISSING_CAPABILITY,
    MODERN_VERSION,
    PARSE_ERROR,
    UNSUPPORTED_VERSION,
    RpcError,
    modern_meta,
    rfc3339,
)
from tasks_conformance.reference.tasks import PendingInput, TaskEra, TaskRecord, TaskStore
from tasks_conformance.reference.tools import CONFIRM_KEY, TOOLS_BY_NAME, ToolSpec, confirm_request, text_result

Handler = Callable[[RequestContext], Awaitable[JSON]]
Route = Literal["initialize", "modern", "legacy", "uninitialized"]


class ToolIO:
    """How a running tool asks the client for input. Subclasses pick the mechanism."""

    async def ask_input(self, key: str, request: JSON) -> JSON:
        raise NotImplementedError


class TaskInput(ToolIO):
    """Inside a task: park in input_required until tasks/update (extension) or a
    tasks/result stream (legacy) delivers the answer."""

    def __init__(self, server: ServerCore, record: TaskRecord) -> None:
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


class ServerCore:
    """The era-independent half of ``ReferenceServer``; see ``server.py`` for the hook map."""

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

    # ------------------------------------------------------------------ identity
    def server_info(self) -> JSON:
        return {"name": "tasks-conformance-reference", "version": __version__}

    def modern_versions(self) -> list[str]:
        # Both eras need it: server/discover lists it, and a refused initialize names it.
        return [MODERN_VERSION]

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

    # ------------------------------------------------------------------ errors and params of both eras
    def missing_capability_error(self, required: JSON, message: str) -> RpcError:
        # Here rather than in modern.py because the input check below raises it for tasks of either era.
        return RpcError(MISSING_CAPABILITY, message, {"requiredCapabilities": required}, http_status=400)

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

    def task_id_param(self, ctx: RequestContext) -> str:
        task_id = ctx.params.get("taskId")
        if not isinstance(task_id, str):
            raise RpcError(INVALID_PARAMS, "params.taskId must be a string")
        return task_id

    def unknown_task_error(self, task_id: str) -> RpcError:
        return RpcError(INVALID_PARAMS, f"Unknown task: {task_id}")

    def on_unknown_task(self, ctx: RequestContext, task_id: str) -> JSON:
        raise self.unknown_task_error(task_id)

    def format_timestamp(self, ts: float) -> str:
        return rfc3339(ts)

    # ------------------------------------------------------------------ tools and the tasks that run them
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
        self,
        era: TaskEra,
        spec: ToolSpec,
        arguments: JSON,
        ctx: RequestContext,
        *,
        ttl_ms: int | None = None,
        owner: str | None = None,
    ) -> TaskRecord:
        """Create and store the task (durable before the CreateTaskResult goes out), then run it.

        ``owner`` is the legacy session the task belongs to; the legacy wire passes it, so that
        this shared code needs to know nothing about sessions.
        """
        if self.tasks.running_count() >= self.config.max_running_tasks:
            raise RpcError(INTERNAL_ERROR, "Too many running tasks; try again later")
        record = TaskRecord(
            era=era,
            ttl_ms=self.config.ttl_ms if ttl_ms is None else ttl_ms,
            poll_interval_ms=self.config.poll_interval_ms,
            owner=owner,
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
