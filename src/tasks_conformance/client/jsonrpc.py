"""One reading of JSON-RPC 2.0 framing as MCP uses it, for both sides of the client mode: the
scripted servers answer a message that is not one as a strict peer does (`strict_error`), and the
client check tasks-client-wire-framing judges every message the client sent by the same rules
(`problems`).

A message is a JSON object (valid UTF-8 JSON: NaN, Infinity and -Infinity are not JSON) with
`jsonrpc: "2.0"`; a request or a notification has a string `method`, and a request's `id` is a
string or an integer (never null, a boolean or a fraction); a response has an `id` and exactly one
of `result` and `error`. No batches: each message travels on its own. What is said about a bad
message names its kind, never its content, so a client's input is never echoed.

https://www.jsonrpc.org/specification
https://modelcontextprotocol.io/specification/2025-11-25/basic#messages
"""

from __future__ import annotations

import json
from typing import Any, Final

from tasks_conformance.core.protocol import ERR_INVALID_REQUEST

ERR_PARSE: Final = -32700
# What a problem is about: the message's shape (framing) or a request's id.
FRAMING, ID = "framing", "id"


class _NotJson(ValueError):
    pass


def _constant(name: str) -> Any:
    raise _NotJson(f"{name} is no JSON value")


def parse(data: bytes) -> tuple[Any, str | None]:
    """(the JSON value, None), or (None, why `data` is not JSON), strictly: NaN, Infinity and
    -Infinity, which Python's json reads, are refused. Never raises."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return None, f"not valid UTF-8 (byte 0x{data[exc.start]:02x} at offset {exc.start})"
    try:
        return json.loads(text, parse_constant=_constant), None
    except _NotJson as exc:
        return None, f"not JSON: {exc}"
    except RecursionError:
        return None, "JSON nested too deeply to parse"
    except ValueError as exc:
        return None, f"not valid JSON ({str(exc)[:120]})"


def valid_id(value: Any) -> bool:
    """A request id as MCP allows it: a string or an integer (true is not 1)."""
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def kind(value: Any) -> str:
    """What a JSON value is, in words, without its content."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a fractional number"
    if isinstance(value, str):
        return "a string"
    return "an array" if isinstance(value, list) else "an object"


def problems(message: Any) -> list[tuple[str, str]]:
    """(FRAMING or ID, what is wrong) for each way one parsed message is not a JSON-RPC 2.0
    message as MCP frames it; empty when it is one."""
    if not isinstance(message, dict):
        batch = " (a batch: MCP sends each message on its own)" if isinstance(message, list) else ""
        return [(FRAMING, f"{kind(message)}, not a message object{batch}")]
    out: list[tuple[str, str]] = []
    if message.get("jsonrpc") != "2.0":
        out.append((FRAMING, 'no "jsonrpc": "2.0"' if "jsonrpc" not in message
                    else f'"jsonrpc" is {kind(message["jsonrpc"])} other than "2.0"'))
    if "method" in message:
        if not isinstance(message["method"], str):
            out.append((FRAMING, f"the method is {kind(message['method'])}, not a string"))
        if "id" in message and not valid_id(message["id"]):
            out.append((ID, f"the request id is {kind(message['id'])}, not a string or an integer"))
    elif "id" not in message or ("result" in message) == ("error" in message):
        out.append((FRAMING, "neither a request, a notification nor a response (an id and one of result or "
                             "error)"))
    return out


def strict_error(message: Any, not_json: str | None) -> dict[str, Any] | None:
    """A strict peer's answer to what it read, when that is no JSON-RPC message: -32700 for what
    is not JSON, -32600 for an invalid message (its id echoed only when it is a valid one, else
    null); None when the message is one, for the server to answer. The error's message names
    the kind of problem, never what was sent."""
    if not_json is not None:
        return {"jsonrpc": "2.0", "id": None, "error": {"code": ERR_PARSE, "message": "Parse error: not JSON"}}
    found = problems(message)
    if not found:
        return None
    rid = message.get("id") if isinstance(message, dict) and valid_id(message.get("id")) else None
    return {"jsonrpc": "2.0", "id": rid, "error": {"code": ERR_INVALID_REQUEST,
                                                   "message": f"Invalid Request: {found[0][1]}"}}


def id_key(value: Any) -> str:
    """A JSON-RPC id as a key: any JSON value the client sent (an array or an object too, which
    cannot key a dict), with true never the same as 1."""
    try:
        return json.dumps(value, sort_keys=True, separators=(",", ":"))
    except (ValueError, TypeError, RecursionError):
        return repr(value)
