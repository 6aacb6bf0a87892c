"""The probes: declared and undeclared tools/call, polling, input, unknown ids, routing headers,
cancel, and — last, because a server that wrongly obeys them could spoil the rest — the
undeclared tasks/* requests on the live task."""

from __future__ import annotations

import secrets
import time
from typing import Any

import anyio

from tasks_conformance.probes import probe
from tasks_conformance.probes.context import ProbeContext
from tasks_conformance.protocol import (
    HEADER_METHOD,
    HEADER_NAME,
    META_SUBSCRIPTION_ID,
    TERMINAL_STATUSES,
    encode_header_value,
    get_path,
)
from tasks_conformance.rpc.peer import Reply
from tasks_conformance.session.base import UnsupportedOverride
from tasks_conformance.wirelog import Frame

DEFAULT_POLL_INTERVAL_S = 0.25
MIN_POLL_INTERVAL_S = 0.05
STUCK_INPUT_POLLS = 3
MAX_POLLS = 2_000
LEGACY_REQUESTED_TTL_MS = 60_000
LISTEN_PROBE_TIMEOUT_S = 3.0
# Every poll's answer is kept for the checks; a server sending huge task frames many times a
# second must not grow memory without bound.
POLL_BYTE_BUDGET = 64 * 1024 * 1024


def task_id_of(result: Any) -> tuple[str | None, str]:
    """(taskId, shape) from a creation result: shape is flat, nested or none. Lenient on purpose:
    a wrongly shaped task is still followed, so each later check judges only its own rule."""
    if not isinstance(result, dict):
        return None, "none"
    tid = result.get("taskId")
    if isinstance(tid, str):
        return tid, "flat"
    nested = result.get("task")
    if isinstance(nested, dict) and isinstance(nested.get("taskId"), str):
        return nested["taskId"], "nested"
    return None, "none"


def task_fields(result: Any) -> dict[str, Any]:
    """The task object inside a result, whichever way it is shaped."""
    if not isinstance(result, dict):
        return {}
    if "taskId" not in result and isinstance(result.get("task"), dict):
        return dict(result["task"])
    return result


def poll_interval_s(task: dict[str, Any], wire: str) -> float:
    key = "pollIntervalMs" if wire == "extension" else "pollInterval"
    value = task.get(key)
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0:
        return float(value) / 1000.0
    return DEFAULT_POLL_INTERVAL_S


def answers_for(pending: dict[str, Any], responses: dict[str, Any]) -> dict[str, Any]:
    """Match --input-responses to the outstanding inputRequests.

    By key first. Servers may mint their own keys (e.g. "<taskId>:<hex>"), which no answer
    written before the run can name, so an unmatched request then takes the "*" answer, or
    else the first answer shaped for its method (an ElicitResult has "action"; a
    CreateMessageResult has "role" and "content"; a ListRootsResult has "roots").
    """
    shapes = {"elicitation/create": ("action",), "sampling/createMessage": ("role", "content"),
              "roots/list": ("roots",)}
    out: dict[str, Any] = {}
    for key, request in pending.items():
        if key in responses:
            out[key] = responses[key]
            continue
        if "*" in responses:
            out[key] = responses["*"]
            continue
        method = get_path(request, "method")
        want = shapes.get(method) if isinstance(method, str) else None
        for answer in responses.values():
            if want and isinstance(answer, dict) and all(k in answer for k in want):
                out[key] = answer
                break
    return out


def _tool_params(ctx: ProbeContext) -> dict[str, Any]:
    tool = ctx.evidence.tool
    assert tool is not None and tool.name is not None
    return {"name": tool.name, "arguments": dict(tool.arguments)}


@probe(name="declared-call", order=10, needs_tool=True,
       description="call the probe tool declaring tasks support (extension _meta / legacy params.task)")
async def declared_call(ctx: ProbeContext) -> None:
    rec = ctx.record("declared-call")
    params = _tool_params(ctx)
    if ctx.wire == "legacy":
        params["task"] = {"ttl": LEGACY_REQUESTED_TTL_MS}
    reply = await ctx.session.request("tools/call", params, declare_tasks=True, purpose="declared tools/call")
    rec.replies["call"] = reply
    tid, shape = task_id_of(reply.result if reply.ok else None)
    rec.data.update(task_id=tid, shape=shape, task=task_fields(reply.result) if tid else None)
    rec.ran = True


