"""Wire names shared by sessions, probes and checks: `_meta` keys, statuses, error codes, headers."""

from __future__ import annotations

import base64
from typing import Any

EXT_TASKS = "io.modelcontextprotocol/tasks"
META_PROTOCOL_VERSION = "io.modelcontextprotocol/protocolVersion"
META_CLIENT_CAPS = "io.modelcontextprotocol/clientCapabilities"
META_CLIENT_INFO = "io.modelcontextprotocol/clientInfo"
META_SERVER_INFO = "io.modelcontextprotocol/serverInfo"
META_RELATED_TASK = "io.modelcontextprotocol/related-task"
META_SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId"
# The 2026-07-28 subscription: the request that opens one, and the server's first message on it.
METHOD_LISTEN = "subscriptions/listen"
METHOD_ACKNOWLEDGED = "notifications/subscriptions/acknowledged"

TASK_STATUSES = ("working", "input_required", "completed", "failed", "cancelled")
# A tuple, not a set: `status in TERMINAL_STATUSES` is asked of whatever a peer sent, and a list or
# object there must read as "not terminal", never raise (a set would hash it: TypeError).
TERMINAL_STATUSES = ("completed", "failed", "cancelled")

ERR_HEADER_MISMATCH = -32020
ERR_MISSING_CAPABILITY = -32021
ERR_UNSUPPORTED_VERSION = -32022
ERR_INVALID_PARAMS = -32602
ERR_METHOD_NOT_FOUND = -32601
ERR_INVALID_REQUEST = -32600
ERR_INTERNAL = -32603
DRAFT_CODES = {-32001: -32020, -32003: -32021, -32004: -32022}
RENUMBER_HINT = "the core renumbered its draft codes in commit f505a6c7 (2026-06-12)"

HEADER_PROTOCOL_VERSION = "MCP-Protocol-Version"
HEADER_METHOD = "Mcp-Method"
HEADER_NAME = "Mcp-Name"
HEADER_SESSION = "Mcp-Session-Id"


def _safe_ascii(value: str) -> bool:
    return all(0x20 <= ord(c) < 0x7F for c in value) and value == value.strip()


def encode_header_value(value: str) -> str:
    """Values that are not safe ASCII, or that look like the sentinel themselves, travel as
    =?base64?<b64 of UTF-8>?= (the Streamable HTTP transport's value encoding)."""
    if _safe_ascii(value) and not (value.startswith("=?base64?") and value.endswith("?=")):
        return value
    # surrogatepass: an id with a lone surrogate (JSON allows one) still travels, never raises.
    return "=?base64?" + base64.b64encode(value.encode("utf-8", "surrogatepass")).decode("ascii") + "?="


def decode_header_value(value: str) -> str:
    if value.startswith("=?base64?") and value.endswith("?="):
        try:
            return base64.b64decode(value[9:-2], validate=True).decode("utf-8")
        except (ValueError, UnicodeDecodeError):
            return value
    return value


def mcp_name_for(method: str, params: Any) -> str | None:
    """The Mcp-Name a request carries: tool name, resource URI, prompt name, or taskId."""
    if not isinstance(params, dict):
        return None
    key = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}.get(method)
    if key is None and method in ("tasks/get", "tasks/update", "tasks/cancel"):
        key = "taskId"
    value = params.get(key) if key else None
    return value if isinstance(value, str) else None


def get_path(obj: Any, *path: str) -> Any:
    for p in path:
        if not isinstance(obj, dict):
            return None
        obj = obj.get(p)
    return obj
