"""The reference client on the 2025-11-25 wire (tasks in core): initialize as a pure requestor,
params.task only where the server's capability and the tool's execution.taskSupport allow it,
tasks/get at pollInterval, the outcome fetched with tasks/result, elicitations that arrive on
a response stream or (over HTTP) the session's GET stream answered with the related-task `_meta`,
tasks/cancel and tasks/list only when declared, a tasks/list cursor sent back as it came.

https://modelcontextprotocol.io/specification/2025-11-25/basic/utilities/tasks
"""

from __future__ import annotations

from typing import Any

from tasks_conformance.client.reference.http import HttpLink
from tasks_conformance.client.reference.wire import (
    ACCEPT,
    CLIENT_INFO,
    JSON,
    MAX_PAGES,
    MAX_POLLS,
    Flow,
    Headers,
    Outcome,
    Reply,
    StreamEnded,
    beside,
    plain_outcome,
)
from tasks_conformance.core.protocol import (
    ERR_INVALID_PARAMS,
    ERR_METHOD_NOT_FOUND,
    HEADER_PROTOCOL_VERSION,
    HEADER_SESSION,
    META_RELATED_TASK,
    TERMINAL_STATUSES,
    get_path,
)
from tasks_conformance.core.wires import DIALECTS, Wire

VERSION = DIALECTS[Wire.LEGACY].protocol_version
TASK_TOOLS = ("required", "optional")  # the taskSupport values that allow params.task
FETCH_ON = frozenset({"input_required", "completed", "failed"})  # tasks/result has something to give
MAX_FETCHES = 10


