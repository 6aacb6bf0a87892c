"""TCP and Unix-socket transports: newline-delimited JSON-RPC, exactly as on stdio.

Each connection is its own peer (its own legacy session after ``initialize``), like one stdio
process. Prints ``READY tcp://127.0.0.1:<port>`` or ``READY unix:<path>`` once listening.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import socket
import sys
import tempfile
from collections.abc import Awaitable, Callable

from tasks_conformance.server.reference.context import StreamClosed
from tasks_conformance.server.reference.hint import full_suite_command
from tasks_conformance.server.reference.lines import LineConnection, LineSplitter
from tasks_conformance.server.reference.server import ReferenceServer

_MAX_WRITE_BUFFER = 16 * 1024 * 1024


class SocketConnection(LineConnection):
    def __init__(
        self, server: ReferenceServer, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, kind: str
    ) -> None:
        super().__init__(server)
        self.transport_name = "tcp" if kind == "tcp" else "unix"
        self._reader = reader
        self._writer = writer

    def enqueue(self, data: bytes) -> None:
        if self._writer.is_closing():
            raise StreamClosed("connection closed")
        if self._writer.transport.get_write_buffer_size() > _MAX_WRITE_BUFFER:
            self._writer.close()  # the client is not reading: drop it rather than buffer forever
            raise StreamClosed("client is not reading")
        self._writer.write(data)

    async def run(self, stop: asyncio.Event) -> None:
        splitter = LineSplitter(self.server.config.max_line_bytes)
        stop_wait = asyncio.create_task(stop.wait())
        eof = False
        try:
            while True:
                read = asyncio.create_task(self._reader.read(65536))
                done, _ = await asyncio.wait({read, stop_wait}, return_when=asyncio.FIRST_COMPLETED)
                if read not in done:
                    read.cancel()
                    break
                try:
                    chunk = read.result()
                except (ConnectionError, OSError):
                    chunk = b""
                if not chunk:
                    for item in splitter.end():
                        self.on_item(item)
                    eof = True
                    break
                for item in splitter.feed(chunk):
                    self.on_item(item)
        finally:
            stop_wait.cancel()
            await self.finish(eof=eof)
            self._writer.close()
            with contextlib.suppress(ConnectionError, OSError):
                await asyncio.wait_for(self._writer.wait_closed(), 2.0)


async def serve_sockets(server: ReferenceServer) -> int:
    """Listen on TCP (``--transport tcp``) or a Unix socket (``--transport unix``) until a signal."""
    config = server.config
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
            loop.add_signal_handler(sig, stop.set)
    connections: set[asyncio.Task[None]] = set()

    def make_handler(kind: str) -> Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]:
        async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            task = asyncio.current_task()
            if task is not None:
                connections.add(task)
            try:
                await SocketConnection(server, reader, writer, kind).run(stop)
            finally:
                if task is not None:
                    connections.discard(task)

        return handle

    await server.start()
    path: str | None = None
    try:
        if config.transport == "unix":
            path = config.unix_path or os.path.join(tempfile.gettempdir(), f"tasks-conformance-{os.getpid()}.sock")
            with contextlib.suppress(FileNotFoundError):
                os.unlink(path)
            listener = await asyncio.start_unix_server(make_handler("unix"), path=path)
            ready = f"READY unix:{path}\nRUN {full_suite_command(['--unix', path])}"
        else:
            family = socket.AF_INET6 if ":" in config.host else socket.AF_INET
            listener = await asyncio.start_server(make_handler("tcp"), config.host, config.port, family=family)
            host, port = listener.sockets[0].getsockname()[:2]
            shown = f"[{host}]" if ":" in host else host
            ready = f"READY tcp://{shown}:{port}\nRUN {full_suite_command(['--tcp', f'{shown}:{port}'])}"
    except OSError as exc:
        print(f"reference server: cannot listen: {exc}", file=sys.stderr)
        await server.aclose()
        return 1
    sys.stdout.write(ready + "\n")
    sys.stdout.flush()
    try:
        await stop.wait()
    finally:
        listener.close()
        if connections:
            await asyncio.wait(set(connections), timeout=3.0)
        for task in list(connections):
            task.cancel()
        await server.aclose()
        if path is not None:
            with contextlib.suppress(OSError):
                os.unlink(path)
    return 0
