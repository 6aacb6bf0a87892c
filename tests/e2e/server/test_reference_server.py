"""The bundled reference server, spoken to with raw JSON-RPC (no client library).

Both eras over stdio (subprocess pipes) and Streamable HTTP (httpx), and for every variant in
fixtures/broken_server.py one assertion showing that it really breaks its rule. Every wait has a
timeout; every process is stopped and reaped.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import queue
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, BinaryIO

import httpx
import pytest
from helpers.broken_variants import BROKEN_SERVER
from helpers.paths import ROOT
from helpers.processes import stop_process
from helpers.zygote import forked

SRC = ROOT / "src"
BROKEN_SCRIPT = ROOT / "fixtures" / "broken_server.py"
REFERENCE_CMD = [sys.executable, "-m", "tasks_conformance.server.reference"]
BROKEN_CMD = [sys.executable, str(BROKEN_SCRIPT)]

EXTENSION = "2026-07-28"
LEGACY = "2025-11-25"
EXT = "io.modelcontextprotocol/tasks"
PV = "io.modelcontextprotocol/protocolVersion"
CC = "io.modelcontextprotocol/clientCapabilities"
SERVER_INFO = "io.modelcontextprotocol/serverInfo"
SUB_ID = "io.modelcontextprotocol/subscriptionId"
RELATED = "io.modelcontextprotocol/related-task"
RFC3339 = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$")
ACCEPT = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
FAST = ["--task-duration-ms", "100", "--poll-interval-ms", "50"]
WAIT = 10.0  # upper bound of every single wait in this file
# The official MCP conformance suite's fixture tools (name -> legacy execution.taskSupport).
OFFICIAL_FIXTURE_TOOLS = {
    "greet": "forbidden",
    "failing_job": "required",
    "protocol_error_job": "optional",
    "confirm_delete": "optional",
    "multi_input": "optional",
    "test_missing_capability": "forbidden",
    "test_streaming_elicitation": "forbidden",
    "test_logging_tool": "forbidden",
    "test_tool_with_task": "required",
}

JSON = dict[str, Any]


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(SRC), *([env["PYTHONPATH"]] if env.get("PYTHONPATH") else [])])
    env.setdefault("PYTHONUNBUFFERED", "1")
    return env


def meta(*, declare: bool = True, elicitation: bool = False, version: str = EXTENSION) -> JSON:
    caps: JSON = {}
    if declare:
        caps["extensions"] = {EXT: {}}
    if elicitation:
        caps["elicitation"] = {"form": {}}
    return {PV: version, CC: caps, "io.modelcontextprotocol/clientInfo": {"name": "raw-test", "version": "0"}}


# ====================================================================== stdio peer
class LinePeer:
    """A raw newline-delimited JSON-RPC client (over a server's stdio, or a socket)."""

    def __init__(self, rfile: BinaryIO, wfile: BinaryIO) -> None:
        self.rfile = rfile
        self.wfile = wfile
        self.inbox: queue.Queue[JSON | None] = queue.Queue()
        self.other: list[JSON] = []  # notifications and server requests seen while waiting
        self._ids = iter(range(1, 1_000_000))
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        with contextlib.suppress(OSError, ValueError):
            for line in self.rfile:
                with contextlib.suppress(ValueError):
                    self.inbox.put(json.loads(line))
        self.inbox.put(None)

    def write_raw(self, data: bytes) -> None:
        self.wfile.write(data)
        self.wfile.flush()

    def send(self, message: JSON) -> None:
        self.write_raw(json.dumps(message).encode() + b"\n")

    def next_message(self, timeout: float = WAIT) -> JSON:
        try:
            message = self.inbox.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError("no message from the server in time") from None
        if message is None:
            raise AssertionError("server closed stdout")
        return message

    def request(
        self,
        method: str,
        params: JSON | None = None,
        *,
        on_request: Callable[[JSON], JSON] | None = None,
        timeout: float = WAIT,
        request_id: Any = None,
    ) -> JSON:
        """Send a request; return its response message. Server requests go to on_request."""
        rid = next(self._ids) if request_id is None else request_id
        self.send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params or {}})
        deadline = time.monotonic() + timeout
        while True:
            message = self.next_message(max(0.01, deadline - time.monotonic()))
            if message.get("id") == rid and "method" not in message:
                return message
            self.other.append(message)
            if "method" in message and "id" in message and on_request is not None:
                self.send({"jsonrpc": "2.0", "id": message["id"], "result": on_request(message)})

    def result(self, method: str, params: JSON | None = None, **kw: Any) -> JSON:
        reply = self.request(method, params, **kw)
        assert "result" in reply, reply
        result: JSON = reply["result"]
        return result

    def error(self, method: str, params: JSON | None = None, **kw: Any) -> JSON:
        reply = self.request(method, params, **kw)
        assert "error" in reply, reply
        error: JSON = reply["error"]
        return error


class StdioPeer(LinePeer):
    def __init__(self, argv: list[str]) -> None:
        self.proc = subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=_env()
        )
        assert self.proc.stdout is not None and self.proc.stdin is not None
        super().__init__(self.proc.stdout, self.proc.stdin)

    def close(self) -> None:
        stop_process(self.proc)


class SocketPeer(LinePeer):
    def __init__(self, sock: socket.socket) -> None:
        sock.settimeout(None)
        self.sock = sock
        super().__init__(sock.makefile("rb"), sock.makefile("wb"))

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.sock.shutdown(socket.SHUT_RDWR)
        self.sock.close()


def _server(broken: str | None, process: bool) -> list[str]:
    """The reference server, or a broken variant of it. Forked from the tests' zygote unless the
    test is about the process itself (`process`: how it starts, how a signal ends it)."""
    argv = [*BROKEN_CMD, "--break", broken] if broken else list(REFERENCE_CMD)
    return argv if process else list(forked(argv))


@contextlib.contextmanager
def stdio_server(*extra: str, broken: str | None = None, process: bool = False) -> Iterator[StdioPeer]:
    peer = StdioPeer([*_server(broken, process), "--transport", "stdio", *FAST, *extra])
    try:
        yield peer
    finally:
        peer.close()


def legacy_init(peer: StdioPeer, *, elicitation: bool = True) -> JSON:
    caps: JSON = {"elicitation": {}} if elicitation else {}
    result = peer.result(
        "initialize",
        {"protocolVersion": LEGACY, "capabilities": caps, "clientInfo": {"name": "raw", "version": "0"}},
    )
    peer.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    return result


def extension_poll(get: Callable[[str], JSON], task_id: str, until: Callable[[JSON], bool],
                   timeout: float = WAIT) -> JSON:
    deadline = time.monotonic() + timeout
    while True:
        task = get(task_id)
        if until(task) or time.monotonic() > deadline:
            return task
        time.sleep(0.03)


def terminal(task: JSON) -> bool:
    return task.get("status") in ("completed", "failed", "cancelled")


def assert_task_fields(task: JSON) -> None:
    assert isinstance(task["taskId"], str) and len(task["taskId"]) >= 16
    assert task["status"] in ("working", "input_required", "completed", "failed", "cancelled")
    assert RFC3339.match(task["createdAt"]) and RFC3339.match(task["lastUpdatedAt"])
    assert type(task["ttlMs"]) is int and task["ttlMs"] > 0
    assert type(task.get("pollIntervalMs", 0)) is int
    assert "ttl" not in task and "pollInterval" not in task and "task" not in task


# ====================================================================== HTTP peer
class ListeningProc:
    """A server process that prints one `READY <address>` line once it listens."""

    def __init__(self, argv: list[str]) -> None:
        self.proc = subprocess.Popen(
            argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=_env()
        )
        lines: queue.Queue[bytes] = queue.Queue()

        def pump() -> None:
            assert self.proc.stdout is not None
            for line in self.proc.stdout:
                lines.put(line)

        threading.Thread(target=pump, daemon=True).start()
        try:
            first = lines.get(timeout=WAIT).decode()
        except queue.Empty:
            stop_process(self.proc)
            raise AssertionError(f"no READY line from {argv}") from None
        if not first.startswith("READY "):
            stop_process(self.proc)
            raise AssertionError(f"unexpected first line {first!r}")
        self.url = first.split()[1]

    def close(self) -> None:
        stop_process(self.proc)


class HttpServerProc(ListeningProc):
    def __init__(self, argv: list[str]) -> None:
        super().__init__(argv)
        assert re.match(r"^http://127\.0\.0\.1:\d+/mcp$", self.url), self.url
        self.client = httpx.Client(timeout=WAIT)

    def close(self) -> None:
        self.client.close()
        stop_process(self.proc)

    # -- extension helpers -----------------------------------------------------------------
    def headers_for(self, method: str, params: JSON) -> dict[str, str]:
        headers = dict(ACCEPT)
        headers["MCP-Protocol-Version"] = str(params.get("_meta", {}).get(PV, EXTENSION))
        headers["Mcp-Method"] = method
        if method == "tools/call":
            headers["Mcp-Name"] = params["name"]
        elif method.startswith("tasks/") and isinstance(params.get("taskId"), str):
            headers["Mcp-Name"] = params["taskId"]
        return headers

    def post(self, message: JSON, headers: dict[str, str] | None = None) -> httpx.Response:
        return self.client.post(self.url, content=json.dumps(message), headers=headers or dict(ACCEPT))

    def call(self, method: str, params: JSON, headers: dict[str, str] | None = None, rid: Any = 1) -> httpx.Response:
        message = {"jsonrpc": "2.0", "id": rid, "method": method, "params": params}
        return self.post(message, self.headers_for(method, params) if headers is None else headers)

    def result(self, method: str, params: JSON) -> JSON:
        response = self.call(method, params)
        assert response.status_code == 200, response.text
        assert response.headers["content-type"].startswith("application/json")
        body = response.json()
        assert "result" in body, body
        result: JSON = body["result"]
        return result


@contextlib.contextmanager
def http_server(*extra: str, broken: str | None = None, process: bool = False) -> Iterator[HttpServerProc]:
    server = HttpServerProc([*_server(broken, process), "--transport", "http", "--port", "0", *FAST, *extra])
    try:
        yield server
    finally:
        server.close()


def iter_sse(response: httpx.Response) -> Iterator[JSON]:
    data: list[str] = []
    for line in response.iter_lines():
        if line.startswith("data:"):
            data.append(line[5:].lstrip())
        elif line == "" and data:
            yield json.loads("\n".join(data))
            data = []


# ====================================================================== fixtures
@pytest.fixture(scope="module")
def extension_stdio() -> Iterator[StdioPeer]:
    with stdio_server() as peer:
        yield peer


@pytest.fixture(scope="module")
def legacy_stdio() -> Iterator[StdioPeer]:
    with stdio_server() as peer:
        legacy_init(peer)
        yield peer


@pytest.fixture(scope="module")
def http_ref() -> Iterator[HttpServerProc]:
    with http_server() as server:
        yield server


def m_get(peer: StdioPeer) -> Callable[[str], JSON]:
    return lambda tid: peer.result("tasks/get", {"taskId": tid, "_meta": meta()})