class LegacyFlow(Flow):
    dialect = DIALECTS[Wire.LEGACY]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.session_id: str | None = None
        self.version_header: str | None = None  # sent once initialize has negotiated it
        self.negotiated: Any = None  # the protocolVersion the initialize result gave, as it came
        self.capabilities: Any = None
        self.tool_listed = False  # tools/list named the tool
        self.link.on_server_request = self.on_server_request

    def headers(self) -> Headers:
        out: Headers = {"Accept": ACCEPT, "Content-Type": "application/json"}
        if self.version_header is not None:
            out[HEADER_PROTOCOL_VERSION] = self.version_header
        if self.session_id is not None:
            out[HEADER_SESSION] = self.session_id
        return out

    async def rpc(self, method: str, params: JSON) -> Reply:
        return await self.link.request(method, params, self.headers())

    async def open(self) -> Outcome | None:
        """initialize as a pure requestor, then notifications/initialized: the session."""
        capabilities: JSON = {"elicitation": {}}
        if self.opt.hosts_tasks:  # what it serves as a receiver (C-LEG-MUST-12): a pure requestor declares none
            capabilities["tasks"] = {"list": {}, "cancel": {}}
        init = await self.rpc("initialize", {"protocolVersion": VERSION, "capabilities": capabilities,
                                             "clientInfo": dict(CLIENT_INFO)})
        if init.error is not None or init.result is None:
            self.trace.plain_reason = f"initialize failed: the server may not speak {VERSION} (try --era extension)"
            self.trace.stopped("error")
            return Outcome("unknown", error=init.error)
        session = init.headers.get(HEADER_SESSION)
        self.session_id = session if session else None
        version = self.negotiated = init.result.get("protocolVersion")
        self.version_header = version if isinstance(version, str) else VERSION
        self.capabilities = init.result.get("capabilities")
        await self.link.notify("notifications/initialized", None, self.headers())
        return None

    async def run(self) -> Outcome:
        failed = await self.open()
        if failed is not None:
            return failed
        link = self.link
        if not isinstance(link, HttpLink) or not self.opens_get_stream():
            return await self.session()
        # Over HTTP the session's GET stream is read meanwhile, for what the server sends there
        # (C-LEG-SHOULD-06); it ends with the call.
        headers, answers = self.headers(), self.answers_on_get_stream()
        return await beside(lambda: link.listen(headers, answers), self.session)

    def opens_get_stream(self) -> bool:
        """Over HTTP, whether the session's GET stream is opened (it is optional): it is."""
        return True

    def answers_on_get_stream(self) -> bool:
        """Whether what the server sends on the GET stream is answered (C-LEG-SHOULD-06): it is."""
        return True

    async def before_call(self) -> None:
        """What goes between the handshake and the call: nothing."""

    async def session(self) -> Outcome:
        """The call, once the session is open."""
        version = self.negotiated
        await self.before_call()
        request = self.opt.request
        if request is not None:
            given = request.get("params")
            reply = await self.rpc(str(request["method"]), dict(given) if isinstance(given, dict) else {})
            self.trace.plain_reason = f"{request['method']} was sent, not tools/call"
            if reply.error is not None:
                return Outcome("failed", error=reply.error)
            return plain_outcome(reply.result or {})
        params: JSON = {"name": self.opt.tool_name, "arguments": self.opt.arguments}
        support = await self.task_support()
        augmented = self.augments(support)
        if augmented:
            params["task"] = {}
        reply = await self.rpc("tools/call", params)
        self.call_id = reply.id
        if reply.error is not None:
            self.trace.plain_reason = "the server answered tools/call with a JSON-RPC error"
            return Outcome("failed", error=reply.error)
        result = reply.result or {}
        task = result.get("task")
        if isinstance(task, dict) and isinstance(task.get("taskId"), str):
            return await self.created(result, task)
        self.trace.plain_reason = self.why_plain(augmented, support, version)
        return plain_outcome(result)  # the server may process an augmented call normally (C-LEG-MUST-04)

    async def created(self, result: JSON, task: JSON) -> Outcome:
        """A CreateTaskResult: the task is followed to its result, never taken for it (C-LEG-MUST-04)."""
        return await self.follow(task)

    def why_plain(self, augmented: bool, support: Any, version: Any) -> str:
        if augmented:
            return "the server answered the task-augmented call without a task (C-LEG-MUST-04 allows it)"
        spoken = f"; it negotiated protocol {str(version)[:40]!r}, not {VERSION}" if version != VERSION else ""
        if get_path(self.capabilities, "tasks", "requests", "tools", "call") is None:
            return f"the server declared no tasks.requests.tools.call capability{spoken}: the call was a plain one"
        if not self.tool_listed:
            return f"tools/list does not list {self.opt.tool_name!r}: the call was a plain one"
        said = "no execution.taskSupport (forbidden)" if support is None else f"execution.taskSupport {support!r}"
        return f"the tool declares {str(said)[:80]}: the call was a plain one"

    def augments(self, task_support: Any) -> bool:
        """params.task only when the server declared tasks.requests.tools.call (C-LEG-MUST-01) and
        the tool is "required" (C-LEG-MUST-03) or "optional"; never when absent or "forbidden"
        (C-LEG-MUST-02)."""
        if get_path(self.capabilities, "tasks", "requests", "tools", "call") is None:
            return False
        return task_support in TASK_TOOLS

    async def task_support(self) -> Any:
        """The tool's execution.taskSupport from tools/list (None: absent, which means forbidden)."""
        cursor: Any = None
        for _ in range(MAX_PAGES):
            reply = await self.rpc("tools/list", {"cursor": cursor} if isinstance(cursor, str) else {})
            tools = get_path(reply.result, "tools")
            for tool in tools if isinstance(tools, list) else []:
                if isinstance(tool, dict) and tool.get("name") == self.opt.tool_name:
                    self.tool_listed = True
                    return get_path(tool, "execution", "taskSupport")
            cursor = get_path(reply.result, "nextCursor")
            if not isinstance(cursor, str):
                return None
        return None

    async def follow(self, task: JSON) -> Outcome:
        """Poll tasks/get at pollInterval; on input_required or a terminal status the outcome is
        what tasks/result answers (C-LEG-MUST-05, C-LEG-SHOULD-04)."""
        self.begin(str(task["taskId"]), task)
        if self.opt.list_tasks:
            await self.list_tasks()
        fetches = 0
        for _ in range(MAX_POLLS):
            await self.maybe_cancel()
            if self.status == "cancelled" or self.left:
                return Outcome("cancelled")
            if self.status == "working":
                outcome = await self.while_working()
                if outcome is not None:
                    return outcome
            if self.fetch_due() and fetches < MAX_FETCHES:
                fetches += 1
                outcome = await self.fetch_result()
                if outcome is not None:
                    return outcome
            elif self.status in TERMINAL_STATUSES:
                return Outcome(self.status)
            await self.wait(self.poll_wait_s())
            if self.timed_out():
                await self.leave()
                return Outcome(self.status)
            self.trace.polls += 1
            reply = await self.get(self.get_params())
            if reply.error is not None:
                gone = self.poll_failed(reply.error)
                if gone is not None:
                    return gone
                continue
            self.errors = 0
            self.observe(reply.result or {})
            left = await self.after_poll()
            if left is not None:
                return left
        await self.leave()
        return Outcome(self.status)

    async def while_working(self) -> Outcome | None:
        """Before each step while the task works: nothing (an Outcome would end the call with it)."""
        return None

    def fetch_due(self) -> bool:
        """Whether tasks/result is due now: on input_required or a terminal status (C-LEG-MUST-05,
        C-LEG-SHOULD-04)."""
        return self.status in FETCH_ON

    def get_params(self) -> JSON:
        """A tasks/get's params: the taskId alone, no related-task _meta on tasks/* (C-LEG-SHOULD-05)."""
        return {"taskId": self.task_id}

    async def get(self, params: JSON) -> Reply:
        """One poll."""
        return await self.rpc("tasks/get", params)

    async def after_poll(self) -> Outcome | None:
        """After each snapshot: nothing (None: polling goes on; an Outcome ends the call with it)."""
        return None

    async def list_tasks(self) -> None:
        """tasks/list page by page, each nextCursor sent back as it came (C-LEG-MUST-09), only when
        the server declared tasks.list (C-LEG-SHOULD-07)."""
        if get_path(self.capabilities, "tasks", "list") is None:
            return
        params: JSON = {}
        for _ in range(MAX_PAGES):
            reply = await self.rpc("tasks/list", params)
            cursor = get_path(reply.result, "nextCursor")
            if not isinstance(cursor, str):
                return
            params = {"cursor": self.cursor_to_send(cursor)}

    def cursor_to_send(self, cursor: str) -> str:
        """A nextCursor goes back exactly as it came: it is opaque (C-LEG-MUST-09)."""
        return cursor

    async def fetch_result(self) -> Outcome | None:
        """tasks/result: the call's own result or JSON-RPC error; None when its stream closed
        before the response (polling resumes)."""
        try:
            reply = await self.rpc("tasks/result", {"taskId": self.task_id})
        except StreamEnded:
            return None
        self.trace.stopped("result")
        if reply.error is not None:
            return Outcome("failed", error=reply.error)
        return plain_outcome(reply.result or {})

    async def on_server_request(self, message: JSON) -> None:
        """A request the server sent on a response stream: elicitation/create is answered (with
        the related-task `_meta` when it carried one, C-LEG-MUST-08), ping too, tasks/list and
        tasks/cancel where it declared them (hosts_tasks), the rest refused."""
        method = message.get("method")
        response: JSON = {"jsonrpc": "2.0", "id": message.get("id")}
        if method == "elicitation/create":
            answer = self.answer_for(None, message) or {}  # a 2025-11-25 elicitation has no key
            response["result"] = self.tagged(answer, message)
        elif method == "ping":
            response["result"] = {}
        elif method == "tasks/list" and self.opt.hosts_tasks:
            response["result"] = {"tasks": []}  # it hosts no task
        elif method == "tasks/cancel" and self.opt.hosts_tasks:
            response["error"] = {"code": ERR_INVALID_PARAMS, "message": "task not found: this client hosts no tasks"}
        else:
            response["error"] = {"code": ERR_METHOD_NOT_FOUND, "message": f"{method} is not supported"}
        await self.link.respond(response, self.headers())

    def tagged(self, answer: JSON, message: JSON) -> JSON:
        """An answer to a task's elicitation/create, with the related-task `_meta` it came with (C-LEG-MUST-08)."""
        related = get_path(message, "params", "_meta", META_RELATED_TASK)
        if isinstance(related, dict):
            answer["_meta"] = {META_RELATED_TASK: {"taskId": related.get("taskId")}}
        return answer

    def cancel_declared(self) -> bool:
        """Whether the server declared tasks.cancel, without which no tasks/cancel is sent (C-LEG-SHOULD-07)."""
        return get_path(self.capabilities, "tasks", "cancel") is not None

    async def cancel(self) -> None:
        """tasks/cancel, only when the server declared tasks.cancel (C-LEG-SHOULD-07); never
        notifications/cancelled (C-LEG-MUST-07)."""
        if not self.cancel_declared():
            self.trace.cancel_reason = None
            self.trace.cancel_reply = "tasks/cancel not sent: the server declared no tasks.cancel capability"
            return
        reply = await self.rpc("tasks/cancel", {"taskId": self.task_id})
        self.cancel_answered(reply, f"status {get_path(reply.result, 'status')!s:.40}")
        if reply.result is not None:
            self.observe(reply.result)
