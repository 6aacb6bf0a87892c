"""The reference tasks client and its breaking variants (fixtures/broken_client.py), against
scripted servers held in memory (httpx.MockTransport) on a fake clock: the client's sleeps
advance the clock, every request is recorded with the time it was sent, so poll spacing is read
from recorded timestamps and nothing here waits or measures wall time. One test runs the client
as a process against a small HTTP server on 127.0.0.1.

The detectors below are a small, independent reading of the client rules (C-EXT-…, C-CORE-…,
C-LEG-…): the compliant client trips none of them in any scenario, and each break trips its own
rule (and those its `Break.also` names) and nothing else."""

from __future__ import annotations

import base64
import importlib.util
import itertools
import json
import os
import subprocess
import sys
import threading
from collections import Counter
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import anyio
import httpx
import pytest
from helpers.paths import FIXTURES, ROOT

from tasks_conformance.client.reference import extension as reference_extension
from tasks_conformance.client.reference.client import Harness, Outcome, call, main
from tasks_conformance.client.reference.wire import encode_name
from tasks_conformance.core.protocol import (
    EXT_TASKS,
    META_CLIENT_CAPS,
    META_CLIENT_INFO,
    META_PROTOCOL_VERSION,
    META_RELATED_TASK,
    TERMINAL_STATUSES,
    get_path,
)

JSON = dict[str, Any]
_spec = importlib.util.spec_from_file_location("broken_client", FIXTURES / "broken_client.py")
assert _spec is not None and _spec.loader is not None
broken_client = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(broken_client)
BREAKS: dict[str, Any] = broken_client.BREAKS

EXT, LEG = "2026-07-28", "2025-11-25"
TOOL, TASK = "work", "task-1"
ACK: JSON = {"result": {"resultType": "complete"}}
RESULT: JSON = {"content": [{"type": "text", "text": "done"}], "isError": False}
GONE: JSON = {"error": {"code": -32602, "message": "task not found"}}  # an expired, deleted task
ELICIT: JSON = {"method": "elicitation/create",
                "params": {"mode": "form", "message": "Confirm?", "requestedSchema": {"type": "object"}}}
EPS = 1e-9


def task(status: str, interval: int | None = 300, task_id: str = TASK, **extra: Any) -> JSON:
    out = {"taskId": task_id, "status": status, "createdAt": "2026-07-28T00:00:00Z",
           "lastUpdatedAt": "2026-07-28T00:00:00Z", "ttlMs": 600_000, **extra}
    if interval is not None:
        out["pollIntervalMs"] = interval
    return out


def created(**kw: Any) -> JSON:
    return {"result": {"resultType": "task", **task("working", **kw)}}


def snap(status: str, interval: int | None = 300, **extra: Any) -> JSON:
    return {"result": {"resultType": "complete", **task(status, interval, **extra)}}


@pytest.fixture(autouse=True)
def _short_stream_drop(monkeypatch: pytest.MonkeyPatch) -> None:
    """The one wait the fake clock does not cover: how long an early tasks/result's stream is read
    before it is dropped (anyio.move_on_after), kept short here."""
    monkeypatch.setattr(broken_client, "DROP_S", 0.01)
    monkeypatch.setattr(reference_extension, "CANCEL_REQUEST_S", 0.01)  # a call cancelled in flight, as soon
    # The trusts-subscription break's wait: long enough for its subscription to reach the fake server.
    monkeypatch.setattr(broken_client, "TRUST_S", 0.3)


# -- a scripted server on a fake clock ------------------------------------------------------


@dataclass
class Rec:
    t: float
    body: JSON
    headers: list[tuple[bytes, bytes]]
    reply: JSON | None = None
    session: str | None = None  # the session it belongs to: the one it names, or an initialize's own

    def __post_init__(self) -> None:
        named = self.header("mcp-session-id")
        self.session = named.decode() if named is not None else None

    @property
    def method(self) -> str | None:
        return self.body.get("method")

    @property
    def params(self) -> JSON:
        return self.body.get("params") or {}

    def header(self, name: str) -> bytes | None:
        return next((v for k, v in self.headers if k.lower() == name.lower().encode()), None)


Step = JSON | Callable[["Server", JSON], Any]


@dataclass
class Server:
    """Answers each method from its script (a list of replies, the last repeated; a reply may be
    a function of the server and the request), records every POST with the fake time."""

    script: dict[str, list[Step]]
    era: str = EXT
    sse: bool = False
    tool_support: str | None = None  # legacy: the tool's execution.taskSupport
    capabilities: JSON = field(default_factory=dict)  # legacy: the initialize result's
    now: float = 0.0
    log: list[Rec] = field(default_factory=list)
    cancelled: bool = False
    answered: anyio.Event | None = None
    counts: Counter[str] = field(default_factory=Counter)
    # legacy: what a GET of the endpoint gets (None: 405, no stream), and whether the client read on
    # past what the stream sent (it had handled it, answering or not)
    get_stream: Callable[[Server], httpx.Response] | None = None
    stream_read: anyio.Event | None = None
    # a slow call (request-cancel): set when a notifications/cancelled arrives; whether it was answered
    cancel_notified: anyio.Event | None = None
    slow_answered: bool = False

    def clock(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.now += seconds

    async def handle(self, request: httpx.Request) -> httpx.Response:
        if request.method == "GET":
            self.counts["GET"] += 1
            # No GET stream (405), as a server may answer, unless the scenario serves one.
            return httpx.Response(405) if self.get_stream is None else self.get_stream(self)
        body = json.loads(request.content)
        rec = Rec(self.now, body, list(request.headers.raw))
        self.log.append(rec)
        if "method" not in body:  # the client's response to a server request
            if self.answered is not None:
                self.answered.set()
            return httpx.Response(202)
        if "id" not in body:
            if body.get("method") == "notifications/cancelled" and self.cancel_notified is not None:
                self.cancel_notified.set()
            return httpx.Response(202)
        if self.era == EXT and body["method"].startswith("tasks/") and not _declares(rec):
            reply: Any = {"error": {"code": -32021, "message": "Missing required client capability"}}
        else:
            steps = self.script.get(body["method"], [{"error": {"code": -32601, "message": "Method not found"}}])
            step = steps[min(self.counts[body["method"]], len(steps) - 1)]
            self.counts[body["method"]] += 1
            reply = step(self, body) if callable(step) else step
        if isinstance(reply, httpx.Response):
            return reply
        rec.reply = reply
        message = {"jsonrpc": "2.0", "id": body["id"], **reply}
        # Each initialize opens a session of its own (a second connection gets another).
        headers = {"Mcp-Session-Id": f"sess-{self.counts['initialize']}"} if body["method"] == "initialize" else {}
        rec.session = headers.get("Mcp-Session-Id", rec.session)
        if self.sse:
            note = {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "x"}}
            content = b"".join(b"data: " + json.dumps(m).encode() + b"\n\n" for m in (note, message))
            return httpx.Response(200, headers={**headers, "content-type": "text/event-stream"}, content=content)
        status = 404 if get_path(reply, "error", "code") == -32601 else 200
        return httpx.Response(status, json=message, headers=headers)

    async def run(self, harness: Harness | None = None, **kw: Any) -> Run:
        client = harness or Harness()
        kw.setdefault("tool_name", TOOL)
        kw.setdefault("arguments", {"n": 1})
        outcome = await call("http://mock/mcp", era="extension" if self.era == EXT else "legacy",
                             transport=httpx.MockTransport(self.handle), clock=self.clock, sleep=self.sleep,
                             flows=client.flows, **kw)
        return Run(self, outcome, client.exit_status(outcome), hosting=kw.get("hosts_tasks", False))


