"""tasks-conformance against five real third-party MCP servers, over stdio and Streamable HTTP
(mcp-framework over stdio only).

Each *scenario* names a server from ``servers.py``, the tool to probe (with its arguments and
input answers) and, check by check, the verdict that is RIGHT for that server: derived from
the server's real behaviour as established in ``EXPECTED.md`` (source reading plus captured
wire traffic) and from the spec digest's policies (§6), never from what tasks-conformance
happens to print. Every cell (scenario × transport) runs ``python -m tasks_conformance`` once
as a subprocess with ``--format json``; the tests then assert the verdict of every selected
check and the exit code.

Where our verdict is known to disagree with the right one, the single parametrized case is
marked ``xfail(strict=True)`` with the reason and the frame evidence (see ``DISAGREEMENTS``):
the test still asserts the right verdict, so it turns XPASS (a failure) once the check is
fixed. A disagreement that shows only when a race goes one way (``RACY_DISAGREEMENTS``) is a
non-strict xfail: a run may match.

Cells run in parallel (each with its own server on stdio or on an ephemeral 127.0.0.1 port),
every server process is stopped in a ``finally``, and every wait is bounded.
``scripts/interop_table.py`` reuses ``SCENARIOS`` and ``run_cell`` to write
``docs/interop-results.md``.
"""

from __future__ import annotations

import concurrent.futures
import importlib.metadata
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import servers
from helpers.processes import stop_tool

from tasks_conformance.core.profiles import OPT_IN_CHECKS
from tasks_conformance.server.checks import ordered_checks

pytestmark = [pytest.mark.interop, pytest.mark.timeout(300)]

TRANSPORTS = ("stdio", "http")

#: Every check, in the order tasks-conformance reports them (from the registry, not a copy of it).
ALL_CHECKS = tuple(spec.id for spec in ordered_checks() if spec.id not in OPT_IN_CHECKS)  # the default profile's

P, F, NA, CNR, DEF = "passed", "failed", "not-applicable", "could-not-run", "deferred"
EXIT_FOR = {"passed": 0, "failed": 1, "incomplete": 3}

#: Per-request and per-task bounds handed to the tool. server-everything's research task
#: takes ~4 s plus the elicitation round trip; tasks/result blocks until the task ends.
REQUEST_TIMEOUT_MS = 8_000
POLL_TIMEOUT_MS = 20_000
STARTUP_TIMEOUT_MS = 60_000  # a server's start: the handshake over stdio, the LISTENING line over HTTP
#: Hard bound on one tasks-conformance run (the tool's own bounds should end it far sooner).
CELL_TIMEOUT_S = 120.0
WORKERS = int(os.environ.get("TASKS_CONFORMANCE_INTEROP_WORKERS", "4"))


@dataclass(frozen=True)
class Scenario:
    """One way of running the tool against one server, with the right verdict per check."""

    id: str
    server: str
    #: What the scenario exercises (shown in the generated table).
    title: str
    tool: str | None
    args: Mapping[str, Any] = field(default_factory=dict)
    input_responses: Mapping[str, Any] | None = None
    #: Probe roles, passed as --probe ROLE=TOOL.
    probes: Mapping[str, str] = field(default_factory=dict)
    #: The tool each probe role must get (inferred or named), as discovery.roles reports it.
    roles: Mapping[str, str | None] = field(default_factory=dict)
    #: Passed as --expect-wire ("any": not passed).
    expect_wire: str = "any"
    #: The wire and protocol version discovery must settle on.
    wire: str = "none"
    protocol: str | None = None
    #: The --check-id selection; None runs every check.
    checks: tuple[str, ...] | None = None
    #: The right verdict per selected check: one value, or {"stdio": …, "http": …}.
    expected: Mapping[str, str | Mapping[str, str]] = field(default_factory=dict)
    #: Main scenarios make the first table of docs/interop-results.md.
    main: bool = False

    @property
    def selected(self) -> tuple[str, ...]:
        return self.checks if self.checks is not None else ALL_CHECKS

    @property
    def transports(self) -> tuple[str, ...]:
        """The transports its server is run over (servers.py): stdio, and HTTP where it has a launcher."""
        return servers.BY_NAME[self.server].transports

    def verdict(self, check_id: str, transport: str) -> str:
        value = self.expected[check_id]
        return value if isinstance(value, str) else value[transport]

    def exit_code(self, transport: str) -> int:
        verdicts = [self.verdict(c, transport) for c in self.selected]
        if F in verdicts:
            return 1
        # Incomplete when a check could not run, or when none was tested (policy P-46).
        return 3 if CNR in verdicts or P not in verdicts else 0


def _all(**overrides: str | Mapping[str, str]) -> dict[str, str | Mapping[str, str]]:
    """Every check passed unless overridden (keyword names use _ for -, without `tasks_`)."""
    table: dict[str, str | Mapping[str, str]] = dict.fromkeys(ALL_CHECKS, P)
    for key, value in overrides.items():
        check_id = "tasks-" + key.replace("_", "-")
        assert check_id in table, check_id
        table[check_id] = value
    return table


def _only(**verdicts: str | Mapping[str, str]) -> dict[str, str | Mapping[str, str]]:
    """Just these checks (the scenario's --check-id selection)."""
    table = {"tasks-" + k.replace("_", "-"): v for k, v in verdicts.items()}
    assert set(table) <= set(ALL_CHECKS), sorted(set(table) - set(ALL_CHECKS))
    return table


STDIO_NA_HTTP_PASS = {"stdio": NA, "http": P}
#: No interop server checks credentials, so no run passes --other-access-token: not applicable.
NO_SECOND_PRINCIPAL = {"task_bound_to_principal": NA}
#: Checks of the extension wire only: not applicable on legacy.
EXTENSION_ONLY_NA = {"mcp_name_routing": NA, "undeclared_capability_rejected": NA, "removed_methods_not_found": NA,
                     "base_result_type_present": NA, "base_unsupported_version": NA,
                     "base_capabilities_required": NA,
                  "undeclared_capability_names_requirements": NA, "subscription_notifications": NA,
                     "created_task_durable": NA, "subscription_no_progress_or_message": NA,
                     "input_request_keys_unique": NA, "input_requests_declared_only": NA,
                     "input_stale_responses_ignored": NA, "extension_in_initialize_ignored": NA,
                     "base_unknown_method_not_found": NA, "base_notification_accepted": NA,
                     "base_foreign_origin_forbidden": NA, "base_mcp_name_base64": NA,
                     "base_input_required_where_allowed": NA}
