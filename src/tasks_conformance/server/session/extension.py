"""The session of the extension wire: the 2026-07-28 base protocol, stateless, every request
carrying its own envelope in `_meta`, with the tasks extension declared there by the dialect. It
also asks server/discover before the run knows whether the server offers the extension."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from tasks_conformance import __version__
from tasks_conformance.core.protocol import (
    HEADER_METHOD,
    HEADER_NAME,
    HEADER_PROTOCOL_VERSION,
    META_CLIENT_CAPS,
    META_CLIENT_INFO,
    META_PROTOCOL_VERSION,
    encode_header_value,
    mcp_name_for,
)
from tasks_conformance.core.rpc.peer import Peer
from tasks_conformance.core.transports.base import Transport
from tasks_conformance.core.wires import DIALECTS, Wire
from tasks_conformance.server.session.base import Session

CLIENT_INFO = {"name": "tasks-conformance", "version": __version__}


def extension_envelope(version: str, capabilities: Mapping[str, Any]) -> dict[str, Any]:
    """The `_meta` every 2026-07-28 request carries: protocol version, client capabilities (as
    configured: the dialect adds or removes the tasks declaration) and client info."""
    return {
        META_PROTOCOL_VERSION: version,
        META_CLIENT_CAPS: copy.deepcopy(dict(capabilities)),
        META_CLIENT_INFO: dict(CLIENT_INFO),
    }


class ExtensionSession(Session):
    dialect = DIALECTS[Wire.EXTENSION]

    def __init__(
        self,
        transport: Transport,
        peer: Peer,
        *,
        version: str,
        capabilities: Mapping[str, Any],
    ) -> None:
        super().__init__(transport, peer)
        self.protocol_version = version
        self.version = version
        self.capabilities = dict(capabilities)

    def base_headers(self, method: str, params: Any) -> dict[str, str]:
        if not self.transport.uses_headers:
            return {}
        headers = {HEADER_PROTOCOL_VERSION: self.version, HEADER_METHOD: method}
        name = mcp_name_for(method, params)
        if name is not None:
            headers[HEADER_NAME] = encode_header_value(name)
        return headers

    def build_params(self, method: str, params: dict[str, Any] | None, *, declare_tasks: bool) -> dict[str, Any]:
        """The params as sent: the envelope in `_meta`, declared (or not) by the dialect."""
        out = dict(params or {})
        out["_meta"] = {**(out.get("_meta") or {}), **extension_envelope(self.version, self.capabilities)}
        return self.dialect.declare(method, out, tasks=declare_tasks)
