"""stdio transport: newline-delimited JSON-RPC on the process's stdin/stdout.

Reading and writing happen on two small threads using raw ``os.read``/``os.write`` (no locks
held at interpreter shutdown, no non-blocking mode forced on an inherited tty). Lines are
capped (``max_line_bytes``) and the write queue is bounded.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import queue
import signal
import sys
import threading

from tasks_conformance.server.reference.context import StreamClosed
from tasks_conformance.server.reference.lines import Item, LineConnection, LineSplitter
from tasks_conformance.server.reference.server import ReferenceServer

_WRITE_QUEUE_MAX = 4096


class StdioConnection(LineConnection):
    def __init__(self, server: ReferenceServer, *, infd: int = 0, outfd: int = 1) -> None:
        super().__init__(server)
        self.infd = infd
        self.outfd = outfd
        self._write_q: queue.Queue[bytes | None] = queue.Queue(maxsize=_WRITE_QUEUE_MAX)
        self._broken = False
        self._stop: asyncio.Event | None = None

    def enqueue(self, data: bytes) -> None:
        if self._broken:
            raise StreamClosed("stdout is closed")
        try:
            self._write_q.put_nowait(data)
        except queue.Full:
            self._broken = True
            print("reference server: client is not reading stdout; giving up", file=sys.stderr)
            if self._stop is not None:
                self._stop.set()
            raise StreamClosed("write queue full") from None

    # ------------------------------------------------------------------ threads
    def _writer(self, loop: asyncio.AbstractEventLoop) -> None:
        while True:
            data = self._write_q.get()
            if data is None:
                return
            view = memoryview(data)
            try:
                while view:
                    written = os.write(self.outfd, view)
                    view = view[written:]
            except OSError:
                self._broken = True
                with contextlib.suppress(RuntimeError):
                    loop.call_soon_threadsafe(self._stop_soon)
                return

    def _stop_soon(self) -> None:
        if self._stop is not None:
            self._stop.set()

    def _reader(self, loop: asyncio.AbstractEventLoop, inbox: asyncio.Queue[Item | None]) -> None:
        splitter = LineSplitter(self.server.config.max_line_bytes)

        def deliver(item: Item | None) -> bool:
            try:
                asyncio.run_coroutine_threadsafe(inbox.put(item), loop).result()
            except (Exception, asyncio.CancelledError):
                return False
            return True

        while True:
            try:
                chunk = os.read(self.infd, 65536)
            except OSError:
                chunk = b""
            if not chunk:
                for item in splitter.end():
                    deliver(item)
                deliver(None)
                return
            for item in splitter.feed(chunk):
                if not deliver(item):
                    return

    # ------------------------------------------------------------------ main loop
    async def run(self) -> int:
        loop = asyncio.get_running_loop()
        self._stop = asyncio.Event()
        inbox: asyncio.Queue[Item | None] = asyncio.Queue(maxsize=64)
        for sig in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
                loop.add_signal_handler(sig, self._stop.set)
        writer = threading.Thread(target=self._writer, args=(loop,), name="stdio-writer", daemon=True)
        reader = threading.Thread(target=self._reader, args=(loop, inbox), name="stdio-reader", daemon=True)
        writer.start()
        reader.start()
        await self.server.start()
        eof = False
        stop_wait = asyncio.create_task(self._stop.wait())
        try:
            while True:
                get = asyncio.create_task(inbox.get())
                done, _ = await asyncio.wait({get, stop_wait}, return_when=asyncio.FIRST_COMPLETED)
                if get not in done:
                    get.cancel()
                    break
                item = get.result()
                if item is None:
                    eof = True
                    break
                self.on_item(item)
        finally:
            stop_wait.cancel()
            await self.finish(eof=eof)
            await self.server.aclose()
            with contextlib.suppress(queue.Full):
                self._write_q.put_nowait(None)
            await loop.run_in_executor(None, writer.join, 2.0)
        return 0


async def run_stdio(server: ReferenceServer) -> int:
    return await StdioConnection(server).run()
