"""tasks/* on a task id the server never issued: which requests, the dialect says."""

from __future__ import annotations

import secrets

from tasks_conformance.server.evidence import InvalidId, UnknownIdAnswer
from tasks_conformance.server.probes import probe
from tasks_conformance.server.probes.engine.context import ProbeContext


def unknown_task_id() -> str:
    return "tasks-conformance-unknown-" + secrets.token_hex(8)


@probe(InvalidId, brief=True, order=40, description="tasks/* on a task id the server never issued")
async def invalid_id(ctx: ProbeContext) -> None:
    rec = ctx.record(InvalidId)
    tid = unknown_task_id()
    rec.task_id = tid
    for asked in ctx.dialect.unknown_id_probes(tid, ctx.discovery.server_capabilities):
        reply = await ctx.session.request(asked.method, dict(asked.params), purpose="unknown id")
        rec.answers.append(UnknownIdAnswer(asked, reply))
    rec.ran = True
