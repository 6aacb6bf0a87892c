"""The whole suite against the bundled reference server: each wire, over stdio and HTTP."""

from __future__ import annotations

import json

import pytest
from helpers.paths import DEMO_INPUT, REFERENCE
from helpers.processes import HttpServer
from helpers.runs import run, stdio, tool, verdicts

from tasks_conformance.core.profiles import OPT_IN_CHECKS
from tasks_conformance.server.checks import CHECKS

# Checks whose probe role has no tool in these runs (not applicable under the standard profile),
# and the legacy-only check of the sync role.
ROLE_NA = {"tasks-required-tool-needs-task", "tasks-tool-error-outcome", "tasks-fault-outcome",
           "tasks-forbidden-tool-task-refused"}
EXTENSION_ONLY = {
    "tasks-mcp-name-routing",
    "tasks-undeclared-capability-rejected",
    "tasks-undeclared-capability-names-requirements",
}
LEGACY_ONLY = {c for c in CHECKS if c.startswith("tasks-legacy-")}
# Judged on its own task; whether a 150 ms task still runs when its tasks/result arrives (and so
# sends progress) depends on the machine's load, so its pass case has a test of its own.
PROGRESS = "tasks-legacy-progress-token"


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
    assert all(v[k] == "not-applicable" for k in http_only | ROLE_NA | LEGACY_ONLY)
    assert all(b == "passed" for k, b in v.items() if k not in http_only | ROLE_NA | LEGACY_ONLY)


def test_extension_over_http_passes(reference_http: HttpServer) -> None:
    ex = run(url=reference_http.url, tool_name="confirm_action", input_responses=DEMO_INPUT)
    v = verdicts(ex)
    assert ex.result.outcome == "passed", [(c.id, c.message) for c in ex.result.checks if c.bucket != "passed"]
    # Task authorization needs a second principal (--other-access-token): not applicable without one.
    assert v.pop("tasks-task-bound-to-principal") == "not-applicable"
    assert all(v[k] == "not-applicable" for k in ROLE_NA | LEGACY_ONLY)
    assert {b for k, b in v.items() if k not in ROLE_NA | LEGACY_ONLY} == {"passed"}


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
    assert LEGACY_ONLY and all(v[k] == "passed" for k in LEGACY_ONLY - {"tasks-legacy-get-plain-json", PROGRESS})
    assert v["tasks-legacy-get-plain-json"] == "not-applicable"  # HTTP only


def test_legacy_over_http_with_input_passes(reference_http: HttpServer) -> None:
    ex = run(url=reference_http.url, protocol_version="2025-11-25", tool_name="confirm_action",
             input_responses=DEMO_INPUT)
    v = verdicts(ex)
    assert ex.result.outcome == "passed", [(c.id, c.message) for c in ex.result.checks if c.bucket != "passed"]
    assert v["tasks-input-required-update-completes"] == "passed"
    assert v["tasks-inline-result"] == "passed"
    assert all(v[k] == "passed" for k in LEGACY_ONLY - {PROGRESS})
    assert v[PROGRESS] == "not-applicable"  # confirm_action asks and answers; it reports no progress


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_legacy_task_progress_keeps_its_token_and_stops_at_the_end(transport: str, reference_http: HttpServer) -> None:
    target = {"url": reference_http.url} if transport == "http" else stdio(REFERENCE)
    ex = run(**target, protocol_version="2025-11-25", tool_name="slow_compute", tool_args='{"durationMs": 1000}',
             check_ids=[PROGRESS])
    got = next(c for c in ex.result.checks if c.id == PROGRESS)
    assert got.bucket == "passed", got.message
    assert int(got.message.split()[0]) >= 1  # the reference reports 4 steps; the last one is the end


def test_demo_command_exits_zero_and_prints_a_report() -> None:
    proc = tool("demo", "--format", "json")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["outcome"] == "passed" and data["discovery"]["wire"] == "extension"
    assert len(data["checks"]) == len(set(CHECKS) - set(OPT_IN_CHECKS))  # the default profile
