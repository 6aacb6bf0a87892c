"""No vacuous verdict: a check passes only on what it judged. Every pass, of a server check or a
client check, rests on the frames it names (`evidence=`) or on a count of what it judged
(`judged=`); a count of zero is not applicable, never passed."""

from __future__ import annotations

import ast
from typing import Any

import pytest
from helpers.paths import ROOT

from tasks_conformance.core.verdict import passed

SRC = ROOT / "src" / "tasks_conformance"
CHECK_DIRS = ("server/checks", "client/checks")


def _bare_passes() -> list[str]:
    out = []
    for folder in CHECK_DIRS:
        for path in sorted((SRC / folder).glob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "passed" \
                        and not {k.arg for k in node.keywords} & {"evidence", "judged"}:
                    out.append(f"{path.relative_to(SRC)}:{node.lineno}")
    return out


def test_every_pass_says_what_it_judged() -> None:
    assert _bare_passes() == []


@pytest.mark.parametrize("judged,status", [(0, "skipped"), (1, "passed"), (None, "passed")])
def test_a_pass_that_judged_nothing_is_not_applicable(judged: int | None, status: str) -> None:
    verdict = passed("all 0 frames were fine", judged=judged, evidence=(3,) if judged is None else ())
    assert verdict.status == status
    if status == "skipped":
        assert verdict.skip_reason == "not-applicable" and "nothing was judged" in verdict.message


def test_a_run_of_the_framing_check_with_nothing_inbound_is_not_passed() -> None:
    """tasks-wire-framing used to pass 'all 0 inbound frames were JSON-RPC messages'."""
    from tasks_conformance.core.wirelog import WireLog
    from tasks_conformance.core.wires import Wire
    from tasks_conformance.server.checks import CHECKS
    from tasks_conformance.server.evidence import Evidence
    from tasks_conformance.server.evidence.discovery import Discovery

    ev = Evidence(wire_log=WireLog(), discovery=Discovery(wire=Wire.LEGACY, protocol_version="2025-11-25"),
                  transport="stdio")
    verdict = CHECKS["tasks-wire-framing"].judges[Wire.LEGACY].fn(ev)
    assert verdict.status != "passed", verdict


def _silent_runs(check_id: str) -> list[Any]:
    """A run of each scenario the client check reads in which the client sent nothing at all."""
    from tasks_conformance.client.checks import CLIENT_CHECKS
    from tasks_conformance.client.evidence import ScenarioRun
    from tasks_conformance.client.launch import ClientRun
    from tasks_conformance.client.scenarios import BY_NAME

    client = ClientRun(("client",), True, 0, False, 1.0, "", "", None)
    return [ScenarioRun(BY_NAME[name], BY_NAME[name].eras[0], client, (), reached=True)
            for name in CLIENT_CHECKS[check_id].scenarios]


def _client_check_ids() -> list[str]:
    from tasks_conformance.client.checks import CLIENT_CHECKS

    return sorted(CLIENT_CHECKS)


@pytest.mark.parametrize("check_id", _client_check_ids())
def test_no_client_check_passes_where_the_client_sent_nothing(check_id: str) -> None:
    """tasks-client-follows-task, tasks-client-legacy-declared-methods and
    tasks-client-legacy-no-extension-wire used to pass runs without a single message."""
    from tasks_conformance.client.checks import CLIENT_CHECKS

    verdict = CLIENT_CHECKS[check_id].judge(_silent_runs(check_id))
    assert verdict.status != "passed", verdict.message


def test_the_legacy_expiry_check_does_not_pass_a_run_that_created_no_task() -> None:
    """A client that calls the expiry scenario's tool plainly (as one that tasks only required tools
    does) created no task: how it let one go is not applicable, never passed."""
    from tasks_conformance.client.checks import CLIENT_CHECKS
    from tasks_conformance.client.evidence import Exchange, ScenarioRun
    from tasks_conformance.client.launch import ClientRun
    from tasks_conformance.client.scenarios import BY_NAME

    init = Exchange(1, 0.0, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}, None, 2, 0.01,
                    {"jsonrpc": "2.0", "id": 1, "result": {"capabilities": {"tasks": {"requests": {
                        "tools": {"call": {}}}}}}})
    call = Exchange(3, 0.1, {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "scripted_task"}},
                    None, 4, 0.11, {"jsonrpc": "2.0", "id": 2, "result": {"content": [], "isError": False}})
    client = ClientRun(("client",), True, 0, False, 1.0, "", "", {"status": "completed"})
    run = ScenarioRun(BY_NAME["tasks-client-legacy-ttl-expiry"], "legacy", client, (init, call), reached=True)
    verdict = CLIENT_CHECKS["tasks-client-legacy-task-expiry"].judge([run])
    assert verdict.status == "skipped" and verdict.skip_reason == "not-applicable", verdict
