"""The whole suite against the bundled reference server: each wire, over stdio and HTTP."""

from __future__ import annotations

import json

import pytest
from conftest import DEMO_INPUT, REFERENCE, HttpServer, cli, run, stdio, verdicts

from tasks_conformance.checks import CHECKS

EXTENSION_ONLY = {
    "tasks-mcp-name-routing",
    "tasks-undeclared-capability-rejected",
    "tasks-undeclared-capability-names-requirements",
}


def test_extension_over_stdio_passes() -> None:
    ex = run(**stdio(REFERENCE), tool_name="confirm_action", input_responses=DEMO_INPUT)
    v = verdicts(ex)
    assert ex.result.outcome == "passed", [(c.id, c.message) for c in ex.result.checks if c.bucket != "passed"]
    assert ex.result.discovery.wire == "extension"
    assert v["tasks-mcp-name-routing"] == "not-applicable"  # stdio has no headers
    # HTTP-only: routing headers, the endpoint's own rules, and task authorization (which also
    # needs --other-access-token).
    http_only = {"tasks-mcp-name-routing", "tasks-task-bound-to-principal", "tasks-base-unknown-method-not-found",
                 "tasks-base-notification-accepted", "tasks-base-foreign-origin-forbidden",
                 "tasks-base-mcp-name-base64"}
    assert all(v[k] == "not-applicable" for k in http_only)
    assert all(b == "passed" for k, b in v.items() if k not in http_only)


def test_extension_over_http_passes(reference_http: HttpServer) -> None:
    ex = run(url=reference_http.url, tool_name="confirm_action", input_responses=DEMO_INPUT)
    v = verdicts(ex)
    assert ex.result.outcome == "passed", [(c.id, c.message) for c in ex.result.checks if c.bucket != "passed"]
    # Task authorization needs a second principal (--other-access-token): not applicable without one.
    assert v.pop("tasks-task-bound-to-principal") == "not-applicable"
    assert set(v.values()) == {"passed"}


@pytest.mark.parametrize("tool", ["slow_compute", "tool_error", "rpc_error"])
def test_extension_outcomes_of_each_tool_pass(tool: str) -> None:
    ex = run(**stdio(REFERENCE), tool_name=tool)
    assert ex.result.outcome == "passed", [(c.id, c.message) for c in ex.result.checks if c.bucket != "passed"]


def test_legacy_over_stdio_passes_with_auto_picked_tool() -> None:
    ex = run(**stdio(REFERENCE), protocol_version="2025-11-25")
    v = verdicts(ex)
    assert ex.result.discovery.wire == "legacy"
    assert ex.result.discovery.probedTool == "long_job"  # required + readOnlyHint wins
    assert ex.result.outcome == "passed", [(c.id, c.message) for c in ex.result.checks if c.bucket != "passed"]
    for cid in EXTENSION_ONLY:
        assert v[cid] == "not-applicable"
    assert v["tasks-input-required-update-completes"] == "not-applicable"


def test_legacy_over_http_with_input_passes(reference_http: HttpServer) -> None:
    ex = run(url=reference_http.url, protocol_version="2025-11-25", tool_name="confirm_action",
             input_responses=DEMO_INPUT)
    v = verdicts(ex)
    assert ex.result.outcome == "passed", [(c.id, c.message) for c in ex.result.checks if c.bucket != "passed"]
    assert v["tasks-input-required-update-completes"] == "passed"
    assert v["tasks-inline-result"] == "passed"


def test_demo_command_exits_zero_and_prints_a_report() -> None:
    proc = cli("demo", "--format", "json")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["outcome"] == "passed" and data["discovery"]["wire"] == "extension"
    assert len(data["checks"]) == len(CHECKS)