def _declares(rec: Rec) -> bool:
    return get_path(rec.params, "_meta", META_CLIENT_CAPS, "extensions", EXT_TASKS) is not None


def run_sync(server: Server, harness: Harness | None = None, **kw: Any) -> Run:
    async def go() -> Run:
        return await server.run(harness, **kw)
    return anyio.run(go)


# -- scenarios --------------------------------------------------------------------------------


def endless_get(server: Server, body: JSON) -> JSON:
    return snap("cancelled" if server.cancelled else "working")


def cancel_ack(server: Server, body: JSON) -> JSON:
    server.cancelled = True
    return ACK


UNSERVED = "2099-01-01"  # a version the fake 2026-07-28 server answers with -32022


def unserved(step: Step) -> Step:
    """`step`, but a request offering UNSERVED gets -32022 and the versions served."""
    def answer(server: Server, body: JSON) -> Any:
        if get_path(body, "params", "_meta", META_PROTOCOL_VERSION) == UNSERVED:
            return {"error": {"code": -32022, "message": "unsupported protocol version",
                              "data": {"supported": [EXT], "requested": UNSERVED}}}
        return step(server, body) if callable(step) else step
    return answer


def ext(gets: list[Step] | None = None, *, task_id: str = TASK, **kw: Any) -> Server:
    gets = gets or [snap("working", 300, task_id=task_id), snap("working", 600, task_id=task_id),
                    snap("completed", 600, task_id=task_id, result=RESULT)]
    return Server({"tools/call": [unserved(created(task_id=task_id))], "tasks/get": gets, "tasks/update": [ACK],
                   "tasks/cancel": [cancel_ack]}, **kw)


LIST_CURSOR = base64.b64encode(json.dumps({"page": 1, "nonce": "n1"}).encode()).decode()  # opaque, as it comes


def list_pages(server: Server, body: JSON) -> JSON:
    """tasks/list in two pages: the task, then (the cursor sent back) none."""
    if "cursor" in body["params"]:
        if body["params"]["cursor"] != LIST_CURSOR:
            return {"error": {"code": -32602, "message": "invalid cursor"}}
        return {"result": {"tasks": []}}
    return {"result": {"tasks": [legacy_status("working")["result"]], "nextCursor": LIST_CURSOR}}


HOSTED = ("tasks/list", "tasks/cancel")  # what the fake server asks a client that declared them


def asks_hosted(server: Server, body: JSON) -> httpx.Response:
    """tools/call as an SSE stream: tasks/list, then tasks/cancel of a task the client never had,
    each once the client answered the one before, then the call's plain result."""
    response = {"jsonrpc": "2.0", "id": body["id"], "result": RESULT}

    async def stream() -> AsyncIterator[bytes]:
        for method in HOSTED:
            server.answered = anyio.Event()
            params = {"taskId": "no-such-task"} if method == "tasks/cancel" else {}
            yield b"data: " + json.dumps({"jsonrpc": "2.0", "id": "h-" + method, "method": method,
                                          "params": params}).encode() + b"\n\n"
            with anyio.fail_after(10):
                await server.answered.wait()
        yield b"data: " + json.dumps(response).encode() + b"\n\n"

    return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=stream())


def legacy(support: str | None = "optional", *, declared: bool = True, cancel: bool = True,
           gets: list[Step] | None = None, result: list[Step] | None = None, listed: bool = False,
           call: Step | None = None) -> Server:
    tasks: JSON = {"requests": {"tools": {"call": {}}}} if declared else {}
    if cancel:
        tasks["cancel"] = {}
    if listed:
        tasks["list"] = {}
    tool: JSON = {"name": TOOL, "inputSchema": {"type": "object"}}
    if support is not None:
        tool["execution"] = {"taskSupport": support}

    def tools_call(server: Server, body: JSON) -> JSON:
        asked = "task" in body["params"]
        if support == "required" and declared and not asked:
            return {"error": {"code": -32601, "message": "task augmentation required"}}
        if asked and declared and support in ("required", "optional"):
            return {"result": {"task": {k: v for k, v in task("working", None).items() if k != "ttlMs"}
                               | {"ttl": 600_000, "pollInterval": 200}}}
        return {"result": RESULT}

    def legacy_get(status: str) -> JSON:
        return {"result": {k: v for k, v in task(status, None).items() if k != "ttlMs"}
                | {"ttl": 600_000, "pollInterval": 200}}

    def get(server: Server, body: JSON) -> JSON:
        steps = gets or [legacy_get("working"), legacy_get("completed")]
        n = server.counts["tasks/get"] - 1
        step = steps[min(n, len(steps) - 1)]
        return legacy_get("cancelled") if server.cancelled else (step if isinstance(step, dict) else step(server, body))

    def cancel_task(server: Server, body: JSON) -> JSON:
        server.cancelled = True
        return legacy_get("cancelled")

    return Server({
        "initialize": [{"result": {"protocolVersion": LEG, "capabilities": {"tasks": tasks, "tools": {}},
                                   "serverInfo": {"name": "fake", "version": "1"}}}],
        "tools/list": [{"result": {"tools": [tool]}}],
        "tools/call": [call or tools_call], "tasks/get": [get], "tasks/result": result or [{"result": RESULT}],
        "tasks/cancel": [cancel_task], "tasks/list": [list_pages]},
        era=LEG, tool_support=support, capabilities={"tasks": tasks})


def legacy_status(status: str) -> JSON:
    return {"result": {"taskId": TASK, "status": status, "createdAt": "x", "lastUpdatedAt": "x",
                       "ttl": 600_000, "pollInterval": 200}}


def elicit_on_stream(server: Server, body: JSON) -> httpx.Response:
    """tasks/result as an SSE stream: an elicitation for the task, then (once the client has
    answered it) the call's result."""
    server.answered = anyio.Event()
    request = {"jsonrpc": "2.0", "id": "e-1", "method": "elicitation/create",
               "params": {**ELICIT["params"], "_meta": {META_RELATED_TASK: {"taskId": TASK}}}}
    related = {META_RELATED_TASK: {"taskId": TASK}}
    response = {"jsonrpc": "2.0", "id": body["id"], "result": {**RESULT, "_meta": related}}

    async def stream() -> AsyncIterator[bytes]:
        yield b"data: " + json.dumps(request).encode() + b"\n\n"
        assert server.answered is not None
        with anyio.fail_after(10):
            await server.answered.wait()
        yield b"data: " + json.dumps(response).encode() + b"\n\n"

    return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=stream())


GET_ELICITATION = "g-1"  # the id of the elicitation the fake server sends on the GET stream


