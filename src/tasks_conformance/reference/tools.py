"""The reference server's tools: names, schemas, task support and annotations.

The descriptors are immutable; every result handed to the wire is a fresh dict.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Literal

TaskSupport = Literal["forbidden", "optional", "required"]

CONFIRM_KEY = "confirm-1"


@dataclass(frozen=True)
class ToolSpec:
    name: str
    title: str
    description: str
    task_support: TaskSupport
    read_only: bool = True
    destructive: bool = False
    takes_text: bool = False
    takes_duration: bool = True
    needs_input: bool = False

    def input_schema(self) -> dict[str, Any]:
        props: dict[str, Any] = {}
        required: list[str] = []
        if self.takes_text:
            props["text"] = {"type": "string", "description": "Text to echo back"}
            required.append("text")
        if self.takes_duration:
            props["durationMs"] = {
                "type": "integer",
                "minimum": 0,
                "description": "How long the work takes, in ms (default: the server's --task-duration-ms)",
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


TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(
        "echo",
        "Echo",
        "Returns its text argument immediately (never runs as a task).",
        "forbidden",
        takes_text=True,
        takes_duration=False,
    ),
    ToolSpec(
        "slow_compute",
        "Slow compute",
        "Works for durationMs, then returns a text result. May run as a task.",
        "optional",
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
    ),
    ToolSpec(
        "rpc_error",
        "RPC error",
        "Works for durationMs, then fails with a JSON-RPC error (-32603).",
        "optional",
    ),
    ToolSpec(
        "confirm_action",
        "Confirm action",
        "Asks the user to confirm (form elicitation), then completes. Needs the elicitation capability.",
        "optional",
        needs_input=True,
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

TOOLS_BY_NAME: MappingProxyType[str, ToolSpec] = MappingProxyType({t.name: t for t in TOOLS})


def confirm_request() -> dict[str, Any]:
    """The input request confirm_action needs (an ElicitRequest without id)."""
    return {
        "method": "elicitation/create",
        "params": {
            "mode": "form",
            "message": "confirm_action: please confirm that the reference server may proceed.",
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


def text_result(text: str, *, is_error: bool = False) -> dict[str, Any]:
    result: dict[str, Any] = {"content": [{"type": "text", "text": text}]}
    if is_error:
        result["isError"] = True
    return result
