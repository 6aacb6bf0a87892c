"""Probes send the traffic, once, and record what they saw. They never judge."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tasks_conformance.probes.context import ProbeContext

ProbeFn = Callable[["ProbeContext"], Awaitable[None]]


@dataclass(frozen=True)
class ProbeSpec:
    name: str
    order: int  # probes that change server state run later; the undeclared probes run last
    needs: tuple[str, ...]
    wires: frozenset[str]
    needs_tool: bool
    needs_task: bool  # the runner skips it, saying why, when the declared call created no task
    description: str
    fn: ProbeFn


PROBES: dict[str, ProbeSpec] = {}


def probe(
    *, name: str, order: int, description: str, needs: tuple[str, ...] = (),
    wires: tuple[str, ...] = ("legacy", "extension"), needs_tool: bool = False, needs_task: bool = False,
) -> Callable[[ProbeFn], ProbeFn]:
    def register(fn: ProbeFn) -> ProbeFn:
        if name in PROBES:
            raise ValueError(f"probe {name!r} registered twice")
        PROBES[name] = ProbeSpec(name, order, needs, frozenset(wires), needs_tool, needs_task, description, fn)
        return fn

    return register


def plan(wanted: set[str], wire: str) -> list[ProbeSpec]:
    """The probes to run for the wanted ones, with their dependencies, in order."""
    from tasks_conformance.probes import traffic  # noqa: F401 - registers the probes

    selected: set[str] = set()
    stack = [w for w in wanted if w in PROBES]
    while stack:
        name = stack.pop()
        if name in selected:
            continue
        spec = PROBES[name]
        if wire not in spec.wires:
            continue
        selected.add(name)
        stack.extend(spec.needs)
    return sorted((PROBES[n] for n in selected), key=lambda s: (s.order, s.name))
