"""The scripted server a client under test talks to: a small 2026-07-28 tasks server over
Streamable HTTP that plays one scenario's `Script` and records every byte both ways in a WireLog.

It behaves as a compliant server (so that a client is only ever judged on its own bytes): a
`tools/call` or `tasks/*` request that does not declare the extension gets what such a request
gets from a compliant server (a plain result, `-32021`), removed methods get `-32601`. Answers are
plain JSON; the checks read the client's requests and these answers from the wire log.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tasks_conformance.client.evidence import shown
from tasks_conformance.client.scenarios import TOOL, Script, Snapshot
from tasks_conformance.client.scripted_http import Answer, Fault, ScriptedHttp, now_iso, rpc_error, rpc_result
from tasks_conformance.core.protocol import (
    ERR_INVALID_PARAMS,
    ERR_METHOD_NOT_FOUND,
    ERR_MISSING_CAPABILITY,
    EXT_TASKS,
    META_CLIENT_CAPS,
    META_SERVER_INFO,
    TERMINAL_STATUSES,
)
from tasks_conformance.core.wirelog import WireLog
from tasks_conformance.core.wires.base import lists_extension

VERSION = "2026-07-28"
PROMPT_TASK_ID = "prompt-task-1"
# server/discover and tools/list are CacheableResults in 2026-07-28: ttlMs and cacheScope are
# required (SDK clients validate them). Each scenario's server is new, so nothing is to be cached.
NOT_CACHED: dict[str, Any] = {"ttlMs": 0, "cacheScope": "private"}


def declares_extension(params: Any) -> bool:
    return lists_extension(params, "_meta", META_CLIENT_CAPS)


@dataclass
class TaskState:
    """One task of the script: which read comes next, what was answered, whether it was cancelled."""

    task_id: str
    created_at: str = field(default_factory=now_iso)
    read: int = 0
    answered: set[str] = field(default_factory=set)
    stale_pending: bool = False
    cancelled: bool = False
    ended: bool = False  # a terminal status was read
    born: float = field(default_factory=time.monotonic)

    def expired(self, script: Script) -> bool:
        """Its ttl has run out: the server has deleted it (a server may, whatever its status)."""
        return time.monotonic() - self.born >= script.ttl_ms / 1000

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
                            "lastUpdatedAt": now_iso(), "ttlMs": script.ttl_ms}
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


def find_task(tasks: dict[str, Any], params: dict[str, Any], script: Script) -> Any:
    """The task params.taskId names, or the -32602 "task not found" of both eras for an unknown
    or expired one (an expired task is deleted: it stays not found)."""
    task_id = str(params.get("taskId"))
    state = tasks.get(task_id)
    if state is not None and state.expired(script):
        del tasks[task_id]
        state = None
    return state if state is not None else Fault(ERR_INVALID_PARAMS, "task not found")


class ScriptedServer(ScriptedHttp):
    """The ASGI app: one scenario's script, every frame in `wire`."""

    def __init__(self, script: Script, wire: WireLog) -> None:
        super().__init__(wire)
        self.script = script
        self.tasks: dict[str, TaskState] = {}

    async def respond(self, message: Any, connection: int = 1) -> Answer:
        """The answer to one message; the 2026-07-28 wire is stateless, so whatever connection it
        came on, every request reads the same tasks (policy P-28)."""
        status, body = self.answer(message)
        return Answer(status, body)

    def answer(self, message: Any) -> tuple[int, dict[str, Any] | None]:
        """(HTTP status, JSON-RPC response or None for a notification)."""
        if not isinstance(message, dict) or not isinstance(message.get("method"), str):
            return 400, rpc_error(None, -32600, "not a JSON-RPC request")
        method, params, rid = message["method"], message.get("params"), message.get("id")
        if "id" not in message:
            return 202, None  # a notification: accepted, nothing to answer
        handler = _METHODS.get(method)
        if handler is None:
            return 200, rpc_error(rid, ERR_METHOD_NOT_FOUND, f"method not found: {shown(method)}")
        outcome = handler(self, params if isinstance(params, dict) else {})
        if isinstance(outcome, Fault):
            return outcome.http_status, rpc_error(rid, outcome.code, outcome.message)
        return 200, rpc_result(rid, outcome)

    def _discover(self, _params: dict[str, Any]) -> dict[str, Any]:
        return {"resultType": "complete", "supportedVersions": [VERSION],
                "capabilities": {"tools": {}, "prompts": {}, "extensions": {EXT_TASKS: {}}},
                "_meta": {META_SERVER_INFO: {"name": "tasks-conformance scripted server", "version": "1"}},
                **NOT_CACHED}

    def _tools_list(self, _params: dict[str, Any]) -> dict[str, Any]:
        return {"resultType": "complete", "tools": [{
            "name": TOOL, "description": "a scripted task", "inputSchema": {"type": "object"},
            "execution": {"taskSupport": "optional"}}], **NOT_CACHED}

    def _tools_call(self, params: dict[str, Any]) -> dict[str, Any] | Fault:
        if params.get("name") != TOOL:
            return Fault(ERR_INVALID_PARAMS, f"unknown tool: {str(params.get('name'))[:60]}")
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

    def _task(self, params: dict[str, Any]) -> TaskState | Fault:
        if not declares_extension(params):
            return Fault(ERR_MISSING_CAPABILITY, "the request does not declare io.modelcontextprotocol/tasks", 400)
        found: TaskState | Fault = find_task(self.tasks, params, self.script)
        return found

    def _tasks_get(self, params: dict[str, Any]) -> dict[str, Any] | Fault:
        state = self._task(params)
        if isinstance(state, Fault):
            return state
        snap = state.snapshot(self.script)
        return {"resultType": "complete", **task_body(state, snap, self.script)}

    def _tasks_update(self, params: dict[str, Any]) -> dict[str, Any] | Fault:
        state = self._task(params)
        if isinstance(state, Fault):
            return state
        responses = params.get("inputResponses")
        fresh = [k for k in responses if k not in state.answered] if isinstance(responses, dict) else []
        if fresh:
            state.answered.update(fresh)
            state.stale_pending = self.script.stale_input_after_update
            state.read += 1  # past the input_required read
        return {"resultType": "complete"}

    def _tasks_cancel(self, params: dict[str, Any]) -> dict[str, Any] | Fault:
        state = self._task(params)
        if isinstance(state, Fault):
            return state
        if not state.ended:  # cancelling an ended task is no error, and changes nothing
            state.cancelled = True
        return {"resultType": "complete"}


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