def elicit_on_get(server: Server) -> httpx.Response:
    """The session's GET stream: the task's elicitation; once the client reads on past it (having
    handled it), tasks/result may answer. It stays open until the call ends (bounded)."""
    server.stream_read = anyio.Event()
    request = {"jsonrpc": "2.0", "id": GET_ELICITATION, "method": "elicitation/create",
               "params": {**ELICIT["params"], "_meta": {META_RELATED_TASK: {"taskId": TASK}}}}

    async def stream() -> AsyncIterator[bytes]:
        yield b"data: " + json.dumps(request).encode() + b"\n\n"
        assert server.stream_read is not None
        server.stream_read.set()
        with anyio.move_on_after(10):
            await anyio.sleep_forever()
        yield b": end\n\n"

    return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=stream())


def result_once_get_read(server: Server, body: JSON) -> httpx.Response:
    """tasks/result as an SSE stream that answers once the client has read the GET stream's message."""
    response = {"jsonrpc": "2.0", "id": body["id"], "result": RESULT}

    async def stream() -> AsyncIterator[bytes]:
        with anyio.fail_after(10):
            while server.stream_read is None:
                await anyio.sleep(0)
            await server.stream_read.wait()
        yield b"data: " + json.dumps(response).encode() + b"\n\n"

    return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=stream())


def with_listen(server: Server) -> Server:
    server.script["subscriptions/listen"] = [listen_stream]
    return server


def with_get_stream(server: Server) -> Server:
    server.get_stream = elicit_on_get
    return server


def slow_call(server: Server, body: JSON) -> httpx.Response:
    """tools/call as an SSE stream that carries nothing until the client sends a notifications/cancelled
    (bounded), then the plain result; a client that closes the stream never gets it."""
    server.cancel_notified = anyio.Event()
    response = {"jsonrpc": "2.0", "id": body["id"], "result": {"resultType": "complete", **RESULT}}

    async def stream() -> AsyncIterator[bytes]:
        assert server.cancel_notified is not None
        with anyio.move_on_after(10):
            await server.cancel_notified.wait()
        server.slow_answered = True
        yield b"data: " + json.dumps(response).encode() + b"\n\n"

    return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=stream())


LISTEN_ACK: JSON = {"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged",
                   "params": {"notifications": {"taskIds": []}}}


def listen_stream(server: Server, body: JSON) -> httpx.Response:
    """subscriptions/listen as an SSE stream: an acknowledgement that covers none of the taskIds
    asked for, then nothing until the client closes it (bounded)."""
    ack = {**LISTEN_ACK, "params": {**LISTEN_ACK["params"], "_meta": {"io.modelcontextprotocol/subscriptionId":
                                                                       body["id"]}}}

    async def stream() -> AsyncIterator[bytes]:
        yield b"data: " + json.dumps(ack).encode() + b"\n\n"
        with anyio.move_on_after(10):
            await anyio.sleep_forever()
        yield b": end\n\n"

    return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=stream())


def slow_before_polls(server: Server, body: JSON) -> JSON | httpx.Response:
    """tasks/result before any poll: an SSE stream that sends nothing (bounded), which the client
    may drop (C-LEG-MAY-04); once the task was polled, the call's result."""
    if server.counts["tasks/get"]:
        return {"result": RESULT}

    async def stream() -> AsyncIterator[bytes]:
        with anyio.move_on_after(10):
            await anyio.sleep_forever()
        yield b"data: " + json.dumps({"jsonrpc": "2.0", "id": body["id"], "result": RESULT}).encode() + b"\n\n"

    return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=stream())


SCENARIOS: dict[str, Callable[[], tuple[Server, JSON]]] = {
    "task": lambda: (ext(), {}),
    "task-sse": lambda: (ext(sse=True), {}),
    "unsafe-task": lambda: (ext(task_id="tâche 1"), {}),
    "input": lambda: (ext([snap("input_required", inputRequests={"k1": ELICIT}),
                           snap("input_required", inputRequests={"k1": ELICIT}),
                           snap("completed", result=RESULT)]), {}),
    "is-error": lambda: (ext([snap("completed", result={**RESULT, "isError": True})]), {}),
    "failed": lambda: (ext([snap("failed", error={"code": -31000, "message": "quota exceeded"})]), {}),
    "endless-cancel": lambda: (ext([endless_get]), {"cancel_when_working": True, "timeout_s": 3}),
    "prompt-task": lambda: (Server({"prompts/get": [created()], "tasks/get": [snap("completed", result=RESULT)]}),
                            {"request": {"method": "prompts/get", "params": {"name": "greet"}}}),
    "mrtr": lambda: (Server({"tools/call": [{"result": {"resultType": "input_required", "inputRequests": {"m1": ELICIT},
                                                         "requestState": "state-\u00fc-\u2603"}}, created()],
                             "tasks/get": [snap("completed", result=RESULT)]}), {}),
    "version": lambda: (ext(), {"offer_version": UNSERVED}),
    "unknown-result": lambda: (Server({"prompts/get": [{"result": {"resultType": "deferred", "messages": []}}]}),
                               {"request": {"method": "prompts/get", "params": {"name": "greet"}}}),
    "request-cancel": lambda: (Server({"tools/call": [slow_call]}), {"cancel_request": True}),
    "subscription": lambda: (with_listen(ext()), {"subscribe": True}),
    "legacy-task": lambda: (legacy(), {}),
    "legacy-input": lambda: (legacy(gets=[legacy_status("input_required")], result=[elicit_on_stream]), {}),
    "legacy-forbidden": lambda: (legacy("forbidden"), {}),
    "legacy-required": lambda: (legacy("required"), {}),
    "legacy-endless-cancel": lambda: (legacy(gets=[legacy_status("working")]),
                                      {"cancel_when_working": True, "timeout_s": 3}),
    "expiry": lambda: (ext([snap("working"), snap("working"), GONE]), {}),
    "legacy-expiry": lambda: (legacy(gets=[legacy_status("working"), legacy_status("working"), GONE]), {}),
    "legacy-cancel-undeclared": lambda: (legacy(cancel=False, gets=[legacy_status("working"), legacy_status("working"),
                                                                     legacy_status("completed")]),
                                         {"cancel_when_working": True, "timeout_s": 3}),
    "legacy-slow-result": lambda: (legacy(result=[slow_before_polls]), {}),
    "legacy-list": lambda: (legacy(listed=True), {"list_tasks": True}),
    "legacy-hosted": lambda: (legacy("forbidden", call=asks_hosted), {"hosts_tasks": True}),
    "legacy-get-stream": lambda: (with_get_stream(legacy("required", gets=[legacy_status("input_required")],
                                                         result=[result_once_get_read])), {}),
}


@dataclass
class Run:
    server: Server
    outcome: Outcome
    exit_status: int  # what the harness entry would exit with after this outcome
    hosting: bool = False  # the client was asked to declare and serve tasks.list and tasks.cancel

    @property
    def log(self) -> list[Rec]:
        return self.server.log

    def requests(self, *methods: str) -> list[Rec]:
        return [r for r in self.log if r.method in methods]


# -- detectors: one small reading of each rule, over a recorded run --------------------------


TASK_METHODS = ("tasks/get", "tasks/update", "tasks/cancel")


def _created(run: Run) -> list[str]:
    """The task ids tools/call created."""
    return [str(get_path(r.reply, "result", "taskId")) for r in run.requests("tools/call")
            if get_path(r.reply, "result", "resultType") == "task"]


