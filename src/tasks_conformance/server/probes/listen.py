"""subscriptions/listen for the probe task: declared (its notifications), and — last, with the
other undeclared tasks/* requests, because a server that wrongly obeys them could spoil the
rest — undeclared."""

from __future__ import annotations

from tasks_conformance.core.protocol import META_CLIENT_CAPS, META_SUBSCRIPTION_ID, get_path
from tasks_conformance.core.rpc.peer import Reply
from tasks_conformance.core.wirelog import Frame
from tasks_conformance.core.wires import WireDialect
from tasks_conformance.server.evidence import DeclaredCall, Listen, Poll, UndeclaredTasks
from tasks_conformance.server.probes import probe
from tasks_conformance.server.probes.engine.context import ProbeContext
from tasks_conformance.server.session.factory import client_capabilities

LISTEN_PROBE_TIMEOUT_S = 3.0
# The label of the tasks/get that declares only the legacy capabilities.tasks (as messages show it).
LEGACY_ONLY = "tasks/get declaring only the legacy capabilities.tasks"
MAX_LISTEN_FRAMES = 200


def _has_subscriptions(dialect: WireDialect) -> bool:
    return dialect.defines("subscriptions/listen")


def _declares_per_request(dialect: WireDialect) -> bool:
    # Only a request that declares its capabilities itself can leave the tasks declaration out.
    return dialect.self_contained("tasks/get")


async def _listen(ctx: ProbeContext, tid: str, *, declare: bool) -> tuple[Reply, list[Frame]]:
    """subscriptions/listen for one task, watched for a bounded window; returns the reply and
    the notifications that arrived meanwhile. A listen stream may stay open after the task ends
    (nothing obliges the server to close it), so on a stream transport it is then cancelled."""
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


@probe(Listen, order=70, needs=(DeclaredCall,), applies=_has_subscriptions, needs_task=True,
       description="subscriptions/listen for the task's notifications, declaring the extension")
async def listen(ctx: ProbeContext) -> None:
    rec = ctx.record(Listen)
    tid = ctx.require_task_id()
    reply, frames = await _listen(ctx, tid, declare=True)
    rec.task_id, rec.listen = tid, reply
    rec.frames = [f.seq for f in frames][:MAX_LISTEN_FRAMES]
    rec.ran = True


@probe(UndeclaredTasks, order=90, needs=(DeclaredCall, Poll), applies=_declares_per_request, needs_task=True,
       last=True,
       description="tasks/get (also with only the legacy capabilities.tasks), tasks/update, subscriptions/listen "
                   "and tasks/cancel without the declaration")
async def undeclared_tasks(ctx: ProbeContext) -> None:
    rec = ctx.record(UndeclaredTasks)
    tid = ctx.require_task_id()
    rec.task_id = tid
    s = ctx.session
    rec.replies["tasks/get"] = await s.request("tasks/get", {"taskId": tid}, declare_tasks=False, purpose="undeclared")
    # Declaring only the 2025-11-25 form (clientCapabilities.tasks) is no declaration on 2026-07-28.
    legacy_only = {**client_capabilities(ctx.config), "tasks": {"requests": {"tools": {"call": {}}}}}
    rec.replies[LEGACY_ONLY] = await s.request(
        "tasks/get", {"taskId": tid}, declare_tasks=False, meta={META_CLIENT_CAPS: legacy_only},
        purpose="undeclared (legacy capabilities.tasks only)",
    )
    rec.replies["tasks/update"] = await s.request(
        "tasks/update", {"taskId": tid, "inputResponses": {}}, declare_tasks=False, purpose="undeclared"
    )
    reply, frames = await _listen(ctx, tid, declare=False)
    rec.replies["subscriptions/listen"] = reply
    rec.listen_acks = [
        f.seq for f in frames
        if get_path(f.json(), "method") == "notifications/subscriptions/acknowledged"
        and get_path(f.json(), "params", "_meta", META_SUBSCRIPTION_ID) == reply.request_id
    ]
    rec.replies["tasks/cancel"] = await s.request("tasks/cancel", {"taskId": tid}, declare_tasks=False,
                                                  purpose="undeclared")
    rec.ran = True