#: Probe-role checks whose role has no tool in a scenario (not applicable under the standard
#: profile): tool-error and fault are never inferred; on the extension, tools/list carries no
#: execution.taskSupport (EXPECTED.md §1), so required is not inferred either, and the sync
#: role's check is legacy-only.
LEGACY_ROLES_NA = {"tool_error_outcome": NA, "fault_outcome": NA}
EXTENSION_ROLES_NA = {**LEGACY_ROLES_NA, "required_tool_needs_task": NA, "forbidden_tool_task_refused": NA}
#: Checks of the 2025-11-25 wire only: not applicable on the extension.
LEGACY_ONLY_NA = {"legacy_result_blocks": NA, "legacy_list_includes_task": NA, "legacy_list_invalid_cursor": NA,
                  "legacy_task_id_wins": NA, "legacy_status_transitions": NA, "legacy_related_meta_absent": NA,
                  "legacy_get_plain_json": NA, "legacy_progress_token": NA}

FASTMCP_ELICIT = {"confirm": {"action": "accept", "content": {"confirm": True}}}
SDK_ELICIT = {"confirm": {"action": "accept", "content": {"confirm": True}}}
EVERYTHING_ELICIT = {"clarification": {"action": "accept", "content": {"interpretation": "programming"}}}

SCENARIOS: tuple[Scenario, ...] = (
    # --- fastmcp-tasks: the 2026-07-28 extension (EXPECTED.md §1) -------------------------
    Scenario(
        id="fastmcp-tasks", server="fastmcp-tasks", main=True,
        title="slow_compute (optional task, 0.5 s)",
        tool="slow_compute", args={"seconds": 0.5},
        expect_wire="extension", wire="extension", protocol="2026-07-28",
        expected=_all(
            # §1 "Mcp-Name over HTTP": a mismatch gets 400 -32020; stdio has no headers.
            mcp_name_routing=STDIO_NA_HTTP_PASS,
            # slow_compute never asks for input.
            input_required_update_completes=NA, input_request_keys_unique=NA, input_requests_declared_only=NA,
            input_stale_responses_ignored=NA, **NO_SECOND_PRINCIPAL,
            # "Checks added in December 2026": over HTTP unknown methods get 404 -32601, a notification
            # 202 with no body, a base64-wrapped Mcp-Name is decoded; but a foreign Origin is served
            # (§1 "Other observations": http_host_origin_protection is off by default): S-CORE-MUST-14.
            base_unknown_method_not_found=STDIO_NA_HTTP_PASS, base_notification_accepted=STDIO_NA_HTTP_PASS,
            base_foreign_origin_forbidden={"stdio": NA, "http": F}, base_mcp_name_base64=STDIO_NA_HTTP_PASS,
            # §1 "Other observations": subscriptions/listen is -32601 (task notifications are optional).
            subscription_notifications=NA,
            # §1 "Durability": the immediate tasks/get and one from a brand-new HTTP connection find the task.
            # §1 "Other observations": no listen stream, so nothing to judge on it.
            subscription_no_progress_or_message=NA,
            # §1 "Undeclared extension": tasks/get, tasks/update, tasks/cancel get -32021 with
            # data.requiredCapabilities (HTTP 400); subscriptions/listen is -32601, which §1
            # "Other observations" says must be unsupported/skip, not a failure.
            **EXTENSION_ROLES_NA,
            **LEGACY_ONLY_NA,
        ),
    ),
    Scenario(
        id="fastmcp-tasks/roles", server="fastmcp-tasks",
        title="probe roles: required_compute, failing_job (isError), protocol_error_job (JSON-RPC error)",
        tool=None,  # only role checks are selected: no task tool is chosen
        probes={"required": "required_compute", "tool-error": "failing_job", "fault": "protocol_error_job"},
        expect_wire="extension", wire="extension", protocol="2026-07-28",
        checks=("tasks-required-tool-needs-task", "tasks-tool-error-outcome", "tasks-fault-outcome"),
        # §1 "Undeclared extension": the required tool without the declaration gets -32021 (HTTP
        # 400); §1 "isError and raised exceptions": failing_job ends completed with the isError
        # result inlined, protocol_error_job ends failed with error -32603 and a statusMessage.
        expected=_only(required_tool_needs_task=P, tool_error_outcome=P, fault_outcome=P),
        roles={"required": "required_compute", "tool-error": "failing_job", "fault": "protocol_error_job"},
    ),
    Scenario(
        id="fastmcp-tasks/input", server="fastmcp-tasks",
        title="confirm_delete (inputRequests answered with tasks/update)",
        tool="confirm_delete", args={"filename": "demo.txt"}, input_responses=FASTMCP_ELICIT,
        expect_wire="extension", wire="extension", protocol="2026-07-28",
        checks=("tasks-result-type-discipline", "tasks-status-payload-shape", "tasks-inline-result",
                "tasks-input-required-update-completes", "tasks-input-request-keys-unique",
                "tasks-input-requests-declared-only", "tasks-input-stale-responses-ignored"),
        # §1 "Input required (extension)": input_required with inputRequests keyed
        # "<taskId>:<16 hex>"; the right key answered → ack, working, completed "deleted demo.txt".
        # "Checks added in December 2026": a task created and polled without the elicitation
        # capability still asks elicitation/create (S-EXT-MUST-34 deviation); stale keys are acked.
        expected=_only(result_type_discipline=P, status_payload_shape=P, inline_result=P,
                       input_required_update_completes=P, input_request_keys_unique=P,
                       input_requests_declared_only=F, input_stale_responses_ignored=P),
    ),
    Scenario(
        id="fastmcp-tasks/tool-error", server="fastmcp-tasks",
        title="failing_job (the tool raises: isError result)",
        tool="failing_job", args={},
        expect_wire="extension", wire="extension", protocol="2026-07-28",
        checks=("tasks-undeclared-creation-refused", "tasks-status-payload-shape", "tasks-inline-result"),
        # §1 "isError and raised exceptions": completed with an inlined isError result
        # (S-EXT-MUST-13 passes); without the extension a plain isError CallToolResult.
        expected=_only(undeclared_creation_refused=P, status_payload_shape=P, inline_result=P),
    ),
    Scenario(
        id="fastmcp-tasks/protocol-error", server="fastmcp-tasks",
        title="protocol_error_job (the tool raises MCPError -32603)",
        tool="protocol_error_job", args={},
        expect_wire="extension", wire="extension", protocol="2026-07-28",
        checks=("tasks-undeclared-creation-refused", "tasks-status-payload-shape", "tasks-inline-result"),
        # §1: the task ends failed with error {-32603} (S-EXT-MUST-12, S-EXT-SHOULD-04 pass);
        # the foreground call's isError is an inconsistency to report "at most as a warning"
        # (summary table: warn).
        expected=_only(undeclared_creation_refused=P, status_payload_shape=P, inline_result=P),
    ),
    # --- sdk-tasks: @modelcontextprotocol/sdk 1.32.2, legacy 2025-11-25 (EXPECTED.md §2) ---
    Scenario(
        id="sdk-tasks", server="sdk-tasks", main=True,
        title="slow_compute (optional task, 1 s)",
        tool="slow_compute", args={"seconds": 1},
        expect_wire="legacy", wire="legacy", protocol="2025-11-25",
        # Optional tool without params.task: automatic polling returns a plain CallToolResult
        # (S-LEG-MUST-03 passes). tasks/result carries related-task _meta; unknown ids -32602;
        # tasks/cancel returns the task already cancelled.
        # Roles inferred from execution.taskSupport (§2 "tools/list"): required_compute is the
        # required role's tool, greet the sync role's. §2 "Required tool without task": an isError
        # result, not -32601 (S-LEG-MUST-02: FAIL); §2 "Forbidden tool with task": -32602, not the
        # SHOULD -32601 (a warning).
        # "Checks added for the legacy wire": a tasks/get carrying a related-task _meta is never
        # answered (S-LEG-MUST-14).
        # tasks-legacy-get-plain-json is HTTP only; there it passes with the S-LEG-SHOULD-08 warning.
        # Its tools report no progress, even with a progressToken: tasks-legacy-progress-token n/a.
        expected=_all(input_required_update_completes=NA, required_tool_needs_task=F, legacy_task_id_wins=F,
                      legacy_get_plain_json=STDIO_NA_HTTP_PASS, legacy_progress_token=NA, **EXTENSION_ONLY_NA,
                      **LEGACY_ROLES_NA, **NO_SECOND_PRINCIPAL),
        roles={"task": "slow_compute", "required": "required_compute", "sync": "greet", "tool-error": None,
               "fault": None, "input": None},
    ),
    Scenario(
        id="sdk-tasks/roles", server="sdk-tasks",
        title="probe roles: required_compute and greet inferred, failing_job (isError) named",
        tool=None, probes={"tool-error": "failing_job"},  # only role checks: no task tool is chosen
        expect_wire="legacy", wire="legacy", protocol="2025-11-25",
        checks=("tasks-required-tool-needs-task", "tasks-forbidden-tool-task-refused", "tasks-tool-error-outcome"),
        # §2 "isError and raised exceptions": failing_job ends failed (no statusMessage: a
        # SHOULD-07 warning) and tasks/result returns the isError CallToolResult.
        expected=_only(required_tool_needs_task=F, forbidden_tool_task_refused=P, tool_error_outcome=P),
        roles={"required": "required_compute", "sync": "greet", "tool-error": "failing_job"},
    ),
    Scenario(
        id="sdk-tasks/required", server="sdk-tasks",
        title="required_compute (taskSupport required)",
        tool="required_compute", args={"seconds": 0.2},
        expect_wire="legacy", wire="legacy", protocol="2025-11-25",
        checks=("tasks-result-type-discipline", "tasks-undeclared-creation-refused"),
        # §2 "Required tool without task — S-LEG-MUST-02 violation": a successful isError
        # result instead of -32601; under §6 Q1 a FAIL.
        expected=_only(result_type_discipline=P, undeclared_creation_refused=F),
    ),
    Scenario(
        id="sdk-tasks/input", server="sdk-tasks",
        title="confirm_delete (elicitation on the tasks/result stream)",
        tool="confirm_delete", args={"filename": "demo.txt"}, input_responses=SDK_ELICIT,
        expect_wire="legacy", wire="legacy", protocol="2025-11-25",
        checks=("tasks-result-type-discipline", "tasks-status-payload-shape", "tasks-inline-result",
                "tasks-input-required-update-completes"),
        # §2 "Input required (legacy)": elicitation/create with related-task _meta on the
        # tasks/result stream (S-LEG-MUST-13), then completed.
        expected=_only(result_type_discipline=P, status_payload_shape=P, inline_result=P,
                       input_required_update_completes=P),
    ),
    Scenario(
        id="sdk-tasks/input-immediate", server="sdk-tasks",
        title="confirm_delete delay 0 (CreateTaskResult already input_required)",
        tool="confirm_delete", args={"filename": "demo.txt", "delay": 0}, input_responses=SDK_ELICIT,
        expect_wire="legacy", wire="legacy", protocol="2025-11-25",
        checks=("tasks-result-type-discipline", "tasks-input-required-update-completes"),
        # §2 "Live-object aliasing (S-LEG-MUST-06 deviation, reproducible)": the
        # CreateTaskResult says input_required; a legacy task MUST start in working.
        expected=_only(result_type_discipline=F, input_required_update_completes=P),
    ),
    Scenario(
        id="sdk-tasks/tool-error", server="sdk-tasks",
        title="failing_job (failed, tasks/result returns the isError result)",
        tool="failing_job", args={},
        expect_wire="legacy", wire="legacy", protocol="2025-11-25",
        checks=("tasks-undeclared-creation-refused", "tasks-status-payload-shape", "tasks-inline-result"),
        # §2 "isError and raised exceptions": failed (no statusMessage: SHOULD-07, a warning);
        # tasks/result gives the isError CallToolResult with related-task _meta.
        expected=_only(undeclared_creation_refused=P, status_payload_shape=P, inline_result=P),
    ),
    # --- server-everything 2026.8.31, legacy (EXPECTED.md §3) ------------------------------
    Scenario(
        id="server-everything", server="server-everything", main=True,
        title="simulate-research-query, ambiguous (required task, asks for input)",
        tool="simulate-research-query", args={"topic": "python", "ambiguous": True},
        input_responses=EVERYTHING_ELICIT,
        expect_wire="legacy", wire="legacy", protocol="2025-11-25",
        expected=_all(
            # The only task tool is required; without params.task it returns an isError
            # result, not -32601 (§2/§3, S-LEG-MUST-02, §6 Q1). The rule is a task-required
            # tool's, so tasks-required-tool-needs-task owns it and fails it below; this check
            # defers to it (one defect, one failure): deferred, naming the owner.
            undeclared_creation_refused=DEF,
            # §3 "Input flow": elicitation with related-task _meta on tasks/result, then
            # working → completed.
            **NO_SECOND_PRINCIPAL,
            # "Checks added for the legacy wire": a tasks/get carrying a related-task _meta is
            # never answered (S-LEG-MUST-14), as on sdk-tasks.
            legacy_task_id_wins=F,
            # HTTP only; there every tasks/get comes as SSE: passed with the S-LEG-SHOULD-08 warning.
            legacy_get_plain_json=STDIO_NA_HTTP_PASS,
            # simulate-research-query reports no progress (only trigger-long-running-operation
            # does, and it is not a task tool): n/a.
            legacy_progress_token=NA,
            **EXTENSION_ONLY_NA,
            # §3 (the SDK behaviours of §2): the inferred required tool (the same
            # simulate-research-query) without params.task gets an isError result: FAIL; the
            # inferred sync tool (echo, forbidden and read-only) with params.task gets -32602,
            # not the SHOULD -32601: a warning.
            required_tool_needs_task=F, **LEGACY_ROLES_NA,
        ),
        roles={"required": "simulate-research-query", "sync": "echo", "tool-error": None, "fault": None,
               "input": "simulate-research-query"},
    ),
    # --- mcp-framework 0.2.22: its own task manager, legacy, stdio only (EXPECTED.md §5) -----
    Scenario(
        id="mcp-framework", server="mcp-framework", main=True,
        title="slow_compute (optional task, 1 s)",
        tool="slow_compute", args={"seconds": 1},
        expect_wire="legacy", wire="legacy", protocol="2025-11-25",
        expected=_all(
            # §5 "Required tool without task": required_compute runs synchronously (S-LEG-MUST-02).
            required_tool_needs_task=F,
            # §5 "tasks/result": answered at once with -32603 while the task works (S-LEG-MUST-11),
            # and the completed task's result carries no related-task _meta (S-LEG-MUST-12).
            legacy_result_blocks=F, inline_result=F,
            # §5 "Unknown taskId", "tasks/cancel", "tasks/list": every lookup failure is a plain
            # Error, so -32603 for an unknown id (S-LEG-MUST-15) and for a cancel of an ended task
            # (S-LEG-MUST-18); a made-up cursor gets an empty page (S-LEG-MUST-16).
            invalid_task_id_rejected=F, cancel_ack_shape=F, legacy_list_invalid_cursor=F,
            # slow_compute never asks for input and reports no progress (progress is optional): n/a
            # (the progress probe follows the task through tasks/get since tasks/result does not block).
            input_required_update_completes=NA, legacy_progress_token=NA,
            # HTTP only.
            legacy_get_plain_json=NA,
            **EXTENSION_ONLY_NA, **LEGACY_ROLES_NA, **NO_SECOND_PRINCIPAL,
        ),
        roles={"task": "slow_compute", "required": "required_compute", "sync": "greet", "tool-error": None,
               "fault": None, "input": None},
    ),
    Scenario(
        id="mcp-framework/roles", server="mcp-framework",
        title="probe roles: required_compute and greet inferred, failing_job (isError) named",
        tool=None, probes={"tool-error": "failing_job"},  # only role checks: no task tool is chosen
        expect_wire="legacy", wire="legacy", protocol="2025-11-25",
        checks=("tasks-required-tool-needs-task", "tasks-forbidden-tool-task-refused", "tasks-tool-error-outcome"),
        # §5 "Forbidden tool with task": -32603, not the SHOULD -32601 (a warning); §5 "isError and
        # raised exceptions": failing_job ends completed (S-LEG-SHOULD-07, a warning) and
        # tasks/result returns the isError CallToolResult.
        expected=_only(required_tool_needs_task=F, forbidden_tool_task_refused=P, tool_error_outcome=P),
        roles={"required": "required_compute", "sync": "greet", "tool-error": "failing_job"},
    ),
    Scenario(
        id="mcp-framework/required", server="mcp-framework",
        title="required_compute (taskSupport required)",
        tool="required_compute", args={"seconds": 0.2},
        expect_wire="legacy", wire="legacy", protocol="2025-11-25",
        checks=("tasks-result-type-discipline", "tasks-undeclared-creation-refused"),
        # §5 "Required tool without task": a plain result instead of -32601 (S-LEG-MUST-02); its
        # owner, tasks-required-tool-needs-task, is not selected, so this failure stands.
        expected=_only(result_type_discipline=P, undeclared_creation_refused=F),
    ),
    Scenario(
        id="mcp-framework/tool-error", server="mcp-framework",
        title="failing_job (completed, tasks/result returns the isError result)",
        tool="failing_job", args={},
        expect_wire="legacy", wire="legacy", protocol="2025-11-25",
        checks=("tasks-undeclared-creation-refused", "tasks-status-payload-shape", "tasks-inline-result"),
        # §5 "isError and raised exceptions": completed with the isError result; tasks/result has
        # no related-task _meta (S-LEG-MUST-12), as with slow_compute.
        expected=_only(undeclared_creation_refused=P, status_payload_shape=P, inline_result=F),
    ),
    # --- mcp1-tasks: PyPI mcp 1.30.0 low-level Server, experimental tasks (EXPECTED.md §6) --
    Scenario(
        id="mcp1-tasks", server="mcp1-tasks", main=True,
        title="parking_compute (optional task, 1 s; its cancelled work never returns)",
        tool="parking_compute", args={"seconds": 1},
        expect_wire="legacy", wire="legacy", protocol="2025-11-25",
        expected=_all(
            # §6 "Required tool without task": validate_for_tool's -32601 reaches the wire as an
            # isError result (S-LEG-MUST-02); the forbidden tool's is one too (a SHOULD warning).
            required_tool_needs_task=F,
            # §6 "tasks/list": the cursor is never read, so a made-up one gets every task (S-LEG-MUST-16).
            legacy_list_invalid_cursor=F,
            # HTTP only; there every tasks/get comes as SSE: passed with the S-LEG-SHOULD-08 warning.
            legacy_get_plain_json=STDIO_NA_HTTP_PASS,
            # parking_compute never asks for input and reports no progress.
            input_required_update_completes=NA, legacy_progress_token=NA,
            **EXTENSION_ONLY_NA, **LEGACY_ROLES_NA, **NO_SECOND_PRINCIPAL,
        ),
        roles={"task": "parking_compute", "required": "required_compute", "sync": "greet", "tool-error": None,
               "fault": None, "input": None},
    ),
    Scenario(
        id="mcp1-tasks/input", server="mcp1-tasks",
        title="confirm_delete (task.elicit on the tasks/result stream)",
        tool="confirm_delete", args={"filename": "demo.txt"}, input_responses=SDK_ELICIT,
        expect_wire="legacy", wire="legacy", protocol="2025-11-25",
        checks=("tasks-result-type-discipline", "tasks-status-payload-shape", "tasks-inline-result",
                "tasks-input-required-update-completes"),
        # §6 "Input required": input_required, elicitation/create with the related-task _meta on
        # the tasks/result stream, then completed with the answer.
        expected=_only(result_type_discipline=P, status_payload_shape=P, inline_result=P,
                       input_required_update_completes=P),
    ),
    Scenario(
        id="mcp1-tasks/tool-error", server="mcp1-tasks",
        title="failing_job (the work raises: failed, tasks/result empty)",
        tool="failing_job", args={},
        expect_wire="legacy", wire="legacy", protocol="2025-11-25",
        checks=("tasks-undeclared-creation-refused", "tasks-status-payload-shape", "tasks-inline-result"),
        # §6 "isError and raised exceptions": failed with statusMessage "boom"; tasks/result gives a
        # result with nothing but the related-task _meta, where the same call without a task gives
        # the isError CallToolResult (S-LEG-MUST-10).
        expected=_only(undeclared_creation_refused=P, status_payload_shape=P, inline_result=F),
    ),
    # --- arcade-tasks: PyPI arcade-mcp-server 1.32.1, its own task manager (EXPECTED.md §7) --
    Scenario(
        id="arcade-tasks", server="arcade-tasks", main=True,
        title="Interop_SlowCompute (optional task, 1 s)",
        tool="Interop_SlowCompute", args={"seconds": 1},
        expect_wire="legacy", wire="legacy", protocol="2025-11-25",
        # §7: -32601 for the required tool without task and the forbidden one with it, -32602 for
        # unknown ids, ended tasks and made-up cursors, a blocking tasks/result with the
        # related-task _meta, plain JSON tasks/get over HTTP: every legacy check passes.
        expected=_all(
            legacy_get_plain_json=STDIO_NA_HTTP_PASS,
            # Interop_SlowCompute never asks for input and reports no progress.
            input_required_update_completes=NA, legacy_progress_token=NA,
            **EXTENSION_ONLY_NA, **LEGACY_ROLES_NA, **NO_SECOND_PRINCIPAL,
        ),
        roles={"task": "Interop_SlowCompute", "required": "Interop_RequiredCompute", "sync": "Interop_Greet",
               "tool-error": None, "fault": None, "input": None},
    ),
    Scenario(
        id="arcade-tasks/roles", server="arcade-tasks",
        title="probe roles: Interop_RequiredCompute and Interop_Greet inferred, Interop_FailingJob named",
        tool=None, probes={"tool-error": "Interop_FailingJob"},
        expect_wire="legacy", wire="legacy", protocol="2025-11-25",
        checks=("tasks-required-tool-needs-task", "tasks-forbidden-tool-task-refused", "tasks-tool-error-outcome"),
        # §7 "isError and raised exceptions": the raising tool's task ends failed (no statusMessage:
        # a SHOULD-07 warning) and tasks/result returns its isError result.
        expected=_only(required_tool_needs_task=P, forbidden_tool_task_refused=P, tool_error_outcome=P),
        roles={"required": "Interop_RequiredCompute", "sync": "Interop_Greet", "tool-error": "Interop_FailingJob"},
    ),
    Scenario(
        id="arcade-tasks/required", server="arcade-tasks",
        title="Interop_RequiredCompute (taskSupport required)",
        tool="Interop_RequiredCompute", args={"seconds": 0.2},
        expect_wire="legacy", wire="legacy", protocol="2025-11-25",
        checks=("tasks-result-type-discipline", "tasks-undeclared-creation-refused"),
        # §7: without params.task the required tool gets -32601 (S-LEG-MUST-02 passes).
        expected=_only(result_type_discipline=P, undeclared_creation_refused=P),
    ),
    Scenario(
        id="arcade-tasks/tool-error", server="arcade-tasks",
        title="Interop_FailingJob (failed, tasks/result returns the isError result)",
        tool="Interop_FailingJob", args={},
        expect_wire="legacy", wire="legacy", protocol="2025-11-25",
        checks=("tasks-undeclared-creation-refused", "tasks-status-payload-shape", "tasks-inline-result"),
        expected=_only(undeclared_creation_refused=P, status_payload_shape=P, inline_result=P),
    ),
    # --- fastmcp3-tasks: PyPI fastmcp[tasks] 3.4.11, SEP-1686 tasks on Docket (EXPECTED.md §8) --
    Scenario(
        id="fastmcp3-tasks", server="fastmcp3-tasks", main=True,
        title="slow_compute (optional task, 1 s)",
        tool="slow_compute", args={"seconds": 1},
        expect_wire="legacy", wire="legacy", protocol="2025-11-25",
        expected=_all(
            # §8 "Required and forbidden tools": the -32601 it raises reaches the wire as an
            # isError result (S-LEG-MUST-02; the forbidden tool's is a SHOULD warning).
            required_tool_needs_task=F,
            # §8 "tasks/result": -32602 at once while the task works (S-LEG-MUST-11); a completed
            # task's result lacks the related-task _meta (S-LEG-MUST-12).
            legacy_result_blocks=F, inline_result=F,
            # §8 "tasks/cancel": an ended task is "cancelled" again, not -32602 (S-LEG-MUST-18).
            cancel_ack_shape=F,
            # §8 "tasks/list": always empty (S-LEG-MUST-17), whatever the cursor (S-LEG-MUST-16).
            legacy_list_includes_task=F, legacy_list_invalid_cursor=F,
            # slow_compute never asks for input and reports no progress: n/a (followed through
            # tasks/get, since tasks/result does not block).
            input_required_update_completes=NA, legacy_progress_token=NA,
            # HTTP only; there every response is SSE: passed with the S-LEG-SHOULD-08 warning.
            legacy_get_plain_json=STDIO_NA_HTTP_PASS,
            **EXTENSION_ONLY_NA, **LEGACY_ROLES_NA, **NO_SECOND_PRINCIPAL,
        ),
        roles={"task": "slow_compute", "required": "required_compute", "sync": "greet", "tool-error": None,
               "fault": None, "input": None},
    ),
    Scenario(
        id="fastmcp3-tasks/roles", server="fastmcp3-tasks",
        title="probe roles: required_compute and greet inferred, failing_job named",
        tool=None, probes={"tool-error": "failing_job"},
        expect_wire="legacy", wire="legacy", protocol="2025-11-25",
        checks=("tasks-required-tool-needs-task", "tasks-forbidden-tool-task-refused", "tasks-tool-error-outcome"),
        # §8 "isError and raised exceptions": failed with a statusMessage; tasks/result returns
        # the isError result with the related-task _meta.
        expected=_only(required_tool_needs_task=F, forbidden_tool_task_refused=P, tool_error_outcome=P),
        roles={"required": "required_compute", "sync": "greet", "tool-error": "failing_job"},
    ),
    Scenario(
        id="fastmcp3-tasks/input", server="fastmcp3-tasks",
        title="confirm_delete (ctx.elicit on the tasks/result stream)",
        tool="confirm_delete", args={"filename": "demo.txt"}, input_responses=SDK_ELICIT,
        expect_wire="legacy", wire="legacy", protocol="2025-11-25",
        checks=("tasks-result-type-discipline", "tasks-status-payload-shape", "tasks-inline-result",
                "tasks-input-required-update-completes"),
        # §8 "Input required": over stdio the task's elicitation arrives unasked and without the
        # related-task _meta (S-LEG-MUST-13; no synchronous call of ours overlaps the task since the
        # undeclared call waits for its end, so the request is tied to it), then the task
        # completes; its result lacks the related-task _meta, as in the main one. Over HTTP the
        # elicitation goes to the standalone GET stream, which the checker does not open, and
        # tasks/get keeps saying working: nothing to judge (could-not-run; its advice misses the
        # cause, §8).
        expected=_only(result_type_discipline=P, status_payload_shape=P,
                       inline_result={"stdio": F, "http": CNR},
                       input_required_update_completes={"stdio": F, "http": CNR}),
    ),
    Scenario(
        id="fastmcp3-tasks/tool-error", server="fastmcp3-tasks",
        title="failing_job (failed, tasks/result returns the isError result)",
        tool="failing_job", args={},
        expect_wire="legacy", wire="legacy", protocol="2025-11-25",
        checks=("tasks-undeclared-creation-refused", "tasks-status-payload-shape", "tasks-inline-result"),
        # §8: a failed task's result is built with the related-task _meta (only that branch is).
        expected=_only(undeclared_creation_refused=P, status_payload_shape=P, inline_result=P),
    ),
    # --- mcp-plain: mcp 2.3.0 MCPServer, no tasks (EXPECTED.md §4) --------------------------
    Scenario(
        id="mcp-plain", server="mcp-plain", main=True,
        title="no tool (the server has no tasks)",
        tool=None,
        wire="none", protocol="2026-07-28",
        # No extension in server/discover, no capabilities.tasks after initialize: a tasks
        # checker must FAIL a server without tasks (README); every other check's precondition
        # fell with that finding, so they defer to it (its failure says what to correct).
        expected={c: (F if c == "tasks-wire-resolvable" else DEF) for c in ALL_CHECKS},
    ),
)