def l_get(peer: StdioPeer) -> Callable[[str], JSON]:
    return lambda tid: peer.result("tasks/get", {"taskId": tid})


# ====================================================================== extension over stdio
def test_stdio_discover(extension_stdio: StdioPeer) -> None:
    result = extension_stdio.result("server/discover", {"_meta": meta(declare=False)})
    assert result["resultType"] == "complete"
    assert EXTENSION in result["supportedVersions"] and LEGACY not in result["supportedVersions"]
    assert result["capabilities"]["extensions"] == {EXT: {}}
    assert "tasks" not in result["capabilities"]
    assert result["_meta"][SERVER_INFO]["name"]
    assert type(result["ttlMs"]) is int and result["cacheScope"] in ("public", "private")


def test_stdio_extension_tools_list_has_no_execution(extension_stdio: StdioPeer) -> None:
    tools = {t["name"]: t for t in extension_stdio.result("tools/list", {"_meta": meta()})["tools"]}
    assert set(tools) == {
        "echo",
        "slow_compute",
        "long_job",
        "tool_error",
        "rpc_error",
        "confirm_action",
        "destructive_op",
        *OFFICIAL_FIXTURE_TOOLS,
    }
    assert all("execution" not in t for t in tools.values())
    assert tools["destructive_op"]["annotations"]["destructiveHint"] is True
    assert tools["slow_compute"]["annotations"]["readOnlyHint"] is True


def test_stdio_extension_task_lifecycle(extension_stdio: StdioPeer) -> None:
    created = extension_stdio.result("tools/call", {"name": "slow_compute", "arguments": {}, "_meta": meta()})
    assert created["resultType"] == "task" and created["status"] == "working"
    assert_task_fields(created)
    assert created["_meta"][SERVER_INFO]
    first = m_get(extension_stdio)(created["taskId"])  # durable: readable at once
    assert first["resultType"] == "complete" and first["taskId"] == created["taskId"]
    done = extension_poll(m_get(extension_stdio), created["taskId"], terminal)
    assert done["status"] == "completed"
    assert done["result"]["resultType"] == "complete"
    assert done["result"]["content"][0]["type"] == "text"
    assert RELATED not in done["result"].get("_meta", {})
    assert_task_fields(done)


def test_stdio_extension_echo_stays_synchronous_and_legacy_task_param_ignored(extension_stdio: StdioPeer) -> None:
    result = extension_stdio.result(
        "tools/call", {"name": "echo", "arguments": {"text": "hi"}, "task": {"ttl": 1000}, "_meta": meta()}
    )
    assert result["resultType"] == "complete" and result["content"][0]["text"] == "hi"


def test_stdio_extension_undeclared(extension_stdio: StdioPeer) -> None:
    sync = extension_stdio.result(
        "tools/call",
        {"name": "slow_compute", "arguments": {"durationMs": 0}, "task": {}, "_meta": meta(declare=False)},
    )
    assert sync["resultType"] == "complete" and "taskId" not in sync
    err = extension_stdio.error("tools/call", {"name": "long_job", "_meta": meta(declare=False)})
    assert err["code"] == -32021 and err["data"]["requiredCapabilities"] == {"extensions": {EXT: {}}}
    created = extension_stdio.result("tools/call", {"name": "slow_compute", "_meta": meta()})
    for method, extra in (("tasks/get", {}), ("tasks/update", {"inputResponses": {}}), ("tasks/cancel", {})):
        err = extension_stdio.error(method, {"taskId": created["taskId"], **extra, "_meta": meta(declare=False)})
        assert err["code"] == -32021, method
        assert err["data"]["requiredCapabilities"]["extensions"] == {EXT: {}}
    # legacy-only declaration does not count
    legacy_caps = {PV: EXTENSION, CC: {"tasks": {"requests": {"tools": {"call": {}}}}}}
    err = extension_stdio.error("tasks/get", {"taskId": created["taskId"], "_meta": legacy_caps})
    assert err["code"] == -32021
    err = extension_stdio.error(
        "subscriptions/listen",
        {"notifications": {"taskIds": [created["taskId"]]}, "_meta": meta(declare=False)},
    )
    assert err["code"] == -32021


def test_stdio_extension_tool_error_and_rpc_error(extension_stdio: StdioPeer) -> None:
    te = extension_stdio.result("tools/call", {"name": "tool_error", "_meta": meta()})
    done = extension_poll(m_get(extension_stdio), te["taskId"], terminal)
    assert done["status"] == "completed" and done["result"]["isError"] is True
    re_ = extension_stdio.result("tools/call", {"name": "rpc_error", "_meta": meta()})
    failed = extension_poll(m_get(extension_stdio), re_["taskId"], terminal)
    assert failed["status"] == "failed"
    assert failed["error"]["code"] == -32603 and failed["error"]["message"]
    assert failed["statusMessage"]
    assert "result" not in failed


def test_stdio_extension_unknown_ids(extension_stdio: StdioPeer) -> None:
    for method, extra in (("tasks/get", {}), ("tasks/update", {"inputResponses": {}}), ("tasks/cancel", {})):
        err = extension_stdio.error(method, {"taskId": "no-such-task", **extra, "_meta": meta()})
        assert err["code"] == -32602, method


def test_stdio_extension_cancel(extension_stdio: StdioPeer) -> None:
    created = extension_stdio.result(
        "tools/call", {"name": "long_job", "arguments": {"durationMs": 5000}, "_meta": meta()}
    )
    ack = extension_stdio.result("tasks/cancel", {"taskId": created["taskId"], "_meta": meta()})
    assert ack["resultType"] == "complete" and "taskId" not in ack and "status" not in ack
    after = m_get(extension_stdio)(created["taskId"])
    assert after["status"] == "cancelled"
    again = extension_stdio.result("tasks/cancel", {"taskId": created["taskId"], "_meta": meta()})
    assert again["resultType"] == "complete"  # terminal: still an ack, not an error
    assert m_get(extension_stdio)(created["taskId"])["status"] == "cancelled"


def test_stdio_extension_input_flow(extension_stdio: StdioPeer) -> None:
    created = extension_stdio.result("tools/call", {"name": "confirm_action", "_meta": meta(elicitation=True)})
    waiting = extension_poll(m_get(extension_stdio), created["taskId"], lambda t: t["status"] != "working")
    assert waiting["status"] == "input_required"
    request = waiting["inputRequests"]["confirm-1"]
    assert request["method"] == "elicitation/create" and request["params"]["mode"] == "form"
    assert request["params"]["requestedSchema"]["type"] == "object"
    ack = extension_stdio.result(
        "tasks/update",
        {
            "taskId": created["taskId"],
            "inputResponses": {
                "confirm-1": {"action": "accept", "content": {"confirm": True}},
                "stray": {"x": 1},
            },
            "_meta": meta(elicitation=True),
        },
    )
    assert ack == {"resultType": "complete", "_meta": ack["_meta"]}
    done = extension_poll(m_get(extension_stdio), created["taskId"], terminal)
    assert done["status"] == "completed" and "confirmed" in done["result"]["content"][0]["text"]


def test_stdio_extension_input_without_elicitation_fails_task(extension_stdio: StdioPeer) -> None:
    created = extension_stdio.result("tools/call", {"name": "confirm_action", "_meta": meta()})
    done = extension_poll(m_get(extension_stdio), created["taskId"], terminal)
    assert done["status"] == "failed" and done["error"]["code"] == -32021
    assert "elicitation" in done["error"]["message"]


def test_stdio_extension_mrtr_sync_confirm(extension_stdio: StdioPeer) -> None:
    params = {"name": "confirm_action", "_meta": meta(declare=False, elicitation=True)}
    first = extension_stdio.result("tools/call", params)
    assert first["resultType"] == "input_required" and "confirm-1" in first["inputRequests"]
    answer = {"confirm-1": {"action": "accept", "content": {"confirm": True}}}
    second = extension_stdio.result("tools/call", {**params, "inputResponses": answer})
    assert second["resultType"] == "complete" and "confirmed" in second["content"][0]["text"]


def test_stdio_extension_listen(extension_stdio: StdioPeer) -> None:
    created = extension_stdio.result("tools/call", {"name": "slow_compute", "_meta": meta()})
    tid = created["taskId"]
    extension_stdio.other.clear()
    result = extension_stdio.result(
        "subscriptions/listen",
        {"notifications": {"taskIds": [tid, "unknown-id"]}, "_meta": meta()},
        request_id="listen-7",
    )
    assert result == {
        "resultType": "complete",
        "_meta": {SUB_ID: "listen-7", SERVER_INFO: result["_meta"][SERVER_INFO]},
    }
    stream = [m for m in extension_stdio.other if m.get("params", {}).get("_meta", {}).get(SUB_ID) == "listen-7"]
    assert stream[0]["method"] == "notifications/subscriptions/acknowledged"
    assert stream[0]["params"]["notifications"]["taskIds"] == [tid]
    updates = [m["params"] for m in stream[1:]]
    assert all(m["method"] == "notifications/tasks" for m in stream[1:])
    assert updates[-1]["status"] == "completed" and updates[-1]["result"]["content"]
    assert all(u["taskId"] == tid and "resultType" not in u for u in updates)


def test_stdio_extension_envelope_errors(extension_stdio: StdioPeer) -> None:
    err = extension_stdio.error("server/discover", {"_meta": {PV: EXTENSION}})
    assert err["code"] == -32602
    err = extension_stdio.error("server/discover", {"_meta": {PV: "1900-01-01", CC: {}}})
    assert err["code"] == -32022 and err["data"] == {"supported": [EXTENSION], "requested": "1900-01-01"}
    for method in ("tasks/result", "tasks/list", "ping", "no/such-method"):
        assert extension_stdio.error(method, {"taskId": "x", "_meta": meta()})["code"] == -32601, method
    assert extension_stdio.error("server/discover", {})["code"] == -32602  # no envelope, no session


def test_stdio_answers_server_discover_as_its_first_message() -> None:
    # How fast it starts is measured by benchmarks/, not asserted here (no timing assertions).
    with stdio_server(process=True) as peer:
        assert peer.result("server/discover", {"_meta": meta()})["supportedVersions"]


def test_stdio_sigterm_exits_cleanly() -> None:
    with stdio_server(process=True) as peer:
        peer.result("server/discover", {"_meta": meta()})
        peer.proc.send_signal(signal.SIGTERM)
        assert peer.proc.wait(timeout=5) == 0


def test_stdio_oversize_and_garbage_lines() -> None:
    with stdio_server() as peer:
        assert peer.proc.stdin is not None
        peer.proc.stdin.write(b"not json\n")
        peer.proc.stdin.flush()
        assert peer.next_message()["error"]["code"] == -32700
        peer.proc.stdin.write(b"[1,2]\n")
        peer.proc.stdin.flush()
        assert peer.next_message()["error"]["code"] == -32600
        assert peer.result("server/discover", {"_meta": meta()})["resultType"] == "complete"


