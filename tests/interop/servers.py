"""The third-party MCP servers the interop suite runs ``tasks-conformance`` against.

Each :class:`InteropServer` says which tasks wire the server speaks, how to launch
it over stdio and over Streamable HTTP (bound to 127.0.0.1, ephemeral port), which
tools to probe and with what arguments, and how to answer its input requests.
``available()`` explains why a server cannot run here (so a test can skip), and
``spawn_stdio()`` / ``spawn_http()`` start one with bounded waits.

HTTP launchers print one line on stdout once bound::

    LISTENING http://127.0.0.1:<port>/mcp

Behaviour established for each server (source reading plus captured wire traffic)
is written up in ``EXPECTED.md`` beside this file; ``expected`` below holds the
facts tests are most likely to assert.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import queue
import re
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Literal

INTEROP_DIR = Path(__file__).resolve().parent
SERVERS_DIR = INTEROP_DIR / "servers"
NODE_MODULES = INTEROP_DIR / "node_modules"

#: The virtualenv of the legacy (2025-11-25) Python task runtimes, which conflict with the interop
#: extra (mcp 1.x, fastmcp 3.x): .ci/run makes it from legacy-clients-requirements.txt.
LEGACY_VENV = INTEROP_DIR / ".venv-legacy-clients"
LEGACY_PYTHON = LEGACY_VENV / "bin" / "python"
LEGACY_REQUIREMENTS = INTEROP_DIR / "legacy-clients-requirements.txt"

LISTENING_RE = re.compile(r"^LISTENING (http://127\.0\.0\.1:(\d+)/\S*)\s*$")

TASKS_EXTENSION = "io.modelcontextprotocol/tasks"

Wire = Literal["extension", "legacy", "none"]


def parse_listening_line(line: str) -> str | None:
    """The URL from a launcher's ``LISTENING <url>`` line, or None for any other line."""
    match = LISTENING_RE.match(line.strip())
    return match.group(1) if match else None