BY_ID = {s.id: s for s in SCENARIOS}

#: Known disagreements between our verdict and the right one: (scenario, transport, check) →
#: (short reason for the xfail mark, the full explanation with the frame evidence).
#: "exit-code" stands for the cell's exit code test.
DISAGREEMENTS: dict[tuple[str, str, str], tuple[str, str]] = {}
#: The disagreements that show only when a race goes one way (a run may still match the right
#: verdict): their xfail is not strict.
RACY_DISAGREEMENTS: set[tuple[str, str, str]] = set()


def _disagree(scenario: str, transports: tuple[str, ...], checks: tuple[str, ...], reason: str,
              detail: str, *, racy: bool = False) -> None:
    for transport in transports:
        for check in checks:
            DISAGREEMENTS[(scenario, transport, check)] = (reason, detail)
            if racy:
                RACY_DISAGREEMENTS.add((scenario, transport, check))


#: Things worth knowing that do not change a verdict (rendered in docs/interop-results.md).
OBSERVATIONS: tuple[str, ...] = (
    "fastmcp-tasks: tasks-undeclared-capability-rejected passes with the warning that "
    "subscriptions/listen is not implemented (-32601), as EXPECTED.md §1 asks (unsupported, not a failure).",
    "sdk-tasks, server-everything over HTTP: tasks-legacy-get-plain-json passes with the S-LEG-SHOULD-08 warning "
    "that every tasks/get response is an SSE stream (the SDK default, EXPECTED.md §2).",
    "mcp-framework: run over stdio only (its http-stream transport has no ephemeral port and serves every "
    "session from one SDK Server, EXPECTED.md §5); tasks-forbidden-tool-task-refused and "
    "tasks-tool-error-outcome pass with the S-LEG-SHOULD-01 and S-LEG-SHOULD-07 warnings.",
    "mcp1-tasks: the main scenario probes parking_compute, whose cancelled work never returns. With the "
    "guide's work (slow_compute), a task cancelled while working makes run_task raise out of its task group "
    "when the work returns: over stdio the process exits, over HTTP the session (or the connection) ends "
    "(EXPECTED.md §6); when that lands on the run varies, so no cell asserts it. Without --expect-wire, the "
    "HTTP era probe's server/discover is answered 400 with the JSON-RPC id \"server-error\", a response to "
    "an id never sent (tasks-wire-framing fails then).",
)