# ====================================================================== the official suite's fixture tools
def test_stdio_official_greet_and_arguments_as_tool_errors(extension_stdio: StdioPeer) -> None:
    greet = extension_stdio.result("tools/call", {"name": "greet", "arguments": {"name": "World"}, "_meta": meta()})
    assert greet["resultType"] == "complete" and "taskId" not in greet
    assert greet["content"] == [{"type": "text", "text": "Hello, World!"}]
    # A missing argument is a tool execution error (isError), not a JSON-RPC error.
    for name in ("greet", "echo"):
        bad = extension_stdio.result("tools/call", {"name": name, "arguments": {}, "_meta": meta()})
        assert bad["resultType"] == "complete" and bad["isError"] is True, name
    quiet = extension_stdio.request("tools/call", {"name": "test_logging_tool", "arguments": {}, "_meta": meta()})
    assert quiet["result"]["resultType"] == "complete"
    assert not [m for m in extension_stdio.other if m.get("method") == "notifications/message"]


def test_stdio_official_slow_compute_takes_seconds(extension_stdio: StdioPeer) -> None:
    created = extension_stdio.result(
        "tools/call", {"name": "slow_compute", "arguments": {"seconds": 30, "label": "x"}, "_meta": meta()}
    )
    assert created["resultType"] == "task"
    get = m_get(extension_stdio)
    assert get(created["taskId"])["status"] == "working"
    assert extension_stdio.result("tasks/cancel", {"taskId": created["taskId"], "_meta": meta()}) == {
        "resultType": "complete",
        "_meta": {SERVER_INFO: extension_stdio.result("server/discover", {"_meta": meta()})["_meta"][SERVER_INFO]},
    }
    assert get(created["taskId"])["status"] == "cancelled"
    quick = extension_stdio.result("tools/call",
                                   {"name": "slow_compute", "arguments": {"seconds": 0.01}, "_meta": meta()})
    done = extension_poll(get, quick["taskId"], terminal)
    assert done["status"] == "completed" and "after 10 ms" in done["result"]["content"][0]["text"]
    err = extension_stdio.error("tools/call", {"name": "slow_compute", "arguments": {"seconds": "1"}, "_meta": meta()})
    assert err["code"] == -32602


def test_stdio_official_failing_and_protocol_error_jobs(extension_stdio: StdioPeer) -> None:
    err = extension_stdio.error("tools/call", {"name": "failing_job", "arguments": {}, "_meta": meta(declare=False)})
    assert err["code"] == -32021 and err["data"]["requiredCapabilities"] == {"extensions": {EXT: {}}}
    get = m_get(extension_stdio)
    failing = extension_stdio.result(
        "tools/call", {"name": "failing_job", "arguments": {"durationMs": 0}, "_meta": meta()}
    )
    done = extension_poll(get, failing["taskId"], terminal)
    assert done["status"] == "completed" and done["result"]["isError"] is True
    proto = extension_stdio.result("tools/call", {"name": "protocol_error_job", "arguments": {}, "_meta": meta()})
    done = extension_poll(get, proto["taskId"], terminal)
    assert done["status"] == "failed" and done["error"]["code"] == -32603 and "result" not in done


def test_stdio_official_multi_input_partial_fulfillment(extension_stdio: StdioPeer) -> None:
    get = m_get(extension_stdio)
    created = extension_stdio.result(
        "tools/call", {"name": "multi_input", "arguments": {}, "_meta": meta(elicitation=True)}
    )
    task = extension_poll(get, created["taskId"], lambda t: len(t.get("inputRequests", {})) == 2)
    assert task["status"] == "input_required"
    first, second = sorted(task["inputRequests"])
    assert {r["method"] for r in task["inputRequests"].values()} == {"elicitation/create"}
    answer = {"action": "accept", "content": {"name": "n", "confirm": True}}
    ack = extension_stdio.result(
        "tasks/update", {"taskId": created["taskId"], "inputResponses": {first: answer}, "_meta": meta()}
    )
    assert ack["resultType"] == "complete" and "status" not in ack
    task = get(created["taskId"])
    assert task["status"] == "input_required" and list(task["inputRequests"]) == [second]
    extension_stdio.result(
        "tasks/update", {"taskId": created["taskId"], "inputResponses": {second: answer}, "_meta": meta()}
    )
    assert extension_poll(get, created["taskId"], terminal)["status"] == "completed"
    # Without a task (extension undeclared): one InputRequiredResult names both keys at once.
    sync = {"name": "multi_input", "arguments": {}, "_meta": meta(declare=False, elicitation=True)}
    asked = extension_stdio.result("tools/call", sync)
    assert asked["resultType"] == "input_required" and len(asked["inputRequests"]) == 2
    replies = {key: answer for key in asked["inputRequests"]}
    assert extension_stdio.result("tools/call", {**sync, "inputResponses": replies})["resultType"] == "complete"


def test_stdio_official_missing_capability_and_streaming_elicitation(extension_stdio: StdioPeer) -> None:
    call = {"name": "test_missing_capability", "arguments": {}}
    err = extension_stdio.error("tools/call", {**call, "_meta": meta(declare=False)})
    assert err["code"] == -32021 and err["data"]["requiredCapabilities"] == {"sampling": {}}
    sampling_meta = {**meta(declare=False), CC: {"sampling": {}}}
    asked = extension_stdio.result("tools/call", {**call, "_meta": sampling_meta})
    assert asked["resultType"] == "input_required"
    (key, request), = asked["inputRequests"].items()
    assert request["method"] == "sampling/createMessage"
    reply = {"role": "assistant", "content": {"type": "text", "text": "hi"}, "model": "m"}
    done = extension_stdio.result("tools/call", {**call, "inputResponses": {key: reply}, "_meta": sampling_meta})
    assert done["resultType"] == "complete" and "'hi'" in done["content"][0]["text"]
    elicit = extension_stdio.result(
        "tools/call",
        {"name": "test_streaming_elicitation", "arguments": {}, "_meta": meta(declare=True, elicitation=True)},
    )
    assert elicit["resultType"] == "input_required" and "taskId" not in elicit  # forbidden: never a task


def test_stdio_official_mrtr_then_task(extension_stdio: StdioPeer) -> None:
    call = {"name": "test_tool_with_task", "arguments": {"durationMs": 0}, "_meta": meta(elicitation=True)}
    asked = extension_stdio.result("tools/call", call)
    assert asked["resultType"] == "input_required" and "taskId" not in asked
    (key,) = asked["inputRequests"]
    reply = {"action": "accept", "content": {"name": "Alice"}}
    created = extension_stdio.result("tools/call", {**call, "inputResponses": {key: reply}})
    assert created["resultType"] == "task" and "requestState" not in created and "inputRequests" not in created
    done = extension_poll(m_get(extension_stdio), created["taskId"], terminal)
    assert done["status"] == "completed" and "Alice" in done["result"]["content"][0]["text"]


def test_new_tools_leave_the_legacy_auto_pick_on_long_job(legacy_stdio: StdioPeer) -> None:
    """The checker's legacy chooser: required before optional, read-only first, destructive skipped."""
    tools = legacy_stdio.result("tools/list")["tools"]
    candidates = [
        ((0 if t["execution"]["taskSupport"] == "required" else 1, 0 if t["annotations"]["readOnlyHint"] else 1), i)
        for i, t in enumerate(tools)
        if t["execution"]["taskSupport"] != "forbidden" and t["annotations"].get("destructiveHint") is not True
    ]
    assert tools[min(candidates)[1]]["name"] == "long_job"


# ====================================================================== legacy over stdio
def test_stdio_legacy_initialize_and_tools(legacy_stdio: StdioPeer) -> None:
    with stdio_server() as peer:
        init = legacy_init(peer)
    assert init["protocolVersion"] == LEGACY
    assert init["capabilities"]["tasks"] == {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}
    assert "resultType" not in init
    tools = {t["name"]: t for t in legacy_stdio.result("tools/list")["tools"]}
    support = {name: t["execution"]["taskSupport"] for name, t in tools.items()}
    assert support == {
        "echo": "forbidden",
        "slow_compute": "optional",
        "long_job": "required",
        "tool_error": "optional",
        "rpc_error": "optional",
        "confirm_action": "optional",
        "destructive_op": "optional",
        **OFFICIAL_FIXTURE_TOOLS,
    }
    assert legacy_stdio.result("ping") == {}


def test_stdio_legacy_task_lifecycle(legacy_stdio: StdioPeer) -> None:
    created = legacy_stdio.result("tools/call", {"name": "slow_compute", "arguments": {}, "task": {"ttl": 30_000}})
    assert set(created) == {"task"}
    task = created["task"]
    assert task["status"] == "working" and task["ttl"] == 30_000 and type(task["pollInterval"]) is int
    assert RFC3339.match(task["createdAt"]) and "resultType" not in created
    got = l_get(legacy_stdio)(task["taskId"])
    assert got["taskId"] == task["taskId"] and "ttl" in got and "result" not in got
    assert RELATED not in got.get("_meta", {})
    result = legacy_stdio.result("tasks/result", {"taskId": task["taskId"]})  # blocks until terminal
    assert result["content"][0]["type"] == "text"
    assert result["_meta"][RELATED] == {"taskId": task["taskId"]}
    assert "resultType" not in result
    assert l_get(legacy_stdio)(task["taskId"])["status"] == "completed"
    listed = legacy_stdio.result("tasks/list")
    assert task["taskId"] in {t["taskId"] for t in listed["tasks"]}


def test_stdio_legacy_negotiation_errors(legacy_stdio: StdioPeer) -> None:
    assert legacy_stdio.error("tools/call", {"name": "long_job"})["code"] == -32601
    assert legacy_stdio.error("tools/call", {"name": "echo", "arguments": {"text": "x"}, "task": {}})["code"] == -32601
    assert legacy_stdio.result("tools/call", {"name": "echo", "arguments": {"text": "x"}})["content"][0]["text"] == "x"
    for method in ("tasks/get", "tasks/result", "tasks/cancel"):
        assert legacy_stdio.error(method, {"taskId": "nope"})["code"] == -32602, method
    assert legacy_stdio.error("tasks/list", {"cursor": "garbage!"})["code"] == -32602
    assert legacy_stdio.error("server/discover")["code"] == -32601  # no extension _meta: legacy rules


def test_stdio_legacy_failures(legacy_stdio: StdioPeer) -> None:
    te = legacy_stdio.result("tools/call", {"name": "tool_error", "task": {}})["task"]
    payload = legacy_stdio.result("tasks/result", {"taskId": te["taskId"]})
    assert payload["isError"] is True and payload["_meta"][RELATED]["taskId"] == te["taskId"]
    failed = l_get(legacy_stdio)(te["taskId"])
    assert failed["status"] == "failed" and failed["statusMessage"]
    rpc = legacy_stdio.result("tools/call", {"name": "rpc_error", "task": {}})["task"]
    err = legacy_stdio.error("tasks/result", {"taskId": rpc["taskId"]})
    assert err["code"] == -32603
    assert l_get(legacy_stdio)(rpc["taskId"])["status"] == "failed"