def _gaps(run: Run) -> list[tuple[float, float, float]]:
    """Per tasks/get: (time since the previous create or tasks/get reply, the latest interval
    announced before it, the smallest announced), in seconds."""
    out, prev, latest, announced = [], None, None, []
    for r in run.log:
        if r.method not in ("tools/call", "tasks/get") or r.reply is None:
            continue
        if r.method == "tasks/get" and prev is not None and latest is not None:
            out.append((r.t - prev, latest, min(announced)))
        ms = get_path(r.reply, "result", "pollIntervalMs")
        if isinstance(ms, int):
            latest = ms / 1000
            announced.append(latest)
        if r.method == "tasks/get" or get_path(r.reply, "result", "resultType") == "task":
            prev = r.t
    return out


def _legacy_early_polls(run: Run) -> bool:
    """A 2025-11-25 tasks/get sooner than the pollInterval the previous answer (or the creation) gave."""
    prev, interval = None, None
    for r in run.log:
        if r.method not in ("tools/call", "tasks/get") or r.reply is None:
            continue
        if r.method == "tasks/get" and prev is not None and interval is not None and r.t - prev < interval - EPS:
            return True
        ms = get_path(r.reply, "result", "pollInterval")
        ms = get_path(r.reply, "result", "task", "pollInterval") if ms is None else ms
        if isinstance(ms, int):
            interval = ms / 1000
        if r.method == "tasks/get" or get_path(r.reply, "result", "task") is not None:
            prev = r.t
    return False


def _terminal_reply(run: Run) -> JSON | None:
    return next((get_path(r.reply, "result") for r in run.requests("tasks/get")
                 if get_path(r.reply, "result", "status") in TERMINAL_STATUSES), None)


def _answered_keys(run: Run) -> Counter[str]:
    return Counter(k for r in run.requests("tasks/update") for k in r.params.get("inputResponses", {}))


def _after_terminal(run: Run) -> bool:
    ended = False
    for r in run.requests("tasks/get"):
        if ended:
            return True
        ended = get_path(r.reply, "result", "status") in TERMINAL_STATUSES
    return False


def _gone_at(run: Run) -> int | None:
    """The index among the requests naming the task of the first tasks/get answered with an error
    (the task expired, or was deleted), if one was."""
    naming = [r for r in run.log if "taskId" in r.params]
    return next((i for i, r in enumerate(naming) if r.method == "tasks/get" and "error" in (r.reply or {})), None)


def _exits_non_zero(run: Run) -> bool:
    """A non-zero exit after a call that succeeded (policy P-54)."""
    return run.exit_status != 0 and run.outcome.status == "completed"


def _polls_gone_task(run: Run) -> bool:
    """More than two requests naming a task after the server said it was not found (policy P-45)."""
    first = _gone_at(run)
    return first is not None and len([r for r in run.log if "taskId" in r.params][first + 1:]) > 2


def _abandoned(run: Run) -> bool:
    return (bool(_created(run)) and _terminal_reply(run) is None and not run.requests("tasks/cancel")
            and _gone_at(run) is None)


def _non_tool_task_followed(run: Run) -> bool:
    ids = {get_path(r.reply, "result", "taskId") for r in run.log
           if r.method not in ("tools/call", *TASK_METHODS) and get_path(r.reply, "result", "resultType") == "task"}
    return any(r.params.get("taskId") in ids for r in run.requests(*TASK_METHODS))


def _failed_error_changed(run: Run) -> bool:
    end = _terminal_reply(run)
    return end is not None and end["status"] == "failed" and run.outcome.error != end["error"]


def _resent_after_task(run: Run) -> bool:
    calls = run.requests("tools/call")
    return any(get_path(r.reply, "result", "resultType") == "task" for r in calls[:-1])


def _ids_unique(run: Run) -> bool:
    """Request ids are integers, unique within each session (a connection numbers its own)."""
    ids = [(r.session, r.body["id"]) for r in run.log if "method" in r.body and "id" in r.body]
    return all(isinstance(i, int) for _s, i in ids) and len(ids) == len(set(ids))


def _cancelled_elsewhere(run: Run) -> bool:
    """A tasks/cancel over another session than the tools/call that created the task."""
    made = {r.session for r in run.requests("tools/call") if _created_by(r)}
    return any(r.session not in made for r in run.requests("tasks/cancel"))


def _cancels_a_task(run: Run) -> bool:
    """A notifications/cancelled naming the tools/call that created a task (C-EXT-MUST-06)."""
    made = {r.body["id"] for r in run.requests("tools/call") if _created_by(r)}
    return any(r.params.get("requestId") in made for r in run.requests("notifications/cancelled"))


def _request_cancel_wrong(run: Run) -> bool:
    """A notifications/cancelled naming an id the client never sent, or (over HTTP, as here) one
    naming a call in flight whose stream it then kept open to the answer (C-CORE-MUST-09)."""
    sent = {r.body["id"] for r in run.log if "method" in r.body and "id" in r.body}
    notes = run.requests("notifications/cancelled")
    return any(r.params.get("requestId") not in sent for r in notes) or (run.server.slow_answered and bool(notes))


def _left_to_subscription(run: Run) -> bool:
    """A subscription whose acknowledgement covered no task, and the task not polled to its end
    after it (C-EXT-SHOULD-11)."""
    listens = run.requests("subscriptions/listen")
    return bool(listens) and _terminal_reply(run) is None and not run.requests("tasks/cancel")


def _created_by(r: Rec) -> bool:
    return isinstance(get_path(r.reply, "result", "task", "taskId"), str) or \
        get_path(r.reply, "result", "resultType") == "task"


def _extension(run: Run) -> list[Rec]:
    """What a 2026-07-28 run sent but the 2025-11-25 handshake (the initializes-first break's)."""
    return [r for r in run.log if r.method != "initialize"]


def _version(r: Rec) -> str:
    return str(get_path(r.params, "_meta", META_PROTOCOL_VERSION))


def _mrtr_retry_wrong(run: Run) -> bool:
    """A retry of an InputRequiredResult without a new id, an answer per key, or its requestState."""
    calls = run.requests("tools/call")
    for asked, retry in itertools.pairwise(calls):
        got = get_path(asked.reply, "result") or {}
        if got.get("resultType") != "input_required":
            continue
        keys = set(got.get("inputRequests") or {})
        if retry.body["id"] == asked.body["id"] or not keys <= set(retry.params.get("inputResponses") or {}) \
                or retry.params.get("requestState") != got.get("requestState"):
            return True
    return False


def _version_retry_wrong(run: Run) -> bool:
    """After a -32022, the next request offers a version the error did not list."""
    for i, r in enumerate(run.log):
        supported = get_path(r.reply, "error", "data", "supported")
        if get_path(r.reply, "error", "code") == -32022 and i + 1 < len(run.log) \
                and _version(run.log[i + 1]) not in (supported or []):
            return True
    return False


