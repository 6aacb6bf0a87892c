"""Wire constants and small helpers shared by the reference server's modules.

Stdlib only: this module is on the stdio start-up path.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from datetime import UTC, datetime
from typing import Any

JSON = dict[str, Any]
RequestId = str | int

LEGACY_VERSION = "2025-11-25"
EXTENSION_VERSION = "2026-07-28"

TASKS_EXT = "io.modelcontextprotocol/tasks"
META_PROTOCOL_VERSION = "io.modelcontextprotocol/protocolVersion"
META_CLIENT_CAPS = "io.modelcontextprotocol/clientCapabilities"
META_SERVER_INFO = "io.modelcontextprotocol/serverInfo"
META_SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId"
META_RELATED_TASK = "io.modelcontextprotocol/related-task"

# JSON-RPC / MCP error codes.
PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
HEADER_MISMATCH = -32020
MISSING_CAPABILITY = -32021
UNSUPPORTED_VERSION = -32022
# What 2025-11-25 SDK servers answer over HTTP without a session (not a spec constant).
LEGACY_BAD_SESSION = -32000
LEGACY_SESSION_NOT_FOUND = -32001

TERMINAL_STATUSES = frozenset({"completed", "failed", "cancelled"})


class RpcError(Exception):
    """A JSON-RPC error to send back. ``http_status`` overrides the transport's default mapping."""

    def __init__(
        self,
        code: int,
        message: str,
        data: Any = None,
        *,
        http_status: int | None = None,
        include_data: bool | None = None,
    ) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data
        self.http_status = http_status
        self.include_data = data is not None if include_data is None else include_data

    def to_json(self) -> JSON:
        err: JSON = {"code": self.code, "message": self.message}
        if self.include_data:
            err["data"] = self.data
        return err


def encode(message: JSON) -> bytes:
    """One compact JSON text (never contains a raw newline)."""
    return json.dumps(message, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def response(request_id: RequestId | None, result: JSON) -> JSON:
    return {"jsonrpc": "2.0", "id": request_id, "result": result}


def error_response(request_id: RequestId | None, error: RpcError) -> JSON:
    return {"jsonrpc": "2.0", "id": request_id, "error": error.to_json()}


def notification(method: str, params: JSON) -> JSON:
    return {"jsonrpc": "2.0", "method": method, "params": params}


def valid_id(value: Any) -> bool:
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def is_response(message: JSON) -> bool:
    return "method" not in message and "id" in message and ("result" in message or "error" in message)


def rfc3339(ts: float) -> str:
    """RFC 3339 UTC with millisecond precision, e.g. ``2026-11-29T15:20:37.123Z``."""
    return datetime.fromtimestamp(ts, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


_B64_SENTINEL = re.compile(r"^=\?base64\?([A-Za-z0-9+/=_-]*)\?=$")


def decode_header_value(value: str) -> str | None:
    """Decode the ``=?base64?<b64>?=`` sentinel form; plain values pass through. None if undecodable."""
    m = _B64_SENTINEL.match(value.strip())
    if m is None:
        return value.strip()
    raw = m.group(1)
    try:
        data = base64.b64decode(raw + "=" * (-len(raw) % 4), altchars=b"-_" if ("-" in raw or "_" in raw) else None)
        return data.decode("utf-8")
    except (binascii.Error, UnicodeDecodeError, ValueError):
        return None


def extension_meta(params: Any) -> JSON | None:
    """The request's ``_meta`` if it names a 2026-07-28-style protocol version, else None."""
    if not isinstance(params, dict):
        return None
    meta = params.get("_meta")
    if isinstance(meta, dict) and META_PROTOCOL_VERSION in meta:
        return meta
    return None