@dataclass(frozen=True)
class InteropServer:
    """How to run and probe one third-party server."""

    name: str
    #: Tasks wire it implements: "extension" (2026-07-28, SEP-2663), "legacy"
    #: (2025-11-25 core tasks), or "none".
    wire: Wire
    #: Protocol versions it negotiates, newest first.
    protocol_versions: tuple[str, ...]
    stdio_argv: tuple[str, ...]
    #: HTTP argv without the port; ``http_argv(port)`` appends ``--port N``. Empty for a
    #: server run over stdio only.
    http_argv_base: tuple[str, ...] = ()
    #: Extra environment for both launch modes.
    env: Mapping[str, str] = field(default_factory=dict)
    #: A tool that runs as a task (None for a server without tasks).
    task_tool: str | None = None
    task_args: Mapping[str, Any] = field(default_factory=dict)
    #: Arguments that keep the task tool running long enough to cancel it.
    long_task_args: Mapping[str, Any] = field(default_factory=dict)
    #: A tool whose task support is "required" (None if there is none).
    required_tool: str | None = None
    required_args: Mapping[str, Any] = field(default_factory=dict)
    #: A plain tool with no task support.
    plain_tool: str | None = None
    plain_args: Mapping[str, Any] = field(default_factory=dict)
    #: A task-capable tool whose work raises.
    failing_tool: str | None = None
    failing_args: Mapping[str, Any] = field(default_factory=dict)
    #: A task-capable tool whose work raises a JSON-RPC error (extension: ends "failed").
    protocol_error_tool: str | None = None
    #: A task-capable tool that asks the client for input (elicitation).
    input_tool: str | None = None
    input_args: Mapping[str, Any] = field(default_factory=dict)
    #: The ElicitResult to send for the input tool's elicitation: on the legacy wire as
    #: the JSON-RPC result of the server's elicitation/create request (sent on the
    #: tasks/result stream); on the extension wire as the value of every outstanding
    #: ``inputRequests`` key in tasks/update (keys are server-minted, read them from
    #: tasks/get).
    elicit_result: Mapping[str, Any] | None = None
    #: Python modules the launcher imports (checked by ``available``).
    python_modules: tuple[str, ...] = ()
    #: node_modules packages (with exact versions) the launcher needs.
    node_packages: Mapping[str, str] = field(default_factory=dict)
    #: Distributions (with exact versions) of LEGACY_VENV, whose Python runs the launcher.
    legacy_python_packages: Mapping[str, str] = field(default_factory=dict)
    #: Facts from EXPECTED.md (codes, shapes) that tests may assert.
    expected: Mapping[str, Any] = field(default_factory=dict)

    @property
    def uses_node(self) -> bool:
        return bool(self.node_packages)

    @property
    def transports(self) -> tuple[str, ...]:
        """The transports the suite runs it over: stdio, and Streamable HTTP where it has a launcher."""
        return ("stdio", "http") if self.http_argv_base else ("stdio",)

    def http_argv(self, port: int = 0) -> list[str]:
        if not self.http_argv_base:
            raise ValueError(f"{self.name} is run over stdio only")
        return [*self.http_argv_base, "--port", str(port)]

    def launch_env(self) -> dict[str, str]:
        return {**os.environ, **self.env}

    def available(self) -> str | None:
        """None when the server can run here, otherwise the reason it cannot."""
        for module in self.python_modules:
            if importlib.util.find_spec(module) is None:
                return (
                    f"Python module {module!r} is not installed "
                    "(pip install -e '.[interop]')"
                )
        if self.legacy_python_packages:
            why = _legacy_venv_problem(self.legacy_python_packages)
            if why is not None:
                return why
        if self.uses_node:
            if shutil.which("node") is None:
                return "node is not on PATH"
            for package, version in self.node_packages.items():
                manifest = NODE_MODULES / package / "package.json"
                if not manifest.is_file():
                    return f"{package} is not installed (run `npm ci` in {INTEROP_DIR})"
                try:
                    installed = json.loads(manifest.read_text(encoding="utf-8")).get("version")
                except (OSError, ValueError) as exc:
                    return f"cannot read {manifest}: {exc}"
                if installed != version:
                    return f"{package} is {installed}, expected {version} (run `npm ci` in {INTEROP_DIR})"
        return None


def legacy_versions(*dists: str) -> dict[str, str | None]:
    """The installed versions of ``dists`` in LEGACY_VENV (None: absent), or {} without the venv."""
    if not LEGACY_PYTHON.exists():
        return {}
    code = ("import importlib.metadata as m, json, sys\n"
            "def v(d):\n    try: return m.version(d)\n    except m.PackageNotFoundError: return None\n"
            "print(json.dumps({d: v(d) for d in sys.argv[1:]}))")
    try:
        out = subprocess.run([str(LEGACY_PYTHON), "-c", code, *dists], capture_output=True, text=True,
                             timeout=60, check=True).stdout
        return dict(json.loads(out))
    except (OSError, subprocess.SubprocessError, ValueError):
        return {}


def _legacy_venv_problem(wanted: Mapping[str, str]) -> str | None:
    if not LEGACY_PYTHON.exists():
        venv, pins = (p.relative_to(INTEROP_DIR.parent.parent) for p in (LEGACY_VENV, LEGACY_REQUIREMENTS))
        return (f"the legacy virtualenv is absent: python3 -m venv {venv} && {venv}/bin/pip install -r {pins} "
                "(.ci/run does this)")
    got = legacy_versions(*wanted)
    wrong = {d: got.get(d) for d, version in wanted.items() if got.get(d) != version}
    if wrong:
        return "not installed at the versions EXPECTED.md was established with: " + ", ".join(
            f"{d} {v or 'absent'} (want {wanted[d]})" for d, v in wrong.items())
    return None


_PY = sys.executable
_LEGACY_PY = str(LEGACY_PYTHON)

