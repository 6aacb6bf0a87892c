"""Probe roles: which tool plays which part in a run.

Some rules need a particular kind of tool: one that runs only as a task, one that never does,
one that ends with `isError: true`, one that fails with a JSON-RPC error, one that asks for input.
A role names that kind; `--probe ROLE=TOOL` gives it a tool and `--probe-args ROLE=<json>` its
arguments. The `task` role is the tool every task check uses (`--tool-name`/`--tool-args` are its
aliases).

Where tools/list carries `execution.taskSupport` (2025-11-25, and a 2026-07-28 server that still
lists it), `required` and `sync` are inferred from it; `tool-error`, `fault` and `input` cannot be
told from metadata, so only flags set them, except that `input` defaults to the task tool when
`--input-responses` is given (the answers were written for that tool).

The flags are parsed in settings/role_flags.py; the inference here reads discovery lazily.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tasks_conformance.core.causes import Reason, by_flag, unmet
from tasks_conformance.core.wires import task_support
from tasks_conformance.settings.role_flags import FLAG_ONLY, ROLES, role_flag

if TYPE_CHECKING:
    from tasks_conformance.core.wires import WireDialect
    from tasks_conformance.server.evidence import Discovery, ToolChoice


def assign_roles(
    wanted: set[str], *, probes: dict[str, str], probe_args: dict[str, dict[str, Any]],
    input_responses: dict[str, Any] | None, d: Discovery, dialect: WireDialect, task: ToolChoice | None,
) -> dict[str, ToolChoice]:
    """A tool (or the reason there is none) for every wanted role but `task`, which the runner
    chooses as before (`task` is the task role's choice, needed for the `input` default)."""
    from tasks_conformance.server.evidence import ToolChoice

    out: dict[str, ToolChoice] = {}
    listed = [str(t.get("name")) for t in d.tools if isinstance(t.get("name"), str)]
    for role in ROLES:
        if role == "task" or role not in wanted:
            continue
        args = dict(probe_args.get(role, {}))
        if d.lists_no_tool:  # no flag can name a tool the server says it does not have
            out[role] = ToolChoice(None, Reason(unmet("tools/list lists no tool",
                                                      "give the server a tool for this role")), source="none")
        elif d.tools_replies and not d.tools_replies[-1].ok:
            # Named by the user: called unlisted (nothing listed contradicts the name); else none.
            out[role] = (ToolChoice(probes[role], f"chosen with --probe {role} (tools/list failed, so it is called "
                                    "unlisted)", args, source="flag") if role in probes else
                         ToolChoice(None, Reason(by_flag(f"tools/list got {d.tools_replies[-1].describe()}, so no "
                                                         "tool can be found for this role", f"pass {role_flag(role)}")),
                                    source="none"))
        elif role in probes:
            out[role] = _named(role, probes[role], args, d, dialect, listed)
        elif role == "input" and input_responses is not None and task is not None and task.name is not None:
            out[role] = ToolChoice(task.name, "the task tool, because --input-responses was given for it",
                                   dict(args or task.arguments), source="default")
        elif role in FLAG_ONLY:
            also = " (or --input-responses with --tool-name, for the task tool)" if role == "input" else ""
            out[role] = ToolChoice(None, Reason(by_flag("tool metadata cannot tell which tool plays it",
                                                        f"pass {role_flag(role)}{also}")), source="none")
        else:
            out[role] = _inferred(role, args, d, dialect)
    return out


def _lists_task_support(d: Discovery, dialect: WireDialect) -> bool:
    """Whether tools/list says which tools run as tasks: always where the wire negotiates task
    support per tool (2025-11-25); elsewhere only when the server still lists execution.taskSupport."""
    return dialect.task_capable_tools(d.tools) is not None or any(task_support(t) is not None for t in d.tools)


def _named(role: str, name: str, args: dict[str, Any], d: Discovery, dialect: WireDialect,
           listed: list[str]) -> ToolChoice:
    from tasks_conformance.server.evidence import ToolChoice

    if d.names_known and name not in listed:
        shown = ", ".join(listed[:10]) + (f" (+{len(listed) - 10} more)" if len(listed) > 10 else "")
        return ToolChoice(None, Reason(by_flag(f"--probe {role}={name!r} is not among the listed tools: "
                                               f"{shown or 'none'}", "", "--probe")), source="flag")
    if dialect.task_capable_tools(d.tools) is not None and d.tools_replies and d.tool_named(name) is not None:
        support = task_support(d.tool_named(name)) or "forbidden"
        # A client MUST NOT send params.task for a forbidden tool, and a required tool called
        # without one is refused: a role that contradicts the metadata would judge our mistake.
        if role == "required" and support != "required":
            return ToolChoice(None, Reason(by_flag(f"--probe required={name!r} has execution.taskSupport {support!r}, "
                                                   "not 'required', so the server may rightly run it without a task",
                                                   "", "--probe")), source="flag")
        if role == "sync" and support != "forbidden":
            return ToolChoice(None, Reason(by_flag(f"--probe sync={name!r} has execution.taskSupport {support!r}, so "
                                                   "it may rightly run as a task; name a forbidden (or unannotated) "
                                                   "tool", "", "--probe")), source="flag")
        if role in FLAG_ONLY and support == "forbidden":
            return ToolChoice(None, Reason(by_flag(f"--probe {role}={name!r} has execution.taskSupport forbidden, so "
                                                   "it cannot run as a task on 2025-11-25", "", "--probe")),
                              source="flag")
    return ToolChoice(name, f"chosen with --probe {role}", args, source="flag")


def _inferred(role: str, args: dict[str, Any], d: Discovery, dialect: WireDialect) -> ToolChoice:
    """`required` from taskSupport required, `sync` from forbidden or absent: non-destructive
    tools only (a server that wrongly runs the call must not delete anything), read-only first."""
    from tasks_conformance.core.protocol import get_path
    from tasks_conformance.server.evidence import ToolChoice

    if not _lists_task_support(d, dialect):
        return ToolChoice(None, Reason(by_flag("on the extension wire tools carry no task metadata, so no tool can "
                                               "be inferred for this role", f"pass {role_flag(role)}")), source="none")
    want = ("required",) if role == "required" else ("forbidden", None)
    candidates = []
    for t in d.tools:
        if not isinstance(t.get("name"), str) or get_path(t, "annotations", "destructiveHint") is True:
            continue
        if task_support(t) in want:
            candidates.append((0 if get_path(t, "annotations", "readOnlyHint") is True else 1, t))
    if not candidates:
        what = "required" if role == "required" else "forbidden or absent"
        return ToolChoice(None, Reason(by_flag(f"no listed tool has execution.taskSupport {what} without "
                                               "destructiveHint", f"pass {role_flag(role)}")), source="none")
    candidates.sort(key=lambda c: c[0])
    rank, tool = candidates[0]
    support = task_support(tool) or "absent"
    why = f"inferred: execution.taskSupport {support}{', readOnlyHint' if rank == 0 else ''}; destructive tools skipped"
    return ToolChoice(str(tool["name"]), why, args)
