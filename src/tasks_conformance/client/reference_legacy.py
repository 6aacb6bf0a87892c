"""The reference client on the 2025-11-25 wire (tasks in core): initialize as a pure requestor,
params.task only where the server's capability and the tool's execution.taskSupport allow it,
tasks/get at pollInterval, the outcome fetched with tasks/result, elicitations that arrive on
a response stream or (over HTTP) the session's GET stream answered with the related-task `_meta`,
tasks/cancel and tasks/list only when declared, a tasks/list cursor sent back as it came.

https://modelcontextprotocol.io/specification/2025-11-25/basic/utilities/tasks
"""

from __future__ import annotations

import base64
import json
from typing import Any

import anyio

from tasks_conformance.client.reference_http import HttpLink
from tasks_conformance.client.reference_wire import (
    ACCEPT,
    CLIENT_INFO,
    JSON,
    MAX_PAGES,
    MAX_POLLS,
    POLLS_FAST_S,
    ClientFailure,
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
    EXT_TASKS,
    HEADER_PROTOCOL_VERSION,
    HEADER_SESSION,
    META_CLIENT_CAPS,
    META_RELATED_TASK,
    TERMINAL_STATUSES,
    get_path,
)
from tasks_conformance.core.wires import DIALECTS, Wire

VERSION = DIALECTS[Wire.LEGACY].protocol_version
TASK_TOOLS = ("required", "optional")  # the taskSupport values that allow params.task
FETCH_ON = frozenset({"input_required", "completed", "failed"})  # tasks/result has something to give
MAX_FETCHES = 10
DROP_S = 0.1  # the legacy_drops_result_stream freedom: how long an early tasks/result's stream is read
AWAIT_S = 1.0  # the legacy_awaits_notification break: how long it waits for notifications/tasks/status


def _reencoded(cursor: str) -> str:
    """The legacy_alters_cursor break: a cursor that is base64 of JSON, decoded and encoded again
    compactly, as a client that parses cursors makes it (any other cursor goes back with a space)."""
    try:
        decoded = json.loads(base64.b64decode(cursor, validate=True))
    except ValueError:
        return cursor + " "
    return base64.b64encode(json.dumps(decoded, separators=(",", ":")).encode()).decode()


