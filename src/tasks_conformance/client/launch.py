"""Starting the client under test for one scenario, as the official conformance suite's client
harness convention says: the server URL (over stdio: the server's command, shell-quoted) as the
last argument, the scenario in the environment.
Everything it does is evidence (exit code, stderr tail, the outcome line it printed); nothing it
does becomes a traceback of ours. Its whole process group is stopped when it exits or times out.
"""

from __future__ import annotations

import json
import os
import shlex
import signal
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tasks_conformance.client.lines import split_lines

OUTCOME_PREFIX = "TASKS-CONFORMANCE-OUTCOME "
TAIL_BYTES = 8 * 1024  # what a report shows of the client's stderr and stdout
MAX_LINE = 64 * 1024  # a stdout line longer than this is not read: discarded up to its newline (README: "Limits")
TOO_LONG = f"the TASKS-CONFORMANCE-OUTCOME line is longer than {MAX_LINE} bytes, the limit, and was not read"
GRACE_S = 2.0  # between SIGTERM and SIGKILL of the client's process group


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
                     cwd: str | None = None, settle: Callable[[], Awaitable[None]] | None = None) -> ClientRun:
    """Run the client to its end (at most `timeout_s`), then stop its process group. `last` is its
    last argument (the server's URL, or its command). `settle`, awaited once the client has exited
    by itself and before its group is stopped, lets a server the client started end on its own
    first (it reads what the client sent last)."""
    import anyio
    from anyio.abc import ByteReceiveStream

    full = (*argv, last)
    t0 = time.monotonic()
    try:
        proc = await anyio.open_process(list(full), stdin=None, env={**os.environ, **env}, cwd=cwd,
                                        start_new_session=True)
    except OSError as exc:
        return ClientRun(full, False, None, False, 0.0, "", "", None, start_error=f"{type(exc).__name__}: {exc}")
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
        async with anyio.create_task_group() as tg:
            tg.start_soon(pumped, 0, "stdout", proc.stdout)
            tg.start_soon(pumped, 1, "stderr", proc.stderr)
            with anyio.move_on_after(timeout_s) as scope:
                await proc.wait()
            timed_out = scope.cancelled_caught
            if settle is not None and not timed_out:
                await settle()
            await _stop_group(proc.pid)
            with anyio.move_on_after(GRACE_S):
                await proc.wait()
                for event in drained:  # what the client wrote before it ended, read to the end
                    await event.wait()
            tg.cancel_scope.cancel()  # a pipe held open by a process outside the group ends here
    finally:
        await _stop_group(proc.pid, hard=True)
        with anyio.CancelScope(shield=True), anyio.move_on_after(GRACE_S):
            await proc.aclose()
    good = [(line, o) for line, o, _problem in outcome if o is not None]
    problems = [(line, p) for line, _o, p in outcome if p is not None]
    said = good[-1][0] if good else problems[-1][0] if problems else None
    return ClientRun(
        full, True, None if timed_out else proc.returncode, timed_out, time.monotonic() - t0,
        tails["stderr"].decode("utf-8", "replace"), tails["stdout"].decode("utf-8", "replace"),
        good[-1][1] if good else None, problems[-1][1] if problems and not good else None, outcome_line=said,
        long_outcome_lines=long_lines[0],
    )


async def _stop_group(pid: int, *, hard: bool = False) -> None:
    """SIGTERM the client's process group (then, `hard`, SIGKILL what is left): a client that
    spawned a server of its own leaves nothing behind."""
    import anyio

    try:
        os.killpg(pid, signal.SIGKILL if hard else signal.SIGTERM)
    except (ProcessLookupError, PermissionError):
        return
    if not hard:
        await anyio.sleep(0)