# --- running one cell ----------------------------------------------------------------------


@dataclass
class CellRun:
    scenario: Scenario
    transport: str
    returncode: int | None
    report: dict[str, Any] | None
    stderr: str
    seconds: float
    wire_log: Path
    problem: str | None = None  # the run itself went wrong (hang, crash, no JSON)

    def checks(self) -> dict[str, dict[str, Any]]:
        return {c["id"]: c for c in (self.report or {}).get("checks", [])}

    def verdict(self, check_id: str) -> str | None:
        check = self.checks().get(check_id)
        if check is None:
            return None
        if check["status"] == "skipped":
            return str(check.get("skipReason"))
        return str(check["status"])

    def describe(self, check_id: str | None = None) -> str:
        lines = [f"{self.scenario.id} over {self.transport}: exit {self.returncode} in {self.seconds:.1f}s; "
                 f"wire log {self.wire_log}"]
        if self.problem:
            lines.append(f"run problem: {self.problem}")
        if check_id is not None and (check := self.checks().get(check_id)):
            lines.append(f"{check_id}: {self.verdict(check_id)} — {check.get('message')}")
            lines += [f"  warning: {w}" for w in check.get("warnings", [])]
            lines += [f"  frame {f[:300]}" for f in check.get("frames", [])[:6]]
        if self.report is None and self.stderr:
            lines.append("stderr: " + self.stderr[-1500:])
        return "\n".join(lines)