EXT_RULES: dict[str, Callable[[Run], bool]] = {
    "C-EXT-MUST-01": lambda run: any(not _declares(r) for r in run.requests("tools/call", *TASK_METHODS)),
    # (a subscription to the task follows it too, as the follows-task check reads it)
    "C-EXT-MUST-02": lambda run: bool(_created(run)) and not run.requests("tasks/get", "subscriptions/listen"),
    "C-EXT-MUST-03": _non_tool_task_followed,
    "C-EXT-MUST-04": lambda run: any(r.header("mcp-name") is None for r in run.requests(*TASK_METHODS)),
    "C-CORE-MUST-06": lambda run: any(r.header("mcp-name") not in (None, encode_name(r.params["taskId"]).encode())
                                      for r in run.requests(*TASK_METHODS)),
    "C-EXT-MUST-05": lambda run: any(r.header("mcp-method") != str(r.method).encode()
                                     for r in run.requests(*TASK_METHODS)),
    "C-EXT-MUST-06": _cancels_a_task,
    "C-CORE-MUST-09": _request_cancel_wrong,
    "C-EXT-SHOULD-11": _left_to_subscription,
    "C-EXT-MUST-09": _resent_after_task,
    "C-EXT-MUST-11": lambda run: bool(run.requests("tasks/result")),
    "C-EXT-MUST-12": lambda run: bool(run.requests("tasks/list")),
    "C-EXT-MUST-13": lambda run: any("task" in r.params for r in run.requests("tools/call")),
    "C-EXT-MUST-14": lambda run: any(get_path(r.params, "_meta", META_CLIENT_CAPS, "tasks") is not None
                                     for r in run.log),
    "C-EXT-MUST-15": lambda run: get_path(_terminal_reply(run), "status") == "completed"
                                 and run.outcome.status == "failed",
    "C-EXT-MUST-16": _failed_error_changed,
    "C-EXT-SHOULD-01": lambda run: any(gap < smallest - EPS for gap, _latest, smallest in _gaps(run)),
    "C-EXT-SHOULD-02": lambda run: any(smallest - EPS <= gap < latest - EPS for gap, latest, smallest in _gaps(run)),
    "C-EXT-SHOULD-03": _abandoned,
    "C-EXT-SHOULD-04": _after_terminal,
    "C-EXT-SHOULD-08": lambda run: any(n > 1 for n in _answered_keys(run).values()),
    "C-CORE-MUST-01": lambda run: any(not isinstance(get_path(r.params, "_meta", META_PROTOCOL_VERSION), str)
                                      or not isinstance(get_path(r.params, "_meta", META_CLIENT_CAPS), dict)
                                      for r in _extension(run) if "id" in r.body),
    "C-CORE-MUST-04": lambda run: any(r.header("mcp-protocol-version") != _version(r).encode()
                                      for r in _extension(run)),
    "C-CORE-MUST-03": lambda run: any(not {b"application/json", b"text/event-stream"} <= {
        p.split(b";")[0].strip() for p in (r.header("accept") or b"").split(b",")} for r in _extension(run)),
    "C-CORE-MUST-07": lambda run: any(get_path(r.reply, "result", "resultType") == "deferred" for r in run.log)
                                  and run.outcome.error is None,
    "C-CORE-MUST-08": _mrtr_retry_wrong,
    "C-EXT-MUST-10": lambda run: any(get_path(r.reply, "result", "resultType") == "input_required"
                                     for r in run.requests("tools/call")[-1:]),
    "C-CORE-SHOULD-02": lambda run: bool(run.requests("initialize")),
    "C-CORE-SHOULD-03": _version_retry_wrong,
    "P-50": lambda run: any(get_path(r.params, "_meta", META_CLIENT_CAPS, "elicitation") is None
                            for r in run.requests(*TASK_METHODS)),
    "C-CORE-MUST-05": lambda run: any(r.header("mcp-name") != encode_name(r.params["name"]).encode()
                                      for r in run.requests("tools/call", "prompts/get")),
    "C-CORE-MUST-11": lambda run: not _ids_unique(run),
    "C-CORE-SHOULD-01": lambda run: any(get_path(r.params, "_meta", META_CLIENT_INFO) is None
                                        for r in _extension(run) if "id" in r.body),
    "P-45": _polls_gone_task,
    "P-54": _exits_non_zero,
}


def _legacy_task_param(run: Run, allowed: Callable[[Server], bool]) -> bool:
    return any(("task" in r.params) != allowed(run.server) for r in run.requests("tools/call"))


def _fetch_skipped(run: Run) -> bool:
    needs = any(get_path(r.reply, "result", "status") in ("completed", "failed", "input_required")
                for r in run.requests("tasks/get"))
    return needs and not run.requests("tasks/result")


def _elicitation_unrelated(run: Run) -> bool:
    answers = [r for r in run.log if "method" not in r.body and not str(r.body.get("id")).startswith("h-")]
    return any(get_path(r.body, "result", "_meta", META_RELATED_TASK, "taskId") != TASK for r in answers)


def _legacy_created(run: Run) -> bool:
    return any(isinstance(get_path(r.reply, "result", "task", "taskId"), str) for r in run.requests("tools/call"))


def _create_taken_as_result(run: Run) -> bool:
    """A nested CreateTaskResult never followed, the call reported ended (C-LEG-MUST-04)."""
    return (_legacy_created(run) and not run.requests("tasks/get", "tasks/result", "tasks/cancel")
            and run.outcome.status in TERMINAL_STATUSES)


def _left_working(run: Run) -> bool:
    """The task read working last, and nothing since: no tasks/result, no cancel of any kind (C-LEG-MUST-06)."""
    gets = run.requests("tasks/get")
    return (_legacy_created(run) and bool(gets)
            and not run.requests("tasks/result", "tasks/cancel", "notifications/cancelled")
            and get_path(gets[-1].reply, "result", "status") == "working")


def _stopped_after_result_stream(run: Run) -> bool:
    """A tasks/result was the last request about the task, and the call ended working (C-LEG-SHOULD-03)."""
    naming = [r for r in run.log if "taskId" in r.params]
    return bool(naming) and naming[-1].method == "tasks/result" and run.outcome.status == "working"


def _cursor_altered(run: Run) -> bool:
    """A tasks/list cursor no earlier tasks/list reply gave as its nextCursor (C-LEG-MUST-09)."""
    given: list[Any] = []
    for r in run.requests("tasks/list"):
        if "cursor" in r.params and r.params["cursor"] not in given:
            return True
        given.append(get_path(r.reply, "result", "nextCursor"))
    return False


def _declares_unhosted(run: Run) -> bool:
    """capabilities.tasks declared by a client not asked to host tasks, or a server tasks/list or
    tasks/cancel it declared answered -32601 (C-LEG-MUST-12)."""
    declares = any("tasks" in r.params.get("capabilities", {}) for r in run.requests("initialize"))
    refused = any(str(r.body.get("id")).startswith("h-") and get_path(r.body, "error", "code") == -32601
                  for r in run.log if "method" not in r.body)
    return (declares and not run.hosting) or refused


def _get_stream_unanswered(run: Run) -> bool:
    """The elicitation the server sent on the GET stream, read by the client but never answered
    (C-LEG-SHOULD-06)."""
    read = run.server.stream_read is not None and run.server.stream_read.is_set()
    return read and not any(r.body.get("id") == GET_ELICITATION for r in run.log if "method" not in r.body)


def _declared_call(server: Server) -> bool:
    return get_path(server.capabilities, "tasks", "requests", "tools", "call") is not None


