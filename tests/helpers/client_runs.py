"""Client traffic made by hand for the client checks: the exchanges of one scenario, each
request with its answer, as the client mode records them."""

from __future__ import annotations

from typing import Any

from tasks_conformance.client.evidence import Exchange, ScenarioRun
from tasks_conformance.client.launch import ClientRun
from tasks_conformance.client.scenarios import BY_NAME
from tasks_conformance.core.protocol import EXT_TASKS, META_CLIENT_CAPS, META_PROTOCOL_VERSION
from tasks_conformance.core.wirelog import HttpMeta

TASK = "task-1"


def task_meta(tasks: bool = True) -> dict[str, Any]:
    caps: dict[str, Any] = {"extensions": {EXT_TASKS: {}}} if tasks else {}
    return {META_PROTOCOL_VERSION: "2026-07-28", META_CLIENT_CAPS: caps}


class Played:
    """The exchanges of one scenario as a client played it, in order: each request with the answer it got."""

    def __init__(self, scenario: str) -> None:
        self.scenario = scenario
        self.exchanges: list[Exchange] = []

    def send(self, method: str, params: dict[str, Any], result: dict[str, Any] | None, *, at: float) -> Played:
        seq = 2 * len(self.exchanges) + 1
        params = {**params, "_meta": task_meta()}
        headers = [("MCP-Protocol-Version", "2026-07-28"), ("Mcp-Method", method)]
        if "taskId" in params:
            headers.append(("Mcp-Name", params["taskId"]))
        message = {"jsonrpc": "2.0", "id": seq, "method": method, "params": params}
        reply = {"jsonrpc": "2.0", "id": seq, "result": result} if result is not None else None
        self.exchanges.append(Exchange(seq, at, message, HttpMeta("POST", "http://127.0.0.1/mcp", 200,
                                                                  tuple(headers)),
                                       seq + 1 if reply else None, at + 0.01 if reply else None, reply))
        return self

    def create(self, *, at: float = 0.0) -> Played:
        return self.send("tools/call", {"name": "scripted_task", "arguments": {}},
                         {"resultType": "task", "taskId": TASK, "status": "working", "pollIntervalMs": 200}, at=at)

    def get(self, status: str, *, at: float, **fields: Any) -> Played:
        return self.send("tasks/get", {"taskId": TASK},
                         {"resultType": "complete", "taskId": TASK, "status": status, "pollIntervalMs": 200,
                          **fields}, at=at)

    def done(self) -> ScenarioRun:
        client = ClientRun(argv=("client",), started=True, exit_code=0, timed_out=False, duration_s=1.0,
                           stderr_tail="", stdout_tail="", outcome=None)
        return ScenarioRun(BY_NAME[self.scenario], "extension", client, tuple(self.exchanges), reached=True)
