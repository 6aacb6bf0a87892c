"""Starting the client under test for one scenario, as the official conformance suite's client
harness convention says: the server URL (over stdio: the server's command, shell-quoted) as the
last argument, the scenario in the environment.
Everything it does is evidence (exit code, stderr tail, the outcome line it printed); nothing it
does becomes a traceback of ours. It runs under a supervisor (subreaper.py): its whole process
group is stopped when it exits or times out, and then every descendant still alive, even one that
left its session, which the run reports.
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import signal
import socket
import sys
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tasks_conformance.client.lines import split_lines

OUTCOME_PREFIX = "TASKS-CONFORMANCE-OUTCOME "
TAIL_BYTES = 8 * 1024  # what a report shows of the client's stderr and stdout
MAX_LINE = 64 * 1024  # a stdout line longer than this is not read: discarded up to its newline (README: "Limits")
TOO_LONG = f"the TASKS-CONFORMANCE-OUTCOME line is longer than {MAX_LINE} bytes, the limit, and was not read"
GRACE_S = 2.0  # between SIGTERM and SIGKILL of the client's process group (and of what it left behind)
SUPERVISOR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "subreaper.py")
START_S = 10.0  # for the supervisor to start the client and say so
SWEEP_S = GRACE_S + 3.0  # for it to stop what the client left behind and say what it was
SUPERVISOR_MARGIN_S = 30.0  # its own bound: the timeout plus this, whatever the run says
MAX_CONTROL_BYTES = 4 * 1024 * 1024  # of what it says (at most 256 commands of 4 KiB)
MAX_LEFT = 256


@dataclass(frozen=True)
class ClientRun:
    """What one scenario's client process did."""

    argv: tuple[str, ...]
    started: bool  # the process could be started at all
    exit_code: int | None  # None: it did not exit by itself (timed out, then stopped)
    timed_out: bool
    duration_s: float
    stderr_tail: str
    stdout_tail: str
    outcome: dict[str, Any] | None  # the last well-formed TASKS-CONFORMANCE-OUTCOME line
    outcome_problem: str | None = None  # a malformed outcome line, said once
    start_error: str | None = None  # why it could not be started
    # The outcome line as printed (after its prefix): the one `outcome` was read from, or the
    # malformed one `outcome_problem` is about.
    outcome_line: str | None = None
    long_outcome_lines: int = 0  # outcome lines over MAX_LINE, not read (a limit the report states)
    # Descendants of the client still alive once it had ended and its group was stopped (escaped
    # from its process group or session): (pid, command line as read, unredacted). All were stopped.
    left_behind: tuple[tuple[int, str], ...] = ()
    tracked: bool = True  # whether descendants outside its process group could be found at all
    more_left: bool = False  # a limit cut the list of those left behind


def split_command(command: str | Sequence[str]) -> list[str]:
    """A command line split as a shell would (quotes respected); bare spaces split as the
    official runner splits them. A list is taken as it is."""
    return shlex.split(command) if isinstance(command, str) else [str(a) for a in command]


def harness_env(scenario: str, protocol_version: str, context: Mapping[str, Any]) -> dict[str, str]:
    return {"MCP_CONFORMANCE_SCENARIO": scenario, "MCP_CONFORMANCE_PROTOCOL_VERSION": protocol_version,
            "MCP_CONFORMANCE_CONTEXT": json.dumps({"name": scenario, **context}, separators=(",", ":"))}


def parse_outcome(line: str) -> tuple[dict[str, Any] | None, str | None]:
    """(the outcome, or the problem with the line) of one `TASKS-CONFORMANCE-OUTCOME {json}` line."""
    try:
        value = json.loads(line[len(OUTCOME_PREFIX):])
    except (ValueError, RecursionError):
        return None, "the TASKS-CONFORMANCE-OUTCOME line is not JSON"
    if not isinstance(value, dict) or not isinstance(value.get("status"), str):
        return None, 'the TASKS-CONFORMANCE-OUTCOME line is not an object with a "status" string'
    return value, None