def test_stdio_legacy_cancel(legacy_stdio: StdioPeer) -> None:
    task = legacy_stdio.result("tools/call", {"name": "long_job", "arguments": {"durationMs": 5000}, "task": {}})[
        "task"
    ]
    cancelled = legacy_stdio.result("tasks/cancel", {"taskId": task["taskId"]})
    assert cancelled["status"] == "cancelled" and cancelled["taskId"] == task["taskId"]
    assert legacy_stdio.error("tasks/cancel", {"taskId": task["taskId"]})["code"] == -32602
    assert l_get(legacy_stdio)(task["taskId"])["status"] == "cancelled"


def test_stdio_legacy_input_flow(legacy_stdio: StdioPeer) -> None:
    task = legacy_stdio.result("tools/call", {"name": "confirm_action", "task": {}})["task"]
    waiting = extension_poll(l_get(legacy_stdio), task["taskId"], lambda t: t["status"] != "working")
    assert waiting["status"] == "input_required"
    asked: list[JSON] = []

    def answer(request: JSON) -> JSON:
        asked.append(request)
        return {"action": "accept", "content": {"confirm": True}}

    result = legacy_stdio.result("tasks/result", {"taskId": task["taskId"]}, on_request=answer)
    assert len(asked) == 1 and asked[0]["method"] == "elicitation/create"
    assert asked[0]["params"]["_meta"][RELATED] == {"taskId": task["taskId"]}
    assert asked[0]["params"]["mode"] == "form"
    assert "confirmed" in result["content"][0]["text"] and result["_meta"][RELATED]["taskId"] == task["taskId"]
    assert l_get(legacy_stdio)(task["taskId"])["status"] == "completed"


def test_stdio_legacy_official_input_tools(legacy_stdio: StdioPeer) -> None:
    """The fixture tools that ask for input work as 2025-11-25 tasks too (asked on tasks/result)."""
    for name, count in (("multi_input", 2), ("test_tool_with_task", 1), ("confirm_delete", 1)):
        task = legacy_stdio.result(
            "tools/call", {"name": name, "arguments": {"filename": "f", "durationMs": 0}, "task": {}}
        )["task"]
        asked: list[JSON] = []

        def answer(request: JSON, asked: list[JSON] = asked) -> JSON:
            asked.append(request)
            return {"action": "accept", "content": {"name": "Alice", "confirm": True}}

        result = legacy_stdio.result("tasks/result", {"taskId": task["taskId"]}, on_request=answer)
        assert len(asked) == count and {a["method"] for a in asked} == {"elicitation/create"}, name
        assert "isError" not in result and l_get(legacy_stdio)(task["taskId"])["status"] == "completed", name
    err = legacy_stdio.error("tools/call", {"name": "failing_job", "arguments": {}})
    assert err["code"] == -32601  # task-required, called without params.task


def test_stdio_legacy_input_without_elicitation() -> None:
    with stdio_server() as peer:
        legacy_init(peer, elicitation=False)
        task = peer.result("tools/call", {"name": "confirm_action", "task": {}})["task"]
        err = peer.error("tasks/result", {"taskId": task["taskId"]})
        assert "elicitation" in err["message"]
        assert l_get(peer)(task["taskId"])["status"] == "failed"


def test_stdio_legacy_list_pagination() -> None:
    with stdio_server() as peer:
        legacy_init(peer)
        ids = {
            peer.result("tools/call", {"name": "slow_compute", "arguments": {"durationMs": 0}, "task": {}})["task"][
                "taskId"
            ]
            for _ in range(55)
        }
        page1 = peer.result("tasks/list")
        assert len(page1["tasks"]) == 50 and isinstance(page1["nextCursor"], str)
        page2 = peer.result("tasks/list", {"cursor": page1["nextCursor"]})
        assert "nextCursor" not in page2
        assert {t["taskId"] for t in page1["tasks"] + page2["tasks"]} == ids


def test_stdio_era_restrictions() -> None:
    with stdio_server("--era", "legacy") as peer:
        err = peer.error("server/discover", {"_meta": meta()})
        assert err["code"] == -32601
        legacy_init(peer)
        assert peer.error("server/discover", {"_meta": meta()})["code"] == -32601
    with stdio_server("--era", "extension") as peer:
        err = peer.error(
            "initialize",
            {"protocolVersion": LEGACY, "capabilities": {}, "clientInfo": {"name": "x", "version": "0"}},
        )
        assert err["code"] == -32022 and err["data"]["supported"] == [EXTENSION]
        assert peer.result("server/discover", {"_meta": meta()})["resultType"] == "complete"


# ====================================================================== HTTP
def test_http_discover_and_basics(http_ref: HttpServerProc) -> None:
    response = http_ref.call("server/discover", {"_meta": meta(declare=False)})
    assert response.status_code == 200 and "mcp-session-id" not in response.headers
    assert response.json()["result"]["capabilities"]["extensions"] == {EXT: {}}
    assert http_ref.client.get(http_ref.url).status_code == 405
    assert http_ref.client.delete(http_ref.url).status_code == 405
    notify = http_ref.post({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 9}})
    assert notify.status_code == 202 and notify.content == b""
    bad_origin = http_ref.client.post(http_ref.url, content=b"{}", headers={**ACCEPT, "Origin": "https://evil.example"})
    assert bad_origin.status_code == 403
    good_origin = http_ref.call(
        "server/discover",
        {"_meta": meta()},
        headers={**http_ref.headers_for("server/discover", {}), "Origin": "http://localhost:1234"},
    )
    assert good_origin.status_code == 200


def test_http_extension_lifecycle_and_listen(http_ref: HttpServerProc) -> None:
    created = http_ref.result("tools/call", {"name": "slow_compute", "_meta": meta()})
    assert created["resultType"] == "task"
    assert_task_fields(created)
    tid = created["taskId"]
    params = {"notifications": {"taskIds": [tid]}, "_meta": meta()}
    message = {"jsonrpc": "2.0", "id": "sub-1", "method": "subscriptions/listen", "params": params}
    with http_ref.client.stream(
        "POST",
        http_ref.url,
        content=json.dumps(message),
        headers=http_ref.headers_for("subscriptions/listen", params),
    ) as response:
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        events = list(iter_sse(response))
    assert events[0]["method"] == "notifications/subscriptions/acknowledged"
    assert events[0]["params"]["_meta"][SUB_ID] == "sub-1"
    assert events[-1]["id"] == "sub-1" and events[-1]["result"]["_meta"][SUB_ID] == "sub-1"
    notes = [e for e in events[1:-1]]
    assert notes and all(
        e["method"] == "notifications/tasks" and e["params"]["_meta"][SUB_ID] == "sub-1" for e in notes
    )
    assert notes[-1]["params"]["status"] == "completed"
    done = http_ref.result("tasks/get", {"taskId": tid, "_meta": meta()})
    assert done["status"] == "completed" and done["result"]["resultType"] == "complete"


def test_http_extension_input_flow(http_ref: HttpServerProc) -> None:
    created = http_ref.result("tools/call", {"name": "confirm_action", "_meta": meta(elicitation=True)})
    tid = created["taskId"]

    def get(task_id: str) -> JSON:
        return http_ref.result("tasks/get", {"taskId": task_id, "_meta": meta(elicitation=True)})

    assert extension_poll(get, tid, lambda t: t["status"] != "working")["status"] == "input_required"
    ack = http_ref.result(
        "tasks/update",
        {
            "taskId": tid,
            "_meta": meta(elicitation=True),
            "inputResponses": {"confirm-1": {"action": "accept", "content": {"confirm": True}}},
        },
    )
    assert ack["resultType"] == "complete"
    assert extension_poll(get, tid, terminal)["status"] == "completed"


def test_http_status_codes_and_errors(http_ref: HttpServerProc) -> None:
    created = http_ref.result("tools/call", {"name": "slow_compute", "_meta": meta()})
    tid = created["taskId"]
    undeclared = http_ref.call("tasks/get", {"taskId": tid, "_meta": meta(declare=False)})
    assert undeclared.status_code == 400
    assert undeclared.json()["error"]["code"] == -32021
    assert undeclared.json()["error"]["data"]["requiredCapabilities"] == {"extensions": {EXT: {}}}
    required = http_ref.call("tools/call", {"name": "long_job", "_meta": meta(declare=False)})
    assert required.status_code == 400 and required.json()["error"]["code"] == -32021
    for method in ("tasks/result", "tasks/list", "nope/nope"):
        response = http_ref.call(method, {"taskId": tid, "_meta": meta()})
        assert response.status_code == 404 and response.json()["error"]["code"] == -32601, method
    version = http_ref.call("server/discover", {"_meta": meta(version="1900-01-01")})
    assert version.status_code == 400 and version.json()["error"]["code"] == -32022
    assert version.json()["error"]["data"]["requested"] == "1900-01-01"
    no_caps = http_ref.call("server/discover", {"_meta": {PV: EXTENSION}})
    assert no_caps.status_code == 400 and no_caps.json()["error"]["code"] == -32602
    unknown = http_ref.call("tasks/get", {"taskId": "missing", "_meta": meta()})
    assert unknown.json()["error"]["code"] == -32602


def test_http_routing_headers(http_ref: HttpServerProc) -> None:
    created = http_ref.result("tools/call", {"name": "slow_compute", "_meta": meta()})
    tid = created["taskId"]
    params = {"taskId": tid, "_meta": meta()}
    good = http_ref.headers_for("tasks/get", params)

    def send(headers: dict[str, str]) -> httpx.Response:
        return http_ref.call("tasks/get", params, headers=headers)

    for bad in (
        {**good, "Mcp-Name": "other-task"},
        {**good, "Mcp-Method": "tasks/cancel"},
        {**good, "MCP-Protocol-Version": LEGACY},
    ):
        response = send(bad)
        assert response.status_code == 400 and response.json()["error"]["code"] == -32020, bad
    for missing in ("MCP-Protocol-Version", "Mcp-Method"):
        response = send({k: v for k, v in good.items() if k != missing})
        assert response.status_code == 400 and response.json()["error"]["code"] == -32020, missing
    no_name = send({k: v for k, v in good.items() if k != "Mcp-Name"})
    assert no_name.status_code == 200  # tolerated on tasks/*: the specification leaves open whether they must carry it
    encoded = base64.b64encode(tid.encode()).decode()
    assert send({**good, "Mcp-Name": f"=?base64?{encoded}?="}).status_code == 200
    call_params = {"name": "echo", "arguments": {"text": "x"}, "_meta": meta()}
    call_headers = http_ref.headers_for("tools/call", call_params)
    del call_headers["Mcp-Name"]
    assert http_ref.call("tools/call", call_params, headers=call_headers).json()["error"]["code"] == -32020