FASTMCP_TASKS = InteropServer(
    name="fastmcp-tasks",
    wire="extension",
    protocol_versions=("2026-07-28", "2025-11-25"),
    stdio_argv=(_PY, str(SERVERS_DIR / "fastmcp_tasks_server.py"), "stdio"),
    http_argv_base=(_PY, str(SERVERS_DIR / "fastmcp_tasks_server.py"), "http"),
    env={"FASTMCP_DOCKET_URL": "memory://", "FASTMCP_CHECK_FOR_UPDATES": "off"},
    task_tool="slow_compute",
    task_args={"seconds": 0.5},
    long_task_args={"seconds": 30},
    required_tool="required_compute",
    required_args={"seconds": 0.2},
    plain_tool="greet",
    plain_args={"name": "interop"},
    failing_tool="failing_job",
    protocol_error_tool="protocol_error_job",
    input_tool="confirm_delete",
    input_args={"filename": "demo.txt"},
    elicit_result={"action": "accept", "content": {"confirm": True}},
    python_modules=("fastmcp", "fastmcp_tasks", "docket"),
    expected={
        "discover_before_initialize": "DiscoverResult",  # stdio and HTTP 200
        "extension_capability": {},
        "create_result_type": "task",
        "ttl_ms": 900_000,
        "poll_interval_ms": 200,
        "unknown_task_code": -32602,  # tasks/get, tasks/update, tasks/cancel
        "unknown_task_http_status": 400,
        "undeclared_extension_code": -32021,  # tools/call (required tool) and tasks/*
        "undeclared_extension_http_status": 400,
        "mcp_name_mismatch_code": -32020,
        "mcp_name_mismatch_http_status": 400,
        "missing_mcp_name": "accepted",
        "tasks_result_code": -32601,  # HTTP 404
        "tasks_list_code": -32601,  # HTTP 404
        "required_without_task_code": -32021,  # on both eras
        "raised_exception_status": "completed",  # isError:true inlined
        "protocol_error_status": "failed",  # error {code -32603}
        "cancel_result": {"resultType": "complete"},
        "input_request_key_format": "<taskId>:<16 hex>",
    },
)

SDK_TASKS = InteropServer(
    name="sdk-tasks",
    wire="legacy",
    protocol_versions=("2025-11-25",),
    stdio_argv=("node", str(SERVERS_DIR / "sdk_tasks_server.mjs"), "stdio"),
    http_argv_base=("node", str(SERVERS_DIR / "sdk_tasks_server.mjs"), "http"),
    task_tool="slow_compute",
    task_args={"seconds": 0.5},
    long_task_args={"seconds": 30},
    required_tool="required_compute",
    required_args={"seconds": 0.2},
    plain_tool="greet",
    plain_args={"name": "interop"},
    failing_tool="failing_job",
    input_tool="confirm_delete",
    input_args={"filename": "demo.txt"},
    elicit_result={"action": "accept", "content": {"confirm": True}},
    node_packages={"@modelcontextprotocol/sdk": "1.32.2", "zod": "4.6.7"},
    expected={
        "discover_before_initialize_code": -32601,  # stdio; HTTP: 400 -32000 "Server not initialized"
        "capabilities_tasks": {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}},
        "ttl": "requested ttl, else 60000",
        "poll_interval": 200,
        "unknown_task_code": -32602,  # tasks/get, tasks/result, tasks/cancel
        "cancel_terminal_code": -32602,
        "required_without_task": "isError CallToolResult, text 'MCP error -32601: ...'",
        "forbidden_with_task_code": -32602,  # "Invalid task creation result"
        "failing_status": "failed",  # tasks/result returns the isError CallToolResult
        "tasks_result_related_task_meta": True,
        "status_notifications": True,  # notifications/tasks/status, unsolicited
        # "working" by default; with input_args {"delay": 0} the CreateTaskResult says
        # "input_required" (the SDK store's live task object is mutated before sending).
        "input_tool_initial_status": "working",
    },
)