LEGACY_RULES: dict[str, Callable[[Run], bool]] = {
    "C-LEG-MUST-01": lambda run: not _declared_call(run.server) and _legacy_task_param(run, lambda s: False),
    "C-LEG-MUST-02": lambda run: any("task" in r.params for r in run.requests("tools/call"))
                                 and run.server.tool_support not in ("required", "optional"),
    "C-LEG-MUST-03": lambda run: _declared_call(run.server) and run.server.tool_support == "required"
                                 and any("task" not in r.params for r in run.requests("tools/call")),
    "C-LEG-MUST-04": _create_taken_as_result,
    "C-LEG-MUST-05": _fetch_skipped,
    "C-LEG-MUST-06": _left_working,
    "C-LEG-MUST-07": lambda run: bool(run.requests("notifications/cancelled")) or _cancelled_elsewhere(run),
    "C-LEG-MUST-08": _elicitation_unrelated,
    "C-LEG-MUST-09": _cursor_altered,
    "C-LEG-MUST-10": lambda run: bool(run.requests("tasks/update")) or any(_declares(r) for r in run.log),
    "C-LEG-MUST-12": _declares_unhosted,
    "C-LEG-MUST-15": lambda run: not _ids_unique(run),
    "C-LEG-SHOULD-02": _legacy_early_polls,
    "C-LEG-SHOULD-03": _stopped_after_result_stream,
    "C-LEG-SHOULD-05": lambda run: any(get_path(r.params, "_meta", META_RELATED_TASK) is not None
                                       for r in run.requests("tasks/get", "tasks/result", "tasks/cancel")),
    "C-LEG-SHOULD-06": _get_stream_unanswered,
    "C-LEG-SHOULD-07": lambda run: bool(run.requests("tasks/cancel"))
                                   and get_path(run.server.capabilities, "tasks", "cancel") is None,
    "P-45": _polls_gone_task,
    "P-54": _exits_non_zero,
}


def broken(run: Run) -> set[str]:
    rules = EXT_RULES if run.server.era == EXT else LEGACY_RULES
    return {rule for rule, detect in rules.items() if detect(run)}


# -- the compliant client in every scenario -------------------------------------------------

EXPECTED = {
    "task": Outcome("completed", result=RESULT),
    "task-sse": Outcome("completed", result=RESULT),
    "unsafe-task": Outcome("completed", result=RESULT),
    "input": Outcome("completed", result=RESULT),
    "is-error": Outcome("completed", is_error=True, result={**RESULT, "isError": True}),
    "failed": Outcome("failed", error={"code": -31000, "message": "quota exceeded"}),
    "endless-cancel": Outcome("cancelled"),
    "prompt-task": Outcome("unknown", error={"code": -32603,
                                             "message": "invalid response: resultType task on prompts/get"}),
    "mrtr": Outcome("completed", result=RESULT),
    "version": Outcome("completed", result=RESULT),
    "unknown-result": Outcome("unknown", error={"code": -32603,
                                                "message": "invalid response: resultType deferred on prompts/get"}),
    "request-cancel": Outcome("cancelled"),
    "subscription": Outcome("completed", result=RESULT),
    "legacy-task": Outcome("completed", result=RESULT),
    "legacy-input": Outcome("completed", result={**RESULT, "_meta": {META_RELATED_TASK: {"taskId": TASK}}}),
    "legacy-forbidden": Outcome("completed", result=RESULT),
    "legacy-required": Outcome("completed", result=RESULT),
    "legacy-endless-cancel": Outcome("cancelled"),
    "legacy-cancel-undeclared": Outcome("completed", result=RESULT),
    "legacy-slow-result": Outcome("completed", result=RESULT),
    "legacy-list": Outcome("completed", result=RESULT),
    "legacy-hosted": Outcome("completed", result=RESULT),
    "legacy-get-stream": Outcome("completed", result=RESULT),
    "expiry": Outcome("unknown", error=GONE["error"]),
    "legacy-expiry": Outcome("unknown", error=GONE["error"]),
}


@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_the_compliant_client_breaks_no_rule_and_reports_the_outcome(scenario: str) -> None:
    server, kw = SCENARIOS[scenario]()
    run = run_sync(server, **kw)
    assert broken(run) == set(), [(r.method, r.params) for r in run.log]
    assert run.outcome == EXPECTED[scenario]


def test_every_scenario_has_its_expected_outcome() -> None:
    assert set(EXPECTED) == set(SCENARIOS)


# -- each break shows on the wire (or in the outcome) and breaks nothing else ------------------

CASES = {
    "no-extension-on-get": "task", "polymorphic-ignored": "task", "polls-non-tool-task": "prompt-task",
    "no-mcp-name": "task", "raw-unsafe-mcp-name": "unsafe-task", "no-mcp-method": "task",
    "cancel-notification": "endless-cancel", "calls-tasks-result": "task", "params-task": "task",
    "polls-fast": "task", "stale-interval": "task", "reanswers-key": "input", "polls-after-terminal": "task",
    "abandons": "task", "isError-as-failed": "is-error", "generic-error": "failed",
    "legacy-task-on-forbidden": "legacy-forbidden", "legacy-no-task-on-required": "legacy-required",
    "legacy-no-result-fetch": "legacy-task", "legacy-cancel-notification": "legacy-endless-cancel",
    "legacy-related-meta-on-get": "legacy-task", "no-protocol-version-header": "task",
    "legacy-polls-fast": "legacy-task", "legacy-extension-meta": "legacy-task",
    "legacy-cancel-undeclared": "legacy-cancel-undeclared", "legacy-elicitation-untagged": "legacy-input",
    "polls-gone-task": "expiry", "legacy-polls-gone-task": "legacy-expiry", "null-id": "task",
    "legacy-null-id": "legacy-task", "cancels-elsewhere": "endless-cancel",
    "legacy-cancels-elsewhere": "legacy-endless-cancel", "no-client-info": "task", "no-mcp-name-on-call": "task",
    "accept-json-only": "task", "elicitation-on-call-only": "task", "initializes-first": "task",
    "retries-rejected-version": "version", "mrtr-drops-state": "mrtr", "mrtr-as-outcome": "mrtr",
    "unknown-result-as-complete": "unknown-result",
    "legacy-result-as-final": "legacy-task", "legacy-awaits-status-notification": "legacy-task",
    "legacy-stops-after-dropped-result": "legacy-slow-result",
    "exits-non-zero": "task", "legacy-exits-non-zero": "legacy-task", "legacy-alters-cursor": "legacy-list",
    "legacy-declares-unhosted": "legacy-hosted", "legacy-ignores-get-stream": "legacy-get-stream",
    "cancels-request-by-notification": "request-cancel", "cancels-unknown-request": "request-cancel",
    "trusts-subscription": "subscription",
}


def test_every_break_has_a_case_a_detector_and_its_era() -> None:
    assert set(CASES) == set(BREAKS)
    for name, brk in BREAKS.items():
        server, _kw = SCENARIOS[CASES[name]]()
        assert brk.rule in (EXT_RULES if brk.era == "extension" else LEGACY_RULES), name
        assert (server.era == EXT) == (brk.era == "extension"), name


@pytest.mark.parametrize("name", sorted(n for n, b in BREAKS.items() if "http" in b.transports))
def test_each_break_breaks_its_rule_and_no_other(name: str) -> None:
    """Over HTTP, as the fake server here speaks it (a break of stdio only, cancels-elsewhere,
    reaches the same stateless 2026-07-28 server over a second HTTP connection, which is no break:
    tests/e2e/client/test_client_stdio.py shows it)."""
    brk = BREAKS[name]
    server, kw = SCENARIOS[CASES[name]]()
    run = run_sync(server, broken_client.harness(name), **kw)
    assert broken(run) == {brk.rule, *brk.also}, [(r.method, r.params) for r in run.log]