def tool_command(scenario: Scenario, wire_log: Path) -> list[str]:
    cmd = [
        sys.executable, "-m", "tasks_conformance", "--format", "json",
        "--timeout", str(REQUEST_TIMEOUT_MS), "--poll-timeout", str(POLL_TIMEOUT_MS),
        # A Python runtime's imports take seconds of CPU, several times that on a loaded CI machine.
        "--startup-timeout", str(STARTUP_TIMEOUT_MS), "--wire-log", str(wire_log),
    ]
    if scenario.expect_wire != "any":
        cmd += ["--expect-wire", scenario.expect_wire]
    if scenario.tool is not None:
        cmd += ["--tool-name", scenario.tool, "--tool-args", json.dumps(dict(scenario.args))]
    if scenario.input_responses is not None:
        cmd += ["--input-responses", json.dumps(dict(scenario.input_responses))]
    for role, tool in scenario.probes.items():
        cmd += ["--probe", f"{role}={tool}"]
    for check_id in scenario.checks or ():
        cmd += ["--check-id", check_id]
    return cmd


def stdio_target(server: servers.InteropServer) -> list[str]:
    argv = list(server.stdio_argv)
    target = ["--command", argv[0]]
    for arg in argv[1:]:
        target += ["--args", arg]
    target += ["--cwd", str(servers.INTEROP_DIR)]
    for key, value in server.env.items():
        target += ["-e", f"{key}={value}"]
    return target