async def run_client(argv: Sequence[str], last: str, env: Mapping[str, str], timeout_s: float,
                     cwd: str | None = None, settle: Callable[[], Awaitable[None]] | None = None,
                     release: Callable[[tuple[int, ...]], Awaitable[None]] | None = None) -> ClientRun:
    """Run the client to its end (at most `timeout_s`), then stop its process group and every
    descendant still alive (subreaper.py, the supervisor it runs under). `last` is its last
    argument (the server's URL, or its command). `settle`, awaited once the client has exited by
    itself and before its group is stopped, lets a server the client started end on its own first
    (it reads what the client sent last); `release`, awaited after the group is stopped and before
    the descendants left are, stops the servers the client started, given the pids every
    descendant of the client descends from."""
    import anyio
    from anyio.abc import ByteReceiveStream

    full = (*argv, last)
    t0 = time.monotonic()
    ours, theirs = socket.socketpair()
    try:
        proc = await anyio.open_process(supervisor_argv(full, theirs.fileno(), timeout_s), stdin=None,
                                        env={**os.environ, **env}, cwd=cwd, start_new_session=True,
                                        pass_fds=(theirs.fileno(),))
    except OSError as exc:
        ours.close()
        return ClientRun(full, False, None, False, 0.0, "", "", None, start_error=f"{type(exc).__name__}: {exc}")
    finally:
        theirs.close()
    link = SupervisorLink(ours)
    tails = {"stdout": bytearray(), "stderr": bytearray()}
    outcome: list[tuple[str, dict[str, Any] | None, str | None]] = []
    pending = bytearray()
    skipping = [False]  # within a line over MAX_LINE: its bytes are dropped up to its newline
    long_lines = [0]

    async def pump(name: str, stream: ByteReceiveStream | None) -> None:
        if stream is None:
            return
        async for chunk in stream:
            tail = tails[name]
            tail.extend(chunk)
            del tail[:-TAIL_BYTES]
            if name == "stdout":
                for raw, too_long in split_lines(chunk, pending, skipping, MAX_LINE):
                    if too_long:  # its head only: an outcome line is said to be too long, never read
                        if raw.startswith(OUTCOME_PREFIX.encode()):
                            long_lines[0] += 1
                            outcome.append((raw[len(OUTCOME_PREFIX):].decode("utf-8", "replace") + "…", None, TOO_LONG))
                        continue
                    text = raw.decode("utf-8", "replace").rstrip("\r")
                    if text.startswith(OUTCOME_PREFIX):
                        outcome.append((text[len(OUTCOME_PREFIX):], *parse_outcome(text)))

    timed_out = False
    drained = [anyio.Event(), anyio.Event()]

    async def pumped(i: int, name: str, stream: ByteReceiveStream | None) -> None:
        try:
            await pump(name, stream)
        finally:
            drained[i].set()

    try:
        async with anyio.create_task_group() as outer:
            outer.start_soon(link.read)
            with anyio.move_on_after(START_S):
                await link.ready.wait()
            if link.client is None:
                outer.cancel_scope.cancel()
                error = link.error or "the client's supervisor did not start it"
                return ClientRun(full, False, None, False, time.monotonic() - t0, "", "", None, start_error=error)
            async with anyio.create_task_group() as tg:
                tg.start_soon(pumped, 0, "stdout", proc.stdout)
                tg.start_soon(pumped, 1, "stderr", proc.stderr)
                with anyio.move_on_after(timeout_s) as scope:
                    await link.exited.wait()
                timed_out = scope.cancelled_caught
                if settle is not None and not timed_out:
                    await settle()
                link.send("term")  # SIGTERM to the client's group, SIGKILL after GRACE_S
                with anyio.move_on_after(GRACE_S + 1.0):
                    await link.exited.wait()
                    for event in drained:  # what the client wrote before it ended, read to the end
                        await event.wait()
                link.send("kill")
                tg.cancel_scope.cancel()  # a pipe held open by a process outside the group ends here
            if release is not None:
                await release((proc.pid,))
            link.send("sweep")
            with anyio.move_on_after(SWEEP_S):
                await link.swept.wait()
            outer.cancel_scope.cancel()
    finally:
        with anyio.CancelScope(shield=True):
            if not link.swept.is_set() and link.client is not None:
                # The supervisor did not finish (it died or hung): its client's group at least.
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(link.client, signal.SIGKILL)
            ours.close()  # a supervisor still waiting takes that as the run's end: it stops everything
            with anyio.move_on_after(GRACE_S if link.swept.is_set() else SWEEP_S):
                await proc.wait()
            if proc.returncode is None:
                # os.kill, not proc.kill: Popen.send_signal polls first and would reap the process
                # under asyncio's child watcher. Not yet reaped, the pid is still the supervisor's.
                with contextlib.suppress(ProcessLookupError):
                    os.kill(proc.pid, signal.SIGKILL)
            with anyio.move_on_after(GRACE_S):
                await proc.aclose()
    good = [(line, o) for line, o, _problem in outcome if o is not None]
    problems = [(line, p) for line, _o, p in outcome if p is not None]
    said = good[-1][0] if good else problems[-1][0] if problems else None
    return ClientRun(
        full, True, None if timed_out else link.code, timed_out, time.monotonic() - t0,
        tails["stderr"].decode("utf-8", "replace"), tails["stdout"].decode("utf-8", "replace"),
        good[-1][1] if good else None, problems[-1][1] if problems and not good else None, outcome_line=said,
        long_outcome_lines=long_lines[0],
        left_behind=link.left, tracked=link.tracked, more_left=link.more,
    )


