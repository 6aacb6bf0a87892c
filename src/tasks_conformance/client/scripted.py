"""The scripted server a client under test talks to: a small 2026-07-28 tasks server over
Streamable HTTP that plays one scenario's `Script` and records every byte both ways in a WireLog.

It behaves as a compliant server (so that a client is only ever judged on its own bytes): a
`tools/call` or `tasks/*` request that does not declare the extension gets what such a request
gets from a compliant server (a plain result, `-32021`), removed methods get `-32601`. Answers are
plain JSON; the checks read the client's requests and these answers from the wire log.
"""

from __future__ import annotations

import contextlib
import json
import socket
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, MutableMapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from tasks_conformance.client.scenarios import TOOL, Script, Snapshot
from tasks_conformance.core.protocol import (
    ERR_INVALID_PARAMS,
    ERR_METHOD_NOT_FOUND,
    ERR_MISSING_CAPABILITY,
    EXT_TASKS,
    META_CLIENT_CAPS,
    TERMINAL_STATUSES,
    get_path,
)
from tasks_conformance.core.wirelog import HttpMeta, WireLog

ENDPOINT = "/mcp"
VERSION = "2026-07-28"
TTL_MS = 600_000  # far beyond any scenario: TTL behaviour is never judged here
MAX_BODY = 1024 * 1024  # a client's request is small; a larger body is not read on
PROMPT_TASK_ID = "prompt-task-1"

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]


def declares_extension(params: Any) -> bool:
    extensions = get_path(params, "_meta", META_CLIENT_CAPS, "extensions")
    return isinstance(extensions, dict) and EXT_TASKS in extensions


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


@dataclass
class TaskState:
    """One task of the script: which read comes next, what was answered, whether it was cancelled."""

    task_id: str
    created_at: str = field(default_factory=_now)
    read: int = 0
    answered: set[str] = field(default_factory=set)
    stale_pending: bool = False
    cancelled: bool = False
    ended: bool = False  # a terminal status was read

    def snapshot(self, script: Script) -> Snapshot:
        """The next read (and what the task is from then on)."""
        snap = self._next(script)
        self.ended = self.ended or snap.status in TERMINAL_STATUSES
        return snap

    def _next(self, script: Script) -> Snapshot:
        reads = script.reads
        current = reads[min(self.read, len(reads) - 1)]
        if self.cancelled:
            return Snapshot("cancelled", current.poll_interval_ms)
        if script.until_cancelled:
            return Snapshot("working", current.poll_interval_ms)
        if self.stale_pending:
            self.stale_pending = False
            return reads[self.read - 1]  # the input_required read once more, stale
        if current.status == "input_required" and current.input_key not in self.answered:
            return current  # stays until its key is answered
        self.read += 1
        return current


def task_body(state: TaskState, snap: Snapshot, script: Script) -> dict[str, Any]:
    body: dict[str, Any] = {"taskId": state.task_id, "status": snap.status, "createdAt": state.created_at,
                            "lastUpdatedAt": _now(), "ttlMs": TTL_MS}
    if snap.poll_interval_ms is not None:
        body["pollIntervalMs"] = snap.poll_interval_ms
    if snap.status == "input_required" and snap.input_key:
        body["inputRequests"] = {snap.input_key: {"method": "elicitation/create", "params": {
            "message": "Which colour?", "requestedSchema": {"type": "object", "properties": {
                "colour": {"type": "string"}}}}}}
    elif snap.status == "completed":
        body["result"] = {"resultType": "complete", **script.result}
    elif snap.status == "failed":
        body["error"] = script.error or {"code": -32603, "message": "failed"}
        body["statusMessage"] = "the scripted tool failed"
    return body


