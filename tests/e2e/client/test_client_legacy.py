"""`tasks-conformance client` on the 2025-11-25 wire: the scripted legacy server behaves as a
compliant 2025-11-25 server, the reference client passes every legacy scenario without a warning,
each legacy break of fixtures/broken_client.py breaks exactly the check that owns its rule (or
warns there, for a SHOULD or a derived rule), the legacy checks judge hand-built evidence for the
rules no break exercises, and the two eras' checks never judge each other's runs."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import AsyncIterator
from types import ModuleType
from typing import Any

import anyio
import httpx
import pytest
from helpers.client_fast import QUICK_WAITS
from helpers.paths import ROOT, load_module
from helpers.zygote import forked, server_launch

from tasks_conformance.client.checks import CLIENT_CHECKS
from tasks_conformance.client.evidence import Exchange, ScenarioRun
from tasks_conformance.client.launch import ClientRun
from tasks_conformance.client.runner import ClientConfig, execute_client
from tasks_conformance.client.scenarios import BY_NAME, LEGACY_SCENARIOS, LegacyScript, Snapshot, scenario_names
from tasks_conformance.client.scripted.http import serving
from tasks_conformance.client.scripted.legacy import LegacyScriptedServer
from tasks_conformance.client.scripted.waits import DEFAULT_WAITS, ScriptedWaits
from tasks_conformance.core.protocol import EXT_TASKS, META_CLIENT_CAPS, META_RELATED_TASK
from tasks_conformance.core.wirelog import WireLog
from tasks_conformance.core.wires import Wire

BROKEN = ROOT / "fixtures" / "broken_client.py"
REFERENCE = (sys.executable, "-m", "tasks_conformance.client.reference_client")
LEGACY = ("legacy",)
# C-LEG-MUST-05 is derived (the spec states the server's duty): a client that never fetches the
# payload warns (policy P-38), it does not fail; C-LEG-MUST-08 on the client's answer to a task's
# elicitation is read from text no client follows yet, so it warns too (policy P-40).
# C-LEG-MUST-06: a client that stops polling a live task may be waiting for notifications/tasks/status
# or have given up, which the wire cannot tell apart, so it warns (policy P-51).
WARN_ONLY = frozenset({"C-LEG-MUST-05", "C-LEG-MUST-08", "C-LEG-MUST-06"})
# The 2025-11-25 areas: legacy.py, and legacy_rules.py (the rules read from the traffic every scenario makes).
LEGACY_CHECKS = {c.id for c in CLIENT_CHECKS.values() if c.area in ("legacy", "legacy_rules")}
CANCEL_SCENARIO = "tasks-client-legacy-cancel"
JSON = dict[str, Any]


def _load_broken() -> ModuleType:
    return load_module(BROKEN, "broken_client")


BREAKS: dict[str, Any] = {name: b for name, b in _load_broken().BREAKS.items() if b.era == "legacy"}


def _owner(b: Any) -> str:
    """The check a break breaks: the one whose requirements name its rule, or (a policy-only
    check, which cites no requirement it could break) the one it names."""
    if b.check:
        return str(b.check)
    (owner,) = [c.id for c in CLIENT_CHECKS.values() if b.rule in c.requirements]
    return owner


def _run(command: tuple[str, ...], *scenarios: str, eras: tuple[Any, ...] = LEGACY, timeout_s: float = 20) -> Any:
    config = ClientConfig(command=forked(command), eras=eras, scenarios=scenarios, timeout_s=timeout_s, jobs=4,
                          waits=QUICK_WAITS)
    return anyio.run(execute_client, config).result


def _cli(*args: str, timeout: float = 180) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "tasks_conformance", "client", *args], capture_output=True,
                          text=True, timeout=timeout, cwd=ROOT)


def _must(rule: str) -> bool:
    return "-MUST-" in rule and rule not in WARN_ONLY


# -- the reference client and the breaking clients ----------------------------------------------


def test_the_legacy_checks_judge_legacy_scenarios_only_and_the_others_none() -> None:
    legacy = set(scenario_names(Wire.LEGACY))
    assert legacy == {s.name for s in LEGACY_SCENARIOS} and all(n.startswith("tasks-client-legacy-") for n in legacy)
    for check in CLIENT_CHECKS.values():
        assert check.scenarios, check.id  # every check names the runs it reads
        assert (set(check.scenarios) <= legacy) == (check.id in LEGACY_CHECKS), check.id
        assert set(check.scenarios) <= legacy or not set(check.scenarios) & legacy, check.id


def test_every_legacy_break_has_one_owning_legacy_check_and_a_scenario_for_its_rule() -> None:
    assert BREAKS, "no 2025-11-25 break in fixtures/broken_client.py"
    for name, b in BREAKS.items():
        assert _owner(b) in LEGACY_CHECKS, name
        assert _break_scenarios(b), name


def test_the_reference_client_passes_every_legacy_scenario_with_no_warning() -> None:
    result = _run(REFERENCE)
    assert result.outcome == "passed", [(c.id, c.bucket, c.message) for c in result.checks if c.bucket != "passed"]
    assert {c.id for c in result.checks} == LEGACY_CHECKS  # the extension's checks are not in a legacy run
    assert [c.id for c in result.checks if c.warnings] == []
    assert {c.bucket for c in result.checks} == {"passed"}
    assert result.discovery.wire == "legacy" and result.discovery.protocolVersion == "2025-11-25"


def _rule_scenarios(rule: str) -> tuple[str, ...]:
    """The legacy scenarios made to exercise a rule (their `rules` name it)."""
    return tuple(s.name for s in LEGACY_SCENARIOS if rule in s.rules)


def _break_scenarios(b: Any) -> tuple[str, ...]:
    """Where a break shows: the scenarios of its rule, or those of the policy-only check it names."""
    return CLIENT_CHECKS[b.check].scenarios if b.check else _rule_scenarios(b.rule)


def _judge_break(name: str, result: Any) -> None:
    b = BREAKS[name]
    owner = _owner(b)
    by_id = {c.id: c for c in result.checks}
    failed = sorted(c.id for c in result.checks if c.bucket == "failed")
    if _must(b.rule):
        assert failed == [owner], (name, [(c.id, c.message) for c in result.checks if c.bucket == "failed"])
        assert b.rule in by_id[owner].broken, (name, by_id[owner].broken)
        assert by_id[owner].details.get("expected") and by_id[owner].details.get("actual"), by_id[owner].details
    else:
        assert failed == [], (name, [(c.id, c.message) for c in result.checks if c.bucket == "failed"])
        assert any(b.rule in str(w) for w in by_id[owner].warnings), (name, by_id[owner].warnings)
    assert [c.id for c in result.checks if c.bucket == "could-not-run"] == [], name


@pytest.mark.matrix
@pytest.mark.parametrize("name", sorted(BREAKS))
def test_a_legacy_break_breaks_exactly_the_check_that_owns_its_rule(name: str) -> None:
    _judge_break(name, _run((sys.executable, str(BROKEN), "--break", name), *_break_scenarios(BREAKS[name])))


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(BREAKS))
def test_over_every_legacy_scenario_nothing_but_the_owner_fails(name: str) -> None:
    _judge_break(name, _run((sys.executable, str(BROKEN), "--break", name)))


@pytest.mark.parametrize("transport", ["http", "stdio"])
def test_a_client_that_tasks_only_required_tools_runs_every_legacy_scenario(transport: str) -> None:
    """A client may call an optional tool plainly (C-LEG-MAY-01): every scenario that needs a task
    names the required tool, so such a client creates its task there too. It used to leave the
    cancel check could-not-run (blaming task augmentation) and the run incomplete."""
    client = (sys.executable, str(BROKEN), "--freedom", "legacy-required-only")
    config = ClientConfig(command=forked(client), eras=LEGACY, timeout_s=20, jobs=4, transport=transport,
                          server_launch=server_launch(client))
    result = anyio.run(execute_client, config).result
    assert [(c.id, c.message) for c in result.checks if c.bucket == "could-not-run"] == []
    assert result.outcome == "passed", [(c.id, c.bucket, c.message) for c in result.checks if c.bucket != "passed"]
    assert [c.id for c in result.checks if c.warnings] == []


def test_a_cancel_check_whose_scenario_created_no_task_is_not_applicable() -> None:
    """No task in the cancel scenario: nothing to cancel, and no other rule blamed for it."""
    run = _evidence(CANCEL_SCENARIO, _init(DECLARED), _call(1, {"name": "required_task", "arguments": {}},
                                                            {"result": {"content": [], "isError": False}}))
    verdict = _judge("tasks-client-legacy-cancels-with-tasks-cancel", run)
    assert verdict.status == "skipped" and verdict.skip_reason == "not-applicable" and verdict.blocked_by is None


@pytest.mark.slow
def test_both_eras_pass_the_reference_client_and_demo_runs_both() -> None:
    proc = _cli("demo", "--format", "json")
    assert proc.returncode == 0, proc.stdout[-2000:]
    doc = json.loads(proc.stdout)
    assert doc["outcome"] == "passed" and doc["counts"]["passed"] == len(CLIENT_CHECKS)
    assert not [c["id"] for c in doc["checks"] if c.get("warnings")]


# -- the command line --------------------------------------------------------------------------


@pytest.mark.parametrize(("args", "says"), [
    (("--command", "x", "--era", "legacy", "--scenario", "tasks-client-lifecycle"), "a scenario of --era extension"),
    (("--command", "x", "--scenario", "tasks-client-legacy-lifecycle"), "a scenario of --era legacy"),
])
def test_a_scenario_of_another_era_is_a_usage_error(args: tuple[str, ...], says: str) -> None:
    proc = _cli(*args)
    assert proc.returncode == 2 and says in proc.stderr, proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


def test_era_legacy_runs_a_legacy_scenario_from_the_command_line() -> None:
    proc = _cli("--command", " ".join(REFERENCE), "--era", "legacy", "--scenario", "tasks-client-legacy-forbidden",
                "--format", "json")
    assert proc.returncode == 0, proc.stdout[-2000:]
    doc = json.loads(proc.stdout)
    assert {c["id"] for c in doc["checks"]} == LEGACY_CHECKS


def test_the_legacy_scenarios_are_listed_with_their_protocol_version() -> None:
    rows = {r["name"]: r for r in json.loads(_cli("--list-scenarios", "--format", "json").stdout)["scenarios"]}
    for scenario in LEGACY_SCENARIOS:
        row = rows[scenario.name]
        assert row["eras"] == ["legacy"] and row["protocolVersions"] == ["2025-11-25"]
        assert row["checks"] and set(row["checks"]) <= LEGACY_CHECKS
    assert rows["tasks-client-legacy-required"]["context"]["toolName"] == "required_task"
    assert rows["tasks-client-legacy-cancel"]["context"]["cancel"] is True


# -- the scripted 2025-11-25 server ------------------------------------------------------------


class Peer:
    """A raw JSON-RPC client of the scripted server: every reply read as JSON or from SSE."""

    def __init__(self, http: httpx.AsyncClient, url: str) -> None:
        self.http, self.url, self.ids = http, url, 0
        self.session: str | None = None

    async def send(self, method: str, params: JSON | None = None) -> tuple[httpx.Response, JSON]:
        self.ids += 1
        headers = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-11-25"}
        if self.session:
            headers["Mcp-Session-Id"] = self.session
        resp = await self.http.post(self.url, json={"jsonrpc": "2.0", "id": self.ids, "method": method,
                                                    "params": params or {}}, headers=headers)
        if resp.headers.get("content-type", "").startswith("text/event-stream"):
            events = [json.loads(line[6:]) for line in resp.text.splitlines() if line.startswith("data: ")]
            return resp, events[-1]
        return resp, resp.json()


async def _with_server(script: LegacyScript, waits: ScriptedWaits = DEFAULT_WAITS) -> AsyncIterator[Peer]:
    app = LegacyScriptedServer(script, WireLog(), waits)
    async with serving(app) as url, httpx.AsyncClient(timeout=15, trust_env=False) as http:
        yield Peer(http, url)


def _serve(script: LegacyScript, body: Any, waits: ScriptedWaits = DEFAULT_WAITS) -> None:
    async def go() -> None:
        async for peer in _with_server(script, waits):
            await body(peer)
    anyio.run(go)


def test_initialize_opens_a_session_and_declares_the_tasks_capability() -> None:
    async def body(peer: Peer) -> None:
        resp, init = await peer.send("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                                    "clientInfo": {"name": "t", "version": "1"}})
        assert resp.headers.get("mcp-session-id") and init["result"]["protocolVersion"] == "2025-11-25"
        assert init["result"]["capabilities"]["tasks"] == DECLARED["tasks"]
        peer.session = resp.headers["mcp-session-id"]
        note = await peer.http.post(peer.url, json={"jsonrpc": "2.0", "method": "notifications/initialized"})
        assert note.status_code == 202 and note.content == b""
        _, tools = await peer.send("tools/list")
        support = {t["name"]: t.get("execution", {}).get("taskSupport") for t in tools["result"]["tools"]}
        assert support == {"scripted_task": "optional", "required_task": "required", "plain_tool": "forbidden",
                           "unmarked_tool": None}
    _serve(LegacyScript(), body)


def test_tool_level_negotiation_is_answered_as_a_compliant_server_does() -> None:
    async def body(peer: Peer) -> None:
        _, plain_required = await peer.send("tools/call", {"name": "required_task", "arguments": {}})
        _, forbidden_task = await peer.send("tools/call", {"name": "plain_tool", "arguments": {}, "task": {}})
        _, unmarked_task = await peer.send("tools/call", {"name": "unmarked_tool", "arguments": {}, "task": {}})
        _, plain_optional = await peer.send("tools/call", {"name": "scripted_task", "arguments": {}})
        _, created = await peer.send("tools/call", {"name": "scripted_task", "arguments": {}, "task": {"ttl": 1000}})
        assert plain_required["error"]["code"] == forbidden_task["error"]["code"] == -32601
        assert unmarked_task["error"]["code"] == -32601
        assert plain_optional["result"]["content"][0]["text"] == "done"
        task = created["result"]["task"]
        assert task["status"] == "working" and task["pollInterval"] == 200 and "ttl" in task
        assert "resultType" not in created["result"]
        _, update = await peer.send("tasks/update", {"taskId": task["taskId"], "inputResponses": {}})
        assert update["error"]["code"] == -32601  # not a 2025-11-25 method
    _serve(LegacyScript(), body)


def test_without_the_tools_call_capability_params_task_is_ignored() -> None:
    async def body(peer: Peer) -> None:
        _, reply = await peer.send("tools/call", {"name": "scripted_task", "arguments": {}, "task": {}})
        assert reply["result"] == {"content": [{"type": "text", "text": "done"}], "isError": False}
    _serve(BY_NAME["tasks-client-legacy-undeclared"].script, body)  # type: ignore[arg-type]


def test_tasks_result_blocks_until_the_task_ends_then_answers_with_the_related_task() -> None:
    async def body(peer: Peer) -> None:
        _, created = await peer.send("tools/call", {"name": "scripted_task", "arguments": {}, "task": {}})
        task_id = created["result"]["task"]["taskId"]
        resp, result = await peer.send("tasks/result", {"taskId": task_id})  # no poll before: it blocks
        assert resp.headers["content-type"].startswith("text/event-stream")
        assert result["result"]["_meta"][META_RELATED_TASK] == {"taskId": task_id}
        _, got = await peer.send("tasks/get", {"taskId": task_id})
        assert got["result"]["status"] == "completed" and "content" not in got["result"]
        _, again = await peer.send("tasks/result", {"taskId": task_id})  # ended: plain JSON at once
        assert again["result"]["content"] == result["result"]["content"]
        _, late = await peer.send("tasks/cancel", {"taskId": task_id})
        assert late["error"]["code"] == -32602  # a terminal task cannot be cancelled
        _, listed = await peer.send("tasks/list")
        assert [t["taskId"] for t in listed["result"]["tasks"]] == [task_id]
        _, unknown = await peer.send("tasks/get", {"taskId": "nope"})
        assert unknown["error"]["code"] == -32602
    _serve(LegacyScript(reads=(Snapshot("working"), Snapshot("working"), Snapshot("completed"))), body)


def test_a_failed_task_answers_its_error_and_a_cancelled_one_says_so() -> None:
    async def failed(peer: Peer) -> None:
        _, created = await peer.send("tools/call", {"name": "scripted_task", "arguments": {}, "task": {}})
        task_id = created["result"]["task"]["taskId"]
        _, result = await peer.send("tasks/result", {"taskId": task_id})
        assert result["error"] == {"code": -32000, "message": "the scripted tool failed"}
        _, got = await peer.send("tasks/get", {"taskId": task_id})
        assert got["result"]["status"] == "failed" and got["result"]["statusMessage"]

    async def cancelled(peer: Peer) -> None:
        _, created = await peer.send("tools/call", {"name": "scripted_task", "arguments": {}, "task": {}})
        task_id = created["result"]["task"]["taskId"]
        _, cancel = await peer.send("tasks/cancel", {"taskId": task_id})
        assert cancel["result"]["status"] == "cancelled" and META_RELATED_TASK not in cancel["result"].get("_meta", {})
        _, got = await peer.send("tasks/get", {"taskId": task_id})
        assert got["result"]["status"] == "cancelled"

    _serve(BY_NAME["tasks-client-legacy-failed"].script, failed)  # type: ignore[arg-type]
    _serve(BY_NAME["tasks-client-legacy-cancel"].script, cancelled)  # type: ignore[arg-type]


def test_a_task_nobody_cancels_gives_up_so_a_blocked_tasks_result_ends() -> None:

    async def body(peer: Peer) -> None:
        _, created = await peer.send("tools/call", {"name": "scripted_task", "arguments": {}, "task": {}})
        task_id = created["result"]["task"]["taskId"]
        with anyio.fail_after(5):
            _, result = await peer.send("tasks/result", {"taskId": task_id})
        assert result["error"]["code"] == -32603
        _, got = await peer.send("tasks/get", {"taskId": task_id})
        assert got["result"]["status"] == "failed"
    _serve(BY_NAME["tasks-client-legacy-cancel"].script, body, ScriptedWaits(give_up_s=0.3))  # type: ignore[arg-type]


def test_each_initialize_opens_a_session_and_a_task_belongs_to_the_one_that_created_it() -> None:
    """As a second server process over stdio, a second session over HTTP knows none of the first's
    tasks (policy P-47): its tasks/get and tasks/cancel are answered task not found."""
    init = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}

    async def body(peer: Peer) -> None:
        first_resp, _ = await peer.send("initialize", init)
        second_resp, _ = await peer.send("initialize", init)
        first, second = first_resp.headers["mcp-session-id"], second_resp.headers["mcp-session-id"]
        assert first != second
        peer.session = first
        _, created = await peer.send("tools/call", {"name": "scripted_task", "arguments": {}, "task": {}})
        task_id = created["result"]["task"]["taskId"]
        peer.session = second
        _, elsewhere = await peer.send("tasks/get", {"taskId": task_id})
        _, cancel = await peer.send("tasks/cancel", {"taskId": task_id})
        _, listed = await peer.send("tasks/list")
        assert elsewhere["error"]["code"] == cancel["error"]["code"] == -32602 and listed["result"]["tasks"] == []
        peer.session = first
        _, got = await peer.send("tasks/get", {"taskId": task_id})
        assert got["result"]["status"] == "working"
    _serve(BY_NAME["tasks-client-legacy-cancel"].script, body)  # type: ignore[arg-type]


def test_cancel_and_list_exist_only_where_declared() -> None:
    async def body(peer: Peer) -> None:
        _, created = await peer.send("tools/call", {"name": "scripted_task", "arguments": {}, "task": {}})
        _, cancel = await peer.send("tasks/cancel", {"taskId": created["result"]["task"]["taskId"]})
        assert cancel["error"]["code"] == -32601
    _serve(BY_NAME["tasks-client-legacy-cancel-undeclared"].script, body)  # type: ignore[arg-type]


# -- the legacy checks on hand-built evidence (rules no break exercises) ------------------------

DECLARED: JSON = {"tasks": {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}}


def _evidence(name: str, *exchanges: tuple[JSON, JSON | None], outcome: JSON | None = None) -> ScenarioRun:
    """A legacy run from (client message, server result or error object) pairs, 1 s apart."""
    out = []
    for i, (message, reply) in enumerate(exchanges):
        body = None if reply is None else {"jsonrpc": "2.0", "id": message.get("id"), **reply}
        out.append(Exchange(2 * i + 1, float(i), message, None, 2 * i + 2 if body else None,
                            i + 0.1 if body else None, body))
    client = ClientRun((), True, 0, False, 1.0, "", "", outcome)
    return ScenarioRun(BY_NAME[name], "legacy", client, tuple(out), reached=True)


def _init(capabilities: JSON, client_caps: JSON | None = None) -> tuple[JSON, JSON]:
    return ({"jsonrpc": "2.0", "id": 0, "method": "initialize",
             "params": {"protocolVersion": "2025-11-25", "capabilities": client_caps or {}}},
            {"result": {"protocolVersion": "2025-11-25", "capabilities": capabilities}})


def _call(rid: int, params: JSON, reply: JSON | None = None) -> tuple[JSON, JSON | None]:
    return {"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": params}, reply


def _judge(check_id: str, *runs: ScenarioRun) -> Any:
    return CLIENT_CHECKS[check_id].judge(list(runs))


def test_params_task_without_the_servers_capability_fails_must_01() -> None:
    run = _evidence("tasks-client-legacy-undeclared", _init({"tasks": {"cancel": {}}}),
                    _call(1, {"name": "scripted_task", "arguments": {}, "task": {}}))
    verdict = _judge("tasks-client-legacy-task-augmentation", run)
    assert verdict.status == "failed" and verdict.broken == ("C-LEG-MUST-01",)
    elsewhere = _evidence("tasks-client-legacy-lifecycle", _init(DECLARED),
                          ({"jsonrpc": "2.0", "id": 2, "method": "prompts/get", "params": {"name": "p", "task": {}}},
                           None), _call(3, {"name": "scripted_task", "arguments": {}}))
    verdict = _judge("tasks-client-legacy-task-augmentation", elsewhere)
    assert verdict.status == "passed" and "C-LEG-SHOULD-01" in str(verdict.warnings)


def test_the_extension_on_a_legacy_session_fails_must_10_or_warns_in_initialize() -> None:
    opt_in = {"_meta": {META_CLIENT_CAPS: {"extensions": {EXT_TASKS: {}}}}}
    run = _evidence("tasks-client-legacy-lifecycle", _init(DECLARED),
                    _call(1, {"name": "scripted_task", "arguments": {}, **opt_in}))
    verdict = _judge("tasks-client-legacy-no-extension-wire", run)
    assert verdict.status == "failed" and verdict.broken == ("C-LEG-MUST-10",)
    update = _evidence("tasks-client-legacy-lifecycle", _init(DECLARED),
                       ({"jsonrpc": "2.0", "id": 1, "method": "tasks/update", "params": {"taskId": "t"}}, None))
    assert _judge("tasks-client-legacy-no-extension-wire", update).status == "failed"
    listed = _evidence("tasks-client-legacy-lifecycle", _init(DECLARED, {"extensions": {EXT_TASKS: {}}}))
    verdict = _judge("tasks-client-legacy-no-extension-wire", listed)
    assert verdict.status == "passed" and [w.policies for w in verdict.warnings] == [("P-39",)]
    assert "C-EXT-SHOULD-12" in verdict.warnings[0].text


def test_tasks_cancel_to_a_server_without_tasks_cancel_warns_should_07() -> None:
    run = _evidence("tasks-client-legacy-cancel-undeclared", _init({"tasks": {"requests": {"tools": {"call": {}}}}}),
                    ({"jsonrpc": "2.0", "id": 1, "method": "tasks/cancel", "params": {"taskId": "t"}}, None),
                    ({"jsonrpc": "2.0", "id": 2, "method": "tasks/list", "params": {}}, None))
    verdict = _judge("tasks-client-legacy-declared-methods", run)
    assert verdict.status == "passed" and "C-LEG-SHOULD-07" in str(verdict.warnings) and len(verdict.evidence) == 2


def test_an_outcome_other_than_what_tasks_result_answered_warns_p38() -> None:
    created = {"result": {"task": {"taskId": "t1", "status": "working", "pollInterval": 200}}}
    fetched = ({"jsonrpc": "2.0", "id": 2, "method": "tasks/result", "params": {"taskId": "t1"}},
               {"result": {"content": [], "isError": True}})
    run = _evidence("tasks-client-legacy-tool-error", _init(DECLARED),
                    _call(1, {"name": "scripted_task", "arguments": {}, "task": {}}, created), fetched,
                    outcome={"status": "failed", "isError": False, "error": {"code": -32603, "message": "x"}})
    verdict = _judge("tasks-client-legacy-fetches-result", run)
    assert verdict.status == "passed" and [w.policies for w in verdict.warnings] == [("P-38",)]
    kept = _evidence("tasks-client-legacy-tool-error", _init(DECLARED),
                     _call(1, {"name": "scripted_task", "arguments": {}, "task": {}}, created), fetched,
                     outcome={"status": "completed", "isError": True, "error": None})
    assert _judge("tasks-client-legacy-fetches-result", kept).warnings == ()


def test_a_notification_naming_no_task_call_warns_and_one_naming_it_fails() -> None:
    created = {"result": {"task": {"taskId": "t1", "status": "working"}}}
    stray = ({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 99}}, None)
    cancel = ({"jsonrpc": "2.0", "id": 2, "method": "tasks/cancel", "params": {"taskId": "t1"}},
              {"result": {"taskId": "t1", "status": "cancelled"}})
    run = _evidence("tasks-client-legacy-cancel", _init(DECLARED),
                    _call(1, {"name": "scripted_task", "arguments": {}, "task": {}}, created), stray, cancel)
    verdict = _judge("tasks-client-legacy-cancels-with-tasks-cancel", run)
    assert verdict.status == "passed" and [w.policies for w in verdict.warnings] == [("P-35",)]
    named = ({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}, None)
    run = _evidence("tasks-client-legacy-cancel", _init(DECLARED),
                    _call(1, {"name": "scripted_task", "arguments": {}, "task": {}}, created), named)
    assert _judge("tasks-client-legacy-cancels-with-tasks-cancel", run).status == "failed"


# -- task input on the tasks/result stream ------------------------------------------------------


def test_an_elicitation_comes_on_the_tasks_result_stream_and_the_answer_lets_the_task_end() -> None:
    async def body(peer: Peer) -> None:
        await peer.send("initialize", {"protocolVersion": "2025-11-25", "capabilities": {"elicitation": {}}})
        _, created = await peer.send("tools/call", {"name": "scripted_task", "arguments": {}, "task": {}})
        task_id = created["result"]["task"]["taskId"]
        statuses = [(await peer.send("tasks/get", {"taskId": task_id}))[1]["result"]["status"] for _ in range(3)]
        assert statuses == ["working", "input_required", "input_required"]  # it waits for its answer
        request = {"jsonrpc": "2.0", "id": 99, "method": "tasks/result", "params": {"taskId": task_id}}
        async with peer.http.stream("POST", peer.url, json=request) as resp:
            events = (json.loads(line[6:]) async for line in resp.aiter_lines() if line.startswith("data: "))
            elicit = await anext(events)
            assert elicit["method"] == "elicitation/create"
            assert elicit["params"]["_meta"][META_RELATED_TASK] == {"taskId": task_id}
            accept = {"action": "accept", "content": {"colour": "red"}}
            answer = {"jsonrpc": "2.0", "id": elicit["id"], "result": accept}
            assert (await peer.http.post(peer.url, json=answer)).status_code == 202
            final = await anext(events)
        assert final["id"] == 99 and final["result"]["_meta"][META_RELATED_TASK] == {"taskId": task_id}
    _serve(BY_NAME["tasks-client-legacy-input"].script, body)  # type: ignore[arg-type]


def test_no_elicitation_goes_to_a_client_that_declared_none_and_the_task_gives_up() -> None:

    async def body(peer: Peer) -> None:
        await peer.send("initialize", {"protocolVersion": "2025-11-25", "capabilities": {}})
        _, created = await peer.send("tools/call", {"name": "scripted_task", "arguments": {}, "task": {}})
        with anyio.fail_after(5):
            resp, result = await peer.send("tasks/result", {"taskId": created["result"]["task"]["taskId"]})
        assert "elicitation/create" not in resp.text and result["error"]["code"] == -32603
    _serve(BY_NAME["tasks-client-legacy-input"].script, body, ScriptedWaits(give_up_s=0.5))  # type: ignore[arg-type]


def test_a_tasks_result_only_after_the_task_ended_is_no_answer_to_input_required() -> None:
    """fastmcp 3.4.11's ToolTask.result() polls through input_required and calls tasks/result only
    once the task has ended (here: given up for want of an answer): that fetches the payload, it
    does not ask for the input, so C-LEG-SHOULD-04 warns."""
    created = {"result": {"task": {"taskId": "t1", "status": "working", "pollInterval": 200}}}

    def read(rid: int, status: str) -> tuple[JSON, JSON]:
        return ({"jsonrpc": "2.0", "id": rid, "method": "tasks/get", "params": {"taskId": "t1"}},
                {"result": {"taskId": "t1", "status": status, "pollInterval": 200}})
    late = ({"jsonrpc": "2.0", "id": 9, "method": "tasks/result", "params": {"taskId": "t1"}},
            {"error": {"code": -32603, "message": "gave up"}})
    run = _evidence("tasks-client-legacy-input", _init(DECLARED, {"elicitation": {}}),
                    _call(1, {"name": "scripted_task", "arguments": {}, "task": {}}, created),
                    read(2, "input_required"), read(3, "input_required"), read(4, "failed"), late)
    verdict = _judge("tasks-client-legacy-input-answered", run)
    assert verdict.status == "passed" and len(verdict.warnings) == 1 and "C-LEG-SHOULD-04" in verdict.warnings[0].text


def _input_run(answer: JSON | None, *, fetch: bool = True) -> ScenarioRun:
    created = {"result": {"task": {"taskId": "t1", "status": "working", "pollInterval": 200}}}
    read = ({"jsonrpc": "2.0", "id": 2, "method": "tasks/get", "params": {"taskId": "t1"}},
            {"result": {"taskId": "t1", "status": "input_required", "pollInterval": 200}})
    fetched = ({"jsonrpc": "2.0", "id": 3, "method": "tasks/result", "params": {"taskId": "t1"}},
               {"result": {"content": [], "isError": False}})
    run = _evidence("tasks-client-legacy-input", _init(DECLARED, {"elicitation": {}}),
                    _call(1, {"name": "scripted_task", "arguments": {}, "task": {}}, created), read,
                    *([fetched] if fetch else []))
    if not fetch:
        return run
    elicit = {"jsonrpc": "2.0", "id": "elicitation-1", "method": "elicitation/create",
              "params": {"message": "?", "_meta": {META_RELATED_TASK: {"taskId": "t1"}}}}
    reply = None if answer is None else {"jsonrpc": "2.0", "id": "elicitation-1", **answer}
    asked = Exchange(90, 2.5, elicit, None, 91 if reply else None, 2.6 if reply else None, reply)
    return ScenarioRun(run.scenario, "legacy", run.client, run.exchanges, True, server_requests=(asked,))


@pytest.mark.parametrize(("answer", "fetch", "rule"), [
    ({"result": {"action": "accept", "content": {}}}, True, "C-LEG-MUST-08"),
    (None, True, "C-LEG-MUST-13"),
    ({"error": {"code": -32601, "message": "no"}}, True, "C-LEG-MUST-13"),
    (None, False, "C-LEG-SHOULD-04"),
])
def test_task_input_not_fetched_answered_or_tagged_warns(answer: JSON | None, fetch: bool, rule: str) -> None:
    verdict = _judge("tasks-client-legacy-input-answered", _input_run(answer, fetch=fetch))
    assert verdict.status == "passed" and len(verdict.warnings) == 1 and rule in verdict.warnings[0].text
    assert verdict.warnings[0].policies == (() if rule.startswith("C-LEG-SHOULD") else ("P-40",))
    tagged = {"result": {"action": "accept", "content": {}, "_meta": {META_RELATED_TASK: {"taskId": "t1"}}}}
    assert _judge("tasks-client-legacy-input-answered", _input_run(tagged)).warnings == ()
