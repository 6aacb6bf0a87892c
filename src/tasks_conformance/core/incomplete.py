"""Why a run is incomplete, each reason once, with the one thing to change: the causes of the
checks that could not run (a check blocked by another counts under that one's cause), an
interruption, and a run in which nothing was tested (policy P-46).

A run tests something when a check it selected passed or failed (a failure a --baseline entry
accepts included). A check that was not applicable judged nothing, and a deferral judged nothing
of its own (the check it defers to reports the finding): a run made only of those has not shown
conformance, so it is incomplete, never passed.

It reads a check result through `Judged`, the part of result.CheckResult it needs, so that the
result model can name these without the two modules importing each other. Stdlib only.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Protocol

from tasks_conformance.core.causes import INTERRUPTED_CAUSE, INTERRUPTED_FIX, Cause, CauseKind

# The buckets of a check that judged the server (or client): anything else tested nothing.
TESTED: Final = frozenset({"passed", "failed", "known"})
NOTHING_TESTED_POLICY: Final = "P-46"
# The fix of a run that tested nothing when no check that did not apply says what would make it apply.
SELECT_OTHER_CHECKS: Final = ("select checks that apply to this run (`tasks-conformance explain ID` says when a "
                              "check applies and what it needs)")


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


def nothing_tested(checks: Sequence[Judged]) -> bool:
    """Whether the run's checks tested nothing: none passed or failed, each was not applicable,
    deferred or could not run. Such a run is never passed (policy P-46). A result without checks
    is not judged here: a run selects at least one, and a result made without any (a run that
    never started) states its own reason."""
    return bool(checks) and not any(c.bucket in TESTED for c in checks)


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


def _nothing_tested_cause(checks: Sequence[Judged], target: str) -> IncompleteCause:
    """Why a run that tested nothing is incomplete, and what makes a check apply: the fixes the
    checks that did not apply give (a flag to pass), each once; else choosing other checks."""
    n = len(checks)
    what = ("the one check selected does not apply to this run" if n == 1
            else f"none of the {n} checks selected applies to this run")
    fixes = [c.cause.fix_for(c.id, target) for c in checks if c.bucket == "not-applicable" and c.cause is not None]
    fix = "; or ".join(dict.fromkeys(f for f in fixes if f)) or SELECT_OTHER_CHECKS
    return IncompleteCause(f"nothing was tested: {what} (policy {NOTHING_TESTED_POLICY})", fix, ())


def incomplete_causes(checks: Sequence[Judged], interrupted: bool = False, target: str = "") -> list[IncompleteCause]:
    """Each distinct reason checks could not run, once, with the checks it blocked (in run order).
    A check blocked by another (`details.blockedBy`) counts under that check's cause. A run that
    tested nothing for no other reason says so (the checks it names: none, each says why it did
    not apply)."""
    by_id = {c.id: c for c in checks}
    grouped: dict[tuple[str, str], list[str]] = {}
    for check in checks:
        if check.bucket != "could-not-run":
            continue
        grouped.setdefault(_cause_and_fix(_root(check, by_id), target), []).append(check.id)
    out = [IncompleteCause(cause, fix, tuple(ids)) for (cause, fix), ids in grouped.items()]
    if interrupted and not any(c.cause == INTERRUPTED_CAUSE for c in out):
        out.insert(0, IncompleteCause(INTERRUPTED_CAUSE, INTERRUPTED_FIX, ()))
    if not out and nothing_tested(checks):
        out.append(_nothing_tested_cause(checks, target))
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