@probe(name="poll", order=20, needs=("declared-call",), needs_task=True,
       description="poll tasks/get until the task is terminal (answering input when given)")
async def poll(ctx: ProbeContext) -> None:
    rec = ctx.record("poll")
    tid = ctx.evidence.require_task_id()
    rec.ran = True
    cfg = ctx.config
    started = time.monotonic()
    deadline = started + cfg.poll_timeout_s
    first_task = ctx.evidence.probe("declared-call").data.get("task") or {}
    interval = poll_interval_s(first_task, ctx.wire)
    gets: list[Reply] = []
    statuses: list[str] = []
    stuck = 0
    polled_bytes = 0
    answered: set[str] = set()
    stop = "poll-timeout"
    legacy_result_called = False
    for n in range(MAX_POLLS):
        reply = await ctx.session.request("tasks/get", {"taskId": tid}, purpose=f"poll #{n + 1}")
        gets.append(reply)
        rec.replies[f"get#{n + 1}"] = reply
        frame = ctx.evidence.wire_log.get(reply.response_seq) if reply.response_seq else None
        polled_bytes += len(frame.data) if frame is not None else 0
        if polled_bytes > POLL_BYTE_BUDGET:
            stop = "poll-budget"
            break
        if not reply.ok:
            stop = "get-error"
            break
        task = reply.result
        status = task.get("status")
        statuses.append(status if isinstance(status, str) else repr(status))
        interval = poll_interval_s(task, ctx.wire)
        if isinstance(status, str) and status in TERMINAL_STATUSES:
            stop = "terminal"
            break
        if status == "input_required":
            if ctx.wire == "legacy":
                # Legacy input travels on the tasks/result stream as an elicitation request.
                await _legacy_result(ctx, rec, tid)
                legacy_result_called = True
                stuck += 1
            elif cfg.input_responses:
                outstanding = get_path(task, "inputRequests")
                pending = (
                    {k: v for k, v in outstanding.items() if k not in answered} if isinstance(outstanding, dict) else {}
                )
                answers = answers_for(pending, cfg.input_responses)
                if answers:
                    upd = await ctx.session.request(
                        "tasks/update", {"taskId": tid, "inputResponses": answers}, purpose="answer input"
                    )
                    rec.replies[f"update#{len(answered) + 1}"] = upd
                    answered.update(answers)
                    rec.data.setdefault("updates", []).append(
                        {"keys": sorted(answers), "seq": upd.request_seq}
                    )
                    stuck = 0
                elif pending:
                    # Requests we have no answer for: the task can only stay parked.
                    stuck += 1
                    rec.data["unanswered_keys"] = sorted(pending)
                # else: every outstanding key was answered; the ack may precede the change
                # (S-EXT-MAY-05), so keep polling until --poll-timeout.
            else:
                stuck += 1
            if stuck >= STUCK_INPUT_POLLS:
                stop = "stuck-input-required"
                break
        else:
            stuck = 0
        left = deadline - time.monotonic()
        if left <= 0:
            stop = "poll-timeout"
            break
        await anyio.sleep(min(max(interval, MIN_POLL_INTERVAL_S), left))
        if time.monotonic() >= deadline:
            # One last look exactly at the deadline would overrun it; stop here.
            stop = "poll-timeout"
            break
    rec.data.update(
        statuses=statuses,
        stop=stop,
        final_status=statuses[-1] if statuses else None,
        saw_input_required="input_required" in statuses,
        elapsed_ms=int((time.monotonic() - started) * 1000),
        gets=[g.request_seq for g in gets],
    )
    if ctx.wire == "legacy" and stop == "terminal" and not legacy_result_called:
        await _legacy_result(ctx, rec, tid)
    rec.elapsed_ms = rec.data["elapsed_ms"]


