"""Probe roles: `--probe ROLE=TOOL` / `--probe-args ROLE=<json>`, their inference from
execution.taskSupport, the report of which tool took which role, and what a check whose role has
no tool becomes under each profile."""

from __future__ import annotations

import io
import json
from typing import Any

import jsonschema  # type: ignore[import-untyped,unused-ignore]
import pytest
from helpers.paths import BROKEN, DEMO_INPUT, REFERENCE
from helpers.runs import run, stdio

from tasks_conformance.core.errors import UsageError
from tasks_conformance.entry.cli import run_cli
from tasks_conformance.reporters import render, schema_text
from tasks_conformance.server.checks import CHECKS
from tasks_conformance.settings.config import build_config
from tasks_conformance.settings.role_flags import ROLES

LEGACY = {"protocol_version": "2025-11-25"}
ROLE_CHECKS = ("tasks-required-tool-needs-task", "tasks-forbidden-tool-task-refused", "tasks-tool-error-outcome",
               "tasks-fault-outcome", "tasks-input-required-update-completes")
TARGET = ("--command", "python")


def render_text(name: str, result: Any) -> str:
    out = io.StringIO()
    render(name, result, out)
    return out.getvalue()


def _config(**flags: Any) -> Any:
    return build_config(command="python", **flags)


# ---------------------------------------------------------------------------------------------
# Flags


def test_probe_flags_parse_into_roles_and_the_task_role_is_tool_name() -> None:
    config = _config(probes=["required=long_job", "fault=rpc_error", "task=slow_compute"],
                     probe_args=['fault={"durationMs": 10}', 'task={"durationMs": 5}'])
    assert config.probes == {"required": "long_job", "fault": "rpc_error"}
    assert config.probe_args == {"fault": {"durationMs": 10}}
    assert config.tool_name == "slow_compute" and config.tool_args == {"durationMs": 5}
    # The same value through both spellings is one setting.
    same = _config(tool_name="slow_compute", probes=["task=slow_compute"], tool_args='{"a": 1}',
                   probe_args=['task={"a": 1}'])
    assert same.tool_name == "slow_compute" and same.tool_args == {"a": 1}


def test_probe_args_read_a_file(tmp_path: Any) -> None:
    args = tmp_path / "fault.json"
    args.write_text('{"durationMs": 3}', encoding="utf-8")
    assert _config(probe_args=[f"fault=@{args}"]).probe_args == {"fault": {"durationMs": 3}}


@pytest.mark.parametrize("flags,message", [
    ({"probes": ["inptu=confirm_action"]}, "--probe: unknown role 'inptu'; did you mean input? roles: task, required, "
                                           "tool-error, fault, input, sync"),
    ({"probes": ["faults=x"]}, "did you mean fault?"),
    ({"probes": ["input"]}, "--probe: expected ROLE=VALUE"),
    ({"probes": ["input="]}, "--probe input=: expected a tool name after the ="),
    ({"probes": ["fault=a", "fault=b"]}, "--probe fault is given twice, as 'a' and 'b'"),
    ({"tool_name": "a", "probes": ["task=b"]}, "--tool-name 'a' and --probe task='b' name different tools; give one"),
    ({"tool_args": '{"a": 1}', "probe_args": ['task={"a": 2}']}, "--tool-args and --probe-args task= give different"),
    ({"probe_args": ["fault=[1]"]}, "--probe-args fault: expected a JSON object"),
    ({"probe_args": ["fault={"]}, "--probe-args fault: not valid JSON"),
    ({"probe_args": ["nope={}"]}, "--probe-args: unknown role 'nope'"),
    ({"probe_args": ["fault=-"], "tool_args": "-"}, "only one flag may read standard input (-)"),
])
def test_role_usage_errors(flags: dict[str, Any], message: str) -> None:
    with pytest.raises(UsageError) as err:
        _config(**flags)
    assert message in str(err.value)


