"""Server evidence made by hand for the server checks: one builder of the frames a run would
record and the probe records they fill (Builder; Wire2025 for the 2025-11-25 wire, whose
requests and answers interleave), and the verdict of one check on it."""

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
    Poll,
    ProbeRecord,
    StopReason,
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
        self.next_id = 0

    def record(self, kind: type[ProbeRecord]) -> Any:
        rec = self.records.setdefault(kind.probe, kind())
        rec.ran = True
        return rec

    def send(self, method: str, params: Any) -> Reply:
        """A request with an id of its own, answered later (answer): requests and answers interleave."""
        self.next_id += 1
        out = self.log.record("out", "stdio", json.dumps({"jsonrpc": "2.0", "id": self.next_id, "method": method,
                                                            "params": params}).encode())
        return Reply(method, self.next_id, out.seq)

    def answer(self, reply: Reply, answer: dict[str, Any]) -> Reply:
        inn = self.log.record("in", "stdio", json.dumps({"jsonrpc": "2.0", "id": reply.request_id,
                                                           **answer}).encode())
        reply.response_seq = inn.seq
        if "result" in answer:
            reply.result = answer["result"]
        else:
            e = answer["error"]
            reply.error = RpcError(e.get("code"), e.get("message"), e.get("data"), "data" in e)
        return reply

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


LEGACY_CAPS = {"tasks": {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}}


TS = "2026-01-01T00:00:00Z"


def task(status: str, tid: str = "t1") -> dict[str, Any]:
    return {"taskId": tid, "status": status, "createdAt": TS, "lastUpdatedAt": TS, "ttl": 60000}


class Wire2025(Builder):
    """A legacy run, written frame by frame so that requests and answers can interleave: each
    request its own id (send), answered when the test says (answer)."""

    def __init__(self, caps: dict[str, Any] | None = None) -> None:
        super().__init__(Wire.LEGACY)
        self.discovery = Discovery(protocol_version="2025-11-25", wire=Wire.LEGACY,
                                   server_capabilities=LEGACY_CAPS if caps is None else caps)

    def exchange(self, method: str, params: Any, answer: dict[str, Any], declared: bool = True) -> Reply:
        """Each exchange its own id; a 2025-11-25 run records no intents."""
        return self.answer(self.send(method, params), answer)

    def create(self) -> None:
        rec = self.record(DeclaredCall)
        rec.call = self.exchange("tools/call", {"name": "slow", "task": {}}, {"result": {"task": task("working")}})
        rec.created = CreatedTask.read(rec.call.result)

    def poll(self, status: str) -> Reply:
        rec = self.record(Poll)
        reply = self.exchange("tasks/get", {"taskId": "t1"}, {"result": task(status)})
        rec.gets.append(reply)
        rec.statuses.append(status)
        if status in ("completed", "failed", "cancelled"):
            rec.stop = StopReason.TERMINAL
        return reply

    def final_result(self, content: str = "done") -> None:
        self.record(Poll).result = self.exchange("tasks/result", {"taskId": "t1"}, {"result": result(content)})


def result(text: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}],
            "_meta": {"io.modelcontextprotocol/related-task": {"taskId": "t1"}}}
