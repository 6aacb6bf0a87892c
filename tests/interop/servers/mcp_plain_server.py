"""Interop target: the official Python SDK (PyPI ``mcp`` 2.x) ``MCPServer`` with no tasks at all.

It serves both protocol eras the SDK supports (the 2025-11-25 handshake and the
stateless 2026-07-28 envelope) and implements neither the legacy ``tasks``
capability nor the ``io.modelcontextprotocol/tasks`` extension. Usage::

    python mcp_plain_server.py stdio
    python mcp_plain_server.py http [--port 0]

HTTP binds 127.0.0.1 only. With ``--port 0`` the OS picks a free port; the first
stdout line is::

    LISTENING http://127.0.0.1:<port>/mcp

Tools: ``greet`` (instant) and ``slow_compute`` (sleeps ``seconds``), both plain.
"""

from __future__ import annotations

import argparse
import asyncio
import socket
import sys

from mcp.server.mcpserver import MCPServer

server = MCPServer("mcp-plain-interop", version="0.0.0", log_level="WARNING")


@server.tool()
def greet(name: str = "world") -> str:
    """Answers at once."""
    return f"Hello, {name}!"


@server.tool()
async def slow_compute(seconds: float = 0.5) -> str:
    """Sleeps, then answers (no task support)."""
    await asyncio.sleep(seconds)
    return f"computed after {seconds}s"


def _serve_http(port: int) -> None:
    import anyio
    import uvicorn

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    sock.listen(128)
    bound = sock.getsockname()[1]
    app = server.streamable_http_app(streamable_http_path="/mcp", host="127.0.0.1")
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
        server.run("stdio")
    else:
        _serve_http(args.port)


if __name__ == "__main__":
    main()
