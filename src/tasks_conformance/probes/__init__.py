"""Probes send the traffic, once, and record what they saw in their typed record. They never
judge. Each probe module registers its probes on import; `plan` imports them all."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from tasks_conformance.evidence.records import ProbeRecord
from tasks_conformance.wires import WireDialect

if TYPE_CHECKING:
    from tasks_conformance.probes.context import ProbeContext

ProbeFn = Callable[["ProbeContext"], Awaitable[None]]
Applies = Callable[[WireDialect], bool]


def every_wire(_dialect: WireDialect) -> bool:
    return True


@dataclass(frozen=True)
class ProbeSpec:
    record: type[ProbeRecord]
    order: int  # probes that change server state run later; the undeclared probes run last
    needs: tuple[type[ProbeRecord], ...]
    applies: Applies  # on which wires the probe has something to ask
    needs_tool: bool
    needs_task: bool  # the runner skips it, saying why, when the declared call created no task
    description: str
    fn: ProbeFn

    @property
    def name(self) -> str:
        return self.record.probe


PROBES: dict[str, ProbeSpec] = {}


def probe(
    record: type[ProbeRecord], *, order: int, description: str, needs: tuple[type[ProbeRecord], ...] = (),
    applies: Applies = every_wire, needs_tool: bool = False, needs_task: bool = False,
) -> Callable[[ProbeFn], ProbeFn]:
    def register(fn: ProbeFn) -> ProbeFn:
        if record.probe in PROBES:
            raise ValueError(f"probe {record.probe!r} registered twice")
        PROBES[record.probe] = ProbeSpec(record, order, needs, applies, needs_tool, needs_task, description, fn)
        return fn

    return register


def load_probes() -> dict[str, ProbeSpec]:
    """Every probe, registered (the modules register on import)."""
    from tasks_conformance.probes import calls, cancel, listen, poll, routing, unknown_ids  # noqa: F401

    return PROBES


def plan(wanted: set[str], dialect: WireDialect) -> list[ProbeSpec]:
    """The probes to run for the wanted ones, with their dependencies, in order."""
    probes = load_probes()
    selected: set[str] = set()
    stack = [w for w in wanted if w in probes]
    while stack:
        name = stack.pop()
        if name in selected:
            continue
        spec = probes[name]
        if not spec.applies(dialect):
            continue
        selected.add(name)
        stack.extend(n.probe for n in spec.needs)
    return sorted((probes[n] for n in selected), key=lambda s: (s.order, s.name))