def test_http_legacy_session_and_input_flow(http_ref: HttpServerProc) -> None:
    init_msg = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": LEGACY,
            "capabilities": {"elicitation": {}},
            "clientInfo": {"name": "raw", "version": "0"},
        },
    }
    init = http_ref.post(init_msg)
    assert init.status_code == 200 and init.json()["result"]["protocolVersion"] == LEGACY
    sid = init.headers["mcp-session-id"]
    headers = {**ACCEPT, "Mcp-Session-Id": sid, "MCP-Protocol-Version": LEGACY}
    assert http_ref.post({"jsonrpc": "2.0", "method": "notifications/initialized"}, headers).status_code == 202

    def legacy(method: str, params: JSON, rid: int = 2) -> httpx.Response:
        return http_ref.post({"jsonrpc": "2.0", "id": rid, "method": method, "params": params}, headers)

    task = legacy("tools/call", {"name": "confirm_action", "task": {"ttl": 20_000}}).json()["result"]["task"]
    tid = task["taskId"]
    deadline = time.monotonic() + WAIT
    while legacy("tasks/get", {"taskId": tid}).json()["result"]["status"] == "working":
        assert time.monotonic() < deadline
        time.sleep(0.03)
    message = {"jsonrpc": "2.0", "id": 77, "method": "tasks/result", "params": {"taskId": tid}}
    with http_ref.client.stream("POST", http_ref.url, content=json.dumps(message), headers=headers) as response:
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        events = iter_sse(response)
        ask = next(events)
        assert ask["method"] == "elicitation/create" and ask["params"]["_meta"][RELATED] == {"taskId": tid}
        reply = {
            "jsonrpc": "2.0",
            "id": ask["id"],
            "result": {"action": "accept", "content": {"confirm": True}},
        }
        assert http_ref.post(reply, headers).status_code == 202
        final = next(events)
    assert final["id"] == 77 and "confirmed" in final["result"]["content"][0]["text"]
    assert final["result"]["_meta"][RELATED] == {"taskId": tid}
    assert legacy("tasks/list", {}).json()["result"]["tasks"][0]["taskId"] == tid
    assert http_ref.client.get(http_ref.url, headers=headers).status_code == 405
    assert http_ref.client.delete(http_ref.url, headers=headers).status_code == 200
    assert legacy("tasks/get", {"taskId": tid}).status_code == 404  # session gone


def test_http_legacy_only_server_rejects_extension_probe() -> None:
    with http_server("--era", "legacy") as server:
        response = server.call("server/discover", {"_meta": meta()})
        assert response.status_code == 400
        assert response.json()["error"]["code"] not in (-32020, -32021, -32022)


def test_http_sigterm_exits_cleanly() -> None:
    with http_server(process=True) as server:
        server.proc.send_signal(signal.SIGTERM)
        assert server.proc.wait(timeout=5) == 0


# ====================================================================== TCP and Unix sockets
def _socket_peer(address: str) -> SocketPeer:
    if address.startswith("tcp://"):
        host, port = address[len("tcp://") :].rsplit(":", 1)
        return SocketPeer(socket.create_connection((host, int(port)), timeout=WAIT))
    assert address.startswith("unix:")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(WAIT)
    sock.connect(address[len("unix:") :])
    return SocketPeer(sock)


@pytest.mark.parametrize("transport", ["tcp", "unix"])
def test_socket_transports(transport: str, tmp_path: Path) -> None:
    extra = ["--unix-path", str(tmp_path / "ref.sock")] if transport == "unix" else ["--port", "0"]
    server = ListeningProc([*REFERENCE_CMD, "--transport", transport, *FAST, *extra])
    peers: list[SocketPeer] = []
    try:
        assert server.url.startswith("tcp://127.0.0.1:" if transport == "tcp" else "unix:")
        extension, legacy = _socket_peer(server.url), _socket_peer(server.url)
        peers += [extension, legacy]
        created = extension.result("tools/call", {"name": "slow_compute", "_meta": meta()})
        assert created["resultType"] == "task"
        assert extension_poll(m_get(extension), created["taskId"], terminal)["status"] == "completed"
        legacy_init(legacy)
        task = legacy.result("tools/call", {"name": "slow_compute", "task": {}})["task"]
        assert legacy.result("tasks/result", {"taskId": task["taskId"]})["_meta"][RELATED]
        # the legacy session belongs to its connection only
        assert extension.error("tasks/list")["code"] == -32602
        server.proc.send_signal(signal.SIGTERM)
        assert server.proc.wait(timeout=5) == 0
        if transport == "unix":
            assert not (tmp_path / "ref.sock").exists()
    finally:
        for peer in peers:
            peer.close()
        server.close()


# ====================================================================== broken variants
VARIANTS = BROKEN_SERVER.VARIANTS
# Each variant that breaks a rule is shown to break it here, on the raw wire, by a demonstration
# registered under the variant's name: over stdio, a function given a peer talking to it
# (@stdio_demo, run by test_broken_variant_breaks_its_rule); over HTTP, a test of its own
# (@http_demo). Variants that use a freedom are the ones whose declared runs are all Permits.
STDIO_CHECKS: dict[str, Callable[[StdioPeer], None]] = {}
HTTP_DEMOS: set[str] = set()
PERMITS = {name for name, v in VARIANTS.items()
           if v.runs and all(isinstance(run, BROKEN_SERVER.Permits) for run in v.runs)}


def stdio_demo(name: str) -> Callable[[Callable[[StdioPeer], None]], Callable[[StdioPeer], None]]:
    def register(demo: Callable[[StdioPeer], None]) -> Callable[[StdioPeer], None]:
        assert name not in STDIO_CHECKS, name
        STDIO_CHECKS[name] = demo
        return demo

    return register


def http_demo(*names: str) -> Callable[[Callable[[], None]], Callable[[], None]]:
    def register(test: Callable[[], None]) -> Callable[[], None]:
        HTTP_DEMOS.update(names)
        return test

    return register


def _create(peer: StdioPeer, tool: str = "slow_compute", **kw: Any) -> JSON:
    return peer.result("tools/call", {"name": tool, "_meta": meta(**kw)})


def _completed(peer: StdioPeer, tool: str = "slow_compute") -> JSON:
    task_id = peer.result("tools/call", {"name": tool, "_meta": meta()})["taskId"]
    return extension_poll(m_get(peer), task_id, terminal)


@stdio_demo("no-tasks")
def check_no_tasks(peer: StdioPeer) -> None:
    assert "extensions" not in peer.result("server/discover", {"_meta": meta()})["capabilities"]
    assert peer.error("tasks/get", {"taskId": "x", "_meta": meta()})["code"] == -32601
    assert "taskId" not in peer.result("tools/call", {"name": "slow_compute", "_meta": meta()})
    init = legacy_init(peer)
    assert "tasks" not in init["capabilities"]
    assert all("execution" not in t for t in peer.result("tools/list")["tools"])


@stdio_demo("experimental-placement")
def check_experimental_placement(peer: StdioPeer) -> None:
    assert peer.error("server/discover", {"_meta": meta()})["code"] == -32601
    caps = legacy_init(peer)["capabilities"]
    assert "tasks" not in caps and "tasks" in caps["experimental"]


@stdio_demo("legacy-caps-in-discover")
def check_legacy_caps_in_discover(peer: StdioPeer) -> None:
    assert "tasks" in peer.result("server/discover", {"_meta": meta()})["capabilities"]


@stdio_demo("nested-create")
def check_nested_create(peer: StdioPeer) -> None:
    created = _create(peer)
    assert "task" in created and "taskId" not in created


@stdio_demo("create-result-type-complete")
def check_create_result_type_complete(peer: StdioPeer) -> None:
    assert _create(peer)["resultType"] == "complete"


@stdio_demo("legacy-flat-create")
def check_legacy_flat_create(peer: StdioPeer) -> None:
    legacy_init(peer)
    created = peer.result("tools/call", {"name": "slow_compute", "task": {}})
    assert "task" not in created and "taskId" in created


@stdio_demo("create-without-declaration")
def check_create_without_declaration(peer: StdioPeer) -> None:
    assert _create(peer, declare=False)["resultType"] == "task"


@stdio_demo("draft-32003")
def check_draft_32003(peer: StdioPeer) -> None:
    assert peer.error("tools/call", {"name": "long_job", "_meta": meta(declare=False)})["code"] == -32003


@stdio_demo("legacy-ttl-names")
def check_legacy_ttl_names(peer: StdioPeer) -> None:
    created = _create(peer)
    assert "ttl" in created and "ttlMs" not in created


@stdio_demo("ttl-not-integer")
def check_ttl_not_integer(peer: StdioPeer) -> None:
    assert type(_create(peer)["ttlMs"]) is not int


@stdio_demo("no-inline-result")
def check_no_inline_result(peer: StdioPeer) -> None:
    done = _completed(peer)
    assert done["status"] == "completed" and "result" not in done
    legacy_init(peer)
    task = peer.result("tools/call", {"name": "slow_compute", "task": {}})["task"]
    assert RELATED not in peer.result("tasks/result", {"taskId": task["taskId"]}).get("_meta", {})


@stdio_demo("get-result-type-task")
def check_get_result_type_task(peer: StdioPeer) -> None:
    assert m_get(peer)(_create(peer)["taskId"])["resultType"] == "task"


@stdio_demo("bad-timestamps")
def check_bad_timestamps(peer: StdioPeer) -> None:
    assert not RFC3339.match(_create(peer)["createdAt"])


@stdio_demo("unknown-id-wrong-code")
def check_unknown_id_wrong_code(peer: StdioPeer) -> None:
    assert peer.error("tasks/get", {"taskId": "nope", "_meta": meta()})["code"] == -32603
    assert peer.result("tasks/cancel", {"taskId": "nope", "_meta": meta()})["resultType"] == "complete"


@stdio_demo("cancel-returns-task")
def check_cancel_returns_task(peer: StdioPeer) -> None:
    created = _create(peer, "long_job")
    assert peer.result("tasks/cancel", {"taskId": created["taskId"], "_meta": meta()})["resultType"] == "task"
    legacy_init(peer)
    task = peer.result("tools/call", {"name": "long_job", "arguments": {"durationMs": 5000}, "task": {}})["task"]
    assert peer.result("tasks/cancel", {"taskId": task["taskId"]})["status"] == "working"


@stdio_demo("cancel-rewrites-terminal")
def check_cancel_rewrites_terminal(peer: StdioPeer) -> None:
    tid = _create(peer, "slow_compute")["taskId"]
    get = m_get(peer)
    assert extension_poll(get, tid, lambda t: t["status"] == "completed")["status"] == "completed"
    peer.result("tasks/cancel", {"taskId": tid, "_meta": meta()})
    assert get(tid)["status"] == "cancelled"  # a terminal status changed


@stdio_demo("removed-methods-served")
def check_removed_methods_served(peer: StdioPeer) -> None:
    assert "tasks" in peer.result("tasks/list", {"_meta": meta()})  # removed on 2026-07-28, served anyway
    assert peer.error("tasks/result", {"taskId": "x", "_meta": meta()})["code"] == -32601


@stdio_demo("terminal-status-flips")
def check_terminal_status_flips(peer: StdioPeer) -> None:
    tid = _create(peer, "slow_compute")["taskId"]
    get = m_get(peer)
    assert extension_poll(get, tid, lambda t: t["status"] == "completed")["status"] == "completed"
    assert get(tid)["status"] == "completed"  # right after the end: not flipped (another probe's read)
    time.sleep(0.06)  # the fixture's FLIP_AFTER_S, as the checker's re-reads wait a poll interval
    assert get(tid)["status"] == "working"  # the first read a while after the end
    assert get(tid)["status"] == "completed"