EVERYTHING = InteropServer(
    name="server-everything",
    wire="legacy",
    protocol_versions=("2025-11-25",),
    stdio_argv=(
        "node",
        str(NODE_MODULES / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"),
        "stdio",
    ),
    http_argv_base=("node", str(SERVERS_DIR / "everything_http.mjs")),
    task_tool="simulate-research-query",
    task_args={"topic": "interop"},
    long_task_args={"topic": "interop"},  # 4 stages x 1 s
    required_tool="simulate-research-query",
    required_args={"topic": "interop"},
    plain_tool="echo",
    plain_args={"message": "interop"},
    input_tool="simulate-research-query",
    input_args={"topic": "python", "ambiguous": True},
    elicit_result={"action": "accept", "content": {"interpretation": "programming"}},
    node_packages={
        "@modelcontextprotocol/server-everything": "2026.8.31",
        "@modelcontextprotocol/sdk": "1.32.2",
    },
    expected={
        "discover_before_initialize_code": -32601,  # stdio; HTTP: 400 -32000 "Server not initialized"
        "capabilities_tasks": {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}},
        "task_tool_registered_after": "notifications/initialized",
        "ttl": 300_000,  # requested ttl ignored
        "poll_interval": 1000,
        "task_duration_s": 4,
        "unknown_task_code": -32602,
        "cancel_terminal_code": -32602,
        "required_without_task": "isError CallToolResult, text 'MCP error -32601: ...'",
        "forbidden_with_task_code": -32602,
        "roots_list_after_initialized": True,  # if the client declares roots
        "status_notifications": True,
    },
)

MCP_PLAIN = InteropServer(
    name="mcp-plain",
    wire="none",
    protocol_versions=("2026-07-28", "2025-11-25"),
    stdio_argv=(_PY, str(SERVERS_DIR / "mcp_plain_server.py"), "stdio"),
    http_argv_base=(_PY, str(SERVERS_DIR / "mcp_plain_server.py"), "http"),
    plain_tool="greet",
    plain_args={"name": "interop"},
    python_modules=("mcp",),
    expected={
        "discover_before_initialize": "DiscoverResult",
        "extension_capability": None,
        "tasks_methods_code": -32601,  # every tasks/* on both eras; HTTP 404 on 2026-07-28
        "legacy_task_param": "ignored",  # plain CallToolResult
        "bad_origin_http_status": 403,
    },
)

MCP_FRAMEWORK = InteropServer(
    name="mcp-framework",
    wire="legacy",
    protocol_versions=("2025-11-25",),
    # Its stdio transport only: the framework's http-stream transport binds `port || 8080` (no
    # ephemeral port) and serves every session from one SDK Server, broadcasting each outgoing
    # message to all sessions (EXPECTED.md §5).
    stdio_argv=("node", str(SERVERS_DIR / "mcp_framework_server.mjs")),
    task_tool="slow_compute",
    task_args={"seconds": 1},
    long_task_args={"seconds": 30},
    required_tool="required_compute",
    required_args={"seconds": 0.2},
    plain_tool="greet",
    plain_args={"name": "interop"},
    failing_tool="failing_job",
    node_packages={"mcp-framework": "0.2.22"},
    expected={
        "discover_before_initialize_code": -32601,
        "capabilities_tasks": {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}},
        "ttl": "requested ttl, else 300000",
        "poll_interval": 200,  # the script's defaultPollInterval; the framework's default is 5000
        "task_id": "randomUUID()",
        "unknown_task_code": -32603,  # tasks/get, tasks/result, tasks/cancel: "Task not found: …"
        "cancel_terminal_code": -32603,
        "tasks_result_while_working_code": -32603,  # "… is not completed (status: working) …"
        "tasks_result_related_task_meta": False,
        "invalid_cursor": "an empty page",
        "required_without_task": "runs synchronously: a plain CallToolResult",
        "forbidden_with_task_code": -32603,
        "failing_status": "completed",  # isError CallToolResult as the result
        "status_notifications": False,
    },
)

