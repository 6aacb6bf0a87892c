"""The bundled reference MCP server: both tasks wires, on stdio or Streamable HTTP.

``python -m tasks_conformance.server.reference --transport stdio|http|tcp|unix [--host H] [--port N]
[--unix-path P] [--task-duration-ms N] [--poll-interval-ms N] [--ttl-ms N] [--era both|legacy|extension]``

- era ``both`` (default): ``initialize`` opens a 2025-11-25 session (legacy tasks: ``params.task``,
  ``tasks/result``, ``tasks/list``); a request whose ``params._meta`` names
  ``io.modelcontextprotocol/protocolVersion`` is served on the 2026-07-28 rules with the
  ``io.modelcontextprotocol/tasks`` extension.
- ``legacy`` behaves like a 2025-11-25-only server, ``extension`` like a 2026-07-28-only one.
- HTTP prints ``READY http://127.0.0.1:<port>/mcp`` once listening (endpoint ``/mcp``); TCP prints
  ``READY tcp://127.0.0.1:<port>``, Unix ``READY unix:<path>`` (newline-delimited JSON-RPC, as stdio).

Tools (``tools.py``): our own (echo, slow_compute, long_job, tool_error, rpc_error, confirm_action,
destructive_op) and, listed after them, the fixture tools that the official MCP conformance suite
(``@modelcontextprotocol/conformance``) calls by name (greet, failing_job, protocol_error_job,
confirm_delete, multi_input, test_tool_with_task, test_missing_capability,
test_streaming_elicitation, test_logging_tool); tools of one kind share one implementation.

``ReferenceServer`` (in ``server.py``) documents the hook methods that fixture servers override
to break exactly one rule. Only the stdlib is imported unless ``--transport http``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tasks_conformance.server.reference.config import ServerConfig, build_parser, parse_args

if TYPE_CHECKING:
    from tasks_conformance.server.reference.server import ReferenceServer

__all__ = ["ReferenceServer", "ServerConfig", "build_parser", "parse_args", "run", "serve"]


def __getattr__(name: str) -> Any:
    # The server is imported when it is used, not with the flags: `tasks-conformance serve-reference`
    # reads its options from build_parser() on every start of the command line.
    if name == "ReferenceServer":
        from tasks_conformance.server.reference.server import ReferenceServer

        return ReferenceServer
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def run(server: ReferenceServer) -> int:
    """Run ``server`` on the transport its config names until EOF (stdio) or SIGINT/SIGTERM."""
    import asyncio

    if server.config.transport == "http":
        from tasks_conformance.server.reference.http_serve import serve_http

        runner = serve_http
    elif server.config.transport in ("tcp", "unix"):
        from tasks_conformance.server.reference.sockets import serve_sockets

        runner = serve_sockets
    else:
        from tasks_conformance.server.reference.stdio import run_stdio

        runner = run_stdio
    try:
        return asyncio.run(runner(server))
    except KeyboardInterrupt:
        return 0


def serve(argv: list[str] | None = None, *, server_class: type[ReferenceServer] | None = None) -> int:
    """Parse the reference-server flags (``argv`` without the program name) and run until stopped
    (``server_class``: the reference server, or a fixture's subclass of it)."""
    if server_class is None:
        from tasks_conformance.server.reference.server import ReferenceServer

        server_class = ReferenceServer
    return run(server_class(parse_args(argv)))