@stdio_demo("legacy-without-cancel")
def check_legacy_without_cancel(peer: StdioPeer) -> None:
    init = legacy_init(peer)
    assert "cancel" not in init["capabilities"]["tasks"]
    assert peer.error("tasks/cancel", {"taskId": "x"})["code"] == -32601


@stdio_demo("status-not-a-string")
def check_status_not_a_string(peer: StdioPeer) -> None:
    tid = _create(peer, "slow_compute")["taskId"]
    assert isinstance(m_get(peer)(tid)["status"], list)


@stdio_demo("update-ack-echoes-task")
def check_update_ack_echoes_task(peer: StdioPeer) -> None:
    tid = _create(peer, "confirm_action", elicitation=True)["taskId"]
    answer = {"confirm-1": {"action": "accept", "content": {"confirm": True}}}
    ack = peer.result("tasks/update", {"taskId": tid, "inputResponses": answer, "_meta": meta(elicitation=True)})
    assert ack["resultType"] == "complete" and ack["taskId"] == tid  # more than the empty ack


@stdio_demo("legacy-caps-count-as-declared")
def check_legacy_caps_count_as_declared(peer: StdioPeer) -> None:
    tid = _create(peer)["taskId"]
    envelope = {**meta(declare=False), CC: {"tasks": {"requests": {"tools": {"call": {}}}}}}
    assert peer.result("tasks/get", {"taskId": tid, "_meta": envelope})["taskId"] == tid


@stdio_demo("capabilities-defaulted")
def check_capabilities_defaulted(peer: StdioPeer) -> None:
    envelope = {k: v for k, v in meta().items() if k != CC}
    assert "tools" in peer.result("tools/list", {"_meta": envelope})


@stdio_demo("result-type-missing")
def check_result_type_missing(peer: StdioPeer) -> None:
    assert "resultType" not in peer.result("tools/list", {"_meta": meta()})


@stdio_demo("unsupported-version-without-data")
def check_unsupported_version_without_data(peer: StdioPeer) -> None:
    envelope = {**meta(), "io.modelcontextprotocol/protocolVersion": "1999-01-01"}
    err = peer.error("tools/list", {"_meta": envelope})
    assert err["code"] == -32022 and "data" not in err


@stdio_demo("update-never-completes")
def check_update_never_completes(peer: StdioPeer) -> None:
    tid = _create(peer, "confirm_action", elicitation=True)["taskId"]
    get = m_get(peer)
    assert extension_poll(get, tid, lambda t: t["status"] != "working")["status"] == "input_required"
    answer = {"confirm-1": {"action": "accept", "content": {"confirm": True}}}
    peer.result("tasks/update", {"taskId": tid, "inputResponses": answer, "_meta": meta(elicitation=True)})
    time.sleep(0.4)
    assert get(tid)["status"] == "input_required"


@stdio_demo("undeclared-get-allowed")
def check_undeclared_get_allowed(peer: StdioPeer) -> None:
    tid = _create(peer)["taskId"]
    assert peer.result("tasks/get", {"taskId": tid, "_meta": meta(declare=False)})["taskId"] == tid


@stdio_demo("32021-without-data")
def check_32021_without_data(peer: StdioPeer) -> None:
    err = peer.error("tools/call", {"name": "long_job", "_meta": meta(declare=False)})
    assert err["code"] == -32021 and "data" not in err


@stdio_demo("isError-failed")
def check_is_error_failed(peer: StdioPeer) -> None:
    assert _completed(peer, "tool_error")["status"] == "failed"


@stdio_demo("slow-poll-interval")
def check_slow_poll_interval(peer: StdioPeer) -> None:
    created = _create(peer)
    assert created["pollIntervalMs"] == 15_000
    time.sleep(0.4)
    assert m_get(peer)(created["taskId"])["status"] == "working"
    sync = peer.result("tools/call", {"name": "slow_compute", "_meta": meta(declare=False)}, timeout=3)
    assert sync["resultType"] == "complete"  # only tasks are slow


@stdio_demo("required-without-task-ok")
def check_required_without_task_ok(peer: StdioPeer) -> None:
    legacy_init(peer)
    assert "content" in peer.result("tools/call", {"name": "long_job", "arguments": {"durationMs": 0}})


@stdio_demo("required-undeclared-sync")
def check_required_undeclared_sync(peer: StdioPeer) -> None:
    result = peer.result(
        "tools/call", {"name": "long_job", "arguments": {"durationMs": 0}, "_meta": meta(declare=False)}
    )
    assert result["resultType"] == "complete"


@stdio_demo("legacy-cancel-terminal-ok")
def check_legacy_cancel_terminal_ok(peer: StdioPeer) -> None:
    legacy_init(peer)
    task = peer.result("tools/call", {"name": "slow_compute", "arguments": {"durationMs": 0}, "task": {}})["task"]
    peer.result("tasks/result", {"taskId": task["taskId"]})
    assert peer.result("tasks/cancel", {"taskId": task["taskId"]})["status"] == "completed"


@stdio_demo("legacy-terminal-reverts")
def check_legacy_terminal_reverts(peer: StdioPeer) -> None:
    legacy_init(peer)
    task = peer.result("tools/call", {"name": "slow_compute", "arguments": {"durationMs": 0}, "task": {}})["task"]
    peer.result("tasks/result", {"taskId": task["taskId"]})
    get = l_get(peer)
    assert get(task["taskId"])["status"] == "completed"
    assert get(task["taskId"])["status"] == "working"  # from the second read after the end on
    assert get(task["taskId"])["status"] == "working"
    assert peer.result("tasks/cancel", {"taskId": task["taskId"]})["status"] == "cancelled"


@stdio_demo("late-notifications")
def check_late_notifications(peer: StdioPeer) -> None:
    tid = _create(peer)["taskId"]
    peer.send({"jsonrpc": "2.0", "id": "listen-1", "method": "subscriptions/listen",
               "params": {"notifications": {"taskIds": [tid]}, "_meta": meta()}})
    end = extension_poll(m_get(peer), tid, terminal)
    assert end["status"] == "completed"
    # Held back until a tasks/get read the end: the stale working one first, then the end.
    peer.request("ping", {})
    while not any(m.get("id") == "listen-1" for m in peer.other):
        peer.other.append(peer.next_message())
    notes = [m["params"] for m in peer.other if m.get("method") == "notifications/tasks"]
    assert notes[0]["status"] == "working" and notes[-1]["status"] == "completed"
    assert notes[0]["lastUpdatedAt"] <= end["lastUpdatedAt"]


@stdio_demo("listen-missing-subscription-id")
def check_listen_missing_subscription_id(peer: StdioPeer) -> None:
    tid = _create(peer)["taskId"]
    peer.other.clear()
    peer.result("subscriptions/listen", {"notifications": {"taskIds": [tid]}, "_meta": meta()})
    notes = [m for m in peer.other if m.get("method") == "notifications/tasks"]
    assert notes and all(SUB_ID not in m["params"].get("_meta", {}) for m in notes)


@stdio_demo("legacy-isError-completed")
def check_legacy_is_error_completed(peer: StdioPeer) -> None:
    legacy_init(peer)
    task = peer.result("tools/call", {"name": "tool_error", "task": {}})["task"]
    peer.result("tasks/result", {"taskId": task["taskId"]})
    assert l_get(peer)(task["taskId"])["status"] == "completed"


@stdio_demo("not-durable")
def check_not_durable(peer: StdioPeer) -> None:
    tid = _create(peer)["taskId"]
    params = {"taskId": tid, "_meta": meta()}
    assert peer.error("tasks/get", params)["code"] == -32602  # the first read straight after creation
    assert peer.result("tasks/get", params)["taskId"] == tid  # found afterwards


@stdio_demo("listen-forwards-logs")
def check_listen_forwards_logs(peer: StdioPeer) -> None:
    tid = _create(peer)["taskId"]
    peer.other.clear()
    peer.result("subscriptions/listen", {"notifications": {"taskIds": [tid]}, "_meta": meta()})
    logs = [m for m in peer.other if m.get("method") == "notifications/message"]
    assert logs and all(SUB_ID in m["params"]["_meta"] for m in logs)


@stdio_demo("sequential-task-ids")
def check_sequential_task_ids(peer: StdioPeer) -> None:
    assert [_create(peer)["taskId"] for _ in range(3)] == ["task-1", "task-2", "task-3"]


@stdio_demo("reuses-input-key")
def check_reuses_input_key(peer: StdioPeer) -> None:
    tid = _create(peer, "confirm_action", elicitation=True)["taskId"]
    get = lambda t: peer.result("tasks/get", {"taskId": t, "_meta": meta(elicitation=True)})  # noqa: E731
    first = extension_poll(get, tid, lambda t: "confirm-1" in t.get("inputRequests", {}))["inputRequests"]["confirm-1"]
    answer = {"confirm-1": {"action": "accept", "content": {"confirm": True}}}
    peer.result("tasks/update", {"taskId": tid, "inputResponses": answer, "_meta": meta(elicitation=True)})
    again = extension_poll(get, tid, lambda t: "confirm-1" in t.get("inputRequests", {})
                        and t["inputRequests"]["confirm-1"] != first)
    assert again["inputRequests"]["confirm-1"]["method"] == "elicitation/create"  # the same key, another request


@stdio_demo("elicits-undeclared")
def check_elicits_undeclared(peer: StdioPeer) -> None:
    tid = _create(peer, "confirm_action")["taskId"]  # no elicitation capability declared
    task = extension_poll(m_get(peer), tid, lambda t: t["status"] != "working")
    assert task["status"] == "input_required" and task["inputRequests"]["confirm-1"]["method"] == "elicitation/create"


@stdio_demo("stale-input-rejected")
def check_stale_input_rejected(peer: StdioPeer) -> None:
    tid = _create(peer)["taskId"]
    answer = {"never-asked": {"action": "accept", "content": {}}}
    assert peer.error("tasks/update", {"taskId": tid, "inputResponses": answer, "_meta": meta()})["code"] == -32603


@stdio_demo("extension-on-legacy-session")
def check_extension_on_legacy_session(peer: StdioPeer) -> None:
    caps = {"elicitation": {}, "extensions": {EXT: {}}}
    peer.result("initialize", {"protocolVersion": LEGACY, "capabilities": caps,
                               "clientInfo": {"name": "raw", "version": "0"}})
    peer.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    flat = peer.result("tools/call", {"name": "slow_compute"})  # no params.task
    assert flat["resultType"] == "task" and isinstance(flat["taskId"], str)


@stdio_demo("tools-list-input-required")
def check_tools_list_input_required(peer: StdioPeer) -> None:
    listed = peer.result("tools/list", {"_meta": meta()})
    assert listed["resultType"] == "input_required" and listed["tools"]
