"""Running the HTTP transport: bind the socket, serve ``HttpApp`` on uvicorn, print the READY line.

SIGINT / SIGTERM stop the server gracefully (open SSE streams are told to end) with status 0.
Imported only for ``--transport http``.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import socket
import sys
from collections.abc import Iterator

import uvicorn

from tasks_conformance.server.reference.hint import full_suite_command
from tasks_conformance.server.reference.http_app import ENDPOINT, HttpApp
from tasks_conformance.server.reference.server import ReferenceServer


class _UvicornServer(uvicorn.Server):
    """uvicorn without its signal re-raise: SIGINT/SIGTERM end the process with status 0."""

    def __init__(self, config: uvicorn.Config, app: HttpApp, sock: socket.socket) -> None:
        super().__init__(config)
        self._app = app
        self._sock = sock

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        loop = asyncio.get_running_loop()
        installed: list[signal.Signals] = []
        for sig in (signal.SIGINT, signal.SIGTERM):
            try:
                loop.add_signal_handler(sig, self._on_signal)
                installed.append(sig)
            except (NotImplementedError, RuntimeError, ValueError):
                pass
        try:
            yield
        finally:
            for sig in installed:
                loop.remove_signal_handler(sig)

    def _on_signal(self) -> None:
        if self.should_exit:
            self.force_exit = True
        self.should_exit = True
        self._app.begin_shutdown()

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets)
        if self.started and not self.should_exit:
            host, port = self._sock.getsockname()[:2]
            shown = f"[{host}]" if ":" in host else host
            url = f"http://{shown}:{port}{ENDPOINT}"
            sys.stdout.write(f"READY {url}\nRUN {full_suite_command(['--url', url])}\n")
            sys.stdout.flush()


def _bind(host: str, port: int, *, nodelay: bool = True) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # proto=IPPROTO_TCP matters: asyncio sets TCP_NODELAY only on sockets whose proto says TCP
    # (accepted sockets inherit it), and uvicorn's h11 protocol writes a response's head and its
    # body separately, so without it every keep-alive response waits ~40 ms for a delayed ACK
    # of a client that does not ask for quick ones. --no-tcp-nodelay wants exactly that stall.
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP if nodelay else 0)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.set_inheritable(True)
    return sock


async def serve_http(server: ReferenceServer) -> int:
    config = server.config
    try:
        sock = _bind(config.host, config.port, nodelay=config.tcp_nodelay)
    except OSError as exc:
        print(f"reference server: cannot listen on {config.host}:{config.port}: {exc}", file=sys.stderr)
        return 1
    app = HttpApp(server)
    uv_config = uvicorn.Config(
        app,
        lifespan="off",
        log_config=None,
        log_level="warning",
        access_log=False,
        http="h11",
        ws="none",
        timeout_graceful_shutdown=2,
    )
    uv_server = _UvicornServer(uv_config, app, sock)
    await server.start()
    try:
        await uv_server.serve(sockets=[sock])
    finally:
        await server.aclose()
        sock.close()
    return 0