class LegacyFlow(Flow):
    dialect = DIALECTS[Wire.LEGACY]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.session_id: str | None = None
        self.version_header: str | None = None  # sent once initialize has negotiated it
        self.negotiated: Any = None  # the protocolVersion the initialize result gave, as it came
        self.capabilities: Any = None
        self.tool_listed = False  # tools/list named the tool
        self.dropped = False  # an early tasks/result's stream was dropped (the freedom, C-LEG-MAY-04)
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
        if not isinstance(self.link, HttpLink) or self.dev.legacy_no_get_stream:
            return await self.session()
        # Over HTTP the session's GET stream is read meanwhile, for what the server sends there
        # (C-LEG-SHOULD-06); it ends with the call.
        link, headers, answers = self.link, self.headers(), not self.dev.legacy_ignores_get_stream
        return await beside(lambda: link.listen(headers, answers), self.session)

    async def session(self) -> Outcome:
        """The call, once the session is open."""
        version = self.negotiated
        if self.dev.legacy_null_id:
            await self.link.exchange({"jsonrpc": "2.0", "id": None, "method": "ping"}, self.headers(), None)
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
            if self.dev.legacy_result_as_final:
                return plain_outcome(result)  # the CreateTaskResult taken for the result (C-LEG-MUST-04)
            return await self.follow(task)
        self.trace.plain_reason = self.why_plain(augmented, support, version)
        return plain_outcome(result)  # the server may process an augmented call normally (C-LEG-MUST-04)

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
        if task_support == "required":
            return not self.dev.legacy_no_task_on_required
        if task_support == "optional" and self.dev.legacy_required_only:
            return False  # an optional tool may be called plainly (C-LEG-MAY-01)
        return task_support in TASK_TOOLS or self.dev.legacy_task_on_forbidden

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
            if self.status == "working" and self.drops() and not self.dropped:
                outcome = await self.dropped_fetch()
                if outcome is not None:
                    return outcome
                if self.dev.legacy_stops_after_drop:  # no poll after it (C-LEG-SHOULD-03)
                    self.trace.stopped("abandoned")
                    return Outcome(self.status)
            if self.status in FETCH_ON and not self.dev.legacy_no_result_fetch and fetches < MAX_FETCHES:
                fetches += 1
                outcome = await self.fetch_result()
                if outcome is not None:
                    return outcome
            elif self.status in TERMINAL_STATUSES:
                return Outcome(self.status)
            await self.wait(POLLS_FAST_S if self.dev.legacy_polls_fast else self.interval_s)
            if self.timed_out():
                await self.leave()
                return Outcome(self.status)
            params: JSON = {"taskId": self.task_id}  # no related-task _meta on tasks/* (C-LEG-SHOULD-05)
            if self.dev.legacy_related_meta_on_get:
                params["_meta"] = {META_RELATED_TASK: {"taskId": self.task_id}}
            if self.dev.legacy_extension_meta:  # the 2026-07-28 opt-in, meaningless on this wire
                params["_meta"] = {META_CLIENT_CAPS: {"extensions": {EXT_TASKS: {}}}}
            self.trace.polls += 1
            first = self.dev.legacy_parallel_polls and self.trace.polls == 1
            reply = await self.polls_twice(params) if first else await self.rpc("tasks/get", params)
            if reply.error is not None:
                gone = self.poll_failed(reply.error)
                if gone is not None:
                    return gone
                continue
            self.errors = 0
            self.observe(reply.result or {})
            if self.dev.legacy_awaits_notification and self.status == "working":
                await self.wait(AWAIT_S)  # for a notifications/tasks/status the server need not send
                self.trace.stopped("abandoned")
                return Outcome(self.status)
        await self.leave()
        return Outcome(self.status)

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
            params = {"cursor": _reencoded(cursor) if self.dev.legacy_alters_cursor else cursor}

    def drops(self) -> bool:
        """Whether it drops an early tasks/result's stream: an SSE stream exists over HTTP only."""
        return (self.dev.legacy_drops_result_stream or self.dev.legacy_stops_after_drop) and \
            isinstance(self.link, HttpLink)

    async def dropped_fetch(self) -> Outcome | None:
        """A tasks/result on the working task whose stream is dropped after DROP_S (C-LEG-MAY-04);
        the outcome, if the answer came first."""
        self.dropped = True
        with anyio.move_on_after(DROP_S):
            return await self.fetch_result()
        return None

    async def polls_twice(self, params: JSON) -> Reply:
        """Two tasks/get at once (C-LEG-MAY-05): the reply read last is the one that counts, a
        terminal status before any other."""
        got: list[Reply] = []
        failures: list[ClientFailure] = []

        async def one() -> None:
            try:
                got.append(await self.rpc("tasks/get", dict(params)))
            except ClientFailure as exc:
                failures.append(exc)

        async with anyio.create_task_group() as tg:
            tg.start_soon(one)
            tg.start_soon(one)
        if not got:
            raise failures[0]
        got.sort(key=lambda r: get_path(r.result, "status") in TERMINAL_STATUSES)
        for reply in got[:-1]:
            if reply.result is not None:
                self.observe(reply.result)
        return got[-1]

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
            related = get_path(message, "params", "_meta", META_RELATED_TASK)
            if isinstance(related, dict) and not self.dev.legacy_elicitation_untagged:
                answer["_meta"] = {META_RELATED_TASK: {"taskId": related.get("taskId")}}
            response["result"] = answer
        elif method == "ping":
            response["result"] = {}
        elif method == "tasks/list" and self.opt.hosts_tasks and not self.dev.legacy_declares_unhosted:
            response["result"] = {"tasks": []}  # it hosts no task
        elif method == "tasks/cancel" and self.opt.hosts_tasks and not self.dev.legacy_declares_unhosted:
            response["error"] = {"code": ERR_INVALID_PARAMS, "message": "task not found: this client hosts no tasks"}
        else:
            response["error"] = {"code": ERR_METHOD_NOT_FOUND, "message": f"{method} is not supported"}
        await self.link.respond(response, self.headers())

    async def cancel(self) -> None:
        """tasks/cancel, only when the server declared tasks.cancel (C-LEG-SHOULD-07); never
        notifications/cancelled (C-LEG-MUST-07)."""
        if self.dev.legacy_cancel_notification:
            await self.link.notify("notifications/cancelled", {"requestId": self.call_id, "reason": "cancelled"},
                                   self.headers())
            return
        if get_path(self.capabilities, "tasks", "cancel") is None and not self.dev.legacy_cancel_undeclared:
            self.trace.cancel_reason = None
            self.trace.cancel_reply = "tasks/cancel not sent: the server declared no tasks.cancel capability"
            return
        reply = await self.rpc("tasks/cancel", {"taskId": self.task_id})
        self.cancel_answered(reply, f"status {get_path(reply.result, 'status')!s:.40}")
        if reply.result is not None:
            self.observe(reply.result)
