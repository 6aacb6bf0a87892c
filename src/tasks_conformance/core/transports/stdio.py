"""stdio: spawn the server, newline-delimited JSON on its stdin/stdout, keep its stderr tail.

The child runs in its own process group so that a server started through a wrapper (npx, a
shell script) is stopped with everything it started. On close: end stdin, give it a moment,
terminate the group, then kill it, and always reap.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
from collections import deque
from collections.abc import Sequence

import anyio
from anyio.abc import ByteReceiveStream, ByteSendStream, Process

from tasks_conformance.core.causes import CauseKind
from tasks_conformance.core.errors import ConnectFailed
from tasks_conformance.core.transports.base import Closed
from tasks_conformance.core.transports.stream import StreamTransport
from tasks_conformance.core.wirelog import WireLog

STDERR_TAIL_BYTES = 8 * 1024
# How much of the first non-JSON stdout line a failure names (escaped characters).
NOISE_HEAD_CHARS = 80
_GRACE_AFTER_STDIN_CLOSE_S = 0.3
_GRACE_AFTER_TERMINATE_S = 1.0


class StdioTransport(StreamTransport):
    kind = "stdio"
    channel = "stdio"

    def __init__(
        self,
        wire: WireLog,
        *,
        command: Sequence[str],
        cwd: str | None = None,
        env: dict[str, str] | None = None,
        max_message_bytes: int,
    ) -> None:
        super().__init__(wire, max_message_bytes=max_message_bytes)
        self.command = list(command)
        self.cwd = cwd
        self.env = env
        self.process: Process | None = None
        self._stderr_tail: deque[bytes] = deque()
        self._stderr_size = 0
        self._stderr_trimmed = False  # the tail lost its oldest bytes
        self._stderr_done = anyio.Event()
        self._closing = False
        self._exit_before_close: int | None = None

    @property
    def starts_process(self) -> bool:
        return True

    def fresh(self) -> StdioTransport:
        """The same command again: a second server process."""
        return StdioTransport(self.wire, command=self.command, cwd=self.cwd, env=self.env,
                              max_message_bytes=self.max_message_bytes)

    async def _open(self) -> tuple[ByteReceiveStream, ByteSendStream]:
        full_env = dict(os.environ)
        if self.env:
            full_env.update(self.env)
        try:
            self.process = await anyio.open_process(
                self.command,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                cwd=self.cwd,
                env=full_env,
                start_new_session=True,
            )
        except FileNotFoundError as exc:
            raise ConnectFailed(f"cannot start the server: command not found: {self.command[0]!r}") from exc
        except PermissionError as exc:
            raise ConnectFailed(
                f"cannot start the server: {self.command[0]!r} is not executable ({exc.strerror})"
            ) from exc
        except NotADirectoryError as exc:
            raise ConnectFailed(f"cannot start the server: {exc}") from exc
        except OSError as exc:
            raise ConnectFailed(f"cannot start the server {self.command[0]!r}: {exc}") from exc
        assert self.process.stdout is not None and self.process.stdin is not None
        return self.process.stdout, self.process.stdin

    async def start(self) -> None:
        await super().start()
        assert self._tg is not None and self.process is not None and self.process.stderr is not None
        self._tg.start_soon(self._stderr_loop, self.process.stderr)
        self._tg.start_soon(self._watch_exit)

    async def _watch_exit(self) -> None:
        """A server that exits while a grandchild still holds its stdout would never give us
        EOF; the exit itself ends the connection (after a moment for the last lines)."""
        assert self.process is not None
        await self.process.wait()
        await anyio.sleep(0.2)
        if self._closed_reason is None:
            self._closed_reason = "the server process exited"
            await self._deliver(Closed(reason=await self._describe_close(self._closed_reason)))

    async def _stderr_loop(self, stream: ByteReceiveStream) -> None:
        try:
            while True:
                chunk = await stream.receive(16 * 1024)
                self._stderr_tail.append(chunk)
                self._stderr_size += len(chunk)
                while self._stderr_size > STDERR_TAIL_BYTES and len(self._stderr_tail) > 1:
                    self._stderr_size -= len(self._stderr_tail.popleft())
                    self._stderr_trimmed = True
        except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            pass
        finally:
            self._stderr_done.set()

    def stderr_tail(self, limit: int = 2000) -> str:
        # Redact first, then cut: a cut through a secret would hide it from the redactor. The
        # front line of a trimmed buffer may itself start mid-secret, so it is left out.
        text = self.wire.redactor.text(b"".join(self._stderr_tail).decode("utf-8", "replace"))
        cut = len(text) > limit or self._stderr_trimmed
        text = text[-limit:]
        newline = text.find("\n")
        if cut and 0 <= newline < len(text) - 1:
            text = text[newline + 1 :]
        return text.strip()

    def stdout_noise(self) -> str:
        """What the server wrote on stdout that is not JSON (a print, a banner, a log line),
        named by its first line: the likeliest reason a stdio server that runs never answers."""
        first = next((f for f in self.wire if f.direction == "in" and f.channel == self.channel and f.data
                      and f.json() is None), None)
        if first is None:
            return ""
        # Redact first, then cut (a cut through a secret would hide it from the redactor); the
        # head is escaped so that control characters and terminal escapes print as text.
        text = self.wire.redactor.text(first.data[:64 * 1024].decode("utf-8", "replace"))
        head = ""
        for ch in text:
            piece = json.dumps(ch)[1:-1]
            if len(head) + len(piece) > NOISE_HEAD_CHARS:
                head += "…"
                break
            head += piece
        return f'stdout carried output that is not JSON, first line: "{head}"'

    def problem_kind(self) -> CauseKind | None:
        return CauseKind.STDOUT_NOT_JSON if self.stdout_noise() else None

    def failure_context(self) -> str:
        parts: list[str] = []
        if self.process is not None and self.process.returncode is not None:
            parts.append(f"server exited with code {self.process.returncode}")
        noise = self.stdout_noise()
        if noise:
            parts.append(noise)
        tail = self.stderr_tail(600)
        if tail:
            parts.append("stderr tail: " + tail)
        return "; ".join(parts)

    async def _describe_close(self, reason: str) -> str:
        # Give the process and its stderr a moment to finish so the report can show both.
        if self.process is not None:
            with anyio.move_on_after(0.5):
                await self.process.wait()
            with anyio.move_on_after(0.2):
                await self._stderr_done.wait()
        ctx = self.failure_context()
        return f"{reason}; {ctx}" if ctx else reason

    def exit_code(self) -> int | None:
        return self._exit_before_close if self._closing else (self.process.returncode if self.process else None)

    def output_tail(self) -> str:
        return self.stderr_tail(600)

    async def aclose(self) -> None:
        proc = self.process
        # Its own exit code, if it exited before we stop it (ours would be a signal's).
        self._closing, self._exit_before_close = True, proc.returncode if proc is not None else None
        if proc is not None:
            with anyio.CancelScope(shield=True):
                if proc.stdin is not None:
                    try:
                        await proc.stdin.aclose()
                    except (OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
                        pass
                await self._stop_process(proc)
        await self._close_tasks()

    async def _stop_process(self, proc: Process) -> None:
        with anyio.move_on_after(_GRACE_AFTER_STDIN_CLOSE_S):
            await proc.wait()
        if proc.returncode is None:
            self._signal_group(proc, signal.SIGTERM)
            with anyio.move_on_after(_GRACE_AFTER_TERMINATE_S):
                await proc.wait()
        if proc.returncode is None:
            self._signal_group(proc, signal.SIGKILL)
            with anyio.move_on_after(5):
                await proc.wait()
        else:
            # The leader is gone; make sure nothing it started in its group lives on.
            self._signal_group(proc, signal.SIGKILL)
        try:
            # Closes the pipes and the asyncio subprocess transport with them (reaped above).
            with anyio.move_on_after(5):
                await proc.aclose()
        except (OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
            pass

    @staticmethod
    def _signal_group(proc: Process, sig: signal.Signals) -> None:
        try:
            os.killpg(proc.pid, sig)
        except (ProcessLookupError, PermissionError):
            try:
                proc.send_signal(sig)
            except ProcessLookupError:
                pass