# -- the compliant behaviour, spelled out -----------------------------------------------------


def test_every_extension_request_carries_its_headers_and_meta() -> None:
    run = run_sync(ext())
    assert [r.method for r in run.log] == ["tools/call", "tasks/get", "tasks/get", "tasks/get"]
    for r in run.log:
        assert r.header("accept") == b"application/json, text/event-stream"
        assert r.header("content-type") == b"application/json"
        assert r.header("mcp-protocol-version") == EXT.encode()
        assert r.header("mcp-method") == str(r.method).encode()
        assert r.header("mcp-name") == (TOOL if r.method == "tools/call" else TASK).encode()
        meta = r.params["_meta"]
        assert meta[META_PROTOCOL_VERSION] == EXT
        assert meta[META_CLIENT_CAPS] == {"extensions": {EXT_TASKS: {}}, "elicitation": {}}
        assert meta[META_CLIENT_INFO]["name"]
        assert "task" not in r.params
    assert [r.body["id"] for r in run.log] == [1, 2, 3, 4]


def test_polls_wait_the_latest_interval_from_each_reply() -> None:
    statuses: list[str] = []
    run = run_sync(ext(), on_status=statuses.append)
    # create at 0 (300 ms), polls at 0.3 (300 ms), 0.6 (600 ms), 1.2: completed, then no more polls
    assert [r.t for r in run.requests("tasks/get")] == pytest.approx([0.3, 0.6, 1.2])
    assert statuses == ["working", "working", "working", "completed"]


def test_without_an_interval_the_client_waits_one_second() -> None:
    run = run_sync(Server({"tools/call": [created(interval=None)],
                           "tasks/get": [snap("working", None), snap("completed", None, result=RESULT)]}))
    assert [r.t for r in run.requests("tasks/get")] == pytest.approx([1.0, 2.0])
    assert run.outcome.status == "completed"


def test_a_plain_result_is_the_outcome_without_polling() -> None:
    result = {"resultType": "complete", **RESULT, "isError": True}
    run = run_sync(Server({"tools/call": [{"result": result}]}))
    assert run.outcome == Outcome("completed", is_error=True, result=result)
    assert [r.method for r in run.log] == ["tools/call"]


def test_an_input_key_is_answered_once_with_the_given_response() -> None:
    server, _ = SCENARIOS["input"]()
    answer = {"action": "accept", "content": {"confirm": True}}
    run = run_sync(server, input_responses={"k1": answer})
    updates = run.requests("tasks/update")
    assert [u.params["inputResponses"] for u in updates] == [{"k1": answer}]
    assert updates[0].params["taskId"] == TASK and _declares(updates[0])


def test_an_input_key_no_answer_fits_is_declined_never_accepted() -> None:
    server, _ = SCENARIOS["input"]()
    run = run_sync(server, input_responses={"other": {"role": "assistant", "content": {}}})
    assert [u.params["inputResponses"] for u in run.requests("tasks/update")] == [{"k1": {"action": "decline"}}]
    assert run.outcome.trace is not None
    (asked,) = run.outcome.trace.inputs
    assert (asked.key, asked.method, asked.answered_by) == ("k1", "elicitation/create", "declined")


def test_mrtr_retries_with_a_new_id_the_answers_and_the_request_state_as_given() -> None:
    server, _ = SCENARIOS["mrtr"]()
    run = run_sync(server, input_responses={"m1": {"action": "decline"}})
    first, retry = run.requests("tools/call")
    assert retry.body["id"] != first.body["id"]
    assert retry.params["inputResponses"] == {"m1": {"action": "decline"}}
    assert retry.params["requestState"] == "state-\u00fc-\u2603"
    assert {k: v for k, v in retry.params.items() if k not in ("inputResponses", "requestState")} == first.params
    assert not run.requests("tasks/update")
    assert run.outcome.status == "completed"


def test_cancel_after_ms_sends_tasks_cancel_on_time_then_polls_to_the_end() -> None:
    run = run_sync(ext([endless_get]), cancel_after_ms=500)
    (cancel,) = run.requests("tasks/cancel")
    assert cancel.t == pytest.approx(0.5) and cancel.params == {"taskId": TASK, "_meta": cancel.params["_meta"]}
    assert cancel.header("mcp-name") == TASK.encode() and cancel.header("mcp-method") == b"tasks/cancel"
    assert run.requests("tasks/get")[-1].t == pytest.approx(0.6)
    assert run.outcome.status == "cancelled" and not run.requests("notifications/cancelled")


def test_a_task_still_live_at_the_timeout_is_cancelled_not_abandoned() -> None:
    run = run_sync(Server({"tools/call": [created()], "tasks/get": [snap("working")], "tasks/cancel": [ACK]}),
                   timeout_s=2)
    assert run.log[-1].method == "tasks/cancel"
    assert run.outcome.status == "working"
    assert all(r.t <= 2 + EPS for r in run.log)


def test_a_task_reply_to_prompts_get_is_refused_and_never_polled() -> None:
    server, kw = SCENARIOS["prompt-task"]()
    run = run_sync(server, **kw)
    assert [r.method for r in run.log] == ["prompts/get"]
    assert run.log[0].header("mcp-name") == b"greet"
    assert run.outcome.to_json() == {"status": "unknown", "isError": False, "error": {
        "code": -32603, "message": "invalid response: resultType task on prompts/get"}}


@pytest.mark.parametrize(("value", "sent"), [
    ("task-1", "task-1"),
    ("tâche 1", "=?base64?" + base64.b64encode("tâche 1".encode()).decode() + "?="),
    (" padded", "=?base64?IHBhZGRlZA==?="),
    ("tab\tinside", "=?base64?" + base64.b64encode(b"tab\tinside").decode() + "?="),
    ("=?base64?dGFzaw==?=", "=?base64?" + base64.b64encode(b"=?base64?dGFzaw==?=").decode() + "?="),
    ("has space", "has space"),
])
def test_mcp_name_values_that_are_not_plain_ascii_travel_as_base64(value: str, sent: str) -> None:
    assert encode_name(value) == sent


def test_an_unsafe_task_id_is_sent_as_the_base64_sentinel() -> None:
    run = run_sync(ext(task_id="tâche 1"))
    for r in run.requests("tasks/get"):
        value = r.header("mcp-name")
        assert value is not None and value.startswith(b"=?base64?") and value.endswith(b"?=")
        assert base64.b64decode(value[9:-2]).decode() == "tâche 1"


def test_sse_replies_are_read_for_the_response_with_the_request_id() -> None:
    run = run_sync(ext(sse=True))
    assert run.outcome == Outcome("completed", result=RESULT)


def test_an_unreadable_reply_is_an_unknown_outcome_and_the_live_task_is_cancelled() -> None:
    def garbage(server: Server, body: JSON) -> httpx.Response:
        return httpx.Response(500, text="oops")
    run = run_sync(Server({"tools/call": [created()], "tasks/get": [garbage], "tasks/cancel": [ACK]}))
    # The server sent no JSON-RPC error: the outcome names the failed exchange, never a code.
    assert run.outcome.status == "unknown" and run.outcome.error is None and run.outcome.failure is not None
    assert "HTTP 500" in run.outcome.failure and run.outcome.to_json()["failure"] == run.outcome.failure
    assert run.log[-1].method == "tasks/cancel"


