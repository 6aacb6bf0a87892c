"""The reference server's tools: names, schemas, task support and annotations.

The descriptors are immutable; every result handed to the wire is a fresh dict.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Literal

TaskSupport = Literal["forbidden", "optional", "required"]

#: What a tool does; tools of one kind share one implementation (``ServerCore.execute_tool``).
#: ``reply``: answers at once with a text; ``work``: works for a while, then a text result;
#: ``tool_error`` / ``rpc_error``: works, then fails (isError result / JSON-RPC error);
#: ``confirm``: asks one form elicitation, then answers; ``multi_input``: asks two at once;
#: ``sampling``: needs the client's sampling capability and asks one sampling/createMessage;
#: ``name_then_task``: on 2026-07-28 asks a name through the synchronous InputRequiredResult loop
#: (MRTR) and only then creates the task, whose result greets that name.
ToolKind = Literal["reply", "work", "tool_error", "rpc_error", "confirm", "multi_input", "sampling", "name_then_task"]

CONFIRM_KEY = "confirm-1"
MULTI_KEYS = ("input-1", "input-2")
SAMPLING_KEY = "sample-1"
NAME_KEY = "user_name"


@dataclass(frozen=True)
class ToolSpec:
    name: str
    title: str
    description: str
    task_support: TaskSupport
    kind: ToolKind = "work"
    read_only: bool = True
    destructive: bool = False
    #: A string argument the tool reads (``text`` of echo, ``name`` of greet, ...); None: none.
    text_arg: str | None = None
    text_required: bool = False
    takes_duration: bool = True
    #: Run time when the call names none (None: the server's --task-duration-ms).
    default_duration_ms: int | None = None
    #: ``reply`` kind: the answer, ``{}`` replaced by the text argument.
    reply: str = "{}"
    #: A fixture tool of the official MCP conformance suite (its scenarios call it by name).
    official: bool = False

    @property
    def needs_input(self) -> bool:
        """It asks the client for something, so a plain 2025-11-25 call is answered as SSE."""
        return self.kind in ("confirm", "multi_input", "sampling", "name_then_task")

    def input_schema(self) -> dict[str, Any]:
        props: dict[str, Any] = {}
        required: list[str] = []
        if self.text_arg is not None:
            props[self.text_arg] = {"type": "string", "description": f"The {self.text_arg} to use"}
            if self.text_required:
                required.append(self.text_arg)
        if self.takes_duration:
            props["durationMs"] = {
                "type": "integer",
                "minimum": 0,
                "description": "How long the work takes, in ms (default: the server's --task-duration-ms)",
            }
            if self.official:
                props["seconds"] = {
                    "type": "number",
                    "minimum": 0,
                    "description": "How long the work takes, in seconds (durationMs wins when both are given)",
                }
        schema: dict[str, Any] = {"type": "object", "properties": props}
        if required:
            schema["required"] = required
        return schema

    def annotations(self) -> dict[str, Any]:
        ann: dict[str, Any] = {"title": self.title, "readOnlyHint": self.read_only}
        if not self.read_only:
            ann["destructiveHint"] = self.destructive
            ann["idempotentHint"] = False
        ann["openWorldHint"] = False
        return ann

    def descriptor(self, *, legacy_execution: bool) -> dict[str, Any]:
        tool: dict[str, Any] = {
            "name": self.name,
            "title": self.title,
            "description": self.description,
            "inputSchema": self.input_schema(),
            "annotations": self.annotations(),
        }
        if legacy_execution:
            tool["execution"] = {"taskSupport": self.task_support}
        return tool


OUR_TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(
        "echo",
        "Echo",
        "Returns its text argument immediately (never runs as a task).",
        "forbidden",
        kind="reply",
        text_arg="text",
        text_required=True,
        takes_duration=False,
    ),
    ToolSpec(
        "slow_compute",
        "Slow compute",
        "Works for durationMs (or seconds), then returns a text result. May run as a task; "
        "a cancelled task ends cancelled.",
        "optional",
        official=True,  # also the official suite's slow_compute (seconds, label)
    ),
    ToolSpec(
        "long_job",
        "Long job",
        "Works for durationMs, then returns a text result. Runs only as a task.",
        "required",
    ),
    ToolSpec(
        "tool_error",
        "Tool error",
        "Works for durationMs, then returns a CallToolResult with isError: true.",
        "optional",
        kind="tool_error",
    ),
    ToolSpec(
        "rpc_error",
        "RPC error",
        "Works for durationMs, then fails with a JSON-RPC error (-32603).",
        "optional",
        kind="rpc_error",
    ),
    ToolSpec(
        "confirm_action",
        "Confirm action",
        "Asks the user to confirm (form elicitation), then completes. Needs the elicitation capability.",
        "optional",
        kind="confirm",
    ),
    ToolSpec(
        "destructive_op",
        "Destructive operation",
        "Pretends to delete something after durationMs. Marked destructive: do not auto-pick.",
        "optional",
        read_only=False,
        destructive=True,
    ),
)

# The fixture tools the official MCP conformance suite (@modelcontextprotocol/conformance) calls
# by name, with the behaviour its scenario descriptions ask for. Listed after ours, and none is
# read-only and task-required, so a client that auto-picks "required, then read-only" still
# picks long_job. Each shares the implementation of the kind it names.
OFFICIAL_TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(
        "greet",
        "Greet",
        "Returns 'Hello, {name}!' immediately (never runs as a task). Official-suite fixture.",
        "forbidden",
        kind="reply",
        text_arg="name",
        text_required=True,
        takes_duration=False,
        reply="Hello, {}!",
        official=True,
    ),
    ToolSpec(
        "failing_job",
        "Failing job",
        "Runs only as a task; after about 1 s returns a CallToolResult with isError: true. "
        "Official-suite fixture.",
        "required",
        kind="tool_error",
        read_only=False,  # not picked before long_job by a required-then-read-only chooser
        default_duration_ms=1000,
        official=True,
    ),
    ToolSpec(
        "protocol_error_job",
        "Protocol error job",
        "May run as a task; fails with a JSON-RPC error (-32603), so its task ends failed. "
        "Official-suite fixture.",
        "optional",
        kind="rpc_error",
        official=True,
    ),
    ToolSpec(
        "confirm_delete",
        "Confirm delete",
        "May run as a task; asks the user to confirm deleting filename (one form elicitation), then "
        "completes. Official-suite fixture.",
        "optional",
        kind="confirm",
        read_only=False,
        text_arg="filename",
        official=True,
    ),
    ToolSpec(
        "multi_input",
        "Multiple inputs",
        "May run as a task; asks two form elicitations at once (both pending together), completes once "
        "both are answered. Official-suite fixture.",
        "optional",
        kind="multi_input",
        official=True,
    ),
    ToolSpec(
        "test_missing_capability",
        "Needs sampling",
        "Needs the client's sampling capability (without it: -32021 naming sampling); asks one "
        "sampling/createMessage. Official-suite fixture.",
        "forbidden",
        kind="sampling",
        takes_duration=False,
        official=True,
    ),
    ToolSpec(
        "test_streaming_elicitation",
        "Elicitation without a task",
        "Asks one form elicitation synchronously (2026-07-28: an InputRequiredResult, never a request "
        "on the response stream), then answers. Official-suite fixture.",
        "forbidden",
        kind="confirm",
        takes_duration=False,
        official=True,
    ),
    ToolSpec(
        "test_tool_with_task",
        "Ask, then run as a task",
        "Runs only as a task. On 2026-07-28 it first asks for user_name (InputRequiredResult); the retry "
        "carrying the answer creates the task, whose result greets that name. Official-suite fixture.",
        "required",
        kind="name_then_task",
        read_only=False,  # not picked before long_job by a required-then-read-only chooser
        official=True,
    ),
    ToolSpec(
        "test_logging_tool",
        "Logging tool",
        "Answers at once and logs nothing (the server declares no logging capability). Official-suite fixture.",
        "forbidden",
        kind="reply",
        takes_duration=False,
        reply="test_logging_tool: done; no log messages sent",
        official=True,
    ),
)

TOOLS: tuple[ToolSpec, ...] = OUR_TOOLS + OFFICIAL_TOOLS

TOOLS_BY_NAME: MappingProxyType[str, ToolSpec] = MappingProxyType({t.name: t for t in TOOLS})


def confirm_request(message: str = "confirm_action: please confirm that the reference server may proceed.") -> (
    dict[str, Any]
):
    """The input request a ``confirm`` tool needs (an ElicitRequest without id)."""
    return {
        "method": "elicitation/create",
        "params": {
            "mode": "form",
            "message": message,
            "requestedSchema": {
                "type": "object",
                "properties": {
                    "confirm": {
                        "type": "boolean",
                        "title": "Confirm",
                        "description": "Proceed with the action?",
                        "default": True,
                    }
                },
                "required": ["confirm"],
            },
        },
    }


def name_request(message: str) -> dict[str, Any]:
    """An ElicitRequest (without id) asking for a name."""
    return {
        "method": "elicitation/create",
        "params": {
            "mode": "form",
            "message": message,
            "requestedSchema": {
                "type": "object",
                "properties": {"name": {"type": "string", "title": "Name", "description": "Your name"}},
                "required": ["name"],
            },
        },
    }


def user_name_request(tool_name: str) -> dict[str, Any]:
    """What a ``name_then_task`` tool asks (key ``NAME_KEY``)."""
    return name_request(f"{tool_name}: what is your name?")


def sampling_request(prompt: str) -> dict[str, Any]:
    """A CreateMessageRequest (without id) with one user text message."""
    return {
        "method": "sampling/createMessage",
        "params": {
            "messages": [{"role": "user", "content": {"type": "text", "text": prompt}}],
            "maxTokens": 64,
        },
    }


def text_result(text: str, *, is_error: bool = False) -> dict[str, Any]:
    result: dict[str, Any] = {"content": [{"type": "text", "text": text}]}
    if is_error:
        result["isError"] = True
    return result