class ScriptedServer:
    """The ASGI app: one scenario's script, every frame in `wire`."""

    def __init__(self, script: Script, wire: WireLog) -> None:
        self.script = script
        self.wire = wire
        self.tasks: dict[str, TaskState] = {}
        self.requests = 0  # JSON-RPC messages received: 0 means the client never reached us
        # The frames of this scenario in the run's wire log (every scenario of a run shares one).
        self.seqs: list[int] = []

    # -- JSON-RPC ------------------------------------------------------------------------------

    def answer(self, message: Any) -> tuple[int, dict[str, Any] | None]:
        """(HTTP status, JSON-RPC response or None for a notification)."""
        if not isinstance(message, dict) or not isinstance(message.get("method"), str):
            return 400, _error(None, -32600, "not a JSON-RPC request")
        method, params, rid = message["method"], message.get("params"), message.get("id")
        if "id" not in message:
            return 202, None  # a notification: accepted, nothing to answer
        handler = _METHODS.get(method)
        if handler is None:
            return 200, _error(rid, ERR_METHOD_NOT_FOUND, f"method not found: {method}")
        outcome = handler(self, params if isinstance(params, dict) else {})
        if isinstance(outcome, _Fault):
            return outcome.http_status, _error(rid, outcome.code, outcome.message)
        return 200, {"jsonrpc": "2.0", "id": rid, "result": outcome}

    def _discover(self, _params: dict[str, Any]) -> dict[str, Any]:
        return {"resultType": "complete", "supportedVersions": [VERSION],
                "capabilities": {"tools": {}, "prompts": {}, "extensions": {EXT_TASKS: {}}},
                "serverInfo": {"name": "tasks-conformance scripted server", "version": "1"}}

    def _tools_list(self, _params: dict[str, Any]) -> dict[str, Any]:
        return {"resultType": "complete", "tools": [{
            "name": TOOL, "description": "a scripted task", "inputSchema": {"type": "object"},
            "execution": {"taskSupport": "optional"}}]}

    def _tools_call(self, params: dict[str, Any]) -> dict[str, Any] | _Fault:
        if params.get("name") != TOOL:
            return _Fault(ERR_INVALID_PARAMS, f"unknown tool: {str(params.get('name'))[:60]}")
        if self.script.answer == "complete" or not declares_extension(params):
            return {"resultType": "complete", **self.script.result}
        return self._create(self.script.task_id)

    def _create(self, task_id: str) -> dict[str, Any]:
        state = self.tasks.setdefault(task_id, TaskState(task_id))
        return {"resultType": "task", **task_body(state, self.script.create, self.script)}

    def _prompts_get(self, params: dict[str, Any]) -> dict[str, Any]:
        if self.script.task_on_prompt:
            return self._create(PROMPT_TASK_ID)
        return {"resultType": "complete", "messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}]}

    def _task(self, params: dict[str, Any]) -> TaskState | _Fault:
        if not declares_extension(params):
            return _Fault(ERR_MISSING_CAPABILITY, "the request does not declare io.modelcontextprotocol/tasks", 400)
        state = self.tasks.get(str(params.get("taskId")))
        return state if state is not None else _Fault(ERR_INVALID_PARAMS, "task not found")

    def _tasks_get(self, params: dict[str, Any]) -> dict[str, Any] | _Fault:
        state = self._task(params)
        if isinstance(state, _Fault):
            return state
        snap = state.snapshot(self.script)
        return {"resultType": "complete", **task_body(state, snap, self.script)}

    def _tasks_update(self, params: dict[str, Any]) -> dict[str, Any] | _Fault:
        state = self._task(params)
        if isinstance(state, _Fault):
            return state
        responses = params.get("inputResponses")
        fresh = [k for k in responses if k not in state.answered] if isinstance(responses, dict) else []
        if fresh:
            state.answered.update(fresh)
            state.stale_pending = self.script.stale_input_after_update
            state.read += 1  # past the input_required read
        return {"resultType": "complete"}

    def _tasks_cancel(self, params: dict[str, Any]) -> dict[str, Any] | _Fault:
        state = self._task(params)
        if isinstance(state, _Fault):
            return state
        if not state.ended:  # cancelling an ended task is no error, and changes nothing
            state.cancelled = True
        return {"resultType": "complete"}

    # -- HTTP ----------------------------------------------------------------------------------

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        headers = tuple((k.decode("latin-1"), v.decode("latin-1")) for k, v in scope.get("headers", []))
        url = f"http://{_host(headers)}{scope.get('path', '')}"
        body = await _read_body(receive)
        meta = HttpMeta(scope.get("method", ""), url, request_headers=headers)
        inbound = self.wire.record("in", "http", body, http=meta)
        self.seqs.append(inbound.seq)
        if scope.get("method") != "POST" or scope.get("path") != ENDPOINT:
            await _respond(send, 405 if scope.get("path") == ENDPOINT else 404, b"")
            return
        try:
            message = json.loads(body)
        except (ValueError, RecursionError):
            message = None
        self.requests += 1
        status, response = self.answer(message)
        data = json.dumps(response, separators=(",", ":")).encode() if response is not None else b""
        if response is not None:
            out_meta = HttpMeta("POST", url, status, headers, (("content-type", "application/json"),))
            self.seqs.append(self.wire.record("out", "http", data, http=out_meta, reply_to=inbound.seq).seq)
        await _respond(send, status, data)


@dataclass(frozen=True)
class _Fault:
    code: int
    message: str
    http_status: int = 200


def _error(rid: Any, code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rid, "error": {"code": code, "message": message}}


_METHODS: dict[str, Callable[[ScriptedServer, dict[str, Any]], Any]] = {
    "server/discover": ScriptedServer._discover,
    "tools/list": ScriptedServer._tools_list,
    "tools/call": ScriptedServer._tools_call,
    "prompts/get": ScriptedServer._prompts_get,
    "tasks/get": ScriptedServer._tasks_get,
    "tasks/update": ScriptedServer._tasks_update,
    "tasks/cancel": ScriptedServer._tasks_cancel,
    "ping": lambda _s, _p: {"resultType": "complete"},
}


def _host(headers: tuple[tuple[str, str], ...]) -> str:
    return next((v for k, v in headers if k.lower() == "host"), "127.0.0.1")


async def _read_body(receive: Receive) -> bytes:
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message.get("type") != "http.request":
            break
        chunk = message.get("body", b"")
        if size < MAX_BODY:
            chunks.append(chunk[: MAX_BODY - size])
        size += len(chunk)
        if not message.get("more_body"):
            break
    return b"".join(chunks)


async def _respond(send: Send, status: int, data: bytes) -> None:
    headers = [(b"content-length", str(len(data)).encode())]
    if data:
        headers.append((b"content-type", b"application/json"))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": data})


def _bind() -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.bind(("127.0.0.1", 0))
    return sock


@contextlib.asynccontextmanager
async def serving(app: ScriptedServer) -> AsyncIterator[str]:
    """Serve `app` on an ephemeral 127.0.0.1 port for the block; yields the endpoint URL."""
    import anyio
    import uvicorn

    class _Quiet(uvicorn.Server):
        @contextlib.contextmanager
        def capture_signals(self) -> Iterator[None]:  # the command line owns SIGINT/SIGTERM
            yield

    sock = _bind()
    config = uvicorn.Config(app, lifespan="off", log_config=None, log_level="critical", access_log=False,
                            http="h11", ws="none", timeout_graceful_shutdown=1)
    server = _Quiet(config)
    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(server.serve, [sock])
            with anyio.fail_after(10):
                while not server.started:
                    await anyio.sleep(0.005)
            host, port = sock.getsockname()[:2]
            try:
                yield f"http://{host}:{port}{ENDPOINT}"
            finally:
                server.should_exit = True
    finally:
        sock.close()
