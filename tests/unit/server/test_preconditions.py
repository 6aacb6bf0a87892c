"""Preconditions are data: a probe declares what it needs (a tool, the created task, its role's
tool), the runner skips it with that cause, and a probe that reads what it does not declare is
found before any run (probe_problems(), part of registry_problems()) and refused at run time."""

from __future__ import annotations

from typing import Any

import pytest
from helpers.paths import ROOT

from tasks_conformance.server.evidence.records import Cancel
from tasks_conformance.server.probes import Precondition, ProbeSpec, every_wire, probe_problems
from tasks_conformance.server.probes.engine.context import ProbeContext, UndeclaredPrecondition
from tasks_conformance.server.probes.engine.preconditions import undeclared_reads


def _helper(ctx: Any) -> object:
    return ctx.tool_params()


async def _reads_tool_through_a_helper(ctx: Any) -> None:
    _helper(ctx)


async def _reads_the_task(ctx: Any) -> None:
    ctx.require_task_id()


async def _reads_nothing(ctx: Any) -> None:
    return None


def _spec(fn: Any, **declared: Any) -> ProbeSpec:
    flags = {"needs_tool": False, "needs_task": False, **declared}
    return ProbeSpec(Cancel, 0, (), every_wire, flags["needs_tool"], flags["needs_task"], "test", fn,
                     role=flags.get("role"))


def test_every_registered_probe_declares_what_it_reads() -> None:
    assert probe_problems() == []


@pytest.mark.parametrize("fn,declared,problem", [
    (_reads_tool_through_a_helper, {}, "_helper() assumes a tool (tool_params)"),
    (_reads_the_task, {"needs_tool": True}, "_reads_the_task() assumes a task (require_task_id)"),
])
def test_an_undeclared_read_is_found_in_the_probe_or_a_helper(fn: Any, declared: dict[str, Any], problem: str) -> None:
    assert [p for p in undeclared_reads(_spec(fn, **declared)) if problem in p], undeclared_reads(_spec(fn, **declared))


@pytest.mark.parametrize("fn,declared", [
    (_reads_tool_through_a_helper, {"needs_tool": True}),
    (_reads_tool_through_a_helper, {"needs_task": True}),  # a created task implies a tool
    (_reads_the_task, {"needs_task": True}),
    (_reads_nothing, {}),
])
def test_a_declared_read_is_no_problem(fn: Any, declared: dict[str, Any]) -> None:
    assert undeclared_reads(_spec(fn, **declared)) == []


def test_the_context_refuses_an_undeclared_read_at_run_time() -> None:
    ctx = ProbeContext(session=None, config=None, discovery=None, dialect=None, wire_log=None)  # type: ignore[arg-type]
    with pytest.raises(UndeclaredPrecondition, match="tool"):
        ctx.for_probe(frozenset()).tool_params()
    with pytest.raises(UndeclaredPrecondition, match="task"):
        ctx.for_probe(frozenset({Precondition.TOOL})).require_task_id()
    with pytest.raises(UndeclaredPrecondition, match="role"):
        ctx.for_probe(frozenset({Precondition.TOOL})).role_params("required")
    # Declared, the read goes through to what the runner checked (here: nothing was chosen).
    with pytest.raises(AssertionError) as raised:
        ctx.for_probe(frozenset({Precondition.TOOL})).tool_params()
    assert not isinstance(raised.value, UndeclaredPrecondition)


def test_the_cancel_probe_declares_its_tool() -> None:
    """The 2025-11-25 cancel probe creates a fresh task from the probe tool: it used to run without
    one when discovery failed and crash ("internal error in probe cancel: AssertionError")."""
    from tasks_conformance.server.probes import load_probes

    assert Precondition.TOOL in load_probes()["cancel"].preconditions


def test_debug_prints_where_a_probe_failed(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """An internal error of a probe names --debug as the way to see more; --debug shows the
    traceback (it used to print nothing more)."""
    from dataclasses import replace

    from helpers.paths import REFERENCE

    from tasks_conformance.entry.cli import run_cli
    from tasks_conformance.server.probes import PROBES, load_probes

    load_probes()

    async def broken(ctx: Any) -> None:
        raise RuntimeError("a probe bug, on purpose")

    monkeypatch.setitem(PROBES, "invalid-id", replace(PROBES["invalid-id"], fn=broken))
    argv = ["--command", REFERENCE[0], *[a for r in REFERENCE[1:] for a in ("--args", r)],
            "--check-id", "tasks-invalid-task-id-rejected", "--reporter", "json=/dev/null"]
    for debug in (False, True):
        code = run_cli([*argv, *(["--debug"] if debug else [])])
        err = capsys.readouterr().err
        assert code == 3
        assert ("Traceback" in err and "a probe bug, on purpose" in err) == debug, err


def test_no_recorded_report_holds_an_internal_error() -> None:
    """The reports recorded from every breaking fixture (tests/data/reports-before): none holds an
    internal error of ours (one did: a probe hashed a status that was a list)."""

    recorded = ROOT / "tests" / "data" / "reports-before"
    found = [p.name for p in sorted(recorded.glob("*.json"))
             if "a tasks-conformance bug" in p.read_text(encoding="utf-8")]
    assert found == []
