"""Preconditions shared by checks, so a fallen precondition is explained once, the same way."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from tasks_conformance.core.causes import Cause, CauseKind, by_flag, harness, unmet
from tasks_conformance.core.verdict import Verdict, could_not_run
from tasks_conformance.core.wires import Wire
from tasks_conformance.server.checks.engine.registry import Need
from tasks_conformance.server.evidence import DeclaredCall, Evidence, Poll, ProbeRecord, StopReason
from tasks_conformance.server.evidence.reasons import no_tool
from tasks_conformance.server.evidence.records import POLL_BYTE_BUDGET_MIB

if TYPE_CHECKING:
    from tasks_conformance.core.rpc.peer import Reply

# A handshake with a server process the run started that got no answer: a cold start can outlast
# any request.
STARTUP_FIX = ("raise --startup-timeout if the server is slow to start (heavy imports, npx, a cold container), "
               "or check that it answers MCP at the target")
NO_TASKS_WIRE = Cause("the server offers no tasks wire", CauseKind.NO_TASKS_WIRE)


def got(text: str, *replies: Reply | None, fix: str, cold_start: bool = False) -> Cause:
    """A could-not-run about what requests got: when an answer was lost to a setting (over
    --max-message-bytes, refused credentials), the cause names that setting; a request that timed
    out names --timeout, or --startup-timeout when it was the handshake of a server process the
    run had just started (`cold_start`); otherwise `fix` says what the check needs the server to do."""
    flags = tuple(dict.fromkeys(f for r in replies if r is not None for f in r.flags))
    if flags:
        return by_flag(text, "", *flags)
    if any(r is not None and r.timed_out for r in replies):
        if cold_start:
            return by_flag(text, STARTUP_FIX, "--startup-timeout")
        return by_flag(text, "raise --timeout if the server answers slowly", "--timeout")
    return unmet(text, fix)


def unrun(rec: ProbeRecord, what: str) -> Cause:
    """Why a probe's traffic is missing: the reason it recorded (which carries its fix), a fault of
    ours, or, when it recorded none, that too is our fault."""
    if rec.not_run is not None:
        return rec.not_run.cause
    if rec.harness_problem:
        return harness(rec.harness_problem)
    return harness(f"{what}, and tasks-conformance recorded no reason")


def need_wire(ev: Evidence) -> Verdict | None:
    if ev.discovery.connection_problem is not None:
        return could_not_run(Cause("could not talk to the server", CauseKind.UNREACHABLE),
                             blocked_by="tasks-wire-resolvable")
    if ev.wire is Wire.NONE:
        return could_not_run(NO_TASKS_WIRE, blocked_by="tasks-wire-resolvable")
    return None


def need_tool(ev: Evidence) -> Verdict | None:
    pre = need_wire(ev)
    if pre is not None:
        return pre
    if ev.tool is None or ev.tool.name is None:
        return could_not_run(no_tool(ev.tool.reason if ev.tool is not None else "no probe tool was chosen",
                                     "name a tool that runs as a task with --tool-name"))
    return None


def need_task(ev: Evidence) -> Verdict | None:
    """The declared call created a task whose id we can follow."""
    pre = need_tool(ev)
    if pre is not None:
        return pre
    rec = ev.get(DeclaredCall)
    reply = rec.call
    if reply is None:
        return could_not_run(unrun(rec, "the declared tools/call did not run"))
    if rec.task_id is not None:
        return None
    tool = ev.tool_name
    if reply.ok:
        kind = (
            "an InputRequiredResult (a multi round-trip request, which tasks-conformance does not retry)"
            if reply.result.get("resultType") == "input_required" else "a plain result"
        )
        # Where the wire requires a task for the declared call, tasks-result-type-discipline fails
        # that answer, and this defers to it (ownership.follow_failures); else the tool is the user's pick.
        return could_not_run(
            by_flag(f"tool {tool!r} answered the declared tools/call with {kind}, so there is no task to inspect",
                    "choose a tool that runs as a task with --tool-name"),
            evidence=reply.seqs(), blocked_by="tasks-result-type-discipline",
        )
    if reply.answered:
        return could_not_run(
            by_flag(f"the declared tools/call of {tool!r} got {reply.describe()}, so no task exists",
                    "check --tool-name/--tool-args"),
            evidence=reply.seqs(),
        )
    return could_not_run(got(f"the declared tools/call got {reply.describe()}", reply,
                             fix="check --tool-name and --tool-args: the declared tools/call must be answered"),
                         evidence=reply.seqs())


def need_terminal(ev: Evidence) -> Verdict | None:
    pre = need_task(ev)
    if pre is not None:
        return pre
    poll = ev.get(Poll)
    if not poll.ran:
        return could_not_run(unrun(poll, "the task was not polled"))
    return None if poll.stop is StopReason.TERMINAL else _why_not_terminal(ev, poll)


def _why_not_terminal(ev: Evidence, poll: Poll) -> Verdict:
    elapsed = poll.elapsed_ms
    if poll.stop is StopReason.POLL_TIMEOUT:
        return could_not_run(by_flag(
            f"the task was still {poll.final_status!r} when polling stopped after {elapsed} ms "
            f"(--poll-timeout {ev.poll_timeout_ms} ms)", "raise --poll-timeout or pick a quicker tool",
        ))
    if poll.stop is StopReason.STUCK_INPUT_REQUIRED:
        keys = poll.unanswered_keys
        named = f" (keys {', '.join(map(str, keys[:5]))})" if keys else ""
        given = "none of --input-responses fits its requests" if ev.input_responses else "no answer was given"
        return could_not_run(by_flag(
            f"the task stayed input_required for {len(poll.statuses)} polls ({elapsed} ms){named} and {given}",
            'pass --input-responses with an answer per key (or a "*" answer)',
        ))
    if poll.stop is StopReason.POLL_BUDGET:
        return could_not_run(unmet(
            f"polling stopped after {elapsed} ms: the tasks/get answers passed {POLL_BYTE_BUDGET_MIB} MiB in all "
            "before the task ended", "pick a quicker tool (--tool-name, --tool-args), so that fewer reads are needed"
        ))
    return could_not_run(
        unmet(f"polling stopped after {elapsed} ms because tasks/get failed",
              "make the server answer tasks/get for the task it created (tasks-status-payload-shape says how "
              "it failed)"),
        blocked_by="tasks-status-payload-shape",
    )


PRECONDITIONS: dict[Need, Callable[[Evidence], Verdict | None]] = {
    "wire": need_wire, "tool": need_tool, "task": need_task, "terminal": need_terminal,
}
