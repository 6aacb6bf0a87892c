"""The 2026-07-28 envelope, bent on purpose: a protocol version no server serves, and no client
capabilities at all."""

from __future__ import annotations

from tasks_conformance.core.protocol import HEADER_PROTOCOL_VERSION, META_CLIENT_CAPS, META_PROTOCOL_VERSION
from tasks_conformance.core.wires import WireDialect
from tasks_conformance.server.evidence import BentEnvelope
from tasks_conformance.server.probes import probe
from tasks_conformance.server.probes.engine.context import ProbeContext

# A version that is well formed and that no server can serve.
UNSERVED_VERSION = "1999-01-01"


def _per_request_envelope(dialect: WireDialect) -> bool:
    return dialect.self_contained("tools/list")


@probe(BentEnvelope, brief=True, order=46, applies=_per_request_envelope,
       description="tools/list naming an unserved protocol version, and tools/list without client capabilities")
async def bent_envelope(ctx: ProbeContext) -> None:
    rec = ctx.record(BentEnvelope)
    rec.requested = UNSERVED_VERSION
    # Header and envelope agree, so the only thing wrong is the version itself.
    headers = {HEADER_PROTOCOL_VERSION: UNSERVED_VERSION} if ctx.session.transport.uses_headers else None
    rec.unserved = await ctx.session.request("tools/list", {}, meta={META_PROTOCOL_VERSION: UNSERVED_VERSION},
                                             headers=headers, purpose="unsupported protocol version")
    # The version is kept (so the request is plainly 2026-07-28); only the capabilities are gone.
    rec.no_capabilities = await ctx.session.request("tools/list", {}, declare_tasks=False,
                                                    meta={META_CLIENT_CAPS: None}, purpose="no client capabilities")
    rec.ran = True
