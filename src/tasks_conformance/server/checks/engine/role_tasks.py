"""Preconditions of the checks that run a probe role's tool as a task (input, tool-error, fault):
the role's call created a task, and (for the outcome checks) polling saw it end. The role having
a tool at all is the runner's business (`runner.role_unassigned`)."""

from __future__ import annotations

from typing import Any, TypeVar

from tasks_conformance.core.causes import by_flag
from tasks_conformance.core.verdict import Verdict, could_not_run
from tasks_conformance.server.checks.engine.common import _why_not_terminal, unrun
from tasks_conformance.server.evidence import Evidence, RoleTask, StopReason
from tasks_conformance.settings.role_flags import role_flag

R = TypeVar("R", bound=RoleTask)


def role_task(ev: Evidence, kind: type[R], role: str) -> tuple[R, Verdict | None]:
    """The role's record, and the could-not-run verdict when its call created no task."""
    rec = ev.get(kind)
    reply = rec.call
    if reply is None:
        return rec, could_not_run(unrun(rec, f"the {role} tool's tools/call did not run"))
    if rec.task_id is not None:
        return rec, None
    tool, seqs = rec.tool or "?", reply.seqs()
    if reply.ok:
        return rec, could_not_run(
            by_flag(f"the {role} tool {tool!r} answered the declared tools/call with a plain result, so there is "
                    "no task to judge", f"name a tool that runs as a task with {role_flag(role)}"), evidence=seqs)
    return rec, could_not_run(by_flag(f"the declared tools/call of the {role} tool {tool!r} got {reply.describe()}, "
                                      "so no task exists", f"check {role_flag(role)} and --probe-args {role}="),
                              evidence=seqs)


def role_terminal(ev: Evidence, kind: type[R], role: str) -> tuple[R, Verdict | None]:
    """The role's record, and the could-not-run verdict unless its task was polled to its end."""
    rec, early = role_task(ev, kind, role)
    if early is not None:
        return rec, early
    poll = rec.poll
    if not poll.ran:
        return rec, could_not_run(unrun(poll, f"the {role} tool's task was not polled"))
    if poll.stop is not StopReason.TERMINAL:
        return rec, _why_not_terminal(ev, poll)
    return rec, None


def terminal_read(rec: RoleTask) -> tuple[dict[str, Any], list[int]]:
    """The tasks/get that ended the role task's polling (role_terminal let the judge on only when
    there is one): the task it read, and its frames."""
    last = rec.poll.last_get
    assert last is not None  # polling ended on a terminal tasks/get
    return last.result, last.seqs()