@stdio_demo("forbidden-with-task-runs")
def check_forbidden_with_task_runs(peer: StdioPeer) -> None:
    legacy_init(peer)
    result = peer.result("tools/call", {"name": "echo", "arguments": {"text": "hi"}, "task": {}})
    assert "task" not in result and result["content"][0]["text"]  # ran, instead of -32601


@stdio_demo("legacy-isError-result-error")
def check_legacy_is_error_result_error(peer: StdioPeer) -> None:
    legacy_init(peer)
    task = peer.result("tools/call", {"name": "tool_error", "arguments": {"durationMs": 0}, "task": {}})["task"]
    assert peer.error("tasks/result", {"taskId": task["taskId"]})["code"] == -32603
    assert l_get(peer)(task["taskId"])["status"] == "failed"


@stdio_demo("failed-without-error")
def check_failed_without_error(peer: StdioPeer) -> None:
    task = _completed(peer, "rpc_error")
    assert task["status"] == "failed" and "error" not in task


@stdio_demo("legacy-fault-result")
def check_legacy_fault_result(peer: StdioPeer) -> None:
    legacy_init(peer)
    task = peer.result("tools/call", {"name": "rpc_error", "arguments": {"durationMs": 0}, "task": {}})["task"]
    assert peer.result("tasks/result", {"taskId": task["taskId"]})["isError"] is True
    assert l_get(peer)(task["taskId"])["status"] == "failed"


@stdio_demo("failed-without-status-message")
def check_failed_without_status_message(peer: StdioPeer) -> None:
    task = _completed(peer, "rpc_error")
    assert task["status"] == "failed" and "error" in task and "statusMessage" not in task


RELATED = "io.modelcontextprotocol/related-task"


def _legacy_task(peer: StdioPeer, duration_ms: int = 300, **extra: Any) -> str:
    legacy_init(peer)
    params = {"name": "slow_compute", "arguments": {"durationMs": duration_ms}, "task": {}, **extra}
    return str(peer.result("tools/call", params)["task"]["taskId"])


@stdio_demo("legacy-result-early")
def check_legacy_result_early(peer: StdioPeer) -> None:
    tid = _legacy_task(peer, 2_000)
    early = peer.result("tasks/result", {"taskId": tid})
    assert early["content"] == [] and l_get(peer)(tid)["status"] == "working"  # answered while it works


@stdio_demo("legacy-list-omits-task")
def check_legacy_list_omits_task(peer: StdioPeer) -> None:
    tid = _legacy_task(peer)
    assert l_get(peer)(tid)["taskId"] == tid and peer.result("tasks/list")["tasks"] == []


@stdio_demo("legacy-input-without-meta")
def check_legacy_input_without_meta(peer: StdioPeer) -> None:
    legacy_init(peer)
    tid = peer.result("tools/call", {"name": "confirm_action", "task": {}})["task"]["taskId"]
    asked: list[JSON] = []

    def answer(request: JSON) -> JSON:
        asked.append(request)
        return {"action": "accept", "content": {"confirm": True}}

    peer.result("tasks/result", {"taskId": tid}, on_request=answer)
    assert asked[0]["method"] == "elicitation/create" and RELATED not in asked[0]["params"].get("_meta", {})


def _legacy_listed(peer: StdioPeer, count: int) -> tuple[list[str], list[JSON]]:
    """`count` tasks created, then tasks/list followed by nextCursor: the ids and the pages."""
    ids = [_legacy_task(peer)] + [str(peer.result("tools/call", {"name": "slow_compute", "task": {}})["task"]["taskId"])
                                  for _ in range(count - 1)]
    pages = [peer.result("tasks/list")]
    while "nextCursor" in pages[-1] and len(pages) < 10:
        pages.append(peer.result("tasks/list", {"cursor": pages[-1]["nextCursor"]}))
    return ids, pages


@stdio_demo("legacy-list-drops-cursor")
def check_legacy_list_drops_cursor(peer: StdioPeer) -> None:
    ids, pages = _legacy_listed(peer, 5)
    listed = [t["taskId"] for page in pages for t in page["tasks"]]
    assert len(pages) == 1 and len(listed) == 3 and set(ids) - set(listed)  # unreachable, no nextCursor
    assert all(l_get(peer)(tid)["taskId"] == tid for tid in ids)


@stdio_demo("legacy-small-pages")
def check_legacy_small_pages(peer: StdioPeer) -> None:
    ids, pages = _legacy_listed(peer, 5)
    assert len(pages) == 3 and all("nextCursor" in p for p in pages[:-1]) and "nextCursor" not in pages[-1]
    assert sorted(t["taskId"] for page in pages for t in page["tasks"]) == sorted(ids)


@stdio_demo("exits-on-cancel")
def check_exits_on_cancel(peer: StdioPeer) -> None:
    tid = _legacy_task(peer, 2_000)
    peer.send({"jsonrpc": "2.0", "id": 99, "method": "tasks/cancel", "params": {"taskId": tid}})
    assert peer.proc.wait(timeout=WAIT) == 1  # no answer: the process is gone
    assert peer.proc.stderr is not None and b"RuntimeError" in peer.proc.stderr.read()


@stdio_demo("legacy-list-any-cursor")
def check_legacy_list_any_cursor(peer: StdioPeer) -> None:
    tid = _legacy_task(peer)
    listed = peer.result("tasks/list", {"cursor": "never-issued"})["tasks"]
    assert [t["taskId"] for t in listed] == [tid]


@stdio_demo("legacy-meta-wins")
def check_legacy_meta_wins(peer: StdioPeer) -> None:
    tid = _legacy_task(peer)
    got = peer.result("tasks/get", {"taskId": "no-such-task", "_meta": {RELATED: {"taskId": tid}}})
    assert got["taskId"] == tid


@stdio_demo("legacy-cancel-not-sticky")
def check_legacy_cancel_not_sticky(peer: StdioPeer) -> None:
    tid = _legacy_task(peer, 2_000)
    assert peer.result("tasks/cancel", {"taskId": tid})["status"] == "cancelled"
    assert l_get(peer)(tid)["status"] == "working"


@stdio_demo("legacy-related-meta-on-get")
def check_legacy_related_meta_on_get(peer: StdioPeer) -> None:
    tid = _legacy_task(peer)
    assert l_get(peer)(tid)["_meta"][RELATED] == {"taskId": tid}


@stdio_demo("legacy-progress-after-end")
def check_legacy_progress_after_end(peer: StdioPeer) -> None:
    tid = _legacy_task(peer, 0, _meta={"progressToken": "p-1"})
    peer.result("tasks/result", {"taskId": tid})
    peer.other.clear()
    assert l_get(peer)(tid)["status"] == "completed"
    assert [m["params"]["progressToken"] for m in peer.other if m.get("method") == "notifications/progress"] == ["p-1"]


@stdio_demo("working-reads-running")
def check_working_reads_running(peer: StdioPeer) -> None:
    params = {"name": "slow_compute", "arguments": {"durationMs": 2_000}, "_meta": meta()}
    tid = peer.result("tools/call", params)["taskId"]
    assert m_get(peer)(tid)["status"] == "running"


@stdio_demo("cancelled-reads-canceled")
def check_cancelled_reads_canceled(peer: StdioPeer) -> None:
    params = {"name": "slow_compute", "arguments": {"durationMs": 5_000}, "_meta": meta()}
    tid = peer.result("tools/call", params)["taskId"]
    assert peer.result("tasks/cancel", {"taskId": tid, "_meta": meta()})["resultType"] == "complete"
    assert m_get(peer)(tid)["status"] == "canceled"



@stdio_demo("purges-before-ttl")
def check_purges_before_ttl(peer: StdioPeer) -> None:
    tid = _legacy_task(peer, 0)
    peer.result("tasks/result", {"taskId": tid})  # blocks until the end
    shown = l_get(peer)(tid)
    assert shown["status"] == "completed" and shown["ttl"] == 60_000  # the end, with a TTL far off
    assert peer.error("tasks/get", {"taskId": tid})["code"] == -32602  # the next read: gone already


def test_every_variant_has_a_check() -> None:
    """Every variant but those that use a freedom (a full run against each is a Permits run in
    test_breaking_fixtures.py; the raw-wire tests below show a few of them at work) has a
    demonstration, and every demonstration shows a variant."""
    assert set(VARIANTS) - PERMITS == set(STDIO_CHECKS) | HTTP_DEMOS, (set(VARIANTS) - PERMITS) ^ (
        set(STDIO_CHECKS) | HTTP_DEMOS)
    listed = subprocess.run([*BROKEN_CMD, "--list"], capture_output=True, text=True, timeout=WAIT, env=_env())
    assert listed.returncode == 0
    assert {line.split("\t")[0] for line in listed.stdout.splitlines()} == set(VARIANTS)


@pytest.mark.matrix
@pytest.mark.parametrize("name", sorted(STDIO_CHECKS))
def test_broken_variant_breaks_its_rule(name: str) -> None:
    with stdio_server(broken=name) as peer:
        STDIO_CHECKS[name](peer)


@http_demo("per-post-workers")
def test_per_post_workers_refuses_a_request_before_initialized() -> None:
    """The reordering fixture is strict where the protocol orders steps: a 2025-11-25 request
    that reaches it before the session's notifications/initialized is refused (ping aside), and
    served once the notification was accepted."""
    with http_server(broken="per-post-workers") as server:
        init = server.post({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": LEGACY, "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}})
        headers = {**ACCEPT, "Mcp-Session-Id": init.headers["mcp-session-id"], "MCP-Protocol-Version": LEGACY}

        def legacy(method: str) -> httpx.Response:
            return server.post({"jsonrpc": "2.0", "id": 2, "method": method, "params": {}}, headers)

        early = legacy("tools/list")
        assert early.status_code == 400 and early.json()["error"]["code"] == -32600, early.text
        assert legacy("ping").json()["result"] == {}
        assert server.post({"jsonrpc": "2.0", "method": "notifications/initialized"}, headers).status_code == 202
        assert legacy("tools/list").json()["result"]["tools"]


@http_demo("ignore-mcp-name")
def test_broken_ignore_mcp_name() -> None:
    with http_server(broken="ignore-mcp-name") as server:
        tid = server.result("tools/call", {"name": "slow_compute", "_meta": meta()})["taskId"]
        params = {"taskId": tid, "_meta": meta()}
        response = server.call(
            "tasks/get",
            params,
            headers={**server.headers_for("tasks/get", params), "Mcp-Name": "some-other-task"},
        )
        assert response.status_code == 200 and response.json()["result"]["taskId"] == tid


@http_demo("ignore-mcp-method")
def test_broken_ignore_mcp_method() -> None:
    with http_server(broken="ignore-mcp-method") as server:
        tid = server.result("tools/call", {"name": "slow_compute", "_meta": meta()})["taskId"]
        params = {"taskId": tid, "_meta": meta()}
        response = server.call(
            "tasks/get",
            params,
            headers={**server.headers_for("tasks/get", params), "Mcp-Method": "tasks/other"},
        )
        assert response.status_code == 200 and response.json()["result"]["taskId"] == tid


