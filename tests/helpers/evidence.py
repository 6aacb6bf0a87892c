"""Server evidence made by hand for the server checks: a Builder of the frames a run would
record, and the verdict of one check on it."""

from __future__ import annotations

import json
from typing import Any

from tasks_conformance.core.rpc.peer import Reply, RpcError
from tasks_conformance.core.verdict import Verdict
from tasks_conformance.core.wirelog import Frame, WireLog
from tasks_conformance.core.wires import CreatedTask, Wire
from tasks_conformance.server.checks import CHECKS
from tasks_conformance.server.evidence import (
    DeclaredCall,
    Discovery,
    Evidence,
    Intent,
    ProbeRecord,
    ToolChoice,
    UndeclaredCall,
)
from tasks_conformance.server.runner import judge

EXT_CAPS = {"extensions": {"io.modelcontextprotocol/tasks": {}}}


class Builder:
    """Scripted exchanges into typed probe records, then frozen Evidence."""

    def __init__(self, wire: Wire = Wire.EXTENSION) -> None:
        self.log = WireLog()
        self.discovery = Discovery(protocol_version="2026-07-28" if wire is Wire.EXTENSION else "2025-11-25", wire=wire,
                                   server_capabilities=EXT_CAPS)
        self.records: dict[str, ProbeRecord] = {}
        self.intents: list[Intent] = []
        self.unmatched: list[Frame] = []

    def record(self, kind: type[ProbeRecord]) -> Any:
        rec = self.records.setdefault(kind.probe, kind())
        rec.ran = True
        return rec

    def exchange(self, method: str, params: Any, answer: dict[str, Any], declared: bool = True) -> Reply:
        out = self.log.record("out", "stdio", json.dumps({"jsonrpc": "2.0", "id": 1, "method": method,
                                                            "params": params}).encode())
        inn = self.log.record("in", "stdio", json.dumps({"jsonrpc": "2.0", "id": 1, **answer}).encode())
        reply = Reply(method, 1, out.seq, inn.seq)
        if "result" in answer:
            reply.result = answer["result"]
        else:
            e = answer["error"]
            reply.error = RpcError(e.get("code"), e.get("message"), e.get("data"), "data" in e)
        self.intents.append(Intent(out.seq, method, self.discovery.protocol_version or "", declared))
        return reply

    def call(self, kind: type[DeclaredCall] | type[UndeclaredCall], answer: dict[str, Any],
             params: Any = None, declared: bool = True) -> Reply:
        reply = self.exchange("tools/call", params or {"name": "slow"}, answer, declared=declared)
        rec = self.record(kind)
        rec.call = reply
        rec.created = CreatedTask.read(reply.result if reply.ok else None)
        return reply

    @property
    def ev(self) -> Evidence:
        return Evidence(wire_log=self.log, discovery=self.discovery, transport="stdio",
                        tool=ToolChoice("slow", "test"), intents=tuple(self.intents), records=self.records,
                        unmatched=tuple(self.unmatched))


def verdict(check_id: str, ev: Evidence) -> Verdict:
    return judge(CHECKS[check_id], ev, interrupted=False)
