"""Newline-delimited JSON-RPC over a byte stream (stdio pipes, TCP, Unix sockets)."""

from __future__ import annotations

import abc
from collections.abc import Mapping

import anyio
from anyio.abc import ByteReceiveStream, ByteSendStream, TaskGroup

from tasks_conformance.transports.base import Closed, Message, Transport
from tasks_conformance.wirelog import FrameFlag, WireLog

# Reads happen in chunks of this size. A line longer than the message cap is read on to its
# end and discarded, so one oversize message neither exhausts memory nor desynchronises the stream.
_CHUNK = 64 * 1024
# How much of a discarded oversize line is kept, so the peer can find the id it answers.
_HEAD = 4 * 1024


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
        self.oversize_messages = 0

    async def start(self) -> None:
        self._reader, self._writer = await self._open()
        self._tg = anyio.create_task_group()
        await self._tg.__aenter__()
        self._tg.start_soon(self._read_loop, self._reader)

    @abc.abstractmethod
    async def _open(self) -> tuple[ByteReceiveStream, ByteSendStream]: ...

    async def _read_loop(self, stream: ByteReceiveStream) -> None:
        reason = "the server closed its output stream"
        buf = bytearray()
        discarding = 0  # >0 while skipping the rest of an oversize line: bytes skipped so far
        head = b""  # the first bytes of the oversize line being skipped
        try:
            while True:
                try:
                    chunk = await stream.receive(_CHUNK)
                except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
                    break
                start = 0
                while True:
                    idx = chunk.find(b"\n", start)
                    if idx < 0:
                        piece = chunk[start:]
                        if discarding:
                            discarding += len(piece)
                        elif len(buf) + len(piece) > self.max_message_bytes:
                            discarding = len(buf) + len(piece)
                            head = bytes(buf[:_HEAD]) + piece[: max(_HEAD - len(buf), 0)]
                            buf.clear()
                        else:
                            buf.extend(piece)
                        break
                    piece = chunk[start:idx]
                    start = idx + 1
                    if discarding:
                        await self._report_oversize(discarding + len(piece), head)
                        discarding, head = 0, b""
                        continue
                    if len(buf) + len(piece) > self.max_message_bytes:
                        head = bytes(buf[:_HEAD]) + piece[: max(_HEAD - len(buf), 0)]
                        await self._report_oversize(len(buf) + len(piece), head)
                        buf.clear()
                        continue
                    buf.extend(piece)
                    line = bytes(buf)
                    buf.clear()
                    if line.endswith(b"\r"):
                        line = line[:-1]
                    if line.strip():
                        await self._deliver_line(line)
        except OSError as exc:
            reason = f"reading from the server failed: {exc}"
        except Exception as exc:  # never let the reader's failure cancel the run unexplained
            reason = f"tasks-conformance failed reading from the server: {type(exc).__name__}: {exc}"
        if discarding:
            await self._report_oversize(discarding, head)
        elif bytes(buf).strip():
            await self._deliver_line(bytes(buf), note="last line had no newline", flags=(FrameFlag.NO_NEWLINE,))
        if self._closed_reason is None:
            self._closed_reason = reason
            await self._deliver(Closed(reason=await self._describe_close(reason)))

    async def _report_oversize(self, size: int, head: bytes = b"") -> None:
        self.oversize_messages += 1
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
