"""Why a run is incomplete, each reason once, with the one thing to change: the causes of the
checks that could not run (a check blocked by another counts under that one's cause) and an
interruption.

It reads a check result through `Judged`, the part of result.CheckResult it needs, so that the
result model can name these without the two modules importing each other. Stdlib only.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from tasks_conformance.core.causes import INTERRUPTED_CAUSE, INTERRUPTED_FIX, Cause, CauseKind


class Judged(Protocol):
    """What the causes read of a check result (result.CheckResult has it)."""

    @property
    def id(self) -> str: ...
    @property
    def title(self) -> str: ...
    @property
    def message(self) -> str: ...
    @property
    def bucket(self) -> str: ...
    @property
    def details(self) -> Mapping[str, Any]: ...
    @property
    def cause(self) -> Cause | None: ...


@dataclass(frozen=True)
class IncompleteCause:
    """One reason checks could not run, stated once: the checks it blocked and the one thing to change."""

    cause: str
    fix: str
    checks: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        return {"cause": self.cause, "fix": self.fix, "checks": list(self.checks)}


def _root(check: Judged, by_id: Mapping[str, Judged]) -> Judged:
    """The check whose own message explains `check`: follow `blockedBy` while it is could-not-run."""
    seen = {check.id}
    while True:
        blocker = by_id.get(str(check.details.get("blockedBy", "")))
        if blocker is None or blocker.bucket != "could-not-run" or blocker.id in seen:
            return check
        seen.add(blocker.id)
        check = blocker


def _cause_and_fix(root: Judged, target: str) -> tuple[str, str]:
    """The cause in the root check's typed words, and the one thing to change."""
    cause = root.cause or Cause(root.message.strip())
    text = cause.statement()
    blocked = root.details.get("blockedBy")
    if blocked and cause.kind is not CauseKind.INTERRUPTED:
        text = f"{text} (see {blocked})"
    return text or root.title, cause.fix_for(root.id, target)


def incomplete_causes(checks: Sequence[Judged], interrupted: bool = False, target: str = "") -> list[IncompleteCause]:
    """Each distinct reason checks could not run, once, with the checks it blocked (in run order).
    A check blocked by another (`details.blockedBy`) counts under that check's cause."""
    by_id = {c.id: c for c in checks}
    grouped: dict[tuple[str, str], list[str]] = {}
    for check in checks:
        if check.bucket != "could-not-run":
            continue
        grouped.setdefault(_cause_and_fix(_root(check, by_id), target), []).append(check.id)
    out = [IncompleteCause(cause, fix, tuple(ids)) for (cause, fix), ids in grouped.items()]
    if interrupted and not any(c.cause == INTERRUPTED_CAUSE for c in out):
        out.insert(0, IncompleteCause(INTERRUPTED_CAUSE, INTERRUPTED_FIX, ()))
    return out


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" + ("" if n == 1 else "s")


def causes_text(causes: list[IncompleteCause]) -> str:
    """The causes in one line, each once: the cause, the fix, the checks it blocked."""
    parts = []
    for c in causes:
        blocked = f" [{_count(len(c.checks), 'check')}: {', '.join(c.checks)}]" if c.checks else ""
        parts.append(f"{c.cause} (to fix: {c.fix}){blocked}")
    return "; ".join(parts)


def incomplete_reason(checks: Sequence[Judged], interrupted: bool = False, target: str = "") -> str | None:
    """One sentence per distinct cause (never one per check): the cause, the fix, the checks."""
    causes = incomplete_causes(checks, interrupted, target)
    if not causes:
        return None
    return "Could not establish conformance — " + causes_text(causes)

