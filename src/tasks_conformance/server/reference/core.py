"""What both protocol eras of the reference server share: its base class ``ServerCore``.

``ServerCore`` owns the config and the task store, routes each message to an era, maps
JSON-RPC errors to HTTP statuses, holds the errors and parameters that both eras use, and runs
the tools, synchronously or as tasks. It serves no method itself: ``extension.py`` (2026-07-28)
and ``legacy.py`` (2025-11-25) add the wire of each era on top of it, and ``server.py``
combines the two into ``ReferenceServer``.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import secrets
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Literal

from tasks_conformance import __version__
from tasks_conformance.core.eras import Era
from tasks_conformance.server.reference.config import ServerConfig
from tasks_conformance.server.reference.context import RequestContext
from tasks_conformance.server.reference.protocol import (
    EXTENSION_VERSION,
    HEADER_MISMATCH,
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    JSON,
    METHOD_NOT_FOUND,
    MISSING_CAPABILITY,
    PARSE_ERROR,
    UNSUPPORTED_VERSION,
    RpcError,
    extension_meta,
    rfc3339,
)
from tasks_conformance.server.reference.tasks import PendingInput, TaskRecord, TaskStore
from tasks_conformance.server.reference.tools import (
    CONFIRM_KEY,
    MULTI_KEYS,
    NAME_KEY,
    SAMPLING_KEY,
    TOOLS_BY_NAME,
    ToolSpec,
    confirm_request,
    name_request,
    sampling_request,
    text_result,
    user_name_request,
)

if TYPE_CHECKING:
    from tasks_conformance.server.reference.journal import TaskJournal

Handler = Callable[[RequestContext], Awaitable[JSON]]
#: The work of a ``work``-kind tool is done in this many steps, each one a progress report.
PROGRESS_STEPS = 4
Route = Literal[Era, "initialize", "uninitialized"]  # an era: that wire serves the request


class ToolIO:
    """How a running tool asks the client for input. Subclasses pick the mechanism."""

    #: The era of the request (or task) the tool runs for, and its client's capabilities.
    era: Era
    client_caps: JSON

    async def ask_input(self, key: str, request: JSON) -> JSON:
        raise NotImplementedError

    def progress(self, done: int, total: int) -> None:
        """The tool's work so far; only a legacy task with a progressToken reports it."""

    async def ask_inputs(self, requests: dict[str, JSON]) -> dict[str, JSON]:
        """Ask several things at once (all outstanding together); the answers by key."""
        keys = list(requests)
        answers = await asyncio.gather(*(self.ask_input(key, requests[key]) for key in keys))
        return dict(zip(keys, answers, strict=True))


