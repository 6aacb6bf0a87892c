"""No vacuous verdict: a check passes only on what it judged. Every pass rests on the frames it
names (`evidence=`) or on a count of what it judged (`judged=`); a count of zero is not
applicable, never passed."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tasks_conformance.core.verdict import passed

SRC = Path(__file__).resolve().parent.parent / "src" / "tasks_conformance"
CHECK_DIRS = ("server/checks",)


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

    ev = Evidence(wire_log=WireLog(), discovery=Discovery(wire=Wire.LEGACY, era="2025-11-25"), transport="stdio")
    verdict = CHECKS["tasks-wire-framing"].judges[Wire.LEGACY].fn(ev)
    assert verdict.status != "passed", verdict