def test_an_unknown_role_on_the_command_line_is_exit_2_with_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    code = run_cli([*TARGET, "--probe", "tool_error=fail_job"])
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert err.strip().count("\n") == 0 and "did you mean tool-error?" in err and "Traceback" not in err


def test_every_role_check_declares_a_known_role_and_list_checks_shows_roles(capsys: pytest.CaptureFixture[str]) -> None:
    roles = {c: CHECKS[c].role for c in ROLE_CHECKS}
    assert roles == {"tasks-required-tool-needs-task": "required", "tasks-forbidden-tool-task-refused": "sync",
                     "tasks-tool-error-outcome": "tool-error", "tasks-fault-outcome": "fault",
                     "tasks-input-required-update-completes": "input"}
    assert set(roles.values()) | {"task"} == set(ROLES)
    assert run_cli(["--list-checks", "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    by_id = {c["id"]: c for c in doc["checks"]}
    assert by_id["tasks-fault-outcome"]["role"] == "fault"
    assert by_id["tasks-inline-result"]["role"] == "task" and by_id["tasks-wire-resolvable"]["role"] is None
    assert run_cli(["--list-checks"]) == 0
    text = capsys.readouterr().out
    line = next(line for line in text.splitlines() if line.startswith("tasks-fault-outcome"))
    assert line.split()[3] == "fault"


def test_explain_names_the_role_and_its_flag(capsys: pytest.CaptureFixture[str]) -> None:
    assert run_cli(["explain", "tasks-tool-error-outcome"]) == 0
    out = capsys.readouterr().out
    assert "Probe role: tool-error: a tool whose result has isError: true; set it with --probe tool-error=TOOL" in out
    assert "could-not-run under full" in out


# ---------------------------------------------------------------------------------------------
# Inference and the report


def _roles(ex: Any) -> dict[str, dict[str, Any]]:
    return dict(ex.result.discovery.roles)


def test_legacy_roles_are_inferred_from_task_support_on_the_reference_server() -> None:
    ex = run(**stdio(REFERENCE), **LEGACY, check_ids=[*ROLE_CHECKS, "tasks-inline-result"])
    roles = _roles(ex)
    assert roles["task"]["tool"] == "long_job" and roles["task"]["source"] == "inferred"
    assert roles["required"] == {"tool": "long_job", "source": "inferred", "reason": roles["required"]["reason"]}
    assert "execution.taskSupport required" in roles["required"]["reason"]
    assert roles["sync"]["tool"] == "echo" and "execution.taskSupport forbidden" in roles["sync"]["reason"]
    for role in ("tool-error", "fault", "input"):
        assert roles[role]["tool"] is None and roles[role]["source"] == "none"
        assert f"--probe {role}=TOOL" in roles[role]["reason"]
    v = {c.id: c.bucket for c in ex.result.checks}
    assert v["tasks-required-tool-needs-task"] == "passed" and v["tasks-forbidden-tool-task-refused"] == "passed"
    assert ex.result.outcome == "passed"
    # The human header says which tool took which role and why; JSON carries it under discovery.roles.
    human = render_text("human", ex.result)
    assert "required role" in human and "sync role" in human and "echo: inferred" in human
    markdown = render_text("markdown", ex.result).replace("\\", "")  # without markdown's escapes
    assert "probe roles: required long_job · tool-error none" in markdown and "sync echo" in markdown
    doc = json.loads(render_text("json", ex.result))
    assert doc["discovery"]["roles"]["sync"]["tool"] == "echo"
    for kind in ("json", "json-summary"):
        schema = json.loads(schema_text(kind))  # type: ignore[arg-type]
        jsonschema.Draft202012Validator(schema).validate(json.loads(render_text(kind, ex.result)))


def test_extension_roles_without_task_metadata_are_only_set_by_flags() -> None:
    ex = run(**stdio(REFERENCE), tool_name="slow_compute", check_ids=list(ROLE_CHECKS))
    roles = _roles(ex)
    assert roles["required"]["tool"] is None and "carry no task metadata" in roles["required"]["reason"]
    assert "sync" not in roles  # no selected check needs it on the extension (legacy only)
    v = {c.id: c for c in ex.result.checks}
    assert v["tasks-required-tool-needs-task"].bucket == "not-applicable"
    assert "--probe required=TOOL" in v["tasks-required-tool-needs-task"].message
    named = run(**stdio(REFERENCE), tool_name="slow_compute", probes=["required=long_job"],
                check_ids=["tasks-required-tool-needs-task"])
    assert _roles(named)["required"] == {"tool": "long_job", "source": "flag", "reason": "chosen with --probe required"}
    assert named.result.checks[0].bucket == "passed", named.result.checks[0].message


def test_input_role_defaults_to_the_task_tool_with_input_responses_and_reuses_its_task() -> None:
    ex = run(**stdio(REFERENCE), tool_name="confirm_action", input_responses=DEMO_INPUT)
    assert _roles(ex)["input"]["tool"] == "confirm_action" and _roles(ex)["input"]["source"] == "default"
    assert {c.id: c.bucket for c in ex.result.checks}["tasks-input-required-update-completes"] == "passed"
    # Other probes call the tool for their own samples (two more task ids, a task without input
    # capabilities, a 2025-11-25 session); what matters here is that the input role adds no call.
    samples = ("undeclared", "task id sample", "task without input capabilities", "2025-11-25 session")
    calls = [f for f in ex.wire if f.direction == "out" and (f.json() or {}).get("method") == "tools/call"
             and not any(s in (f.note or "") for s in samples)]
    assert len(calls) == 1, [f.note for f in calls]  # one task of confirm_action, judged by both


# ---------------------------------------------------------------------------------------------
# A role without a tool, by profile


def test_a_role_without_a_tool_is_not_applicable_under_standard_and_could_not_run_under_full() -> None:
    ids = ["tasks-tool-error-outcome", "tasks-fault-outcome"]
    standard = run(**stdio(REFERENCE), **LEGACY, check_ids=ids)
    assert [c.bucket for c in standard.result.checks] == ["not-applicable"] * 2
    # Neither holds a run back; but with nothing else selected, nothing was tested: incomplete, and
    # the one cause says which flags would make them apply (policy P-46).
    assert standard.result.outcome == "incomplete"
    (cause,) = standard.result.incompleteCauses
    assert cause.cause.startswith("nothing was tested") and cause.checks == ()
    assert "--probe tool-error=TOOL" in cause.fix and "--probe fault=TOOL" in cause.fix
    full = run(**stdio(REFERENCE), **LEGACY, check_ids=ids, profile="full")
    assert [c.bucket for c in full.result.checks] == ["could-not-run"] * 2
    assert "--probe tool-error=TOOL" in full.result.checks[0].message
    assert "--probe fault=TOOL" in full.result.checks[1].message
    assert full.result.outcome == "incomplete"
    # No role, no traffic for it: only discovery went out.
    assert not [f for f in full.wire if f.direction == "out" and (f.json() or {}).get("method") == "tools/call"]


def test_a_role_named_on_the_command_line_that_cannot_be_used_could_not_run_even_under_standard() -> None:
    ex = run(**stdio(REFERENCE), **LEGACY, probes=["fault=no_such_tool", "required=slow_compute"],
             check_ids=["tasks-fault-outcome", "tasks-required-tool-needs-task"])
    c = {c.id: c for c in ex.result.checks}
    assert c["tasks-fault-outcome"].bucket == "could-not-run"
    assert "'no_such_tool' is not among the listed tools" in c["tasks-fault-outcome"].message
    assert c["tasks-required-tool-needs-task"].bucket == "could-not-run"
    assert "execution.taskSupport 'optional'" in c["tasks-required-tool-needs-task"].message


def test_role_probes_are_sent_only_when_a_check_needing_them_is_selected() -> None:
    ex = run(**stdio(REFERENCE), **LEGACY, probes=["fault=rpc_error", "tool-error=tool_error"],
             check_ids=["tasks-wire-resolvable"])
    names = [(f.json() or {}).get("params", {}).get("name") for f in ex.wire
             if f.direction == "out" and (f.json() or {}).get("method") == "tools/call"]
    assert names == []


# ---------------------------------------------------------------------------------------------
# SHOULD-level findings of the outcome checks warn


@pytest.mark.parametrize("era,rule", [({}, "S-EXT-SHOULD-04"), (LEGACY, "S-LEG-SHOULD-07")])
def test_a_failed_task_without_status_message_warns(era: dict[str, Any], rule: str) -> None:
    settings = {**era, "tool_name": "slow_compute", "probes": ["fault=rpc_error"], "check_ids": ["tasks-fault-outcome"]}
    ex = run(**stdio([*BROKEN, "--break", "failed-without-status-message"]), **settings)
    c = ex.result.checks[0]
    assert c.bucket == "passed" and any(rule in w.text and "statusMessage" in w.text
                                        for w in c.warnings), (c.message, c.warnings)
    ref = run(**stdio(REFERENCE), **settings).result.checks[0]
    assert ref.bucket == "passed" and not ref.warnings, ref.message


def test_legacy_is_error_completed_warns_on_the_tool_error_role() -> None:
    settings = {**LEGACY, "probes": ["tool-error=tool_error"], "check_ids": ["tasks-tool-error-outcome"]}
    c = run(**stdio([*BROKEN, "--break", "legacy-isError-completed"]), **settings).result.checks[0]
    assert c.bucket == "passed" and any(w.policies == ("P-17",) for w in c.warnings)


def test_a_fault_task_that_completes_warns_with_its_policy() -> None:
    # slow_compute never fails: named as the fault tool, its task completes; from outside that
    # cannot be told from a server hiding the error, so it warns (policy P-25), never fails.
    settings = {"tool_name": "slow_compute", "probes": ["fault=slow_compute"], "check_ids": ["tasks-fault-outcome"]}
    c = run(**stdio(REFERENCE), **settings).result.checks[0]
    assert c.bucket == "passed" and any(w.policies == ("P-25",) for w in c.warnings)
    assert c.policies and c.policies[0].id == "P-25"


def test_the_api_takes_roles_as_mappings() -> None:
    from tasks_conformance.entry.api import build_config as api_config

    config = api_config(command="python", probes={"fault": "rpc_error"}, probe_args={"fault": {"durationMs": 1}})
    assert config.probes == {"fault": "rpc_error"} and config.probe_args == {"fault": {"durationMs": 1}}


# ---------------------------------------------------------------------------------------------
# Judges on hand-built evidence (no server)


def _builder(wire: Any) -> Any:
    from helpers.evidence import Builder

    return Builder(wire)


def _judge(check_id: str, b: Any, profile: str = "standard", roles: dict[str, Any] | None = None) -> Any:
    from dataclasses import replace

    from tasks_conformance.server.evidence import ToolChoice
    from tasks_conformance.server.runner import judge

    given = roles if roles is not None else {CHECKS[check_id].role: ToolChoice("t", "test", source="flag")}
    return judge(CHECKS[check_id], replace(b.ev, roles=given, profile=profile), interrupted=False)


@pytest.mark.parametrize("answer,status,warns", [
    ({"error": {"code": -32601, "message": "needs a task"}}, "passed", False),
    ({"error": {"code": -32600, "message": "needs a task"}}, "passed", True),
    ({"error": {"code": -32602, "message": "no"}}, "failed", False),
    ({"result": {"content": [{"type": "text", "text": "-32601"}], "isError": True}}, "failed", False),
])
def test_legacy_required_tool_judge(answer: dict[str, Any], status: str, warns: bool) -> None:
    from tasks_conformance.core.wires import CreatedTask, Wire
    from tasks_conformance.server.evidence import RequiredUndeclared

    b = _builder(Wire.LEGACY)
    reply = b.exchange("tools/call", {"name": "t"}, answer, declared=False)
    rec = b.record(RequiredUndeclared)
    rec.tool, rec.call, rec.created = "t", reply, CreatedTask.read(reply.result if reply.ok else None)
    v = _judge("tasks-required-tool-needs-task", b)
    assert v.status == status and bool(v.warnings) == warns, v.message
    if status == "failed":
        assert "S-LEG-MUST-02" in v.message and v.details["expected"] == "error.code -32601"


@pytest.mark.parametrize("answer,status,says", [
    ({"error": {"code": -32021, "message": "declare it", "data": {}}}, "passed", "-32021"),
    ({"error": {"code": -32003, "message": "old"}}, "failed", "-32003"),
    ({"result": {"resultType": "complete", "content": []}}, "failed", "S-EXT-MUST-02"),
    ({"result": {"resultType": "task", "taskId": "x", "status": "working"}}, "failed", "S-EXT-MUST-01"),
])
def test_extension_required_tool_judge(answer: dict[str, Any], status: str, says: str) -> None:
    from tasks_conformance.core.wires import CreatedTask, Wire
    from tasks_conformance.server.evidence import RequiredUndeclared

    b = _builder(Wire.EXTENSION)
    reply = b.exchange("tools/call", {"name": "t"}, answer, declared=False)
    rec = b.record(RequiredUndeclared)
    rec.tool, rec.call, rec.created = "t", reply, CreatedTask.read(reply.result if reply.ok else None)
    v = _judge("tasks-required-tool-needs-task", b)
    assert v.status == status and says in v.message, v.message


@pytest.mark.parametrize("final,status", [
    ({"status": "completed", "result": {"content": [], "isError": True}}, "passed"),
    ({"status": "failed", "error": {"code": -32603, "message": "x"}}, "failed"),
    ({"status": "completed", "result": {"content": []}}, "skipped"),  # not an isError tool: the role is wrong
])
def test_extension_tool_error_judge(final: dict[str, Any], status: str) -> None:
    from tasks_conformance.core.wires import CreatedTask, Wire
    from tasks_conformance.server.evidence import StopReason, ToolErrorTask

    b = _builder(Wire.EXTENSION)
    created = {"resultType": "task", "taskId": "t1", "status": "working", "createdAt": "2026-01-01T00:00:00Z",
               "lastUpdatedAt": "2026-01-01T00:00:00Z", "ttlMs": 1000}
    rec = b.record(ToolErrorTask)
    rec.tool = "t"
    rec.call = b.exchange("tools/call", {"name": "t"}, {"result": created})
    rec.created = CreatedTask.read(created)
    get = b.exchange("tasks/get", {"taskId": "t1"}, {"result": {"resultType": "complete", **created, **final}})
    rec.poll.ran, rec.poll.stop = True, StopReason.TERMINAL
    rec.poll.gets.append(get)
    rec.poll.statuses.append(final["status"])
    v = _judge("tasks-tool-error-outcome", b)
    assert v.status == status, v.message
    if status == "failed":
        assert "S-EXT-MUST-13" in v.message


def test_a_role_without_a_tool_by_profile_on_hand_built_evidence() -> None:
    from tasks_conformance.core.wires import Wire
    from tasks_conformance.server.evidence import ToolChoice

    b = _builder(Wire.LEGACY)
    cid = "tasks-fault-outcome"
    assert _judge(cid, b, roles={}).skip_reason == "not-applicable"
    assert _judge(cid, b, "full", roles={}).skip_reason == "could-not-run"
    unusable = {"fault": ToolChoice(None, "--probe fault='x' is not among the listed tools", source="flag")}
    v = _judge(cid, b, roles=unusable)
    assert v.skip_reason == "could-not-run" and "'x' is not among the listed tools" in v.message