async def _legacy_result(ctx: ProbeContext, rec: Any, tid: str) -> None:
    before = len(ctx.session.peer.server_requests)
    reply = await ctx.session.request("tasks/result", {"taskId": tid}, purpose="legacy tasks/result")
    rec.replies["result"] = reply
    rec.data["elicitations"] = [f.seq for f in ctx.session.peer.server_requests[before:]]


@probe(name="undeclared-call", order=30, needs_tool=True,
       description="the same tools/call without declaring tasks support")
async def undeclared_call(ctx: ProbeContext) -> None:
    rec = ctx.record("undeclared-call")
    reply = await ctx.session.request(
        "tools/call", _tool_params(ctx), declare_tasks=False, purpose="undeclared tools/call"
    )
    rec.replies["call"] = reply
    tid, shape = task_id_of(reply.result if reply.ok else None)
    rec.data.update(task_id=tid, shape=shape)
    rec.ran = True


def unknown_task_id() -> str:
    return "tasks-conformance-unknown-" + secrets.token_hex(8)


@probe(name="invalid-id", order=40, description="tasks/* on a task id the server never issued")
async def invalid_id(ctx: ProbeContext) -> None:
    rec = ctx.record("invalid-id")
    tid = unknown_task_id()
    rec.data["task_id"] = tid
    rec.replies["get"] = await ctx.session.request("tasks/get", {"taskId": tid}, purpose="unknown id")
    if ctx.wire == "extension":
        rec.replies["update"] = await ctx.session.request(
            "tasks/update", {"taskId": tid, "inputResponses": {}}, purpose="unknown id"
        )
    else:
        rec.replies["result"] = await ctx.session.request("tasks/result", {"taskId": tid}, purpose="unknown id")
    if legacy_can_cancel(ctx):
        rec.replies["cancel"] = await ctx.session.request("tasks/cancel", {"taskId": tid}, purpose="unknown id")
    rec.ran = True


def legacy_can_cancel(ctx: ProbeContext) -> bool:
    """tasks/cancel is optional on 2025-11-25: only a server declaring tasks.cancel is asked."""
    if ctx.wire != "legacy":
        return True
    caps = ctx.evidence.discovered.server_capabilities
    tasks = get_path(caps, "tasks") or get_path(caps, "experimental", "tasks")
    return get_path(tasks, "cancel") is not None


@probe(name="name-routing", order=50, needs=("declared-call", "poll"), wires=("extension",), needs_task=True,
       description="tasks/get whose Mcp-Name (then Mcp-Method) header disagrees with the body (HTTP)")
async def name_routing(ctx: ProbeContext) -> None:
    rec = ctx.record("name-routing")
    if not ctx.session.transport.uses_headers:
        rec.not_run = f"the {ctx.session.transport.kind} transport has no headers"
        return
    tid = ctx.evidence.require_task_id()
    wrong = "not-" + tid
    rec.data.update(task_id=tid, sent_name=wrong)
    try:
        rec.replies["mismatch"] = await ctx.session.request(
            "tasks/get", {"taskId": tid}, headers={HEADER_NAME: encode_header_value(wrong)}, purpose="Mcp-Name mismatch"
        )
        # A method name no server serves, so a server that routes by the header cannot act on it.
        rec.replies["method-mismatch"] = await ctx.session.request(
            "tasks/get", {"taskId": tid}, headers={HEADER_METHOD: "tasks/conformance-mismatch"},
            purpose="Mcp-Method mismatch",
        )
    except UnsupportedOverride as exc:
        rec.harness_problem = str(exc)
        return
    rec.ran = True


@probe(name="cancel", order=60, needs=("declared-call", "poll"),
       description="tasks/cancel on a task (extension: the probe task; legacy: a fresh task)")
