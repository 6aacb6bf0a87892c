"""Cross-check against the official JSON Schemas in ../shared/spec-data (skipped where absent,
as in a user's clone): our constants match the schemas, the reference server's real frames
validate, and a frame a breaking fixture sends does not."""

from __future__ import annotations

import json
from typing import Any

import jsonschema
import pytest
from helpers.paths import BROKEN, DEMO_INPUT, REFERENCE, SHARED
from helpers.runs import run, stdio

from tasks_conformance.core.protocol import TASK_STATUSES

SPEC = SHARED / "spec-data"
pytestmark = pytest.mark.skipif(not SPEC.is_dir(), reason="../shared/spec-data is not present")


def _schema(name: str, definition: str) -> Any:
    doc = json.loads((SPEC / name).read_text())
    # Validate against one $defs entry while keeping every $ref resolvable.
    return {**doc, "$ref": f"#/$defs/{definition}"}


def _validator(name: str, definition: str) -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator(_schema(name, definition))


def _results(ex: Any, method: str) -> list[dict[str, Any]]:
    out = []
    requests = {}
    for f in ex.wire:
        msg = f.json()
        if not isinstance(msg, dict):
            continue
        if f.direction == "out" and "method" in msg:
            requests[msg.get("id")] = msg["method"]
        elif f.direction == "in" and "result" in msg and requests.get(msg.get("id")) == method:
            out.append(msg["result"])
    return out


def test_task_status_enum_matches_both_schemas() -> None:
    legacy = json.loads((SPEC / "core-2025-11-25.schema.json").read_text())["$defs"]["TaskStatus"]["enum"]
    ext = json.loads((SPEC / "ext-tasks-2026-07-28.schema.json").read_text())["$defs"]["TaskStatus"]["anyOf"]
    assert sorted(legacy) == sorted(TASK_STATUSES) == sorted(e["const"] for e in ext)


def test_reference_extension_frames_validate_against_ext_tasks_schema() -> None:
    ex = run(**stdio(REFERENCE), tool_name="confirm_action", input_responses=DEMO_INPUT)
    name = "ext-tasks-2026-07-28.schema.json"
    creates = [r for r in _results(ex, "tools/call") if r.get("resultType") == "task"]
    assert creates
    for r in creates:
        _validator(name, "CreateTaskResult").validate(r)
    gets = _results(ex, "tasks/get")
    assert {g.get("status") for g in gets} >= {"input_required", "completed"}
    for g in gets:
        _validator(name, "GetTaskResult").validate(g)
    for r in _results(ex, "tasks/update"):
        _validator(name, "UpdateTaskResult").validate(r)
    for r in _results(ex, "tasks/cancel"):
        _validator(name, "CancelTaskResult").validate(r)


def test_reference_legacy_frames_validate_against_core_2025_11_25() -> None:
    ex = run(**stdio(REFERENCE), protocol_version="2025-11-25")
    name = "core-2025-11-25.schema.json"
    creates = [r for r in _results(ex, "tools/call") if "task" in r]
    assert creates
    for r in creates:
        _validator(name, "CreateTaskResult").validate(r)
    for r in _results(ex, "tasks/get"):
        _validator(name, "GetTaskResult").validate(r)
    for r in _results(ex, "tasks/cancel"):
        _validator(name, "CancelTaskResult").validate(r)
    init = _results(ex, "initialize")
    _validator(name, "InitializeResult").validate(init[0])


def test_a_nested_create_fixture_frame_fails_the_schema_as_our_check_says() -> None:
    ex = run(**stdio([*BROKEN, "--break", "nested-create"]), tool_name="slow_compute")
    creates = [r for r in _results(ex, "tools/call") if r.get("resultType") == "task"]
    assert creates
    errors = list(_validator("ext-tasks-2026-07-28.schema.json", "CreateTaskResult").iter_errors(creates[0]))
    assert errors  # the official schema agrees with tasks-result-type-discipline's verdict
    v = {c.id: c.bucket for c in ex.result.checks}
    assert v["tasks-result-type-discipline"] == "failed"


