"""The role flags, parsed: `--probe ROLE=TOOL`, `--probe-args ROLE=<json>` and their aliases
`--tool-name`/`--tool-args` for the `task` role.

A role names the kind of tool a rule needs: one that runs only as a task, one that never does,
one that ends with `isError: true`, one that fails with a JSON-RPC error, one that asks for input.
Stdlib only and cheap to import; which tool plays a role when no flag says is server/roles.py.
"""

from __future__ import annotations

import difflib
from typing import Any, Final, Literal

from tasks_conformance.core.errors import UsageError

Role = Literal["task", "required", "tool-error", "fault", "input", "sync"]
ROLES: Final[tuple[Role, ...]] = ("task", "required", "tool-error", "fault", "input", "sync")
ROLE_HELP: Final[dict[str, str]] = {
    "task": "the tool every task check runs as a task (--tool-name is its alias)",
    "required": "a tool that runs only as a task (execution.taskSupport required)",
    "tool-error": "a tool whose result has isError: true",
    "fault": "a tool that fails with a JSON-RPC error",
    "input": "a tool that asks the client for input while its task runs",
    "sync": "a tool that never runs as a task (execution.taskSupport forbidden or absent)",
}
# Roles that metadata can never reveal: only a flag sets them.
FLAG_ONLY: Final[frozenset[str]] = frozenset({"tool-error", "fault", "input"})


def role_flag(role: str) -> str:
    """The flag that gives a role its tool, for messages."""
    return "--tool-name TOOL (or --probe task=TOOL)" if role == "task" else f"--probe {role}=TOOL"


def _role_named(flag: str, value: str) -> tuple[str, str]:
    role, sep, rest = value.partition("=")
    role = role.strip()
    if not sep or not role:
        raise UsageError(f"{flag}: expected ROLE=VALUE, got {value.split('=')[0][:40]!r}")
    if role not in ROLES:
        close = difflib.get_close_matches(role, ROLES, n=1, cutoff=0.4)
        hint = f"did you mean {close[0]}? " if close else ""
        raise UsageError(f"{flag}: unknown role {role[:40]!r}; {hint}roles: {', '.join(ROLES)}")
    return role, rest


def parse_probes(values: tuple[str, ...]) -> dict[str, str]:
    """`--probe ROLE=TOOL` (repeatable) -> {role: tool}; a role given two different tools is an error."""
    out: dict[str, str] = {}
    for value in values:
        role, tool = _role_named("--probe", value)
        tool = tool.strip()
        if not tool:
            raise UsageError(f"--probe {role}=: expected a tool name after the =")
        if role in out and out[role] != tool:
            raise UsageError(f"--probe {role} is given twice, as {out[role]!r} and {tool!r}")
        out[role] = tool
    return out


def parse_probe_args(values: tuple[str, ...]) -> dict[str, dict[str, Any]]:
    """`--probe-args ROLE=<json|@file|->` (repeatable) -> {role: arguments}."""
    from tasks_conformance.core.flag_values import parse_json_flag

    out: dict[str, dict[str, Any]] = {}
    for value in values:
        role, text = _role_named("--probe-args", value)
        if not text:
            raise UsageError(f"--probe-args {role}=: expected a JSON object, @FILE or - after the =")
        args = parse_json_flag(f"--probe-args {role}", text)
        if role in out and out[role] != args:
            raise UsageError(f"--probe-args {role} is given twice with different arguments")
        out[role] = args
    return out


def stdin_readers(values: tuple[str, ...]) -> list[str]:
    """The --probe-args values that read standard input (for the one-reader rule)."""
    return [f"--probe-args {v.partition('=')[0]}" for v in values if v.partition("=")[2] == "-"]


def merge_task_role(
    tool_name: str | None, tool_args: dict[str, Any] | None, probes: dict[str, str],
    probe_args: dict[str, dict[str, Any]],
) -> tuple[str | None, dict[str, Any] | None]:
    """--tool-name/--tool-args and --probe task=/--probe-args task= are one setting: the same
    value twice is fine, two different values are a usage error."""
    named = probes.pop("task", None)
    if named is not None and tool_name is not None and named != tool_name:
        raise UsageError(f"--tool-name {tool_name!r} and --probe task={named!r} name different tools; give one")
    args = probe_args.pop("task", None)
    if args is not None and tool_args is not None and args != tool_args:
        raise UsageError("--tool-args and --probe-args task= give different arguments; give one")
    return tool_name or named, tool_args if tool_args is not None else args