async def cancel(ctx: ProbeContext) -> None:
    rec = ctx.record("cancel")
    if not legacy_can_cancel(ctx):
        rec.not_run = "the server does not declare capabilities.tasks.cancel"
        rec.data["no_cancel_capability"] = True
        return
    if ctx.wire == "extension":
        tid = ctx.evidence.created_task_id
        if tid is None:
            rec.not_run = "no task was created by the declared tools/call"
            return
    else:
        params = _tool_params(ctx)
        params["task"] = {"ttl": LEGACY_REQUESTED_TTL_MS}
        create = await ctx.session.request("tools/call", params, purpose="second task, to cancel")
        rec.replies["create"] = create
        tid, _shape = task_id_of(create.result if create.ok else None)
        if tid is None:
            rec.not_run = "the second declared tools/call created no task"
            return
    rec.data["task_id"] = tid
    rec.data["status_before"] = ctx.evidence.probe("poll").data.get("final_status")
    rec.replies["cancel"] = await ctx.session.request("tasks/cancel", {"taskId": tid}, purpose="cancel")
    rec.replies["after"] = await ctx.session.request("tasks/get", {"taskId": tid}, purpose="after cancel")
    probe_task = ctx.evidence.created_task_id
    if ctx.wire == "legacy" and probe_task and ctx.evidence.probe("poll").data.get("stop") == "terminal":
        # 2025-11-25: cancelling a task that already finished MUST be rejected.
        rec.replies["cancel-terminal"] = await ctx.session.request(
            "tasks/cancel", {"taskId": probe_task}, purpose="cancel a terminal task"
        )
    rec.ran = True


async def _listen(ctx: ProbeContext, tid: str, *, declare: bool) -> tuple[Reply, list[Frame]]:
    """subscriptions/listen for one task, watched for a bounded window; returns the reply and
    the notifications that arrived meanwhile. A listen stream may stay open after the task ends
    (nothing obliges the server to close it), so on stdio it is then cancelled."""
    s = ctx.session
    before = len(s.peer.notifications)
    reply = await s.request(
        "subscriptions/listen", {"notifications": {"taskIds": [tid]}}, declare_tasks=declare,
        timeout_s=min(ctx.config.timeout_s, LISTEN_PROBE_TIMEOUT_S),
        purpose="declared listen" if declare else "undeclared",
    )
    if not reply.answered and s.transport.kind != "http" and s.peer.closed is None:
        await s.notify("notifications/cancelled", {"requestId": reply.request_id, "reason": "probe done"})
    return reply, list(s.peer.notifications[before:])


@probe(name="listen", order=70, needs=("declared-call", "poll"), wires=("extension",), needs_task=True,
       description="subscriptions/listen for the task's notifications, declaring the extension")
async def listen(ctx: ProbeContext) -> None:
    rec = ctx.record("listen")
    tid = ctx.evidence.require_task_id()
    reply, frames = await _listen(ctx, tid, declare=True)
    rec.replies["listen"] = reply
    rec.data.update(
        task_id=tid,
        request_id=reply.request_id,
        frames=[f.seq for f in frames][:200],
    )
    rec.ran = True


@probe(name="undeclared-tasks", order=90, needs=("declared-call", "poll"), wires=("extension",), needs_task=True,
       description="tasks/get, tasks/update, subscriptions/listen and tasks/cancel without the declaration")
async def undeclared_tasks(ctx: ProbeContext) -> None:
    rec = ctx.record("undeclared-tasks")
    tid = ctx.evidence.require_task_id()
    rec.data["task_id"] = tid
    s = ctx.session
    rec.replies["tasks/get"] = await s.request("tasks/get", {"taskId": tid}, declare_tasks=False,
                                               purpose="undeclared")
    rec.replies["tasks/update"] = await s.request(
        "tasks/update", {"taskId": tid, "inputResponses": {}}, declare_tasks=False, purpose="undeclared"
    )
    listen, frames = await _listen(ctx, tid, declare=False)
    rec.replies["subscriptions/listen"] = listen
    acks = [
        f.seq for f in frames
        if get_path(f.json(), "method") == "notifications/subscriptions/acknowledged"
        and get_path(f.json(), "params", "_meta", META_SUBSCRIPTION_ID) == listen.request_id
    ]
    rec.data["listen_acks"] = acks
    rec.replies["tasks/cancel"] = await s.request("tasks/cancel", {"taskId": tid}, declare_tasks=False,
                                                  purpose="undeclared")
    rec.ran = True
