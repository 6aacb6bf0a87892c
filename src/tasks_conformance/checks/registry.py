"""The check registry: definitions only, read-only after import. Run state lives in the runner."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tasks_conformance.evidence import Evidence


@dataclass(frozen=True)
class Verdict:
    status: str  # passed | failed | skipped
    message: str
    skip_reason: str | None = None
    warnings: tuple[str, ...] = ()
    evidence: tuple[int, ...] = ()
    details: dict[str, Any] = field(default_factory=dict)
    blocked_by: str | None = None


def passed(message: str, *, evidence: list[int] | tuple[int, ...] = (), warnings: list[str] | tuple[str, ...] = (),
           details: dict[str, Any] | None = None) -> Verdict:
    return Verdict("passed", message, None, tuple(warnings), tuple(evidence), details or {})


def failed(message: str, *, evidence: list[int] | tuple[int, ...] = (), warnings: list[str] | tuple[str, ...] = (),
           details: dict[str, Any] | None = None) -> Verdict:
    return Verdict("failed", message, None, tuple(warnings), tuple(evidence), details or {})


def not_applicable(message: str, *, evidence: list[int] | tuple[int, ...] = ()) -> Verdict:
    return Verdict("skipped", message, "not-applicable", (), tuple(evidence))


def could_not_run(message: str, *, blocked_by: str | None = None, evidence: list[int] | tuple[int, ...] = (),
                  details: dict[str, Any] | None = None) -> Verdict:
    if blocked_by:
        message = f"{message} (see {blocked_by})"
    return Verdict("skipped", message, "could-not-run", (), tuple(evidence), details or {}, blocked_by)


CheckFn = Callable[["Evidence"], Verdict]


@dataclass(frozen=True)
class CheckSpec:
    id: str
    category: str
    title: str
    description: str
    wires: frozenset[str]
    requirements: dict[str, tuple[str, ...]]  # wire -> requirement ids
    probes: tuple[str, ...]
    scored: bool
    fn: CheckFn
    transports: frozenset[str] | None = None  # None: any transport
    # The precondition the runner checks before calling fn: wire | tool | task | terminal.
    needs: str | None = None

    def requirement_ids(self, wire: str) -> list[str]:
        if wire in self.requirements:
            return list(self.requirements[wire])
        seen: dict[str, None] = {}
        for ids in self.requirements.values():
            seen.update(dict.fromkeys(ids))
        return list(seen)


CHECKS: dict[str, CheckSpec] = {}


def check(
    *,
    id: str,
    category: str,
    title: str,
    description: str,
    wires: tuple[str, ...] = ("legacy", "extension"),
    requirements: dict[str, tuple[str, ...]] | None = None,
    probes: tuple[str, ...] = (),
    scored: bool = True,
    transports: tuple[str, ...] | None = None,
    needs: str | None = None,
) -> Callable[[CheckFn], CheckFn]:
    def register(fn: CheckFn) -> CheckFn:
        if id in CHECKS:
            raise ValueError(f"check id {id!r} registered twice")
        CHECKS[id] = CheckSpec(
            id=id, category=category, title=title, description=description, wires=frozenset(wires),
            requirements=requirements or {}, probes=probes, scored=scored, fn=fn,
            transports=frozenset(transports) if transports else None, needs=needs,
        )
        return fn

    return register
