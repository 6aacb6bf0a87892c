"""Interop target: FastMCP 4 + fastmcp-tasks (SEP-2663 tasks extension, 2026-07-28 wire).

Runs a FastMCP server with `TasksExtension` on Docket's in-memory backend
(``memory://``; no Redis). Usage::

    python fastmcp_tasks_server.py stdio
    python fastmcp_tasks_server.py http [--port 0]

In HTTP mode the server binds 127.0.0.1 only. With ``--port 0`` the OS picks a
free port; either way the first line written to stdout is::

    LISTENING http://127.0.0.1:<port>/mcp

Tools:

- ``greet`` (forbidden, synchronous): returns a greeting at once.
- ``slow_compute`` (task ``optional``): sleeps ``seconds`` then returns text.
- ``required_compute`` (task ``required``): the same body; it only runs as a task.
- ``failing_job`` (task ``optional``): raises an ordinary exception (a tool error).
- ``protocol_error_job`` (task ``optional``): raises a JSON-RPC error (``-32603``).
- ``confirm_delete`` (task ``optional``): asks the client for a confirmation
  through an elicitation input request (guard pattern), then answers.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
import sys
from typing import Any

# Keep the Docket backend in memory whatever the environment or a stray .env says.
os.environ["FASTMCP_DOCKET_URL"] = "memory://"
os.environ.setdefault("FASTMCP_SHOW_SERVER_BANNER", "false")
os.environ.setdefault("FASTMCP_LOG_LEVEL", "WARNING")
os.environ.setdefault("FASTMCP_CHECK_FOR_UPDATES", "off")

from datetime import timedelta

import mcp_types
from fastmcp import Context, FastMCP
from fastmcp.utilities.tasks import TaskConfig
from fastmcp_tasks import TasksExtension
from mcp.shared.exceptions import MCPError
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

POLL = timedelta(milliseconds=200)

mcp = FastMCP("fastmcp-tasks-interop", version="0.0.0")
mcp.add_extension(TasksExtension(url="memory://", name="tasks-conformance-interop"))


@mcp.tool
def greet(name: str = "world") -> str:
    """Synchronous tool with no task support."""
    return f"Hello, {name}!"


@mcp.tool(task=TaskConfig(mode="optional", poll_interval=POLL))
async def slow_compute(seconds: float = 0.5) -> str:
    """Sleeps, then answers. Runs as a task only when the client opts in."""
    await asyncio.sleep(seconds)
    return f"computed after {seconds}s"


@mcp.tool(task=TaskConfig(mode="required", poll_interval=POLL))
async def required_compute(seconds: float = 0.5) -> str:
    """Sleeps, then answers. Only runs as a task."""
    await asyncio.sleep(seconds)
    return f"required task computed after {seconds}s"


@mcp.tool(task=TaskConfig(mode="optional", poll_interval=POLL))
async def failing_job(message: str = "boom") -> str:
    """Raises an ordinary exception (a tool execution error)."""
    await asyncio.sleep(0.05)
    raise ValueError(message)


@mcp.tool(task=TaskConfig(mode="optional", poll_interval=POLL))
async def protocol_error_job(message: str = "protocol failure") -> str:
    """Raises a JSON-RPC error, which the extension reports as a failed task."""
    await asyncio.sleep(0.05)
    raise MCPError(code=mcp_types.INTERNAL_ERROR, message=message)


@mcp.tool(task=TaskConfig(mode="optional", poll_interval=POLL))
async def confirm_delete(ctx: Context, filename: str = "demo.txt") -> Any:
    """Asks the client to confirm through an elicitation, then reports the outcome."""
    rc = ctx.request_context
    modern = rc is not None and rc.protocol_version in MODERN_PROTOCOL_VERSIONS
    if not ctx.is_background_task and not modern:
        # Handshake-era (2025-11-25) connection: a server-initiated elicitation.
        answer = await ctx.elicit(f"Delete {filename}?", response_type=bool)
        accepted = getattr(answer, "data", None) is True
        return f"deleted {filename}" if accepted else f"kept {filename} (action={answer.action})"
    # 2026-07-28: the guard pattern (MRTR in the foreground, inputRequests in a task).
    responses = ctx.input_responses
    if not responses or "confirm" not in responses:
        return mcp_types.InputRequiredResult(
            input_requests={
                "confirm": mcp_types.ElicitRequest(
                    method="elicitation/create",
                    params=mcp_types.ElicitRequestFormParams(
                        mode="form",
                        message=f"Delete {filename}?",
                        requested_schema={
                            "type": "object",
                            "properties": {"confirm": {"type": "boolean"}},
                            "required": ["confirm"],
                        },
                    ),
                )
            }
        )
    answer = responses["confirm"]
    action = getattr(answer, "action", None)
    content = getattr(answer, "content", None) or {}
    if action == "accept" and content.get("confirm") is True:
        return f"deleted {filename}"
    return f"kept {filename} (action={action})"


def _bind(port: int) -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    sock.listen(128)
    sock.set_inheritable(True)
    return sock


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("transport", choices=["stdio", "http"])
    parser.add_argument("--port", type=int, default=0, help="HTTP port on 127.0.0.1 (0: ephemeral)")
    args = parser.parse_args(argv)

    if args.transport == "stdio":
        mcp.run(transport="stdio", show_banner=False)
        return

    sock = _bind(args.port)
    port = sock.getsockname()[1]
    sys.stdout.write(f"LISTENING http://127.0.0.1:{port}/mcp\n")
    sys.stdout.flush()
    mcp.run(
        transport="http",
        show_banner=False,
        host="127.0.0.1",
        port=port,
        path="/mcp",
        sockets=[sock],
        uvicorn_config={"log_level": "warning"},
    )


if __name__ == "__main__":
    main()