class TaskInput(ToolIO):
    """Inside a task: park in input_required until tasks/update (extension) or a
    tasks/result stream (legacy) delivers the answer."""

    def __init__(self, server: ServerCore, record: TaskRecord) -> None:
        self.server = server
        self.record = record
        self.era = record.era
        self.client_caps = record.client_caps

    def progress(self, done: int, total: int) -> None:
        self.record.report_progress(done, total)

    async def ask_input(self, key: str, request: JSON) -> JSON:
        record = self.record
        given = record.given_answers.pop(key, None)
        if given is not None:  # answered before the task existed (2026-07-28 MRTR, then a task)
            return given
        self.server.require_input_capability(record.era, record.client_caps, request)
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
        if self.config.task_store is not None:
            self.open_task_store(self.config.task_store)

    def open_task_store(self, path: str) -> None:
        """--task-store: replay the journal into the store, then write every confirmed state to it."""
        from tasks_conformance.server.reference.journal import TaskJournal

        journal = TaskJournal(path)
        records = self.replayed_tasks(journal)
        journal.open(records)
        self.tasks.restore(records)
        self.tasks.journal = journal

    def replayed_tasks(self, journal: TaskJournal) -> list[TaskRecord]:
        """The tasks the journal holds (ended if they were still running when the process ended)."""
        from tasks_conformance.server.reference.journal import restore

        return [r for entry in journal.replay() if (r := restore(entry)) is not None]

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

    def extension_versions(self) -> list[str]:
        # Both eras need it: server/discover lists it, and a refused initialize names it.
        return [EXTENSION_VERSION]

    def instructions(self) -> str:
        return (
            "Reference server of tasks-conformance. Task-capable tools: slow_compute, long_job (task only), "
            "tool_error, rpc_error, confirm_action (needs elicitation), destructive_op (destructive). "
            "Fixture tools of the official MCP conformance suite: greet, failing_job (task only), "
            "protocol_error_job, confirm_delete, multi_input, test_missing_capability, "
            "test_streaming_elicitation, test_logging_tool."
        )

    # ------------------------------------------------------------------ era routing
    def route(self, method: str, params: JSON, *, has_session: bool) -> Route:
        """Which rules serve this request (the transport supplies whether a legacy session exists)."""
        is_extension = extension_meta(params) is not None
        if method == "initialize" and not is_extension:
            return "initialize"
        if is_extension and self.config.extension_enabled:
            return "extension"
        if has_session:
            return "legacy"
        if not self.config.extension_enabled:
            return "uninitialized"
        return "extension"

    def wants_stream(self, era: Era, method: str, params: JSON) -> bool:
        """HTTP: answer with SSE (so that messages can precede the response) instead of JSON."""
        if era == "extension":
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
        if era == "extension":
            if error.code == METHOD_NOT_FOUND:
                return 404
            if error.code in (HEADER_MISMATCH, MISSING_CAPABILITY, UNSUPPORTED_VERSION):
                return 400
        return 200

    def http_response_headers(self, ctx: RequestContext) -> list[tuple[bytes, bytes]]:
        """Extra headers on a JSON response over HTTP (none: the 2026-07-28 wire needs no
        cookies or affinity; a fixture overrides this to bind tasks to a client)."""
        return []

    # ------------------------------------------------------------------ errors and params of both eras
    def missing_capability_error(self, required: JSON, message: str) -> RpcError:
        # Here rather than in extension.py because the input check below raises it for tasks of either era.
        return RpcError(MISSING_CAPABILITY, message, {"requiredCapabilities": required}, http_status=400)

    def client_can_elicit(self, caps: JSON) -> bool:
        elicitation = caps.get("elicitation")
        if not isinstance(elicitation, dict):
            return False
        return not elicitation or "form" in elicitation  # {} means form mode (2025-11-25 compatibility)

    def client_can_sample(self, caps: JSON) -> bool:
        return isinstance(caps.get("sampling"), dict)

    def input_capability_error(self, era: Era, capability: str = "elicitation") -> RpcError:
        message = f"The tool needs to ask the client, but the client did not declare the {capability} capability"
        if era == "extension":
            required: JSON = {"elicitation": {"form": {}}} if capability == "elicitation" else {capability: {}}
            return self.missing_capability_error(required, message + " in this request")
        return RpcError(INTERNAL_ERROR, message + " at initialize")

    def require_input_capability(self, era: Era, caps: JSON, request: JSON) -> None:
        """Raise unless the client declared what answering ``request`` takes."""
        if request.get("method") == "sampling/createMessage":
            if not self.client_can_sample(caps):
                raise self.input_capability_error(era, "sampling")
        elif not self.client_can_elicit(caps):
            raise self.input_capability_error(era)

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
        duration = arguments.get("durationMs")
        if duration is not None and (not isinstance(duration, int) or isinstance(duration, bool) or duration < 0):
            raise RpcError(INVALID_PARAMS, "arguments.durationMs must be a non-negative integer")
        seconds = arguments.get("seconds")
        if seconds is not None and (
            not isinstance(seconds, (int, float)) or isinstance(seconds, bool) or not 0 <= seconds < 1e9
        ):
            raise RpcError(INVALID_PARAMS, "arguments.seconds must be a non-negative number")
        return spec, arguments

    def tool_duration_ms(self, spec: ToolSpec, arguments: JSON, *, as_task: bool) -> int:
        duration = arguments.get("durationMs")
        if isinstance(duration, int) and not isinstance(duration, bool) and duration >= 0:
            return min(duration, self.config.max_tool_duration_ms)
        seconds = arguments.get("seconds")
        if spec.takes_duration and isinstance(seconds, (int, float)) and not isinstance(seconds, bool):
            return min(max(0, round(seconds * 1000)), self.config.max_tool_duration_ms)
        default = self.config.task_duration_ms if spec.default_duration_ms is None else spec.default_duration_ms
        return min(default, self.config.max_tool_duration_ms)

    async def execute_tool(self, spec: ToolSpec, arguments: JSON, io: ToolIO) -> JSON:
        """Run one tool; returns a CallToolResult (without resultType) or raises RpcError."""
        text = arguments.get(spec.text_arg) if spec.text_arg is not None else None
        if spec.text_required and not isinstance(text, str):
            # An input validation error is a tool execution error (2025-11-25 and later), not -32602.
            return text_result(f"{spec.name} needs a string argument {spec.text_arg!r}", is_error=True)
        if spec.kind == "reply":
            return text_result(spec.reply.replace("{}", str(text or "")))
        if spec.kind == "sampling":
            if not self.client_can_sample(io.client_caps):
                raise self.input_capability_error(io.era, "sampling")
            answer = await io.ask_input(SAMPLING_KEY, sampling_request(f"{spec.name}: say something short."))
            content = answer.get("content")
            said = content.get("text") if isinstance(content, dict) else None
            return text_result(f"{spec.name}: the client's model said {said!r}")
        duration = self.tool_duration_ms(spec, arguments, as_task=isinstance(io, TaskInput))
        if spec.kind == "confirm":
            what = f" deleting {text!r}" if isinstance(text, str) else ""
            answer = await io.ask_input(
                CONFIRM_KEY, confirm_request(f"{spec.name}: please confirm{what} (the reference server may proceed).")
            )
            await asyncio.sleep(min(duration, 100) / 1000.0)  # a short working phase after the answer
            content = answer.get("content")
            if answer.get("action") == "accept" and not (isinstance(content, dict) and content.get("confirm") is False):
                return text_result(f"{spec.name}: confirmed by the user; action performed")
            return text_result(f"{spec.name}: not confirmed (action={answer.get('action')!r}); nothing done")
        if spec.kind == "name_then_task":
            answer = await io.ask_input(NAME_KEY, user_name_request(spec.name))
            content = answer.get("content")
            name = content.get("name") if isinstance(content, dict) else None
            await asyncio.sleep(duration / 1000.0)
            if answer.get("action") != "accept" or not isinstance(name, str):
                return text_result(f"{spec.name}: no name given (action={answer.get('action')!r})")
            return text_result(f"Hello, {name}! ({spec.name} finished after {duration} ms)")
        if spec.kind == "multi_input":
            first, second = MULTI_KEYS
            answers = await io.ask_inputs(
                {
                    first: name_request(f"{spec.name}: what is your name? (1 of 2, asked together)"),
                    second: confirm_request(f"{spec.name}: please confirm (2 of 2, asked together)."),
                }
            )
            actions = ", ".join(f"{key}={answers[key].get('action')!r}" for key in MULTI_KEYS)
            return text_result(f"{spec.name}: both inputs answered ({actions})")
        await self.work(duration, io)
        if spec.kind == "tool_error":
            return text_result(f"{spec.name}: the tool reported a failure (simulated)", is_error=True)
        if spec.kind == "rpc_error":
            raise RpcError(INTERNAL_ERROR, f"{spec.name}: the tool failed with a JSON-RPC error (simulated)")
        if spec.destructive:
            return text_result(f"{spec.name}: pretended to delete something after {duration} ms")
        return text_result(f"{spec.name}: finished after {duration} ms")

    def origin_allowed(self, origin: str, local: object) -> bool:
        """Whether a request with this Origin is served (``local``: it names this machine); others get 403."""
        return bool(local)

    async def before_http_message(self) -> None:
        """Runs before each HTTP POST's message is handled: nothing here (a fixture waits a random
        while, as a server handing each POST to its own worker may)."""

    def legacy_requires_initialized(self) -> bool:
        """Whether a 2025-11-25 HTTP session refuses requests (ping aside) until its
        notifications/initialized arrived: no here, lenient (a fixture is strict)."""
        return False

    def notification_http_status(self) -> int:
        """The status of an accepted notification POST: 202, with no body."""
        return 202

    def principal(self, ctx: RequestContext) -> str | None:
        """Who is asking: the bearer credential when the server checks tokens (HTTP), else nobody."""
        if not self.config.bearer_tokens or ctx.headers is None:
            return None
        credential = ctx.headers.get("authorization")
        # A digest: compared the same way, and a task store never writes the token itself.
        return hashlib.sha256(credential.encode()).hexdigest() if credential is not None else None

    def mint_task_id(self) -> str:
        """A new task id: 144 random bits, URL-safe, so nobody can guess another client's task."""
        return secrets.token_urlsafe(18)

    async def work(self, duration_ms: int, io: ToolIO) -> None:
        """Work for duration_ms in PROGRESS_STEPS equal steps, reporting each finished step."""
        for step in range(1, PROGRESS_STEPS + 1):
            await asyncio.sleep(duration_ms / 1000.0 / PROGRESS_STEPS)
            io.progress(step, PROGRESS_STEPS)

    def start_task(
        self,
        era: Era,
        spec: ToolSpec,
        arguments: JSON,
        ctx: RequestContext,
        *,
        ttl_ms: int | None = None,
        owner: str | None = None,
        given_answers: dict[str, JSON] | None = None,
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
            task_id=self.mint_task_id(),
        )
        record.principal = self.principal(ctx)
        record.given_answers.update(given_answers or {})
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