def run_cell(scenario: Scenario, transport: str, workdir: Path) -> CellRun:
    """Run tasks-conformance once against a freshly started server; always stop the server."""
    server = servers.BY_NAME[scenario.server]
    slug = f"{scenario.id.replace('/', '_')}-{transport}"
    wire_log = workdir / f"{slug}.ndjson"
    cmd = tool_command(scenario, wire_log)
    started = time.monotonic()
    proc: subprocess.Popen[bytes] | None = None
    problem: str | None = None
    out, err, code = "", "", None
    with open(workdir / f"{slug}.server-stderr.log", "wb") as server_stderr:
        try:
            if transport == "http":
                try:
                    proc, url = servers.spawn_http(server, timeout=STARTUP_TIMEOUT_MS / 1000, stderr=server_stderr)
                except RuntimeError as exc:
                    return CellRun(scenario, transport, None, None, "", time.monotonic() - started, wire_log,
                                   problem=f"the server did not start: {exc}")
                cmd += ["--url", url]
            else:
                # The tool spawns the stdio server itself (and must reap it).
                cmd += stdio_target(server)
            tool = subprocess.Popen(
                cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                env={**os.environ, "NO_COLOR": "1"}, start_new_session=True,
            )
            try:
                out, err = tool.communicate(timeout=CELL_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                problem = f"tasks-conformance did not finish within {CELL_TIMEOUT_S:.0f}s (hang); stopped"
                out, err = stop_tool(tool)
            code = tool.returncode
        finally:
            if proc is not None:
                servers.stop(proc)
    report: dict[str, Any] | None = None
    try:
        parsed = json.loads(out)
        report = parsed if isinstance(parsed, dict) else None
    except ValueError:
        problem = problem or f"stdout is not a JSON report (exit {code}): {out[-500:]!r}"
    return CellRun(scenario, transport, code, report, err, time.monotonic() - started, wire_log, problem)


def availability(scenario: Scenario) -> str | None:
    return servers.BY_NAME[scenario.server].available()


def server_version(name: str) -> str:
    """The third-party package versions behind a servers.py entry, as installed here."""
    def py(dist: str) -> str:
        try:
            return f"{dist} {importlib.metadata.version(dist)}"
        except importlib.metadata.PackageNotFoundError:
            return f"{dist} (not installed)"

    def npm(package: str) -> str:
        manifest = servers.NODE_MODULES / package / "package.json"
        try:
            return f"{package} {json.loads(manifest.read_text(encoding='utf-8'))['version']}"
        except (OSError, ValueError, KeyError):
            return f"{package} (not installed)"

    return {
        "fastmcp-tasks": lambda: f"{py('fastmcp')}, {py('fastmcp-tasks')}",
        "sdk-tasks": lambda: npm("@modelcontextprotocol/sdk"),
        "server-everything": lambda: npm("@modelcontextprotocol/server-everything"),
        "mcp-plain": lambda: py("mcp"),
        "mcp-framework": lambda: npm("mcp-framework"),
        "mcp1-tasks": lambda: f"mcp {servers.legacy_versions('mcp').get('mcp') or '(not installed)'}",
        "fastmcp3-tasks": lambda: ", ".join(f"{d} {v or '(not installed)'}" for d, v in
                                            (servers.legacy_versions("fastmcp", "pydocket") or
                                             {"fastmcp": None, "pydocket": None}).items()),
        "arcade-tasks": lambda: "arcade-mcp-server "
        + (servers.legacy_versions("arcade-mcp-server").get("arcade-mcp-server") or "(not installed)"),
    }[name]()


# --- pytest ------------------------------------------------------------------------------


class Cells:
    """Runs the cells the collected tests need, all at once on a pool, on first use."""

    def __init__(self, wanted: list[tuple[str, str]], workdir: Path) -> None:
        self.workdir = workdir
        self.skips: dict[str, str] = {}
        runnable: list[tuple[Scenario, str]] = []
        for scenario_id, transport in wanted:
            scenario = BY_ID[scenario_id]
            why = availability(scenario)
            if why is not None:
                self.skips[scenario_id] = f"{scenario.server}: {why}"
            else:
                runnable.append((scenario, transport))
        self._pool = concurrent.futures.ThreadPoolExecutor(max_workers=max(1, WORKERS),
                                                           thread_name_prefix="interop")
        self._futures = {
            (s.id, t): self._pool.submit(run_cell, s, t, workdir) for s, t in runnable
        }

    def get(self, scenario_id: str, transport: str) -> CellRun:
        if scenario_id in self.skips:
            pytest.skip(self.skips[scenario_id])
        future = self._futures[(scenario_id, transport)]
        # Bounded: server start (STARTUP_TIMEOUT_MS) + one tool run (CELL_TIMEOUT_S) + stop, after the
        # cells queued before it.
        return future.result(timeout=CELL_TIMEOUT_S * 3)

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)


