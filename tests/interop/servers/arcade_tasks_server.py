"""Interop target: Arcade's MCP framework (PyPI ``arcade-mcp-server`` 1.32.1), an independent
implementation of 2025-11-25 tasks (its own ``TaskManager``; no ``mcp`` SDK underneath). Runs in
``tests/interop/.venv-legacy-clients``. Usage::

    python arcade_tasks_server.py stdio
    python arcade_tasks_server.py http [--port 0]

HTTP binds 127.0.0.1 only. With ``--port 0`` a free port is picked first (``MCPApp.run`` takes a
port, not a socket); once it accepts connections the first stdout line is::

    LISTENING http://127.0.0.1:<port>/mcp

What a user writes: an ``MCPApp`` and ``@app.tool(execution=ToolExecution(taskSupport=…))``
functions; the framework advertises ``capabilities.tasks`` on 2025-11-25 sessions and runs
task-augmented calls in the background itself. Tools (Arcade names them ``<App>_<Function>``):

- ``Interop_Greet`` (no ``execution``: forbidden): answers at once.
- ``Interop_SlowCompute`` (optional): sleeps ``seconds`` (default 1), then answers.
- ``Interop_RequiredCompute`` (required): the same body.
- ``Interop_FailingJob`` (optional): raises after 0.2 s.
"""

# No `from __future__ import annotations`: Arcade reads the tools' Annotated types at run time.
import argparse
import asyncio
import os
import socket
import sys
import threading
import time
from typing import Annotated

os.environ["ARCADE_USAGE_TRACKING"] = "0"  # no usage reports

from arcade_mcp_server import MCPApp, ToolExecution

app = MCPApp(name="Interop", version="0.0.0", log_level="WARNING")


@app.tool
def greet(name: Annotated[str, "Who to greet"] = "world") -> str:
    """Answers at once."""
    return f"hello {name}"


@app.tool(execution=ToolExecution(taskSupport="optional"))
async def slow_compute(seconds: Annotated[float, "How long the work takes"] = 1.0) -> str:
    """Works for `seconds` seconds, then answers."""
    await asyncio.sleep(seconds)
    return f"computed after {seconds:g}s"


@app.tool(execution=ToolExecution(taskSupport="required"))
async def required_compute(seconds: Annotated[float, "How long the work takes"] = 1.0) -> str:
    """The same, only as a task."""
    await asyncio.sleep(seconds)
    return f"computed after {seconds:g}s"


@app.tool(execution=ToolExecution(taskSupport="optional"))
async def failing_job() -> str:
    """Works briefly, then raises."""
    await asyncio.sleep(0.2)
    raise RuntimeError("boom")


def _free_port(port: int) -> int:
    if port:
        return port
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("transport", choices=["stdio", "http"])
    parser.add_argument("--port", type=int, default=0, help="HTTP port on 127.0.0.1 (0: a free one)")
    args = parser.parse_args(argv)
    if args.transport == "stdio":
        app.run(transport="stdio")
        return
    port = _free_port(args.port)
    threading.Thread(target=_announce, args=(port,), daemon=True).start()
    app.run(transport="http", host="127.0.0.1", port=port)


def _announce(port: int) -> None:
    """Print the LISTENING line once the port accepts connections (60 s at most)."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
        except OSError:
            time.sleep(0.05)
            continue
        sys.stdout.write(f"LISTENING http://127.0.0.1:{port}/mcp\n")
        sys.stdout.flush()
        return


if __name__ == "__main__":
    main()
