"""Newline-delimited JSON-RPC over a byte stream (stdio pipes, TCP, Unix sockets)."""

from __future__ import annotations

import abc
from collections.abc import Mapping
from dataclasses import dataclass

import anyio
from anyio.abc import ByteReceiveStream, ByteSendStream, TaskGroup

from tasks_conformance.core.transports.base import Closed, Message, Transport
from tasks_conformance.core.wirelog import FrameFlag, WireLog

# Reads happen in chunks of this size.
_CHUNK = 64 * 1024
# How much of a discarded oversize line is kept, so the peer can find the id it answers.
_HEAD = 4 * 1024


@dataclass(frozen=True)
class Line:
    """One message line, without its line end."""

    data: bytes
    terminated: bool = True  # False for a last line the stream ended without a newline


@dataclass(frozen=True)
class Oversize:
    """A line longer than the message cap, skipped: its size and its first bytes."""

    size: int
    head: bytes


class LineFramer:
    """Splits a byte stream into lines, fed one chunk at a time.

    A line longer than `limit` is read on to its end and discarded (only its first bytes are
    kept), so one oversize message neither exhausts memory nor desynchronises the stream.
    Blank lines are skipped; a CR before the LF is dropped.
    """

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._buf = bytearray()
        self._discarding = 0  # >0 while skipping the rest of an oversize line: bytes skipped so far
        self._head = b""  # the first bytes of the oversize line being skipped

    def feed(self, chunk: bytes) -> list[Line | Oversize]:
        """What this chunk completes, in order."""
        out: list[Line | Oversize] = []
        start = 0
        while (end := chunk.find(b"\n", start)) >= 0:
            item = self._complete(chunk[start:end])
            if item is not None:
                out.append(item)
            start = end + 1
        self._extend(chunk[start:])
        return out

    def end(self) -> list[Line | Oversize]:
        """What the end of the stream completes: an oversize line being skipped, or a last
        line without its newline."""
        if self._discarding:
            return [Oversize(self._discarding, self._head)]
        if bytes(self._buf).strip():
            return [Line(bytes(self._buf), terminated=False)]
        return []

    def _extend(self, piece: bytes) -> None:
        if self._discarding:
            self._discarding += len(piece)
        elif len(self._buf) + len(piece) > self.limit:
            self._discarding = len(self._buf) + len(piece)
            self._head = self._head_of(piece)
            self._buf.clear()
        else:
            self._buf.extend(piece)

    def _complete(self, piece: bytes) -> Line | Oversize | None:
        if self._discarding:
            item = Oversize(self._discarding + len(piece), self._head)
            self._discarding, self._head = 0, b""
            return item
        if len(self._buf) + len(piece) > self.limit:
            item = Oversize(len(self._buf) + len(piece), self._head_of(piece))
            self._buf.clear()
            return item
        self._buf.extend(piece)
        line = bytes(self._buf)
        self._buf.clear()
        if line.endswith(b"\r"):
            line = line[:-1]
        return Line(line) if line.strip() else None

    def _head_of(self, piece: bytes) -> bytes:
        return bytes(self._buf[:_HEAD]) + piece[: max(_HEAD - len(self._buf), 0)]


class StreamTransport(Transport):
    """Shared reader/writer for transports that carry one JSON message per line."""

    channel = "stream"

    def __init__(self, wire: WireLog, *, max_message_bytes: int) -> None:
        super().__init__(wire, max_message_bytes=max_message_bytes)
        self._tg: TaskGroup | None = None
        self._writer: ByteSendStream | None = None
        self._reader: ByteReceiveStream | None = None
        self._send_lock = anyio.Lock()
        self._closed_reason: str | None = None

    async def start(self) -> None:
        self._reader, self._writer = await self._open()
        self._tg = anyio.create_task_group()
        await self._tg.__aenter__()
        self._tg.start_soon(self._read_loop, self._reader)

    @abc.abstractmethod
    async def _open(self) -> tuple[ByteReceiveStream, ByteSendStream]: ...

    async def _read_loop(self, stream: ByteReceiveStream) -> None:
        framer = LineFramer(self.max_message_bytes)
        reason = await self._read_all(stream, framer)
        for item in framer.end():
            await self._emit(item)
        if self._closed_reason is None:
            self._closed_reason = reason
            await self._deliver(Closed(reason=await self._describe_close(reason)))

    async def _read_all(self, stream: ByteReceiveStream, framer: LineFramer) -> str:
        """Read and deliver until the stream ends; return why it ended."""
        try:
            while True:
                try:
                    chunk = await stream.receive(_CHUNK)
                except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
                    return "the server closed its output stream"
                for item in framer.feed(chunk):
                    await self._emit(item)
        except OSError as exc:
            return f"reading from the server failed: {exc}"
        except Exception as exc:  # never let the reader's failure cancel the run unexplained
            return f"tasks-conformance failed reading from the server: {type(exc).__name__}: {exc}"

    async def _emit(self, item: Line | Oversize) -> None:
        if isinstance(item, Oversize):
            await self._report_oversize(item.size, item.head)
        elif item.terminated:
            await self._deliver_line(item.data)
        else:
            await self._deliver_line(item.data, note="last line had no newline", flags=(FrameFlag.NO_NEWLINE,))

    async def _report_oversize(self, size: int, head: bytes = b"") -> None:
        note = (
            f"message rejected: {size} bytes is larger than --max-message-bytes "
            f"({self.max_message_bytes} bytes); it was discarded unread"
        )
        frame = self.wire.record("in", self.channel, b"", note=note, flags=(FrameFlag.OVERSIZE,))
        await self._deliver(Message(frame=frame, head=head))

    async def _deliver_line(
        self, line: bytes, note: str | None = None, flags: tuple[FrameFlag, ...] = ()
    ) -> None:
        frame = self.wire.record("in", self.channel, line, note=note, flags=flags)
        await self._deliver(Message(frame=frame))

    async def send(
        self,
        data: bytes,
        *,
        headers: Mapping[str, str] | None = None,
        deadline_s: float = 30.0,
        note: str | None = None,
        settle: bool = False,  # a stream keeps its order: what is sent later is read later
    ) -> int:
        frame = self.wire.record("out", self.channel, data, note=note)
        if self._writer is None or self._closed_reason is not None:
            return frame.seq
        try:
            with anyio.fail_after(max(deadline_s, 0.05)):
                async with self._send_lock:
                    await self._writer.send(data + b"\n")
        except TimeoutError:
            self.wire.record("in", "event", b"", note="writing to the server timed out (it is not reading)")
        except (OSError, anyio.BrokenResourceError, anyio.ClosedResourceError) as exc:
            self.wire.record("in", "event", b"", note=f"writing to the server failed: {exc}")
        return frame.seq

    async def _describe_close(self, reason: str) -> str:
        return reason

    async def _close_tasks(self) -> None:
        if self._tg is not None:
            self._tg.cancel_scope.cancel()
            try:
                await self._tg.__aexit__(None, None, None)
            except Exception:
                pass
            self._tg = None
        self._inbound_send.close()