# -- the 2025-11-25 wire ----------------------------------------------------------------------


def test_legacy_initializes_as_a_pure_requestor_and_keeps_the_session() -> None:
    run = run_sync(legacy())
    init, note, *rest = run.log
    assert init.method == "initialize" and init.params["capabilities"] == {"elicitation": {}}
    assert init.params["protocolVersion"] == LEG and init.header("mcp-protocol-version") is None
    assert note.method == "notifications/initialized"
    for r in [note, *rest]:
        assert r.header("mcp-protocol-version") == LEG.encode() and r.header("mcp-session-id") == b"sess-1"
        assert r.header("mcp-method") is None and "_meta" not in r.params
    assert [r.method for r in rest] == ["tools/list", "tools/call", "tasks/get", "tasks/get", "tasks/result"]
    assert [r.t for r in run.requests("tasks/get")] == pytest.approx([0.2, 0.4])


@pytest.mark.parametrize(("declared", "support", "augmented"), [
    (True, "required", True), (True, "optional", True), (True, "forbidden", False), (True, None, False),
    (False, "required", False), (False, "optional", False),
])
def test_legacy_sends_params_task_only_where_capability_and_tool_allow(
        declared: bool, support: str | None, augmented: bool) -> None:
    run = run_sync(legacy(support, declared=declared))
    (tool_call,) = run.requests("tools/call")
    assert ("task" in tool_call.params) is augmented
    assert bool(run.requests("tasks/get")) is augmented


def test_legacy_elicitation_on_the_result_stream_is_answered_with_the_related_task() -> None:
    server, _ = SCENARIOS["legacy-input"]()
    answer = {"action": "accept", "content": {"confirm": True}}
    run = run_sync(server, input_responses={"confirm": answer})
    (response,) = [r for r in run.log if "method" not in r.body]
    assert response.body["id"] == "e-1"
    assert response.body["result"] == {**answer, "_meta": {META_RELATED_TASK: {"taskId": TASK}}}
    assert run.outcome.status == "completed"


def test_legacy_failed_task_outcome_is_the_error_tasks_result_gives() -> None:
    error = {"code": -31000, "message": "quota exceeded"}
    run = run_sync(legacy(gets=[legacy_status("failed")], result=[{"error": error}]))
    assert run.outcome == Outcome("failed", error=error)


def test_legacy_cancel_is_not_sent_to_a_server_without_tasks_cancel() -> None:
    run = run_sync(legacy(cancel=False, gets=[legacy_status("working")]), cancel_when_working=True, timeout_s=2)
    assert not run.requests("tasks/cancel") and not run.requests("notifications/cancelled")
    assert run.outcome.status == "working"


# -- the harness entry --------------------------------------------------------------------------


def test_main_refuses_a_context_without_a_tool_in_one_line(monkeypatch: pytest.MonkeyPatch,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("MCP_CONFORMANCE_PROTOCOL_VERSION", EXT)
    monkeypatch.setenv("MCP_CONFORMANCE_CONTEXT", '{"name": "tasks-client"}')
    assert main(["http://127.0.0.1:9/mcp"]) == 1
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and "toolName" in err and "Traceback" not in err
    monkeypatch.setenv("MCP_CONFORMANCE_PROTOCOL_VERSION", "2025-06-18")
    assert main(["http://127.0.0.1:9/mcp"]) == 1
    assert "2025-06-18" in capsys.readouterr().err


def test_the_broken_client_lists_its_breaks_with_their_rules(capsys: pytest.CaptureFixture[str]) -> None:
    assert broken_client.run(["--list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == len(BREAKS) and all(BREAKS[line.split()[0]].rule in line for line in lines)


def test_each_breaking_client_is_a_class_that_overrides_and_the_reference_has_no_switch() -> None:
    """A break is the reference client with one method overridden in fixtures/, never a flag the
    shipped client reads: each variant's class defines the method it breaks, and the reference
    client's modules carry no deviation switch (as the reference server carries none)."""
    import inspect
    from pathlib import Path

    from tasks_conformance.client.reference.wire import Flow

    variants = {name: brk.client for name, brk in BREAKS.items()} | {n: f[0] for n, f in broken_client.FREEDOMS.items()}
    for name, variant in variants.items():
        own = [k for k, v in vars(variant).items() if inspect.isfunction(v)]
        assert own, f"{name}: {variant.__name__} overrides nothing"
        made = broken_client.harness(name)
        changed = [wire for wire, flow in made.flows.items() if flow is not broken_client.FLOWS[wire]]
        assert changed or type(made) is not Harness, name  # a flow of its own, or a harness of its own
        assert all(issubclass(flow, Flow) for flow in made.flows.values()), name
    reference = Path(reference_extension.__file__).parent
    for path in sorted(reference.glob("*.py")):
        text = path.read_text(encoding="utf-8")
        assert "self.dev" not in text and "eviation" not in text, path.name


class _TinyServer(BaseHTTPRequestHandler):
    """A 2026-07-28 server with one task tool that completes on its first poll (50 ms interval)."""

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        if "id" not in body:
            self.send_response(202)
            self.end_headers()
            return
        result = created(interval=50)["result"] if body["method"] == "tools/call" else \
            snap("completed", 50, result=RESULT)["result"]
        data = json.dumps({"jsonrpc": "2.0", "id": body["id"], "result": result}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: Any) -> None:
        pass


def test_the_harness_entry_prints_one_outcome_line() -> None:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _TinyServer)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        env = {**os.environ, "MCP_CONFORMANCE_SCENARIO": "tasks-client-lifecycle",
               "MCP_CONFORMANCE_PROTOCOL_VERSION": EXT,
               "MCP_CONFORMANCE_CONTEXT": json.dumps({"name": "x", "toolName": TOOL, "arguments": {}, "other": 1}),
               "PYTHONPATH": str(ROOT / "src")}
        url = f"http://127.0.0.1:{httpd.server_address[1]}/mcp"
        proc = subprocess.run([sys.executable, "-m", "tasks_conformance.client.reference_client", url],
                              env=env, capture_output=True, text=True, timeout=60)
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=10)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == ['TASKS-CONFORMANCE-OUTCOME {"status":"completed","isError":false,"error":null}']


def test_a_client_that_hosts_tasks_declares_and_serves_them_and_a_pure_requestor_declares_none() -> None:
    """C-LEG-MUST-12: asked to host, the client declares tasks.list and tasks.cancel and answers the
    server's list (no tasks) and cancel (a task it does not know: -32602); otherwise it declares none."""
    server, kw = SCENARIOS["legacy-hosted"]()
    run = run_sync(server, **kw)
    (init,) = run.requests("initialize")
    assert init.params["capabilities"] == {"elicitation": {}, "tasks": {"list": {}, "cancel": {}}}
    answers = {r.body["id"]: r.body for r in run.log if "method" not in r.body}
    assert answers["h-tasks/list"]["result"] == {"tasks": []}
    assert answers["h-tasks/cancel"]["error"]["code"] == -32602
    (plain,) = run_sync(legacy()).requests("initialize")
    assert "tasks" not in plain.params["capabilities"]
