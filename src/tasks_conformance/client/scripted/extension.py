"""The scripted server a client under test talks to: a small 2026-07-28 tasks server over
Streamable HTTP that plays one scenario's `Script` and records every byte both ways in a WireLog.

It behaves as a compliant server, keeping the server rules the server mode judges (so that a
client is only ever judged on its own bytes; tests/e2e/client/test_scripted_servers.py runs the server mode
against it): a `tools/call` or `tasks/*` request that does not declare the extension gets what such
a request gets from a compliant server (a plain result, `-32021` naming the extension), a request
without the `_meta` envelope `-32602`, one for another protocol version `-32022`, a method it does
not implement (the removed ones among them) `-32601` with HTTP 404, a `tasks/*` request whose
routing headers name another method or task `-32020`. Task ids are random; every result carries
the server's `serverInfo`. A task asks for input only of a client whose creating `tools/call`
declared the `elicitation` capability; for any other it goes on without (policy P-08). Answers are
plain JSON; the checks read the client's requests and these answers from the wire log. A slow
call (tasks-client-request-cancel) is the exception: a stream that carries its plain result only
after its waits' slow_answer_s, or nothing once the client has cancelled it.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

from tasks_conformance.client.jsonrpc import id_key
from tasks_conformance.client.scenarios import TOOL, Script, Snapshot
from tasks_conformance.client.scripted.http import Answer, Fault, ScriptedHttp, now_iso, rpc_error, rpc_result
from tasks_conformance.client.scripted.waits import DEFAULT_WAITS, ScriptedWaits
from tasks_conformance.core.protocol import (
    ERR_HEADER_MISMATCH,
    ERR_INTERNAL,
    ERR_INVALID_PARAMS,
    ERR_METHOD_NOT_FOUND,
    ERR_MISSING_CAPABILITY,
    ERR_UNSUPPORTED_VERSION,
    EXT_TASKS,
    HEADER_METHOD,
    HEADER_NAME,
    META_CLIENT_CAPS,
    META_PROTOCOL_VERSION,
    META_SERVER_INFO,
    META_SUBSCRIPTION_ID,
    METHOD_ACKNOWLEDGED,
    METHOD_LISTEN,
    TERMINAL_STATUSES,
    decode_header_value,
    get_path,
)
from tasks_conformance.core.text import shown
from tasks_conformance.core.wirelog import WireLog
from tasks_conformance.core.wires.base import lists_extension

VERSION = "2026-07-28"
ODD_RESULT_TYPE = "deferred"  # a resultType no protocol value or negotiated extension defines
MRTR_KEY = "mrtr-"  # the prefix of the keys of the InputRequiredResults before a task (mrtr-1, mrtr-2, …)
PROMPT_TASK_PREFIX = "prompt-task-"  # the prefix of a task a prompts/get reply names
MAX_SLOW_CALLS = 100  # slow calls in flight at once: a client that floods gets its answers at once
SERVER_INFO: dict[str, Any] = {"name": "tasks-conformance scripted server", "version": "1"}
MISSING_TASKS: dict[str, Any] = {"requiredCapabilities": {"extensions": {EXT_TASKS: {}}}}
# server/discover and tools/list are CacheableResults in 2026-07-28: ttlMs and cacheScope are
# required (SDK clients validate them). Each scenario's server is new, so nothing is to be cached.
NOT_CACHED: dict[str, Any] = {"ttlMs": 0, "cacheScope": "private"}


def declares_extension(params: Any) -> bool:
    return lists_extension(params, "_meta", META_CLIENT_CAPS)


def declares_form_elicitation(params: Any) -> bool:
    """The request's own client capabilities allow a form-mode elicitation (`{}` means form)."""
    declared = get_path(params, "_meta", META_CLIENT_CAPS, "elicitation")
    return isinstance(declared, dict) and (not declared or "form" in declared)


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
    asks_input: bool = True  # False: its client declared no elicitation, so it is never asked for input

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
        if current.status == "input_required" and not self.asks_input and self.read < len(reads) - 1:
            self.read += 1  # nothing is asked of a client that cannot answer: the task goes on without
            return self._next(script)
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

    def __init__(self, script: Script, wire: WireLog, waits: ScriptedWaits = DEFAULT_WAITS) -> None:
        super().__init__(wire, waits)
        self.script = script
        self.tasks: dict[str, TaskState] = {}
        self.in_flight: dict[str, Any] = {}  # each slow tools/call's id (as JSON) -> anyio.Event set on its cancel

    async def respond(self, message: Any, connection: int = 1) -> Answer:
        """The answer to one message; the 2026-07-28 wire is stateless, so whatever connection it
        came on, every request reads the same tasks (policy P-28). Where the script says the call
        is slow, a tools/call is answered as a stream that carries nothing for slow_answer_s, then
        its plain result, unless notifications/cancelled names it first (over stdio; over HTTP the
        client cancels by closing the stream): then it ends unanswered."""
        if (isinstance(message, dict) and message.get("method") == "notifications/cancelled"
                and self.transport == "stdio"):  # over HTTP closing the stream cancels, not a notification
            cancelled = self.in_flight.get(id_key(get_path(message, "params", "requestId")))
            if cancelled is not None:
                cancelled.set()
        elif (self.script.answer == "slow" and isinstance(message, dict) and message.get("method") == "tools/call"
              and "id" in message and len(self.in_flight) < MAX_SLOW_CALLS):
            return Answer(200, events=self._slow(message))
        elif (self.script.serves_listen and isinstance(message, dict) and message.get("method") == METHOD_LISTEN
              and "id" in message and len(self.in_flight) < MAX_SLOW_CALLS):
            given = message.get("params")
            params = given if isinstance(given, dict) else {}
            fault = _envelope_fault(params) or _undeclared_listen(params)
            if fault is not None:
                return Answer(fault.http_status, rpc_error(message.get("id"), fault.code, fault.message, fault.data))
            return Answer(200, events=self._listen(message))
        status, body = self.answer(message)
        return Answer(status, body)

    async def _listen(self, message: dict[str, Any]) -> AsyncIterator[dict[str, Any]]:
        """A subscriptions/listen stream: the acknowledgement, agreeing to none of the taskIds asked
        for (a server honours what it chooses to), then nothing until listen_s has passed, the client
        cancelled it or closed it; then its graceful end, the listen result."""
        import anyio

        rid = message.get("id")
        meta = {META_SUBSCRIPTION_ID: rid}
        key = id_key(rid)
        cancelled = self.in_flight.setdefault(key, anyio.Event())  # before the ack: a cancel may follow it at once
        try:
            yield {"jsonrpc": "2.0", "method": METHOD_ACKNOWLEDGED,
                   "params": {"notifications": {"taskIds": []}, "_meta": meta}}
            with anyio.move_on_after(self.waits.listen_s):
                await cancelled.wait()
            if cancelled.is_set():
                return
        finally:
            self.in_flight.pop(key, None)
        yield rpc_result(rid, {"resultType": "complete", "_meta": {**meta, META_SERVER_INFO: dict(SERVER_INFO)}})

    async def _slow(self, message: dict[str, Any]) -> AsyncIterator[dict[str, Any]]:
        import anyio

        key = id_key(message.get("id"))
        cancelled = self.in_flight.setdefault(key, anyio.Event())
        try:
            with anyio.move_on_after(self.waits.slow_answer_s):
                await cancelled.wait()
            if cancelled.is_set():
                return  # cancelled: no response (the receiver of a cancellation sends none)
        finally:
            self.in_flight.pop(key, None)
        _status, body = self.answer(message)
        if body is not None:
            yield body

    def answer(self, message: Any) -> tuple[int, dict[str, Any] | None]:
        """(HTTP status, JSON-RPC response or None for a notification)."""
        if not isinstance(message, dict) or not isinstance(message.get("method"), str):
            return 400, rpc_error(None, -32600, "not a JSON-RPC request")
        method, params, rid = message["method"], message.get("params"), message.get("id")
        if "id" not in message:
            return 202, None  # a notification: accepted, nothing to answer
        handler = _METHODS.get(method)
        if handler is None:
            return 404, rpc_error(rid, ERR_METHOD_NOT_FOUND, f"method not found: {shown(method)}")
        params = params if isinstance(params, dict) else {}
        outcome = _envelope_fault(params) or handler(self, params)
        if isinstance(outcome, Fault):
            return outcome.http_status, rpc_error(rid, outcome.code, outcome.message, outcome.data)
        meta = outcome.get("_meta") if isinstance(outcome.get("_meta"), dict) else {}
        return 200, rpc_result(rid, {**outcome, "_meta": {**meta, META_SERVER_INFO: dict(SERVER_INFO)}})

    def refuse(self, message: Any, headers: tuple[tuple[str, str], ...]) -> Answer | None:
        """A tasks/* request whose Mcp-Method or Mcp-Name (base64-decoded when encoded) names another
        method or task: -32020, HTTP 400. A header left out is the client's to answer for
        (tasks-client-routing-headers), not refused."""
        method = message.get("method") if isinstance(message, dict) else None
        if not isinstance(method, str) or not method.startswith("tasks/") or "id" not in message:
            return None
        said = {k.lower(): v for k, v in headers}
        task_id = get_path(message, "params", "taskId")
        named = said.get(HEADER_NAME.lower())
        if said.get(HEADER_METHOD.lower(), method) != method or (
                named is not None and isinstance(task_id, str) and decode_header_value(named) != task_id):
            return Answer(400, rpc_error(message.get("id"), ERR_HEADER_MISMATCH,
                                         "Mcp-Method or Mcp-Name does not match the request's body"))
        return None

    def _discover(self, _params: dict[str, Any]) -> dict[str, Any]:
        return {"resultType": "complete", "supportedVersions": [VERSION],
                "capabilities": {"tools": {}, "prompts": {}, "extensions": {EXT_TASKS: {}}}, **NOT_CACHED}

    def _tools_list(self, _params: dict[str, Any]) -> dict[str, Any]:
        return {"resultType": "complete", "tools": [{
            "name": TOOL, "description": "a scripted task", "inputSchema": {"type": "object"},
            "execution": {"taskSupport": "optional"}}], **NOT_CACHED}

    def _tools_call(self, params: dict[str, Any]) -> dict[str, Any] | Fault:
        if params.get("name") != TOOL:
            return Fault(ERR_INVALID_PARAMS, f"unknown tool: {str(params.get('name'))[:60]}")
        error = self.script.error or {}
        if self.script.answer == "error":  # the call itself fails, as a direct call does
            return Fault(int(error.get("code", ERR_INTERNAL)), str(error.get("message", "failed")))
        if self.script.answer in ("complete", "slow") or not declares_extension(params):
            return {"resultType": "complete", **self.script.result}
        rounds = self._mrtr_round(params)
        if rounds is not None:
            return rounds
        return self._create(self.script.task_id, declares_form_elicitation(params))

    def _mrtr_round(self, params: dict[str, Any]) -> dict[str, Any] | None:
        """The next InputRequiredResult before the task, or None when every round is answered (or
        the call declared no elicitation to ask with). The round is the highest key the retry
        answers; its requestState is judged by the client checks, not here (a lenient server)."""
        if not self.script.mrtr_rounds or not declares_form_elicitation(params):
            return None
        given = params.get("inputResponses")
        answered = [int(k[len(MRTR_KEY):]) for k in given if isinstance(k, str) and k.startswith(MRTR_KEY)
                    and k[len(MRTR_KEY):].isdigit()] if isinstance(given, dict) else []
        done = min(max(answered, default=0), self.script.mrtr_rounds)
        if done >= self.script.mrtr_rounds:
            return None
        key = f"{MRTR_KEY}{done + 1}"
        return {"resultType": "input_required", "requestState": f"round-{done + 1}." + secrets.token_urlsafe(12),
                "inputRequests": {key: {"method": "elicitation/create", "params": {
                    "mode": "form", "message": "Which colour?", "requestedSchema": {
                        "type": "object", "properties": {"colour": {"type": "string"}}}}}}}

    def _create(self, prefix: str, asks_input: bool = True) -> dict[str, Any]:
        """A new task, its id the prefix and enough random characters that nobody can guess it."""
        state = TaskState(prefix + secrets.token_urlsafe(16), asks_input=asks_input)
        self.tasks[state.task_id] = state
        return {"resultType": "task", **task_body(state, self.script.create, self.script)}

    def _prompts_get(self, params: dict[str, Any]) -> dict[str, Any]:
        if self.script.task_on_prompt:
            return self._create(PROMPT_TASK_PREFIX)
        if self.script.odd_result_on_prompt:
            return {"resultType": ODD_RESULT_TYPE,
                    "messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}]}
        return {"resultType": "complete", "messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}]}

    def _task(self, params: dict[str, Any]) -> TaskState | Fault:
        if not declares_extension(params):
            return Fault(ERR_MISSING_CAPABILITY, "the request does not declare io.modelcontextprotocol/tasks", 400,
                         MISSING_TASKS)
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


def _undeclared_listen(params: dict[str, Any]) -> Fault | None:
    """A subscription to task notifications from a request that does not declare the extension:
    -32021, as a tasks/* request gets."""
    if get_path(params, "notifications", "taskIds") is None or declares_extension(params):
        return None
    return Fault(ERR_MISSING_CAPABILITY, "the request does not declare io.modelcontextprotocol/tasks", 400,
                 MISSING_TASKS)


def _envelope_fault(params: dict[str, Any]) -> Fault | None:
    """What a 2026-07-28 request whose _meta envelope is wrong gets: -32602 without protocolVersion
    or clientCapabilities, -32022 for a version this server does not serve (both HTTP 400)."""
    version = get_path(params, "_meta", META_PROTOCOL_VERSION)
    if not isinstance(version, str) or not isinstance(get_path(params, "_meta", META_CLIENT_CAPS), dict):
        return Fault(ERR_INVALID_PARAMS, "the request's _meta lacks protocolVersion or clientCapabilities", 400)
    if version != VERSION:
        return Fault(ERR_UNSUPPORTED_VERSION, f"protocol version {shown(version)} is not served", 400,
                     {"supported": [VERSION], "requested": version})
    return None


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

