"""Profile durable: `tasks-task-survives-restart` stops the server the run started, starts it
again and reads its tasks over a new connection. It passes the reference server with a task store
(stdio, both eras; --server-command over HTTP), fails a store that forgets and one kept in memory,
naming what was lost, and is not applicable against a server the run did not start. The
reference server's journal replays confirmed states, ignores a torn last line and ends the work
that a restart lost."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from helpers.paths import BROKEN, DEMO_INPUT, REFERENCE
from helpers.processes import free_port, http_server
from helpers.runs import run, stdio, tool

from tasks_conformance.server.reference import ServerConfig
from tasks_conformance.server.reference.journal import LOST_WORK, TaskJournal, restore
from tasks_conformance.server.reference.server import ReferenceServer
from tasks_conformance.server.reference.tasks import TaskRecord

RESTART = "tasks-task-survives-restart"
# The task tool waits for input: the run answers the probe task's, and a second task stays
# input_required, still working, when the server stops.
INPUT = {"tool_name": "confirm_action", "input_responses": DEMO_INPUT}
ERAS = {"extension": {}, "legacy": {"protocol_version": "2025-11-25"}}


def _restart_check(ex: Any) -> Any:
    return next(c for c in ex.result.checks if c.id == RESTART)


def _frames(ex: Any) -> list[dict[str, Any]]:
    return [f.json() for f in ex.wire if f.json() is not None]


@pytest.mark.parametrize("era", sorted(ERAS))
def test_the_reference_with_a_task_store_keeps_both_tasks_over_a_restart(era: str, tmp_path: Path) -> None:
    store = tmp_path / "tasks.jsonl"
    ex = run(**stdio(REFERENCE, "--task-store", str(store), process=True), **INPUT, **ERAS[era], check_ids=[RESTART])
    check = _restart_check(ex)
    assert check.bucket == "passed", (check.message, check.details)
    assert "the working task was readable" in check.message, check.message
    # Two processes, the second found the tasks: each was read over the new connection.
    methods = [m.get("method") for m in _frames(ex)]
    assert methods.count("tasks/get") >= 4
    assert check.details["after"]["working task"]["status"] == "failed"  # its work died with the process
    assert store.exists()


@pytest.mark.parametrize("era", sorted(ERAS))
def test_a_store_that_forgets_fails_and_names_both_lost_tasks(era: str, tmp_path: Path) -> None:
    store = tmp_path / "tasks.jsonl"
    ex = run(**stdio([*BROKEN, "--break", "task-store-forgets"], "--task-store", str(store), process=True),
             **INPUT, **ERAS[era], check_ids=[RESTART])
    check = _restart_check(ex)
    assert check.bucket == "failed", (check.bucket, check.message)
    assert check.broken == ["S-CLAIM-01"] and "P-44" in check.message_policies
    assert "the ended task is unknown" in check.message and "the working task is unknown" in check.message
    expected, actual = check.details["expected"], check.details["actual"]
    assert expected["ended task"]["status"] == "completed"
    assert actual["ended task"].startswith("unknown: tasks/get got error -32602")
    assert actual["working task"].startswith("unknown: tasks/get got error -32602")


def test_a_server_without_a_store_fails_when_asked_by_check_id_alone() -> None:
    # The default profile runs it when named: the claim is judged only when asked for.
    ex = run(**stdio(REFERENCE, process=True), **INPUT, check_ids=[RESTART])
    assert ex.result.profile.startswith("tasks-conformance/standard@")
    assert _restart_check(ex).bucket == "failed"


def test_over_http_the_server_command_is_stopped_and_started_again(tmp_path: Path) -> None:
    port = free_port()
    server = [*REFERENCE, "--transport", "http", "--port", str(port), "--task-store", str(tmp_path / "t.jsonl")]
    ex = run(server_command=server, url=f"http://127.0.0.1:{port}/mcp", **INPUT, check_ids=[RESTART])
    check = _restart_check(ex)
    assert check.bucket == "passed", (check.message, check.details)
    assert "SIGTERM" in check.message
    # The forgetting store over HTTP: the same check fails.
    port = free_port()
    server = [*BROKEN, "--break", "task-store-forgets", "--transport", "http", "--port", str(port),
              "--task-store", str(tmp_path / "f.jsonl")]
    ex = run(server_command=server, url=f"http://127.0.0.1:{port}/mcp", **INPUT, check_ids=[RESTART])
    assert _restart_check(ex).bucket == "failed", _restart_check(ex).message


def test_a_server_the_run_did_not_start_is_not_applicable_and_is_left_alone() -> None:
    server = http_server(REFERENCE)
    try:
        ex = run(url=server.url, **INPUT, profile="durable")
        check = _restart_check(ex)
        assert check.bucket == "not-applicable"
        assert "--url" in check.message and "--server-command" in check.message
        assert ex.result.outcome == "passed"
        # No second task was created for it, and the server still answers.
        calls = [m for m in _frames(ex) if m.get("method") == "tools/call"]
        assert not any("restart" in (f.note or "") for f in ex.wire)
        assert calls
        assert server.proc.poll() is None
    finally:
        server.stop()


def test_the_restart_check_alone_against_a_server_the_run_did_not_start_tested_nothing() -> None:
    # Nothing applicable was tested, so the run is not a pass (policy P-46): incomplete, exit 3, with
    # the one cause saying what makes the check apply. It used to end PASSED 0/1, score n/a, exit 0.
    server = http_server(REFERENCE)
    try:
        args = ("--url", server.url, "--profile", "durable", "--check-id", RESTART, "--tool-name", "slow_compute")
        proc = tool(*args, "--format", "json")
        human = tool(*args, "--format", "human")
    finally:
        server.stop()
    assert proc.returncode == 3, proc.stdout
    doc = json.loads(proc.stdout)
    assert doc["outcome"] == "incomplete" and doc["score"] is None
    assert [(c["id"], c["skipReason"]) for c in doc["checks"]] == [(RESTART, "not-applicable")]
    (cause,) = doc["incompleteCauses"]
    assert cause["cause"].startswith("nothing was tested") and "(policy P-46)" in cause["cause"]
    assert cause["fix"] == "give --server-command to test durability" and cause["checks"] == []
    assert doc["incompleteReason"].startswith("Could not establish conformance — nothing was tested")
    assert human.returncode == 3
    assert "INCOMPLETE" in human.stdout and "fix: give --server-command to test durability" in human.stdout


def test_the_demo_passes_the_durable_profile() -> None:
    proc = tool("demo", "--profile", "durable", "--format", "json")
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr
    report = json.loads(proc.stdout)
    assert report["profile"].startswith("tasks-conformance/durable@")
    assert next(c for c in report["checks"] if c["id"] == RESTART)["status"] == "passed"


# -- the reference server's journal ----------------------------------------------------------------

def _entry(task_id: str, status: str, **more: Any) -> dict[str, Any]:
    return {"taskId": task_id, "era": "extension", "status": status, "statusMessage": None,
            "createdAt": time.time(), "lastUpdatedAt": time.time(), "ttlMs": 60_000, "pollIntervalMs": 100,
            "principal": None, "result": None, "error": None, **more}


def test_replay_keeps_the_last_state_and_ignores_a_torn_last_line(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    done = _entry("a", "completed", result={"content": [{"type": "text", "text": "ok"}]})
    lines = [json.dumps(_entry("a", "working")), json.dumps(done), json.dumps(_entry("b", "working")),
             json.dumps(_entry("c", "completed"))[:30]]  # the process died mid-write
    path.write_text("\n".join(lines), encoding="utf-8")
    entries = TaskJournal(str(path)).replay()
    assert [(e["taskId"], e["status"]) for e in entries] == [("a", "completed"), ("b", "working")]
    records = [r for e in entries if (r := restore(e)) is not None]
    assert records[0].status == "completed" and records[0].result == done["result"]
    # The work of a task still running died with the process: it comes back failed, saying so.
    assert (records[1].status, records[1].status_message) == ("failed", LOST_WORK)
    assert records[1].error is not None and records[1].error["message"] == LOST_WORK


def test_replay_drops_tasks_past_their_ttl_and_gone_ones(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    old = _entry("old", "completed", createdAt=time.time() - 120, ttlMs=1_000)
    path.write_text("\n".join(json.dumps(e) for e in (old, _entry("gone", "completed"),
                                                       {"taskId": "gone", "gone": True})) + "\n")
    assert [restore(e) for e in TaskJournal(str(path)).replay()] == [None, None]


def test_the_server_replays_compacts_and_appends_every_confirmed_state(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    path.write_text("\n".join(json.dumps(_entry("a", "completed")) for _ in range(5)) + "\n")
    server = ReferenceServer(ServerConfig(task_store=str(path)))
    try:
        assert server.tasks.get("a", "extension") is not None
        assert len(path.read_text().splitlines()) == 1  # one line per task after the replay
        record = TaskRecord(era="extension", ttl_ms=60_000, poll_interval_ms=100, task_id="b")
        server.tasks.add(record)
        record.set_status("input_required")
        record.complete({"content": []})
        statuses = [json.loads(line)["status"] for line in path.read_text().splitlines()[1:]]
        assert statuses == ["working", "input_required", "completed"]
    finally:
        server.tasks.close()


def test_a_legacy_task_outlives_its_session_and_the_token_is_never_written(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    server = ReferenceServer(ServerConfig(task_store=str(path), bearer_tokens=("s3cret-token",)))
    try:
        record = TaskRecord(era="legacy", ttl_ms=60_000, poll_interval_ms=100, owner="session-1", task_id="L")
        # The credential the task is bound to, as the server keeps it: a digest, the same for the same token.
        asking = SimpleNamespace(headers={"authorization": "Bearer s3cret-token"})
        record.principal = server.principal(asking)  # type: ignore[arg-type]
        assert record.principal == server.principal(asking)  # type: ignore[arg-type]
        server.tasks.add(record)
        server.tasks.drop_owner("session-1")
        assert server.tasks.get("L", "legacy", owner="session-2") is record  # any later session may read it
    finally:
        server.tasks.close()
    assert "s3cret-token" not in path.read_text()


def test_the_reference_server_help_names_the_task_store() -> None:
    out = subprocess.run([sys.executable, "-m", "tasks_conformance.server.reference", "--help"],
                         capture_output=True, text=True, timeout=60)
    assert "--task-store" in out.stdout
