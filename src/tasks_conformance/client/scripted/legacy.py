"""The 2025-11-25 scripted server a client under test talks to: a small tasks-in-core server over
Streamable HTTP that plays one scenario's `LegacyScript`, on the HTTP plumbing both eras share
(scripted/http.py).

It behaves as a compliant 2025-11-25 server, so that a client is only ever judged on its own
bytes: each `initialize` opens a session of its own (`Mcp-Session-Id`) and declares
`capabilities.tasks`; a task belongs to the session that created it, as it belongs to the server
process over stdio (another session asking for it gets -32602 "task not found"; a request that
names no session, or one never opened, is taken as the latest session's, leniently);
`tools/list` gives each tool's `execution.taskSupport`; a `tools/call` with `params.task` on a
task-capable tool gets a CreateTaskResult `{task: {...}}`, and without it the plain CallToolResult.
Where the server declared `tasks.requests.tools.call`, a required tool called plainly and a
forbidden one called as a task both get -32601 (the rule for the first is a MUST, for the second a
SHOULD); where it did not, `params.task` is ignored and the call processed normally.
`tasks/get` returns the task without its payload; `tasks/result` returns the payload once the
task has ended, and on a task still running it blocks (an SSE stream) while the task's reads go by
at their pollInterval. `tasks/cancel` and `tasks/list` exist where they are declared; `tasks/list`
pages with an opaque nextCursor where the scenario asks for more than one page. Where the scenario
asks, a client that declared `capabilities.tasks.list` or `.cancel` is sent those requests on its
tools/call's stream, before the call's answer.

A task that needs input reads `input_required`; the elicitation comes as an `elicitation/create`
request on the stream of the client's `tasks/result` (tagged with the related-task `_meta`), once,
and the client's JSON-RPC response (its own POST) lets the task go on. Where the scenario asks
(tasks-client-legacy-get-stream), a session's GET of the endpoint opens an SSE stream (one at a
time: a second gets 409, as the official SDKs' servers answer), and the elicitation goes there
instead, once the session has one open; else GET is answered 405.

Every wait is bounded: a task that would wait forever (for a cancel or an answer) fails on its own
after give_up_s.

https://modelcontextprotocol.io/specification/2025-11-25/basic/utilities/tasks
"""

from __future__ import annotations

import base64
import json
import secrets
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

from tasks_conformance.client.scenarios import LEGACY_TOOLS, LegacyScript, Snapshot
from tasks_conformance.client.scripted.extension import TaskState, find_task
from tasks_conformance.client.scripted.http import Answer, Fault, ScriptedHttp, now_iso, rpc_error, rpc_result
from tasks_conformance.client.scripted.waits import DEFAULT_WAITS, ScriptedWaits
from tasks_conformance.core.protocol import (
    ERR_INTERNAL,
    ERR_INVALID_PARAMS,
    ERR_INVALID_REQUEST,
    ERR_METHOD_NOT_FOUND,
    HEADER_SESSION,
    META_RELATED_TASK,
    get_path,
)
from tasks_conformance.core.text import shown
from tasks_conformance.core.wirelog import WireLog
from tasks_conformance.core.wires import DIALECTS, Wire
from tasks_conformance.core.wires.base import TASK_CAPABLE

LEGACY = DIALECTS[Wire.LEGACY]
DEFAULT_STEP_S = 0.2  # how fast a blocked tasks/result sees a read go by without a pollInterval
GAVE_UP: dict[str, Any] = {"code": ERR_INTERNAL, "message": "the scripted task waited for a cancel or an answer "
                                                            "that did not come, and gave up"}
MAX_CURSORS = 1_000  # a client that lists without end gets its last page from then on
ELICITATION_ID = "elicitation-1"  # the id of the scripted server's one elicitation/create
ELICITATION: dict[str, Any] = {"mode": "form", "message": "Which colour?", "requestedSchema": {
    "type": "object", "properties": {"colour": {"type": "string"}}}}
# What a client that declared capabilities.tasks list or cancel is asked (tasks-client-legacy-hosted):
# (its key there, the method, the params). The task to cancel is one the client never had.
HOSTED_TASK_ID = "tasks-conformance-no-such-task"
HOSTED_REQUESTS: tuple[tuple[str, str, dict[str, Any]], ...] = (
    ("list", "tasks/list", {}), ("cancel", "tasks/cancel", {"taskId": HOSTED_TASK_ID}))
