"""Command-line flags of the reference server and the frozen config they produce."""

from __future__ import annotations

import argparse
import os
from dataclasses import dataclass
from typing import Literal, cast

from tasks_conformance.core.eras import SERVE_ERAS, EraOrBoth

# The environment variable that stands in for --task-store when the flag is not given.
TASK_STORE_ENV = "TASKS_CONFORMANCE_TASK_STORE"
Transport = Literal["stdio", "http", "tcp", "unix"]


@dataclass(frozen=True)
class ServerConfig:
    transport: Transport = "stdio"
    host: str = "127.0.0.1"
    port: int = 0
    task_duration_ms: int = 150
    poll_interval_ms: int = 100
    ttl_ms: int = 60_000
    era: EraOrBoth = "both"
    list_page_size: int = 50  # legacy tasks/list: tasks per page (a fixture pages smaller)
    unix_path: str | None = None
    # HTTP: when any is given, every request needs "Authorization: Bearer <one of them>", and a
    # 2026-07-28 task belongs to the token that created it (S-EXT-MUST-23).
    bearer_tokens: tuple[str, ...] = ()
    # HTTP: leave Nagle's algorithm on, as Python's http.server family does (see http_serve._bind).
    tcp_nodelay: bool = True
    # Bounds (not flags): nothing in the server waits or buffers without a limit.
    max_line_bytes: int = 4 * 1024 * 1024
    max_body_bytes: int = 4 * 1024 * 1024
    max_tasks: int = 10_000
    max_running_tasks: int = 256
    max_sessions: int = 1_000
    max_in_flight: int = 256
    max_wait_s: float = 600.0  # tasks/result blocking, listen streams, input waits
    ask_timeout_s: float = 300.0  # a server->client request (legacy elicitation)
    max_tool_duration_ms: int = 600_000
    body_read_timeout_s: float = 30.0
    # --task-store FILE: keep confirmed task states in a journal that survives a restart (journal.py).
    task_store: str | None = None

    @property
    def legacy_enabled(self) -> bool:
        return self.era in ("both", "legacy")

    @property
    def extension_enabled(self) -> bool:
        return self.era in ("both", "extension")


def _non_negative_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be >= 0: {value}")
    return value


def _port(text: str) -> int:
    value = _non_negative_int(text)
    if value > 65535:
        raise argparse.ArgumentTypeError(f"not a TCP port: {value}")
    return value


def build_parser(prog: str = "python -m tasks_conformance.server.reference") -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog=prog,
        description="Reference MCP server for MCP Tasks: the 2025-11-25 legacy wire and the "
        "io.modelcontextprotocol/tasks extension (2026-07-28), on stdio or Streamable HTTP.",
    )
    # The one declaration of these flags: `tasks-conformance serve-reference` builds its options from
    # this parser (settings/command_line.takes_parser), so help, metavars and defaults are written here.
    p.add_argument("--transport", choices=("stdio", "http", "tcp", "unix"), default="stdio",
                   help="stdio; http = Streamable HTTP at /mcp; tcp / unix = newline-delimited JSON-RPC on a socket. "
                   "A listening transport prints a READY line, then the command that runs the whole suite against "
                   "the server")
    p.add_argument("--host", default="127.0.0.1", metavar="HOST", help="HTTP/TCP bind address")
    p.add_argument("--port", type=_port, default=0, metavar="N", help="HTTP/TCP port; 0 picks an ephemeral port")
    p.add_argument("--unix-path", default=None, metavar="PATH",
                   help="Socket path for --transport unix (default: a file in the temp directory)")
    p.add_argument("--task-duration-ms", type=_non_negative_int, default=150, metavar="MS",
                   help="Default run time of the task-capable tools")
    p.add_argument("--poll-interval-ms", type=_non_negative_int, default=100, metavar="MS",
                   help="pollIntervalMs / pollInterval announced on tasks")
    p.add_argument("--ttl-ms", type=_non_negative_int, default=60_000, metavar="MS", help="Task time-to-live in ms")
    p.add_argument("--era", choices=SERVE_ERAS, default="both",
                   help="Which protocol eras to serve: both, 2025-11-25 only (legacy) or 2026-07-28 only (extension)")
    p.add_argument("--bearer-token", dest="bearer_tokens", action="append", default=[], metavar="TOKEN",
                   help="HTTP: accept this bearer token (repeatable); with any, requests need one and each token sees "
                   "only its own tasks")
    p.add_argument("--no-tcp-nodelay", dest="tcp_nodelay", action="store_false",
                   help="HTTP: keep Nagle's algorithm on, as Python's http.server family does; a response's head and "
                   "body go out in two writes, so a client that delays its ACKs waits about 40 ms for each body")
    p.add_argument("--task-store", default=None, metavar="FILE",
                   help="Keep every confirmed task state in this journal (JSON lines, fsync'd) and replay it at "
                   "start, so tasks survive a restart (default: $TASKS_CONFORMANCE_TASK_STORE; none: tasks live in "
                   "memory)")
    return p


def config_from_namespace(ns: argparse.Namespace) -> ServerConfig:
    return ServerConfig(
        transport=cast(Transport, ns.transport),
        host=str(ns.host),
        port=int(ns.port),
        task_duration_ms=int(ns.task_duration_ms),
        poll_interval_ms=int(ns.poll_interval_ms),
        ttl_ms=int(ns.ttl_ms),
        era=cast(EraOrBoth, ns.era),
        unix_path=ns.unix_path,
        bearer_tokens=tuple(ns.bearer_tokens),
        tcp_nodelay=bool(ns.tcp_nodelay),
        task_store=ns.task_store or os.environ.get(TASK_STORE_ENV) or None,  # read when parsed, not built
    )


def parse_args(argv: list[str] | None = None) -> ServerConfig:
    return config_from_namespace(build_parser().parse_args(argv))
