"""What every session offers: request/notify with explicit overrides, and a record of intent.

Overrides exist for negative probes: `declare_tasks=False`, `meta` (set a `_meta` key, or
remove it with None), `headers` (set a header, or remove it with None). A session that cannot
honour an override raises UnsupportedOverride; it never drops one silently. The declaration
itself is the dialect's: each session asks its wire's `WireDialect.declare` for every request.
"""

from __future__ import annotations

import abc
from collections.abc import Mapping
from typing import Any

from tasks_conformance.core.rpc.peer import Peer, Reply
from tasks_conformance.core.transports.base import Transport
from tasks_conformance.core.wirelog import FrameTag, Purpose
from tasks_conformance.core.wires import WireDialect
from tasks_conformance.server.evidence.records import Intent


class UnsupportedOverride(Exception):
    pass


def with_meta(params: dict[str, Any], meta: Mapping[str, Any] | None) -> dict[str, Any]:
    """`params` with the probe's `_meta` overrides: a key set, or removed where its value is None."""
    if not meta:
        return params
    envelope = dict(params.get("_meta") or {})
    for k, v in meta.items():
        if v is None:
            envelope.pop(k, None)
        else:
            envelope[k] = v
    return {**params, "_meta": envelope}


class Session(abc.ABC):
    protocol_version: str  # the version its requests carry
    dialect: WireDialect  # the wire whose declaration the session's requests carry

    def __init__(self, transport: Transport, peer: Peer) -> None:
        self.transport = transport
        self.peer = peer
        self.intents: list[Intent] = []
        # The connection this session's requests go over, as their frames' tags name it.
        self.connection = transport.wire.connection_number(transport)

    @abc.abstractmethod
    def build_params(self, method: str, params: dict[str, Any] | None, *, declare_tasks: bool) -> dict[str, Any]:
        """The params as this era sends them: its envelope, declared (or not) by the dialect."""

    async def request(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        declare_tasks: bool = True,
        meta: Mapping[str, Any] | None = None,
        headers: Mapping[str, str | None] | None = None,
        timeout_s: float | None = None,
        purpose: str = "",
        tag: FrameTag | None = None,
    ) -> Reply:
        """Send one request. `purpose` is the frame's note, for people; `tag` is what code reads
        (default: a probe's request), and the session adds its connection to it."""
        full = with_meta(self.build_params(method, params, declare_tasks=declare_tasks), meta)
        hdrs = self._merge_headers(self.base_headers(method, full), headers)
        reply = await self.peer.request(method, full or None, headers=hdrs, timeout_s=timeout_s,
                                        note=purpose or None, tag=self.frame_tag(tag))
        self.intents.append(Intent(reply.request_seq, method, self.protocol_version, declare_tasks))
        return reply

    def frame_tag(self, tag: FrameTag | None) -> FrameTag:
        """The tag a request of this session carries: `tag` (default Purpose.PROBE), sent over
        this session's connection."""
        return (tag or FrameTag(Purpose.PROBE)).on(self.connection)

    async def notify(self, method: str, params: dict[str, Any] | None = None) -> int:
        return await self.peer.notify(method, params, headers=self.base_headers(method, params))

    def base_headers(self, method: str, params: Any) -> dict[str, str]:
        return {}

    def _merge_headers(
        self, base: dict[str, str], overrides: Mapping[str, str | None] | None
    ) -> dict[str, str] | None:
        if overrides:
            if not self.transport.uses_headers:
                raise UnsupportedOverride(f"the {self.transport.kind} transport carries no headers")
            lowered = {k.lower(): k for k in base}
            for k, v in overrides.items():
                existing = lowered.get(k.lower())
                if existing is not None:
                    del base[existing]
                if v is not None:
                    base[k] = v
        return base if self.transport.uses_headers else None

    async def aclose(self) -> None:
        return None