MCP1_TASKS = InteropServer(
    name="mcp1-tasks",
    wire="legacy",
    protocol_versions=("2025-11-25",),
    stdio_argv=(_LEGACY_PY, str(SERVERS_DIR / "mcp1_tasks_server.py"), "stdio"),
    http_argv_base=(_LEGACY_PY, str(SERVERS_DIR / "mcp1_tasks_server.py"), "http"),
    env={"PYTHONWARNINGS": "ignore::DeprecationWarning"},
    task_tool="parking_compute",
    task_args={"seconds": 1},
    long_task_args={"seconds": 30},
    required_tool="required_compute",
    required_args={"seconds": 0.2},
    plain_tool="greet",
    plain_args={"name": "interop"},
    failing_tool="failing_job",
    input_tool="confirm_delete",
    input_args={"filename": "demo.txt"},
    elicit_result={"action": "accept", "content": {"confirm": True}},
    legacy_python_packages={"mcp": "1.30.0"},
    expected={
        "discover_before_initialize_code": -32602,  # stdio; HTTP: 400 -32600 "Missing session ID", id "server-error"
        "capabilities_tasks": {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}},
        "ttl": "requested ttl",
        "poll_interval": 500,
        "task_id": "<session scope hex>:<uuid4>",
        "unknown_task_code": -32602,
        "cancel_terminal_code": -32602,
        "required_without_task": "isError CallToolResult, text 'This tool requires task-augmented invocation'",
        "forbidden_with_task": "isError CallToolResult",
        "invalid_cursor": "ignored: every task on one page",
        "failing_status": "failed",  # tasks/result: {} with only the related-task _meta
        "cancelled_task_completing": "stdio: the process exits; HTTP: the session ends (404)",
        "status_notifications": True,
    },
)

ARCADE_TASKS = InteropServer(
    name="arcade-tasks",
    wire="legacy",
    protocol_versions=("2025-11-25",),
    stdio_argv=(_LEGACY_PY, str(SERVERS_DIR / "arcade_tasks_server.py"), "stdio"),
    http_argv_base=(_LEGACY_PY, str(SERVERS_DIR / "arcade_tasks_server.py"), "http"),
    env={"ARCADE_USAGE_TRACKING": "0"},
    task_tool="Interop_SlowCompute",
    task_args={"seconds": 1},
    long_task_args={"seconds": 30},
    required_tool="Interop_RequiredCompute",
    required_args={"seconds": 0.2},
    plain_tool="Interop_Greet",
    plain_args={"name": "interop"},
    failing_tool="Interop_FailingJob",
    legacy_python_packages={"arcade-mcp-server": "1.32.1"},
    expected={
        "capabilities_tasks": {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}},
        "ttl": "requested ttl",
        "poll_interval": None,  # never sent
        "task_id": "uuid4",
        "create_result_related_task_meta": True,
        "unknown_task_code": -32602,
        "cancel_terminal_code": -32602,
        "required_without_task_code": -32601,
        "forbidden_with_task_code": -32601,
        "invalid_cursor_code": -32602,
        "failing_status": "failed",  # no statusMessage; tasks/result returns the isError result
        "status_notifications": True,
    },
)

FASTMCP3_TASKS = InteropServer(
    name="fastmcp3-tasks",
    wire="legacy",
    protocol_versions=("2025-11-25",),
    stdio_argv=(_LEGACY_PY, str(SERVERS_DIR / "fastmcp3_tasks_server.py"), "stdio"),
    http_argv_base=(_LEGACY_PY, str(SERVERS_DIR / "fastmcp3_tasks_server.py"), "http"),
    env={"FASTMCP_DOCKET_URL": "memory://", "FASTMCP_CHECK_FOR_UPDATES": "off"},
    task_tool="slow_compute",
    task_args={"seconds": 1},
    long_task_args={"seconds": 30},
    required_tool="required_compute",
    required_args={"seconds": 0.2},
    plain_tool="greet",
    plain_args={"name": "interop"},
    failing_tool="failing_job",
    input_tool="confirm_delete",
    input_args={"filename": "demo.txt"},
    elicit_result={"action": "accept", "content": {"confirm": True}},
    legacy_python_packages={"fastmcp": "3.4.11", "pydocket": "0.27.2"},
    expected={
        "capabilities_tasks": {"list": {}, "cancel": {},
                               "requests": {"tools": {"call": {}}, "prompts": {"get": {}},
                                            "resources": {"read": {}}}},
        "ttl": 60000,
        "poll_interval": 200,  # the tools' TaskConfig; the default is 5000
        "tasks_result_while_working_code": -32602,  # "Task not completed yet (current state: working)"
        "tasks_result_related_task_meta": "only on a failed task's result",
        "tasks_list": "always empty",
        "cancel_terminal": "returns the task as cancelled",
        "unknown_task_code": -32602,
        "required_without_task": "isError CallToolResult",
        "forbidden_with_task": "isError CallToolResult",
        "failing_status": "failed",  # tasks/result returns an isError result
        "status_notifications": True,
    },
)