@pytest.mark.parametrize("name", ["nested-create", "undeclared-get-allowed"])
def test_reference_passes_what_the_variant_breaks(name: str, extension_stdio: StdioPeer) -> None:
    """Sanity: the same assertion fails on the reference server (the check is not vacuous)."""
    with pytest.raises(AssertionError):
        STDIO_CHECKS[name](extension_stdio)


@http_demo("task-store-forgets")
def test_broken_task_store_forgets(tmp_path: Path) -> None:
    """A restart is a new process on the same --task-store (a test of its own: one peer cannot show
    it). The reference finds its ended task again, same status and result; the variant forgets it."""
    for broken in (None, "task-store-forgets"):
        store = str(tmp_path / f"{broken or 'reference'}.jsonl")
        with stdio_server("--task-store", store, broken=broken) as peer:
            ended = _completed(peer)
        assert ended["status"] == "completed"
        with stdio_server("--task-store", store, broken=broken) as peer:
            params = {"taskId": ended["taskId"], "_meta": meta()}
            if broken is None:
                again = peer.result("tasks/get", params)
                assert (again["status"], again["result"]) == (ended["status"], ended["result"])
            else:
                assert peer.error("tasks/get", params)["code"] == -32602


@http_demo("task-bound-to-cookie")
def test_broken_task_bound_to_cookie() -> None:
    with http_server(broken="task-bound-to-cookie") as server:
        tid = server.result("tools/call", {"name": "slow_compute", "_meta": meta()})["taskId"]
        assert server.client.cookies.get("node") == "a"  # set by the server, kept by this client
        params = {"taskId": tid, "_meta": meta()}
        assert server.result("tasks/get", params)["taskId"] == tid
        with httpx.Client(timeout=WAIT) as fresh:  # no cookie: the task is not found
            response = fresh.post(server.url, content=json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tasks/get",
                                                                   "params": params}),
                                  headers=server.headers_for("tasks/get", params))
        assert response.json()["error"]["code"] == -32602


@http_demo("tasks-per-connection")
def test_broken_tasks_per_connection() -> None:
    def post(client: httpx.Client, url: str, headers: dict[str, str], method: str, params: JSON) -> JSON:
        body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
        reply: JSON = client.post(url, content=body, headers=headers).json()
        return reply

    # One keep-alive connection creates and reads the task; another connection does not find it.
    with http_server(broken="tasks-per-connection") as server, httpx.Client(timeout=WAIT) as one:
        call: JSON = {"name": "slow_compute", "_meta": meta()}
        tid = post(one, server.url, server.headers_for("tools/call", call), "tools/call", call)["result"]["taskId"]
        get: JSON = {"taskId": tid, "_meta": meta()}
        headers = server.headers_for("tasks/get", get)
        assert post(one, server.url, headers, "tasks/get", get)["result"]["taskId"] == tid
        with httpx.Client(timeout=WAIT) as other:
            assert post(other, server.url, headers, "tasks/get", get)["error"]["code"] == -32602


@http_demo("tasks-not-bound-to-caller")
def test_broken_tasks_not_bound_to_caller() -> None:
    main, other = "fixture-main-token", "fixture-other-token"  # the fixture's own tokens
    with http_server(broken="tasks-not-bound-to-caller") as server:
        assert server.call("server/discover", {"_meta": meta()}).status_code == 401  # tokens are checked
        params: JSON = {"name": "slow_compute", "_meta": meta()}
        created = server.call("tools/call", params, headers={**server.headers_for("tools/call", params),
                                                             "Authorization": f"Bearer {main}"})
        tid = created.json()["result"]["taskId"]
        get: JSON = {"taskId": tid, "_meta": meta()}
        read = server.call("tasks/get", get, headers={**server.headers_for("tasks/get", get),
                                                      "Authorization": f"Bearer {other}"})
        assert read.json()["result"]["taskId"] == tid  # another token reads the task


def test_reference_in_token_mode_keeps_tasks_to_their_creator() -> None:
    with http_server("--bearer-token", "t-one", "--bearer-token", "t-two") as server:
        params: JSON = {"name": "slow_compute", "_meta": meta()}
        created = server.call("tools/call", params, headers={**server.headers_for("tools/call", params),
                                                             "Authorization": "Bearer t-one"})
        tid = created.json()["result"]["taskId"]
        get: JSON = {"taskId": tid, "_meta": meta()}
        for token, ok in (("t-one", True), ("t-two", False)):
            read = server.call("tasks/get", get, headers={**server.headers_for("tasks/get", get),
                                                          "Authorization": f"Bearer {token}"}).json()
            assert ("result" in read) is ok and (ok or read["error"]["code"] == -32602), (token, read)


@http_demo("unknown-method-http-200", "notification-200", "origin-not-checked", "mcp-name-base64-not-decoded")
def test_broken_http_endpoint_variants() -> None:
    with http_server(broken="unknown-method-http-200") as server:
        response = server.call("no/such-method", {"_meta": meta()})
        assert response.status_code == 200 and response.json()["error"]["code"] == -32601
        assert server.call("tasks/list", {"_meta": meta()}).status_code == 404  # removed methods keep their 404
    with http_server(broken="notification-200") as server:
        note = server.post({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "x"}})
        assert note.status_code == 200
    with http_server(broken="origin-not-checked") as server:
        params: JSON = {"_meta": meta()}
        response = server.call("tools/list", params, headers={**server.headers_for("tools/list", params),
                                                            "Origin": "http://tasks-conformance.invalid"})
        assert response.status_code == 200
    with http_server(broken="mcp-name-base64-not-decoded") as server:
        tid = server.result("tools/call", {"name": "slow_compute", "_meta": meta()})["taskId"]
        get: JSON = {"taskId": tid, "_meta": meta()}
        wrapped = "=?base64?" + base64.b64encode(tid.encode()).decode() + "?="
        response = server.call("tasks/get", get, headers={**server.headers_for("tasks/get", get), "Mcp-Name": wrapped})
        assert response.json()["error"]["code"] == -32020
def _legacy_http_session(server: HttpServerProc) -> Callable[..., httpx.Response]:
    init = server.post({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": LEGACY, "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}})
    headers = {**ACCEPT, "Mcp-Session-Id": init.headers["mcp-session-id"], "MCP-Protocol-Version": LEGACY}
    server.post({"jsonrpc": "2.0", "method": "notifications/initialized"}, headers)

    def legacy(method: str, params: JSON, rid: int = 2) -> httpx.Response:
        return server.post({"jsonrpc": "2.0", "id": rid, "method": method, "params": params}, headers)

    return legacy


@http_demo("legacy-get-as-sse")
def test_broken_legacy_get_as_sse() -> None:
    with http_server(broken="legacy-get-as-sse") as server:
        legacy = _legacy_http_session(server)
        tid = legacy("tools/call", {"name": "slow_compute", "task": {}}).json()["result"]["task"]["taskId"]
        response = legacy("tasks/get", {"taskId": tid})
        assert response.headers["content-type"].startswith("text/event-stream")
        assert [m["result"]["taskId"] for m in iter_sse(response)] == [tid]


def test_legacy_task_progress_keeps_the_token_and_stops_at_the_end(legacy_stdio: StdioPeer) -> None:
    """Progress of a task created with a progressToken comes on its tasks/result stream, with that
    token and the related-task _meta, and ends before the result."""
    peer = legacy_stdio
    params = {"name": "slow_compute", "arguments": {"durationMs": 400}, "task": {}, "_meta": {"progressToken": 7}}
    tid = peer.result("tools/call", params)["task"]["taskId"]
    peer.other.clear()
    assert peer.result("tasks/result", {"taskId": tid})["content"]
    progress = [m["params"] for m in peer.other if m.get("method") == "notifications/progress"]
    assert progress and all(p["progressToken"] == 7 and p["_meta"][RELATED] == {"taskId": tid} for p in progress)
    assert all(p["progress"] < p["total"] for p in progress)  # the last step is the end: never reported
    peer.other.clear()
    assert l_get(peer)(tid)["status"] == "completed" and not peer.other


def test_permits_revised_intervals_changes_ttl_between_reads() -> None:
    with stdio_server(broken="permits-revised-intervals") as peer:
        tid = _create(peer)["taskId"]
        first, second = m_get(peer)(tid), m_get(peer)(tid)
        assert first["ttlMs"] != second["ttlMs"] and first["pollIntervalMs"] != second["pollIntervalMs"]


def test_permits_rate_limited_polls_refuses_a_burst() -> None:
    with stdio_server(broken="permits-rate-limited-polls") as peer:
        params = {"name": "slow_compute", "arguments": {"durationMs": 2_000}, "_meta": meta()}
        tid = peer.result("tools/call", params)["taskId"]
        # More reads than the bucket holds, back to back: at least one is refused, none is lost.
        codes = [peer.request("tasks/get", {"taskId": tid, "_meta": meta()}).get("error", {}).get("code")
                 for _ in range(12)]
        assert -32050 in codes and None in codes


def test_permits_sync_answer_returns_a_plain_result() -> None:
    with stdio_server(broken="permits-sync-answer") as peer:
        result = peer.result("tools/call", {"name": "slow_compute", "arguments": {"durationMs": 10}, "_meta": meta()})
        assert result["resultType"] == "complete" and "taskId" not in result


def test_permits_legacy_immediate_response_and_other_ttl() -> None:
    with stdio_server(broken="permits-legacy-immediate-response") as peer:
        legacy_init(peer)
        result = peer.result("tools/call", {"name": "slow_compute", "task": {}})
        assert "io.modelcontextprotocol/model-immediate-response" in result["_meta"]
    with stdio_server(broken="permits-legacy-other-ttl") as peer:
        legacy_init(peer)
        assert peer.result("tools/call", {"name": "slow_compute", "task": {"ttl": 5_000}})["task"]["ttl"] == 90_000


def test_permits_legacy_deletes_cancelled() -> None:
    with stdio_server(broken="permits-legacy-deletes-cancelled") as peer:
        tid = _legacy_task(peer, 5_000)
        assert peer.result("tasks/cancel", {"taskId": tid})["status"] == "cancelled"
        assert peer.error("tasks/get", {"taskId": tid})["code"] == -32602


def test_permits_starts_input_required_creates_the_task_asking() -> None:
    with stdio_server(broken="permits-starts-input-required") as peer:
        created = _create(peer, "confirm_action", elicitation=True)
        assert created["status"] == "input_required"
        task = peer.result("tasks/get", {"taskId": created["taskId"], "_meta": meta(elicitation=True)})
        assert task["status"] == "input_required" and "confirm-1" in task["inputRequests"]


def test_permits_legacy_status_on_end_notifies_the_end_only() -> None:
    with stdio_server(broken="permits-legacy-status-on-end") as peer:
        tid = _legacy_task(peer, 200)
        peer.other.clear()
        peer.result("tasks/result", {"taskId": tid})
        statuses = [m["params"]["status"] for m in peer.other if m.get("method") == "notifications/tasks/status"]
        assert statuses == ["completed"]
