"""Preconditions shared by checks, so a fallen precondition is explained once, the same way."""

from __future__ import annotations

from tasks_conformance.checks.registry import Verdict, could_not_run
from tasks_conformance.evidence import Evidence


def need_wire(ev: Evidence) -> Verdict | None:
    d = ev.discovered
    if d.connection_problem is not None:
        return could_not_run("could not talk to the server", blocked_by="tasks-wire-resolvable")
    if ev.wire == "none":
        return could_not_run("the server offers no tasks wire", blocked_by="tasks-wire-resolvable")
    return None


def need_tool(ev: Evidence) -> Verdict | None:
    pre = need_wire(ev)
    if pre is not None:
        return pre
    if ev.tool is None or ev.tool.name is None:
        reason = ev.tool.reason if ev.tool is not None else "no probe tool was chosen"
        return could_not_run(reason)
    return None


def need_task(ev: Evidence) -> Verdict | None:
    """The declared call created a task whose id we can follow."""
    pre = need_tool(ev)
    if pre is not None:
        return pre
    rec = ev.probe("declared-call")
    reply = rec.reply("call")
    if reply is None:
        return could_not_run(rec.not_run or rec.harness_problem or "the declared tools/call did not run")
    if rec.data.get("task_id") is None:
        tool = ev.tool.name if ev.tool else "?"
        if reply.ok:
            kind = (
                "an InputRequiredResult (a multi round-trip request, which tasks-conformance does not retry)"
                if reply.result.get("resultType") == "input_required" else "a plain result"
            )
            return could_not_run(
                f"tool {tool!r} answered the declared tools/call with {kind}, so there is no task to inspect; "
                "choose a tool that runs as a task with --tool-name",
                evidence=reply.seqs(),
            )
        if reply.answered:
            return could_not_run(
                f"the declared tools/call of {tool!r} got {reply.describe()}, so no task exists; check "
                "--tool-name/--tool-args",
                evidence=reply.seqs(),
            )
        return could_not_run(f"the declared tools/call got {reply.describe()}", evidence=reply.seqs())
    return None


def need_terminal(ev: Evidence) -> Verdict | None:
    pre = need_task(ev)
    if pre is not None:
        return pre
    poll = ev.probe("poll")
    if not poll.ran:
        return could_not_run(poll.not_run or "the task was not polled")
    stop = poll.data.get("stop")
    elapsed = poll.data.get("elapsed_ms", 0)
    if stop == "terminal":
        return None
    if stop == "poll-timeout":
        return could_not_run(
            f"the task was still {poll.data.get('final_status')!r} when polling stopped after {elapsed} ms "
            f"(--poll-timeout {ev.poll_timeout_ms} ms); raise --poll-timeout or pick a quicker tool"
        )
    if stop == "stuck-input-required":
        keys = poll.data.get("unanswered_keys") or []
        named = f" (keys {', '.join(map(str, keys[:5]))})" if keys else ""
        given = "none of --input-responses fits its requests" if ev.input_responses else "no answer was given"
        return could_not_run(
            f"the task stayed input_required for {len(poll.data.get('statuses', []))} polls ({elapsed} ms){named} "
            f"and {given}; pass --input-responses with an answer per key (or a \"*\" answer)"
        )
    if stop == "poll-budget":
        return could_not_run(
            f"polling stopped after {elapsed} ms: the tasks/get answers passed 64 MiB in all before the task ended"
        )
    return could_not_run(
        f"polling stopped after {elapsed} ms because tasks/get failed",
        blocked_by="tasks-status-payload-shape",
    )
