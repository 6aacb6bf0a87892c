"""A task's TTL: the reads that need an ended task go out before it may be deleted, a deletion after
the TTL is the server's freedom (never an incomplete run), and one before it is warned (policy P-41)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest
from helpers.paths import BROKEN
from helpers.runs import run, stdio

from tasks_conformance.core.rpc.peer import Reply, RpcError
from tasks_conformance.core.wires import Wire, dialect_for
from tasks_conformance.server.evidence.expiry import Expiry, deleted_after_ttl, task_expiry
from tasks_conformance.server.probes.rereads import _before_expiry

ERAS = {"extension": {}, "legacy": {"protocol_version": "2025-11-25"}}
JUDGED = ("tasks-terminal-status-immutable", "tasks-cancel-ack-shape")


def _run(variant: str, era: str) -> Any:
    return run(**stdio([*BROKEN, "--break", variant]), tool_name="slow_compute", poll_timeout_ms=3_000, **ERAS[era])


def _checks(ex: Any) -> dict[str, Any]:
    return {c.id: c for c in ex.result.checks}


@pytest.mark.parametrize("era", ERAS)
def test_reads_of_an_ended_task_go_out_before_its_ttl_runs_out(era: str) -> None:
    # The server purges the task 1.2 s after its end and polls are 1 s apart: re-reads spaced by the
    # poll interval would find it gone. Scheduled by its TTL, every read of it is judged.
    ex = _run("permits-ttl-after-end", era)
    checks = _checks(ex)
    assert ex.result.outcome == "passed"
    for cid in JUDGED:
        assert checks[cid].bucket == "passed", (cid, checks[cid].message)
        assert "no longer" not in checks[cid].message, checks[cid].message
        assert not checks[cid].warnings


@pytest.mark.parametrize("era", ERAS)
def test_a_task_deleted_once_its_ttl_ran_out_leaves_the_run_complete(era: str) -> None:
    # The TTL of this server's ended tasks has run out by the next read: nothing can be read later.
    ex = _run("permits-short-ttl", era)
    checks = _checks(ex)
    assert ex.result.outcome == "passed", ex.result.incompleteReason if hasattr(ex.result, "incompleteReason") else ""
    immutable = checks["tasks-terminal-status-immutable"]
    assert immutable.bucket in ("passed", "not-applicable")
    assert "S-EXT-MAY-04" in immutable.message and not immutable.warnings


@pytest.mark.parametrize("era", ERAS)
def test_a_task_deleted_before_its_ttl_is_warned_not_failed(era: str) -> None:
    ex = _run("purges-before-ttl", era)
    checks = _checks(ex)
    assert not [c.id for c in ex.result.checks if c.bucket == "failed"]
    assert ex.result.outcome == "passed"
    immutable = checks["tasks-terminal-status-immutable"]
    assert immutable.bucket in ("passed", "not-applicable")
    assert [w.policies for w in immutable.warnings] == [("P-41",)], immutable.warnings


class _Log:
    """The one thing the deadline reads from a wire log: when a frame went out."""

    def __init__(self, times: list[float]) -> None:
        self.frames = {seq: SimpleNamespace(time=t) for seq, t in enumerate(times, start=1)}

    def get(self, seq: int) -> Any:
        return self.frames.get(seq)


def _log_with(times: list[float]) -> tuple[Any, list[int]]:
    log = _Log(times)
    return log, list(log.frames)


def test_the_deadline_is_the_latest_ttl_from_the_creating_request() -> None:
    d = dialect_for(Wire.EXTENSION)
    assert d is not None
    log, (create_seq, read_seq, late_seq) = _log_with([1.0, 2.0, 9.0])
    created = Reply("tools/call", 1, request_seq=create_seq, response_seq=create_seq,
                    result={"taskId": "t", "ttlMs": 60_000})
    revised = Reply("tasks/get", 1, request_seq=read_seq, response_seq=read_seq, result={"taskId": "t", "ttlMs": 5_000})
    expiry = task_expiry(log, d, created, [revised])
    assert expiry == Expiry(6.0, 5_000.0)
    gone_late = Reply("tasks/get", 1, request_seq=late_seq, response_seq=late_seq, error=RpcError(-32602, "gone"))
    gone_early = Reply("tasks/get", 1, request_seq=read_seq, response_seq=read_seq, error=RpcError(-32602, "gone"))
    assert deleted_after_ttl(log, expiry, gone_late)
    assert not deleted_after_ttl(log, expiry, gone_early)
    # null (unlimited) or no TTL: no deadline, so no "not found" is ever the freedom.
    unlimited = Reply("tasks/get", 1, request_seq=read_seq, response_seq=read_seq,
                      result={"taskId": "t", "ttlMs": None})
    assert task_expiry(log, d, created, [unlimited]).deadline_s is None


def test_reads_share_the_time_left_with_half_to_spare() -> None:
    assert _before_expiry(Expiry(10.0, 1.0), now=8.0, reads_left=2) == pytest.approx(0.5)
    assert _before_expiry(Expiry(None, None), now=8.0, reads_left=2) == float("inf")
    assert _before_expiry(Expiry(7.0, 1.0), now=8.0, reads_left=1) == float("inf")  # past: no limit