def supervisor_argv(full: Sequence[str], control: int, timeout_s: float) -> list[str]:
    """The supervisor's command: isolated (-I -S: no site, no PYTHON* variables), the client's after `--`."""
    return [sys.executable, "-I", "-S", SUPERVISOR, "--control", str(control), "--grace", f"{GRACE_S:g}",
            "--lifetime", f"{timeout_s + SUPERVISOR_MARGIN_S:g}", "--", *full]


class SupervisorLink:
    """The run's end of the supervisor's control socket: what it said, and the words it is sent."""

    def __init__(self, sock: socket.socket) -> None:
        import anyio

        sock.setblocking(False)
        self.sock = sock
        self.client: int | None = None  # the client's pid, once started
        self.error: str | None = None  # why it could not be started
        self.code: int | None = None
        self.left: tuple[tuple[int, str], ...] = ()
        self.tracked = False
        self.more = False
        self.ready, self.exited, self.swept = anyio.Event(), anyio.Event(), anyio.Event()

    def send(self, word: str) -> None:
        with contextlib.suppress(OSError):
            self.sock.send(word.encode() + b"\n")

    async def read(self) -> None:
        import anyio

        pending = b""
        try:
            while True:
                await anyio.wait_readable(self.sock)
                try:
                    data = self.sock.recv(65536)
                except BlockingIOError:
                    continue
                except OSError:
                    data = b""
                if not data:
                    return
                pending += data
                if len(pending) > MAX_CONTROL_BYTES:
                    return
                while b"\n" in pending:
                    line, _, pending = pending.partition(b"\n")
                    with contextlib.suppress(ValueError):
                        self._said(json.loads(line))
        finally:  # the supervisor has gone: nothing more will be said
            for event in (self.ready, self.exited, self.swept):
                event.set()

    def _said(self, message: Any) -> None:
        if not isinstance(message, dict):
            return
        if isinstance(message.get("started"), int):
            self.client = message["started"]
            self.ready.set()
        elif "error" in message:
            self.error = str(message["error"])
            self.ready.set()
        elif "exit" in message:
            self.code = message["exit"] if isinstance(message["exit"], int) else None
            self.exited.set()
        elif isinstance(message.get("left"), list):
            self.left = tuple((int(p), str(c)) for p, c in message["left"][:MAX_LEFT])
            self.tracked = message.get("tracked") is True
            self.more = message.get("more") is True or len(message["left"]) > MAX_LEFT
            self.swept.set()