@pytest.fixture(scope="module")
def cells(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cells]:
    wanted: dict[tuple[str, str], None] = {}
    for item in request.session.items:
        callspec = getattr(item, "callspec", None)
        if callspec is None or item.module is not request.module:  # type: ignore[attr-defined]
            continue
        wanted[(callspec.params["scenario_id"], callspec.params["transport"])] = None
    runner = Cells(list(wanted), tmp_path_factory.mktemp("interop"))
    try:
        yield runner
    finally:
        runner.close()


def _case(scenario_id: str, transport: str, check_id: str) -> Any:
    known = DISAGREEMENTS.get((scenario_id, transport, check_id))
    racy = (scenario_id, transport, check_id) in RACY_DISAGREEMENTS
    marks = [pytest.mark.xfail(strict=not racy, reason=known[0])] if known else []
    return pytest.param(scenario_id, transport, check_id, id=f"{scenario_id}-{transport}-{check_id}", marks=marks)


CHECK_CASES = [_case(s.id, t, c) for s in SCENARIOS for t in s.transports for c in s.selected]
RUN_CASES = [_case(s.id, t, "exit-code") for s in SCENARIOS for t in s.transports]


@pytest.mark.parametrize("scenario_id,transport,check_id", CHECK_CASES)
def test_check_verdict(cells: Cells, scenario_id: str, transport: str, check_id: str) -> None:
    scenario = BY_ID[scenario_id]
    run = cells.get(scenario_id, transport)
    assert run.report is not None, run.describe()
    expected = scenario.verdict(check_id, transport)
    actual = run.verdict(check_id)
    assert actual == expected, f"expected {expected}, got {actual}\n{run.describe(check_id)}"


