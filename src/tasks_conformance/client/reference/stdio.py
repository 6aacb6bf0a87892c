"""The reference client's JSON-RPC peer over stdio: it spawns the server (in the client's own
process group, so whoever stops the client stops the server too), writes one JSON message a line
on its stdin and reads its stdout line by line, matching responses to requests by id and handing
the server's own requests (an elicitation while a 2025-11-25 `tasks/result` waits) to the flow.
Headers do not exist on stdio: a flow's are dropped.

Every wait is bounded by the call's timeout, every line by MAX_REPLY_BYTES, and the server is
always reaped: stdin closed, then SIGTERM, then SIGKILL.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any

import anyio
from anyio.abc import Process, TaskGroup

from tasks_conformance.client.reference.wire import JSON, MAX_REPLY_BYTES, ClientFailure, Headers, Link

# After stdin is closed, and again after SIGTERM: 2 s, as the Python SDK's stdio client waits
# (PROCESS_TERMINATION_TIMEOUT); a server that ends with its stdin costs none of it.
CLOSE_GRACE_S = 2.0


class StdioLink(Link):
    def __init__(self, process: Process, tg: TaskGroup, timeout_s: float) -> None:
        super().__init__(timeout_s)
        self.process, self.tg = process, tg
        self.waiting: dict[int, anyio.Event] = {}
        self.replies: dict[int, JSON] = {}
        self.closed: str | None = None  # why the server's stdout ended
        self.write_lock = anyio.Lock()

    async def exchange(self, body: JSON, headers: Headers, want: int | None) -> tuple[JSON, Mapping[str, str]]:
        if want is not None:
            self.waiting[want] = anyio.Event()
        await self.write(body)
        if want is None:
            return {}, {}
        try:
            with anyio.move_on_after(self.timeout_s):
                await self.waiting[want].wait()
        finally:  # a request cancelled in flight (its wait abandoned) leaves nothing behind
            self.waiting.pop(want, None)
        reply = self.replies.pop(want, None)
        if reply is None:
            raise ClientFailure(self.closed or f"no reply within {self.timeout_s:g} s")
        return reply, {}

    async def write(self, body: JSON) -> None:
        if self.closed is not None or self.process.stdin is None:
            raise ClientFailure(self.closed or "the server's stdin is closed")
        try:
            async with self.write_lock:
                await self.process.stdin.send(json.dumps(body, separators=(",", ":")).encode() + b"\n")
        except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
            raise ClientFailure("the server closed its stdin") from None

    async def read(self) -> None:
        """The server's stdout, line by line, until it ends."""
        assert self.process.stdout is not None
        pending = bytearray()
        try:
            async for chunk in self.process.stdout:
                pending.extend(chunk)
                *lines, rest = bytes(pending).split(b"\n")
                if len(rest) > MAX_REPLY_BYTES:
                    self.end(f"a line over {MAX_REPLY_BYTES} bytes from the server")
                    return
                pending[:] = rest
                for line in lines:
                    self.take(line)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
            pass
        self.end("the server closed its stdout")

    def take(self, line: bytes) -> None:
        try:
            message: Any = json.loads(line)
        except (ValueError, RecursionError):
            return  # not a JSON-RPC line: a server's stray output is not ours to answer
        if not isinstance(message, dict):
            return
        rid = message.get("id")
        if "method" not in message and ("result" in message or "error" in message):
            if isinstance(rid, int) and not isinstance(rid, bool) and rid in self.waiting:
                self.replies.setdefault(rid, message)
                self.waiting[rid].set()
        elif isinstance(message.get("method"), str) and "id" in message and self.on_server_request is not None:
            self.tg.start_soon(self.server_request, message)

    async def server_request(self, message: JSON) -> None:
        assert self.on_server_request is not None
        with contextlib.suppress(ClientFailure):
            await self.on_server_request(message)

    def end(self, why: str) -> None:
        self.closed = self.closed or why
        for event in self.waiting.values():
            event.set()


@contextlib.asynccontextmanager
async def stdio_link(command: Sequence[str], timeout_s: float) -> AsyncIterator[StdioLink]:
    """Spawn the server for the block; on leaving, close its stdin and reap it."""
    if not command:
        raise ClientFailure("the server command is empty")
    try:
        process = await anyio.open_process(list(command), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                           stderr=None)
    except OSError as exc:
        raise ClientFailure(f"cannot start the server {command[0]!r}: {exc.strerror or exc}") from None
    try:
        async with anyio.create_task_group() as tg:
            link = StdioLink(process, tg, timeout_s)
            tg.start_soon(link.read)
            try:
                yield link
            finally:
                tg.cancel_scope.cancel()
    finally:
        with anyio.CancelScope(shield=True):
            await _reap(process)


async def _reap(process: Process) -> None:
    if process.stdin is not None:
        with contextlib.suppress(Exception):
            await process.stdin.aclose()
    for stop in (None, process.terminate, process.kill):
        if stop is not None:
            with contextlib.suppress(ProcessLookupError):
                stop()
        with anyio.move_on_after(CLOSE_GRACE_S):
            await process.wait()
            break
    with contextlib.suppress(Exception):
        await process.aclose()
