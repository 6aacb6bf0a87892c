"""The 2026-07-28 HTTP endpoint beyond the requests it serves: a method nobody implements, a
request from a foreign Origin, a notification, GET and DELETE; and a task id sent base64-wrapped
in Mcp-Name. HTTP only: on other transports these probes have nothing to ask."""

from __future__ import annotations

import base64
import json
from typing import TYPE_CHECKING

from tasks_conformance.core.causes import reason
from tasks_conformance.core.protocol import HEADER_NAME, HEADER_PROTOCOL_VERSION
from tasks_conformance.core.wirelog import FrameTag, Purpose, tagging
from tasks_conformance.core.wires import WireDialect
from tasks_conformance.server.evidence import Base64Name, BaseHttp, DeclaredCall, HttpOutcome
from tasks_conformance.server.evidence.reasons import HTTP_FIX
from tasks_conformance.server.probes import probe
from tasks_conformance.server.probes.engine.context import ProbeContext
from tasks_conformance.server.session.extension import ExtensionSession

if TYPE_CHECKING:
    from tasks_conformance.core.transports.http import HttpTransport

UNKNOWN_METHOD = "tasks-conformance/no-such-method"
# A host under .invalid can be nobody's own origin (RFC 2606).
FOREIGN_ORIGIN = "http://tasks-conformance.invalid"
# GET may open an event stream that never ends: its first bytes decide, then it is cut off.
RAW_DEADLINE_S = 3.0


def _stateless(dialect: WireDialect) -> bool:
    # Where a request stands on its own, no session stands behind the endpoint either.
    return dialect.self_contained("tools/list")


def _http(ctx: ProbeContext) -> tuple[HttpTransport, ExtensionSession] | None:
    transport, session = ctx.session.transport, ctx.session
    if transport.kind != "http":
        return None
    from tasks_conformance.core.transports.http import HttpTransport  # httpx: HTTP runs only

    if not isinstance(transport, HttpTransport) or not isinstance(session, ExtensionSession):
        return None
    return transport, session


async def _raw(transport: HttpTransport, method: str, data: bytes, headers: dict[str, str], note: str,
               deadline_s: float) -> HttpOutcome:
    # Tagged like a session's requests: a probe's, over this connection of its own.
    with tagging(FrameTag(Purpose.PROBE).on(transport.wire.connection_number(transport))):
        seq, ended, messages = await transport.raw_exchange(method, data, headers, deadline_s=deadline_s, note=note)
    if ended is None:
        return HttpOutcome(seq, None, tuple(messages), problem="the exchange did not end")
    meta = ended.http
    length = meta.header("content-length", response=True) if meta is not None else None
    has_body = bool(messages) or (length is not None and length.strip() not in ("", "0"))
    session_id = meta.header("mcp-session-id", response=True) if meta is not None else None
    return HttpOutcome(seq, ended.status, tuple(messages), has_body, session_id, ended.problem)


@probe(BaseHttp, brief=True, order=47, applies=_stateless,
       description="HTTP: a method nobody implements, a foreign Origin, a notification, GET and DELETE on the endpoint")
async def base_http(ctx: ProbeContext) -> None:
    rec = ctx.record(BaseHttp)
    found = _http(ctx)
    if found is None:
        rec.not_run = reason(f"HTTP only; this run is over {ctx.session.transport.kind}", HTTP_FIX)
        return
    transport, session = found
    rec.unknown_method = await session.request(UNKNOWN_METHOD, {}, purpose="a method nobody implements")
    rec.foreign_origin = await session.request("tools/list", {}, headers={"Origin": FOREIGN_ORIGIN},
                                               purpose="a foreign Origin")
    method = "notifications/cancelled"
    params = session.build_params(method, {"requestId": "tasks-conformance-never-sent", "reason": "probe"},
                                  declare_tasks=False)
    body = json.dumps({"jsonrpc": "2.0", "method": method, "params": params}).encode()
    # Outside the peer, on a connection of its own: these exchanges carry no JSON-RPC answer to wait for.
    raw = transport.fresh()
    await raw.start()
    try:
        timeout = min(ctx.config.timeout_s, RAW_DEADLINE_S)
        rec.notification = await _raw(raw, "POST", body, session.base_headers(method, params),
                                      "a notification", ctx.config.timeout_s)
        version = {HEADER_PROTOCOL_VERSION: session.version}
        rec.get = await _raw(raw, "GET", b"", version, "GET on the endpoint", timeout)
        rec.delete = await _raw(raw, "DELETE", b"", version, "DELETE on the endpoint", timeout)
    finally:
        await raw.aclose()
    rec.ran = True


@probe(Base64Name, order=51, needs=(DeclaredCall,), applies=_stateless, needs_task=True,
       description="HTTP: tasks/get with the task id base64-wrapped in Mcp-Name (after an error, the plain one)")
async def base64_name(ctx: ProbeContext) -> None:
    rec = ctx.record(Base64Name)
    if _http(ctx) is None:
        rec.not_run = reason(f"HTTP only; this run is over {ctx.session.transport.kind}", HTTP_FIX)
        return
    tid = rec.task_id = ctx.require_task_id()
    rec.sent_name = "=?base64?" + base64.b64encode(tid.encode("utf-8")).decode("ascii") + "?="
    rec.reply = await ctx.read_tolerating_rate_limit(
        lambda: ctx.session.request("tasks/get", {"taskId": tid}, headers={HEADER_NAME: rec.sent_name},
                                    purpose="Mcp-Name base64-wrapped"))
    if rec.reply.answered and not rec.reply.ok:
        # An error is read as a decoding fault only if the plain Mcp-Name does not get it too.
        rec.control = await ctx.read_tolerating_rate_limit(
            lambda: ctx.session.request("tasks/get", {"taskId": tid}, purpose="Mcp-Name plain (the control)"))
    rec.ran = True
