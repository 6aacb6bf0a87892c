"""The restart probe (profile durable, `tasks-task-survives-restart`): the probe task, which has
ended, and a second task of the same call, which should still be working, are read; the server
is stopped (SIGTERM to its process group, a bounded wait) and started again with the same
command; a new connection of the run's era reads both tasks again.

It runs after every other probe (`final`): it ends the server the others talk to. Only where the
run owns the server's process: a stdio command (a new connection is a new process) or
--server-command (stopped and started again by the run). Against a server at a --url, --tcp or
--unix address that the run did not start, it sends nothing and says why.
"""

from __future__ import annotations

import time
from dataclasses import replace

from tasks_conformance.core.causes import Reason, by_flag
from tasks_conformance.core.protocol import TERMINAL_STATUSES
from tasks_conformance.core.wires import CreatedTask, task_object
from tasks_conformance.server.evidence import DeclaredCall, Poll, TaskReads, TaskRestart
from tasks_conformance.server.managed import stop_group
from tasks_conformance.server.probes import probe
from tasks_conformance.server.probes.engine.context import ProbeContext
from tasks_conformance.server.session.base import Session
from tasks_conformance.server.session.connect import Connection

# Request ids of the connection after the restart, apart from the main one's (see Peer).
FIRST_ID = 4_000_001


def not_owned(ctx: ProbeContext) -> Reason | None:
    """Why the run cannot restart the server, with what lets it (a Reason: the check that is not
    applicable then names the flag); None when it can."""
    if ctx.config.transport == "stdio" or (ctx.server is not None and ctx.server.owned):
        return None
    where = {"http": "--url", "tcp": "--tcp", "unix": "--unix"}.get(ctx.config.transport, "the target")
    return Reason(by_flag(f"the server at {where} is not started by tasks-conformance, so it cannot be restarted",
                          "give --server-command to test durability"))


async def _read(ctx: ProbeContext, session: Session, task_id: str, *, note: str, payload: bool) -> TaskReads:
    """tasks/get, and tasks/result where the wire has it and `payload` (never on a task that may
    still be working: tasks/result waits for its end)."""
    reads = TaskReads()
    reads.get = await ctx.read_tolerating_rate_limit(
        lambda: session.request("tasks/get", {"taskId": task_id}, purpose=f"restart: {note}"))
    status = task_object(reads.get.result).get("status") if reads.get.ok else None
    if payload and ctx.dialect.defines("tasks/result") and status in TERMINAL_STATUSES:
        reads.payload = await session.request("tasks/result", {"taskId": task_id}, purpose=f"restart: {note}")
    return reads


async def _stop(ctx: ProbeContext) -> str | None:
    """Stop the server's whole process group: None once it has exited, else what went wrong."""
    if ctx.server is not None and ctx.server.owned:
        await ctx.server.stop()
        return None
    # stdio: the server is the main connection's process (its transport reaps it again later).
    process = getattr(ctx.session.transport, "process", None)
    if process is None:
        return "the stdio server's process is not known, so it cannot be stopped"
    await stop_group(process, close=False)
    return None if process.returncode is not None else "the stdio server did not exit on SIGTERM or SIGKILL"


async def _start(ctx: ProbeContext) -> str | None:
    """Start the server again (stdio: the new connection starts its process)."""
    if ctx.server is not None and ctx.server.owned:
        return await ctx.server.start()
    return None


@probe(TaskRestart, order=99, needs=(DeclaredCall, Poll), needs_tool=True, needs_task=True, final=True,
       description="stop the server, start it again, and read its tasks over a new connection")
async def task_restart(ctx: ProbeContext) -> None:
    rec = ctx.record(TaskRestart)
    rec.not_applicable = not_owned(ctx)
    if rec.not_applicable is not None:
        rec.ran = True
        return
    session = ctx.session
    ended = rec.ended_id = ctx.require_task_id()
    # The same call again: with --tool-args that make it long (or a tool that waits for input),
    # the task is still working when the server stops.
    rec.working_call = await session.request("tools/call", ctx.tool_params(), purpose="restart: a task left working")
    working = rec.working_id = CreatedTask.read(rec.working_call.result if rec.working_call.ok else None).task_id
    rec.before_ended = await _read(ctx, session, ended, note="the ended task, before", payload=True)
    if working is not None:
        rec.before_working = await _read(ctx, session, working, note="the working task, before", payload=False)
    t0 = time.monotonic()
    rec.restart_problem = await _stop(ctx)
    rec.stopped_ms = int((time.monotonic() - t0) * 1000)
    if rec.restart_problem is None:
        problem = await _start(ctx)
        rec.restart_problem = f"the server did not start again: {problem}" if problem else None
    if rec.restart_problem is None:
        await _read_after(ctx, rec, ended, working)
    rec.ran = True


async def _read_after(ctx: ProbeContext, rec: TaskRestart, ended: str, working: str | None) -> None:
    """A new connection of the run's era, and both tasks read on it."""
    config = replace(ctx.config, protocol_version=ctx.dialect.protocol_version)
    conn = Connection(config, ctx.wire_log, first_id=FIRST_ID)
    try:
        d = await conn.open()
        session = conn.session
        if d.wire is not ctx.discovery.wire or session is None:
            rec.restart_problem = (f"after the restart the server did not serve the {ctx.dialect.label} wire again: "
                                   f"{d.connection_problem or '; '.join(d.looked_for) or 'no tasks wire'}")
            return
        rec.after_ended = await _read(ctx, session, ended, note="the ended task, after", payload=True)
        if working is not None:
            # After the restart the task may have ended: then its payload is read too.
            rec.after_working = await _read(ctx, session, working, note="the working task, after", payload=True)
        # Declaration hygiene reads what every request meant to declare, these too.
        ctx.session.intents.extend(session.intents)
    finally:
        await conn.aclose()
