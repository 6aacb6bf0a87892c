"""The reasons probes record for not running, shared by several: each with the action that lets
the probe run (a probe record's `not_run` is always a Reason with its fix)."""

from __future__ import annotations

from tasks_conformance.core.causes import Reason, reason

HTTP_FIX = "run against the server's Streamable HTTP endpoint (--url) to have this judged"

NO_TASK_CREATED = reason("no task was created by the declared tools/call",
                         "name a tool that runs as a task with --tool-name (and --tool-args it accepts)")


def no_tool(why: str, fix: str) -> Reason:
    """The reason a tool choice gives for choosing none: its own (with its fix) when it has one."""
    return why if isinstance(why, Reason) else reason(why, fix)