SERVERS: tuple[InteropServer, ...] = (FASTMCP_TASKS, SDK_TASKS, EVERYTHING, MCP_PLAIN, MCP_FRAMEWORK, MCP1_TASKS,
                                      ARCADE_TASKS, FASTMCP3_TASKS)
BY_NAME: dict[str, InteropServer] = {server.name: server for server in SERVERS}


# --- launching -------------------------------------------------------------------


def spawn_stdio(
    server: InteropServer, stderr: int | IO[Any] | None = subprocess.DEVNULL
) -> subprocess.Popen[bytes]:
    """Start ``server`` on stdio. The caller owns the pipes and must call ``stop``.

    Pass a file for ``stderr`` to keep the server's log; never leave it as an unread
    pipe (FastMCP writes full tracebacks there and would block once it fills).
    """
    return subprocess.Popen(
        list(server.stdio_argv),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=stderr,
        env=server.launch_env(),
        cwd=INTEROP_DIR,
    )


def spawn_http(
    server: InteropServer,
    port: int = 0,
    timeout: float = 30.0,
    stderr: int | IO[Any] | None = subprocess.DEVNULL,
) -> tuple[subprocess.Popen[bytes], str]:
    """Start ``server`` on Streamable HTTP at 127.0.0.1 and return ``(process, url)``.

    Waits at most ``timeout`` seconds for the ``LISTENING`` line; on failure the
    process is stopped and RuntimeError raised. Stdout keeps being drained in the
    background so the server never blocks on a full pipe.
    """
    proc = subprocess.Popen(
        server.http_argv(port),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=stderr,
        env=server.launch_env(),
        cwd=INTEROP_DIR,
    )
    lines: queue.Queue[str | None] = queue.Queue()

    def drain() -> None:
        assert proc.stdout is not None
        for raw in proc.stdout:
            lines.put(raw.decode("utf-8", "replace"))
        lines.put(None)

    threading.Thread(target=drain, name=f"{server.name}-stdout", daemon=True).start()
    deadline = time.monotonic() + timeout
    seen: list[str] = []
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            break
        try:
            line = lines.get(timeout=min(remaining, 0.5))
        except queue.Empty:
            continue
        if line is None:
            break
        url = parse_listening_line(line)
        if url is not None:
            return proc, url
        seen.append(line)
    stop(proc)
    tail = "".join(seen)[-500:]
    raise RuntimeError(
        f"{server.name}: no LISTENING line within {timeout}s (exit={proc.returncode}); stdout: {tail!r}"
    )


def stop(proc: subprocess.Popen[Any], timeout: float = 5.0) -> None:
    """Terminate a launched server (SIGTERM, then SIGKILL) and close its pipes."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=timeout)
    for pipe in (proc.stdin, proc.stdout, proc.stderr):
        if pipe is not None:
            with contextlib.suppress(OSError):
                pipe.close()


if __name__ == "__main__":  # quick availability report
    for _server in SERVERS:
        _why = _server.available()
        print(f"{_server.name:18} {_server.wire:9} {'ok' if _why is None else 'unavailable: ' + _why}")
