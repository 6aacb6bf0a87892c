"""Interop target: FastMCP 3 (PyPI ``fastmcp[tasks]`` 3.4.11, on ``mcp`` 1.30.0) with its SEP-1686
background tasks (legacy 2025-11-25 wire), on Docket's in-memory backend (``memory://``, no Redis).
Runs in ``tests/interop/.venv-legacy-clients``. Usage::

    python fastmcp3_tasks_server.py stdio
    python fastmcp3_tasks_server.py http [--port 0]

HTTP binds 127.0.0.1 only. With ``--port 0`` the OS picks a free port; the first stdout line is::

    LISTENING http://127.0.0.1:<port>/mcp

What a user writes: ``@mcp.tool(task=True)`` (optional) or ``task=TaskConfig(mode=…)`` on async
functions. Tools:

- ``greet`` (no task support): answers at once.
- ``slow_compute`` (``TaskConfig(mode="optional", poll_interval=200 ms)``; the default interval is
  5 s): sleeps ``seconds`` (default 1), then answers.
- ``required_compute`` (``mode="required"``): the same body.
- ``failing_job`` (optional): raises after 0.2 s.
- ``confirm_delete`` (optional): asks the client through ``ctx.elicit``, then answers.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
import sys
from dataclasses import dataclass
from datetime import timedelta

# Keep the Docket backend in memory whatever the environment says.
os.environ["FASTMCP_DOCKET_URL"] = "memory://"
os.environ.setdefault("FASTMCP_SHOW_SERVER_BANNER", "false")
os.environ.setdefault("FASTMCP_LOG_LEVEL", "WARNING")
os.environ.setdefault("FASTMCP_CHECK_FOR_UPDATES", "off")

from fastmcp import Context, FastMCP
from fastmcp.server.tasks import TaskConfig

mcp = FastMCP("fastmcp3-tasks-interop", version="0.0.0")
FAST = timedelta(milliseconds=200)


@mcp.tool
def greet(name: str = "world") -> str:
    """Answers at once."""
    return f"hello {name}"


@mcp.tool(task=TaskConfig(mode="optional", poll_interval=FAST))
async def slow_compute(seconds: float = 1.0) -> str:
    """Works for `seconds` seconds, then answers."""
    await asyncio.sleep(seconds)
    return f"computed after {seconds:g}s"


@mcp.tool(task=TaskConfig(mode="required", poll_interval=FAST))
async def required_compute(seconds: float = 1.0) -> str:
    """The same, only as a task."""
    await asyncio.sleep(seconds)
    return f"computed after {seconds:g}s"


@mcp.tool(task=TaskConfig(mode="optional", poll_interval=FAST))
async def failing_job() -> str:
    """Works briefly, then raises."""
    await asyncio.sleep(0.2)
    raise RuntimeError("boom")


@dataclass
class Confirmation:
    confirm: bool


@mcp.tool(task=TaskConfig(mode="optional", poll_interval=FAST))
async def confirm_delete(filename: str, ctx: Context) -> str:
    """Asks before deleting a file."""
    answer = await ctx.elicit(f"Delete {filename}?", response_type=Confirmation)
    if answer.action == "accept" and answer.data.confirm:
        return f"deleted {filename}"
    return f"kept {filename}"


def _bind(port: int) -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    sock.listen(128)
    sock.set_inheritable(True)
    return sock


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
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
    mcp.run(transport="http", show_banner=False, host="127.0.0.1", port=port, path="/mcp", sockets=[sock],
            uvicorn_config={"log_level": "warning"})


if __name__ == "__main__":
    main()
