"""Interop target: the official Python SDK 1.x (PyPI ``mcp`` 1.30.0) low-level ``Server`` with its
experimental tasks (legacy 2025-11-25 wire: params.task, tasks/get, tasks/result, tasks/list,
tasks/cancel). Runs in ``tests/interop/.venv-legacy-clients`` (mcp 1.x cannot share a
virtualenv with the interop extra's mcp 2.x). Usage::

    python mcp1_tasks_server.py stdio
    python mcp1_tasks_server.py http [--port 0]

HTTP binds 127.0.0.1 only (a ``StreamableHTTPSessionManager`` under Starlette). With
``--port 0`` the OS picks a free port; the first stdout line is::

    LISTENING http://127.0.0.1:<port>/mcp

What a user writes, following the SDK's task guide: ``server.experimental.enable_tasks()``
(in-memory store, message queue and the default tasks/* handlers), tools declaring
``execution.taskSupport``, and a ``call_tool`` handler that checks the request against the
tool (``ctx.experimental.validate_for_tool``) and hands task-augmented calls to
``ctx.experimental.run_task``. Tools:

- ``greet`` (no ``execution``: forbidden): answers at once.
- ``slow_compute`` (optional): sleeps ``seconds`` (default 1), then answers. Its work is the
  guide's: when its task was cancelled, ``run_task`` completing it raises out of the task group
  and the server exits (EXPECTED.md §6).
- ``parking_compute`` (optional): the same, but once its task was cancelled the work never
  returns (it parks), the one way around that exit with ``run_task``; the main scenario probes it.
- ``required_compute`` (required): the same body.
- ``failing_job`` (optional): the work raises; as a task it ends ``failed``.
- ``confirm_delete`` (optional): as a task, asks the client through ``task.elicit`` (the request
  travels on the tasks/result stream), then answers.
"""

from __future__ import annotations

import argparse
import contextlib
import socket
import sys
from collections.abc import AsyncIterator
from typing import Any

import anyio
import mcp.types as types
from mcp.server.experimental.task_context import ServerTaskContext
from mcp.server.lowlevel import Server

server = Server("mcp1-tasks-interop", version="0.0.0")
server.experimental.enable_tasks()

_SECONDS = {"type": "object", "properties": {"seconds": {"type": "number"}}}
TOOLS = {
    "greet": types.Tool(name="greet", description="Answers at once",
                        inputSchema={"type": "object", "properties": {"name": {"type": "string"}}}),
    "slow_compute": types.Tool(name="slow_compute", description="Works for `seconds` seconds", inputSchema=_SECONDS,
                               execution=types.ToolExecution(taskSupport=types.TASK_OPTIONAL)),
    "parking_compute": types.Tool(name="parking_compute", description="Works for `seconds` seconds (cancel-safe)",
                                  inputSchema=_SECONDS,
                                  execution=types.ToolExecution(taskSupport=types.TASK_OPTIONAL)),
    "required_compute": types.Tool(name="required_compute", description="The same, only as a task",
                                   inputSchema=_SECONDS,
                                   execution=types.ToolExecution(taskSupport=types.TASK_REQUIRED)),
    "failing_job": types.Tool(name="failing_job", description="Works briefly, then raises",
                              inputSchema={"type": "object", "properties": {}},
                              execution=types.ToolExecution(taskSupport=types.TASK_OPTIONAL)),
    "confirm_delete": types.Tool(name="confirm_delete", description="Asks before deleting a file",
                                 inputSchema={"type": "object", "properties": {"filename": {"type": "string"}}},
                                 execution=types.ToolExecution(taskSupport=types.TASK_OPTIONAL)),
}
CONFIRM_SCHEMA = {"type": "object", "properties": {"confirm": {"type": "boolean"}}, "required": ["confirm"]}


def _text(text: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)])


@server.list_tools()
async def list_tools() -> list[types.Tool]:
    return list(TOOLS.values())


async def _compute(arguments: dict[str, Any]) -> types.CallToolResult:
    seconds = float(arguments.get("seconds", 1))
    await anyio.sleep(seconds)
    return _text(f"computed after {seconds:g}s")


async def _fail(arguments: dict[str, Any]) -> types.CallToolResult:
    await anyio.sleep(0.2)
    raise RuntimeError("boom")


async def _park_if_cancelled(task: ServerTaskContext) -> None:
    support = server.experimental.task_support
    current = await support.store.get_task(task.task_id) if support is not None else None
    if current is not None and current.status == "cancelled":
        await anyio.sleep_forever()  # returning would make run_task complete a cancelled task


@server.call_tool()
async def call_tool(name: str, arguments: dict[str, Any]) -> types.CallToolResult | types.CreateTaskResult:
    ctx = server.request_context
    tool = TOOLS.get(name)
    if tool is None:
        raise ValueError(f"unknown tool {name!r}")
    ctx.experimental.validate_for_tool(tool)  # -32601 for a required tool without task, a forbidden one with
    if name == "greet":
        return _text(f"hello {arguments.get('name', 'world')}")
    if name == "confirm_delete":
        filename = str(arguments.get("filename", "file"))

        async def confirm(task: ServerTaskContext) -> types.CallToolResult:
            answer = await task.elicit(message=f"Delete {filename}?", requestedSchema=CONFIRM_SCHEMA)
            confirmed = answer.action == "accept" and bool((answer.content or {}).get("confirm"))
            return _text(f"deleted {filename}" if confirmed else f"kept {filename}")

        if ctx.experimental.is_task:
            return await ctx.experimental.run_task(confirm)
        return _text(f"kept {filename} (confirmation needs a task)")
    body = _fail if name == "failing_job" else _compute
    if ctx.experimental.is_task:

        async def work(task: ServerTaskContext) -> types.CallToolResult:
            if name != "parking_compute":
                return await body(arguments)
            result = await body(arguments)
            await _park_if_cancelled(task)
            return result

        return await ctx.experimental.run_task(work)
    return await body(arguments)


async def _serve_stdio() -> None:
    from mcp.server.stdio import stdio_server

    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


def _serve_http(port: int) -> None:
    import uvicorn
    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
    from starlette.applications import Starlette
    from starlette.routing import Mount

    manager = StreamableHTTPSessionManager(app=server)

    @contextlib.asynccontextmanager
    async def lifespan(_app: Starlette) -> AsyncIterator[None]:
        async with manager.run():
            yield

    app = Starlette(routes=[Mount("/mcp", app=manager.handle_request)], lifespan=lifespan)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    sock.listen(128)
    bound = sock.getsockname()[1]
    config = uvicorn.Config(app, host="127.0.0.1", port=bound, log_level="warning", lifespan="on")
    sys.stdout.write(f"LISTENING http://127.0.0.1:{bound}/mcp\n")
    sys.stdout.flush()
    anyio.run(uvicorn.Server(config).serve, [sock])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("transport", choices=["stdio", "http"])
    parser.add_argument("--port", type=int, default=0, help="HTTP port on 127.0.0.1 (0: ephemeral)")
    args = parser.parse_args(argv)
    if args.transport == "stdio":
        anyio.run(_serve_stdio)
    else:
        _serve_http(args.port)


if __name__ == "__main__":
    main()
