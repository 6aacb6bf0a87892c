"""The 2026-07-28 envelope, bent on purpose: a protocol version no server serves."""

from __future__ import annotations

from tasks_conformance.evidence import UnsupportedVersion
from tasks_conformance.probes import probe
from tasks_conformance.probes.context import ProbeContext
from tasks_conformance.protocol import HEADER_PROTOCOL_VERSION, META_PROTOCOL_VERSION
from tasks_conformance.wires import WireDialect

# A version that is well formed and that no server can serve.
UNSERVED_VERSION = "1999-01-01"


def _per_request_envelope(dialect: WireDialect) -> bool:
    return dialect.per_request_declaration


@probe(UnsupportedVersion, order=46, applies=_per_request_envelope,
       description="tools/list whose envelope (and MCP-Protocol-Version header) names an unserved protocol version")
async def unsupported_version(ctx: ProbeContext) -> None:
    rec = ctx.record(UnsupportedVersion)
    rec.requested = UNSERVED_VERSION
    # Header and envelope agree, so the only thing wrong is the version itself.
    headers = {HEADER_PROTOCOL_VERSION: UNSERVED_VERSION} if ctx.session.transport.uses_headers else None
    rec.reply = await ctx.session.request("tools/list", {}, meta={META_PROTOCOL_VERSION: UNSERVED_VERSION},
                                          headers=headers, purpose="unsupported protocol version")
    rec.ran = True