HOSTED_ID_PREFIX = "hosted-"  # the ids of those requests: hosted-tasks/list, hosted-tasks/cancel
LISTEN_BUFFER = 8  # messages a GET stream holds unsent (the scenario sends one)
CANCELLED: dict[str, Any] = {"code": ERR_INTERNAL, "message": "the task was cancelled: it has no result"}


@dataclass
class LegacyTask(TaskState):
    """One task: TaskState's reads, plus when it started, its last read and whether it gave up."""

    started: float = field(default_factory=time.monotonic)
    last: Snapshot = field(default_factory=lambda: Snapshot("working"))
    gave_up: bool = False
    connection: int = 1  # the session (HTTP) that created it: no other finds it
    asked_on_get: str | None = None  # the input key whose elicitation went on its session's GET stream


class LegacyScriptedServer(ScriptedHttp):
    """The ASGI app: one 2025-11-25 scenario's script, every frame in `wire`."""

    def __init__(self, script: LegacyScript, wire: WireLog, waits: ScriptedWaits = DEFAULT_WAITS) -> None:
        super().__init__(wire, waits)
        self.script = script
        self.tasks: dict[str, LegacyTask] = {}
        self.sessions: list[str] = []  # the Mcp-Session-Id of each HTTP session, by connection number - 1
        self.capabilities: dict[int, Any] = {}  # what each connection's initialize declared
        self.asked: set[str] = set()  # input keys whose elicitation was sent
        self.answers: dict[Any, Any] = {}  # the client's responses to our requests, by id
        self.answered: Any = None  # an anyio.Event, set when a response arrives (made in the loop)
        self.cursors: dict[str, tuple[int, int]] = {}  # each nextCursor issued: (its session, the page it opens)
        self.listening: dict[int, Any] = {}  # each session's open GET stream: the send side of its messages

    def connection_for(self, session: str | None, message: Any) -> int:
        """An initialize opens a new session; any other message is on the session it names (none,
        or one never opened: the latest)."""
        if isinstance(message, dict) and message.get("method") == "initialize" and "id" in message:
            self.sessions.append(secrets.token_hex(16))
            return len(self.sessions)
        if session in self.sessions:
            return self.sessions.index(session) + 1
        return max(1, len(self.sessions))

    async def respond(self, message: Any, connection: int = 1) -> Answer:
        if not isinstance(message, dict):
            return Answer(400, rpc_error(None, ERR_INVALID_REQUEST, "not a JSON-RPC message"))
        method, rid = message.get("method"), message.get("id")
        if not isinstance(method, str) and ("result" in message or "error" in message):
            if isinstance(rid, str | int):
                self.answers.setdefault(rid, message)  # the client's response to a request of ours
            if self.answered is not None:
                self.answered.set()
            return Answer(202)
        if not isinstance(method, str) or "id" not in message:
            return Answer(202)  # a notification: accepted
        params = message.get("params") if isinstance(message.get("params"), dict) else {}
        assert isinstance(params, dict)
        if method == "initialize":
            self.capabilities[connection] = params.get("capabilities")
            session = self.sessions[connection - 1] if connection <= len(self.sessions) else None  # stdio: none
            return Answer(200, rpc_result(rid, self._initialize()),
                          ((HEADER_SESSION, session),) if session is not None else ())
        if method == "tasks/result":
            return self._tasks_result(rid, params, connection)
        if method == "tools/call" and self.script.asks_hosted and self.hosted(connection):
            return Answer(200, events=self._asking_hosted(rid, params, connection))
        handler = _METHODS.get(method)
        outcome = handler(self, params, connection) if handler is not None else Fault(
            ERR_METHOD_NOT_FOUND, f"method not found: {shown(method)}")
        if isinstance(outcome, Fault):
            return Answer(outcome.http_status, rpc_error(rid, outcome.code, outcome.message))
        return Answer(200, rpc_result(rid, outcome))

    # -- the session and the tools -------------------------------------------------------------

    def _initialize(self) -> dict[str, Any]:
        return {"protocolVersion": LEGACY.protocol_version,
                "capabilities": {"tools": {}, "tasks": self.script.tasks},
                "serverInfo": {"name": "tasks-conformance scripted server", "version": "1"}}

    def _tools_list(self, params: dict[str, Any], _connection: int) -> dict[str, Any] | Fault:
        if params.get("cursor") is not None:
            return Fault(ERR_INVALID_PARAMS, "invalid cursor: the tool list has one page")
        tools = []
        for name, support in LEGACY_TOOLS.items():
            tool: dict[str, Any] = {"name": name, "description": f"a scripted tool (taskSupport {support})",
                                    "inputSchema": {"type": "object"}}
            if support is not None:
                tool["execution"] = {"taskSupport": support}
            tools.append(tool)
        return {"tools": tools}

    def declared(self, *path: str) -> bool:
        return get_path(self.script.tasks, *path) is not None

    def _tools_call(self, params: dict[str, Any], connection: int) -> dict[str, Any] | Fault:
        name = params.get("name")
        if not isinstance(name, str) or name not in LEGACY_TOOLS:
            return Fault(ERR_INVALID_PARAMS, f"unknown tool: {str(name)[:60]}")
        support, asked = LEGACY_TOOLS[name], "task" in params
        if self.declared("requests", "tools", "call"):  # else params.task is ignored: a plain call
            if asked and support not in TASK_CAPABLE:
                return Fault(ERR_METHOD_NOT_FOUND, f"{name} does not run as a task (taskSupport {support})")
            if not asked and support == "required":
                return Fault(ERR_METHOD_NOT_FOUND, f"{name} runs only as a task: call it with params.task")
            if asked and self.script.answer == "task":
                state = LegacyTask(secrets.token_urlsafe(16), connection=connection)
                self.tasks[state.task_id] = state
                return {"task": self.task_body(state, self.script.create)}
        failure = self.failure()
        return failure if failure is not None else dict(self.script.result)

    def failure(self) -> Fault | None:
        """The JSON-RPC error the tool fails with, if the script says it fails."""
        error = self.script.error
        return None if error is None else Fault(int(error.get("code", ERR_INTERNAL)), str(error.get("message")))

    # -- the task ------------------------------------------------------------------------------

    def task_body(self, state: LegacyTask, snap: Snapshot) -> dict[str, Any]:
        """The flat Task: no payload (tasks/result has it), no related-task _meta."""
        body: dict[str, Any] = {"taskId": state.task_id, "status": snap.status, "createdAt": state.created_at,
                                "lastUpdatedAt": now_iso(), LEGACY.ttl_field: self.script.ttl_ms}
        if snap.poll_interval_ms is not None:
            body[LEGACY.poll_interval_field] = snap.poll_interval_ms
        if snap.status == "failed":
            body["statusMessage"] = GAVE_UP["message"] if state.gave_up else "the scripted tool failed"
        return body

    def read(self, state: LegacyTask) -> Snapshot:
        """The task's next read; a task that would otherwise wait forever fails after give_up_s."""
        waits = self.script.until_cancelled or state.last.status == "input_required"
        if waits and not state.ended and time.monotonic() - state.started > self.waits.give_up_s:
            state.gave_up = state.ended = True
            state.last = Snapshot("failed", state.last.poll_interval_ms)
            return state.last
        if state.ended:
            return state.last  # a terminal status never changes
        key = state.asked_on_get
        if key is not None and ELICITATION_ID in self.answers and key not in state.answered:
            state.answered.add(key)  # answered from the GET stream: the task goes on
            state.read += 1  # past the input_required read
        state.last = state.snapshot(self.script)
        self.ask_on_get(state, state.last)
        return state.last

    def ask_on_get(self, state: LegacyTask, snap: Snapshot) -> None:
        """Send the task's elicitation on its session's GET stream, where the scenario asks and the
        session has one open (once; only to a client that declared elicitation there)."""
        key, stream = snap.input_key, self.listening.get(state.connection)
        if (not self.script.input_on_get_stream or snap.status != "input_required" or key is None
                or key in self.asked or stream is None
                or get_path(self.capabilities.get(state.connection), "elicitation") is None):
            return
        import anyio

        try:
            stream.send_nowait(self.elicitation(state))
        except (anyio.WouldBlock, anyio.BrokenResourceError, anyio.ClosedResourceError):
            return  # the stream is full or has gone: the tasks/result stream carries it instead
        self.asked.add(key)
        state.asked_on_get = key

    def listen(self, connection: int, headers: tuple[tuple[str, str], ...]) -> Answer:
        """A session's GET stream, where the scenario serves one: one at a time (409 for another), and
        only for a session the GET names (400 without one)."""
        if not self.script.input_on_get_stream:
            return Answer(405)
        session = next((v for k, v in headers if k.lower() == HEADER_SESSION.lower()), None)
        if session not in self.sessions:
            return Answer(400)  # a stream belongs to a session: a GET naming none (or none opened) gets none
        if connection in self.listening:
            return Answer(409)
        import anyio

        sender, receiver = anyio.create_memory_object_stream[dict[str, Any]](LISTEN_BUFFER)
        self.listening[connection] = sender
        return Answer(200, events=self._listening(connection, sender, receiver))

    async def _listening(self, connection: int, sender: Any, receiver: Any) -> AsyncIterator[dict[str, Any]]:
        """The messages sent on a session's GET stream as they come, for at most twice
        give_up_s (the scenario's server goes sooner)."""
        import anyio

        ends = time.monotonic() + 2 * self.waits.give_up_s
        try:
            for _ in range(LISTEN_BUFFER):
                message: dict[str, Any] | None = None
                with anyio.move_on_after(max(0.0, ends - time.monotonic())):
                    try:
                        message = await receiver.receive()
                    except anyio.EndOfStream:
                        return
                if message is None:
                    return
                yield message
        finally:
            if self.listening.get(connection) is sender:
                del self.listening[connection]
            sender.close()
            receiver.close()

    def _task(self, params: dict[str, Any], connection: int) -> LegacyTask | Fault:
        """The task params.taskId names, on the connection that created it (related-task _meta is
        ignored); on another, it is not found."""
        found: LegacyTask | Fault = find_task(self.tasks, params, self.script)
        if isinstance(found, LegacyTask) and found.connection != connection:
            return Fault(ERR_INVALID_PARAMS, "task not found")
        return found

    def _tasks_get(self, params: dict[str, Any], connection: int) -> dict[str, Any] | Fault:
        state = self._task(params, connection)
        if isinstance(state, Fault):
            return state
        return self.task_body(state, self.read(state))

    def _tasks_cancel(self, params: dict[str, Any], connection: int) -> dict[str, Any] | Fault:
        if not self.declared("cancel"):
            return Fault(ERR_METHOD_NOT_FOUND, "tasks/cancel is not supported (no tasks.cancel declared)")
        state = self._task(params, connection)
        if isinstance(state, Fault):
            return state
        if state.ended:
            return Fault(ERR_INVALID_PARAMS, f"the task already ended ({state.last.status}): it cannot be cancelled")
        state.cancelled = state.ended = True  # cancelled before the response says so
        state.last = Snapshot("cancelled", state.last.poll_interval_ms)
        return self.task_body(state, state.last)

    def _tasks_list(self, params: dict[str, Any], connection: int) -> dict[str, Any] | Fault:
        """The session's tasks in `list_pages` pages; a cursor is good only as issued, on the session
        it was issued to (it is opaque: a client sends it back unmodified, C-LEG-MUST-09)."""
        if not self.declared("list"):
            return Fault(ERR_METHOD_NOT_FOUND, "tasks/list is not supported (no tasks.list declared)")
        cursor, page = params.get("cursor"), 0
        if cursor is not None:
            issued = self.cursors.get(cursor) if isinstance(cursor, str) else None
            if issued is None or issued[0] != connection:
                return Fault(ERR_INVALID_PARAMS, "invalid cursor: it is none this server issued")
            page = issued[1]
        mine = [s for s in self.tasks.values() if s.connection == connection]
        pages = max(1, self.script.list_pages)
        size = -(-len(mine) // pages) or 1
        out: dict[str, Any] = {"tasks": [self.task_body(s, s.last) for s in mine[page * size:(page + 1) * size]]}
        if page + 1 < pages and len(self.cursors) < MAX_CURSORS:
            # Base64 of JSON, as many servers' cursors are: a client that decodes, trims or
            # re-encodes it sends another string.
            token = base64.b64encode(json.dumps({"page": page + 1, "nonce": secrets.token_hex(6)}).encode()).decode()
            self.cursors[token] = (connection, page + 1)
            out["nextCursor"] = token
        return out

    def payload(self, rid: Any, state: LegacyTask) -> dict[str, Any]:
        """What tasks/result answers for an ended task: what the call itself would have answered."""
        if state.cancelled or state.gave_up:
            error = CANCELLED if state.cancelled else GAVE_UP
            return rpc_error(rid, error["code"], error["message"])
        failure = self.failure()
        if failure is not None:
            return rpc_error(rid, failure.code, failure.message)
        meta = {**(self.script.result.get("_meta") or {}), META_RELATED_TASK: {"taskId": state.task_id}}
        return rpc_result(rid, {**self.script.result, "_meta": meta})

    def _tasks_result(self, rid: Any, params: dict[str, Any], connection: int) -> Answer:
        state = self._task(params, connection)
        if isinstance(state, Fault):
            return Answer(200, rpc_error(rid, state.code, state.message))
        if state.ended:
            return Answer(200, self.payload(rid, state))
        return Answer(200, events=self._blocked(rid, state))

    async def _blocked(self, rid: Any, state: LegacyTask) -> AsyncIterator[dict[str, Any]]:
        """A tasks/result on a running task: the task's reads go by at their pollInterval until it
        ends (bounded: give_up_s ends any task that would wait forever), then its payload."""
        import anyio

        while not state.ended:
            if isinstance(self._task({"taskId": state.task_id}, state.connection), Fault):
                yield rpc_error(rid, ERR_INVALID_PARAMS, "task not found")  # it expired meanwhile
                return
            snap = self.read(state)
            key = snap.input_key
            if snap.status == "input_required" and key is not None and key not in self.asked:
                self.asked.add(key)
                # Only to a client that declared elicitation on this connection; else the task gives up.
                if get_path(self.capabilities.get(state.connection), "elicitation") is not None:
                    yield self.elicitation(state)
                    if await self.answer_to(ELICITATION_ID, state.started):
                        state.answered.add(key)
                        state.read += 1  # past the input_required read
                    continue
            if not state.ended:
                await anyio.sleep((snap.poll_interval_ms or DEFAULT_STEP_S * 1000) / 1000)
        yield self.payload(rid, state)

    def elicitation(self, state: LegacyTask) -> dict[str, Any]:
        """The task's input request, sent on the tasks/result stream with the related-task _meta."""
        params = {**ELICITATION, "_meta": {META_RELATED_TASK: {"taskId": state.task_id}}}
        return {"jsonrpc": "2.0", "id": ELICITATION_ID, "method": "elicitation/create", "params": params}

    def hosted(self, connection: int) -> list[tuple[str, dict[str, Any]]]:
        """The requests to ask a client for what its initialize on this connection declared it
        hosts under capabilities.tasks (list, cancel), each (method, params)."""
        declared = self.capabilities.get(connection)
        return [(method, params) for key, method, params in HOSTED_REQUESTS
                if get_path(declared, "tasks", key) is not None]

    async def _asking_hosted(self, rid: Any, params: dict[str, Any], connection: int) -> AsyncIterator[dict[str, Any]]:
        """A tools/call's stream: each request the client declared it serves, answered (or given up
        on after give_up_s) before the next, then the call's own answer."""
        started = time.monotonic()
        for method, request_params in self.hosted(connection):
            request_id = HOSTED_ID_PREFIX + method
            yield {"jsonrpc": "2.0", "id": request_id, "method": method, "params": dict(request_params)}
            await self.answer_to(request_id, started)
        outcome = self._tools_call(params, connection)
        yield (rpc_error(rid, outcome.code, outcome.message) if isinstance(outcome, Fault)
               else rpc_result(rid, outcome))

    async def answer_to(self, request_id: str, since: float) -> bool:
        """Wait (until give_up_s after `since`) for the client's response to one of our requests."""
        import anyio

        with anyio.move_on_after(max(0.0, self.waits.give_up_s - (time.monotonic() - since))):
            while request_id not in self.answers:
                self.answered = anyio.Event()
                await self.answered.wait()
        return request_id in self.answers


_METHODS: dict[str, Callable[[LegacyScriptedServer, dict[str, Any], int], dict[str, Any] | Fault]] = {
    "ping": lambda _s, _p, _c: {},
    "tools/list": LegacyScriptedServer._tools_list,
    "tools/call": LegacyScriptedServer._tools_call,
    "tasks/get": LegacyScriptedServer._tasks_get,
    "tasks/cancel": LegacyScriptedServer._tasks_cancel,
    "tasks/list": LegacyScriptedServer._tasks_list,
}