@pytest.mark.parametrize("scenario_id,transport,check_id", RUN_CASES)
def test_exit_code_and_discovery(cells: Cells, scenario_id: str, transport: str, check_id: str) -> None:
    scenario = BY_ID[scenario_id]
    run = cells.get(scenario_id, transport)
    assert run.problem is None, run.describe()
    assert run.report is not None, run.describe()
    # Exactly the selected checks are reported, once each.
    reported = [c["id"] for c in run.report["checks"]]
    assert sorted(reported) == sorted(scenario.selected), run.describe()
    discovery = run.report["discovery"]
    assert (discovery["wire"], discovery["protocolVersion"]) == (scenario.wire, scenario.protocol), run.describe()
    if scenario.tool is not None:
        assert discovery["probedTool"] == scenario.tool, run.describe()
    for role, tool in scenario.roles.items():
        assert discovery["roles"][role]["tool"] == tool, (role, discovery["roles"].get(role), run.describe())
    expected = scenario.exit_code(transport)
    assert run.returncode == expected, (
        f"expected exit {expected}, got {run.returncode} (outcome {run.report.get('outcome')})\n{run.describe()}"
    )
    assert EXIT_FOR[run.report["outcome"]] == run.returncode, run.describe()


def test_matrix_is_consistent() -> None:
    """Each scenario states a right verdict for exactly the checks it selects."""
    for scenario in SCENARIOS:
        assert set(scenario.expected) == set(scenario.selected), scenario.id
        for check_id in scenario.selected:
            for transport in scenario.transports:
                assert scenario.verdict(check_id, transport) in (P, F, NA, CNR, DEF), (scenario.id, check_id)
    for scenario_id, transport, check_id in DISAGREEMENTS:
        assert scenario_id in BY_ID and transport in BY_ID[scenario_id].transports
        assert check_id == "exit-code" or check_id in BY_ID[scenario_id].selected
