"""Probes send the traffic, once, and record what they saw in their typed record. They never
judge. Each probe module registers its probes on import; `plan` imports them all.

Probes run as a schedule, not a sequence: each starts as soon as the probes it needs have
finished, so independent traffic (the undeclared call, unknown ids, header probes, the task
subscription) overlaps the task's own run and the waits between polls. A probe marked `last`
starts only when every probe that reads the probe task has finished: the undeclared tasks/*
requests could change the task if a server wrongly obeyed them. Probes that never touch that task
(a second connection, unknown ids, the undeclared call) do not hold it back (schedule.py).

A probe marked `brief` is a few quick exchanges that wait on nothing (no task's end, no stream)
and do not read the created task (a server that rate-limits reads, S-EXT-MAY-02, allows the
reads beyond the poll cadence only in its first burst, which a probe waiting for its turn would
miss): brief probes take turns, BRIEF_AT_ONCE at a time. Sent all at once, they queue at the
server in front of the task's own reads, and every exchange of the burst waits for the others
(against the reference server, the median exchange of a full run over HTTP was about twice what
it is in turns); in turns they are still done long before a task of a few hundred ms ends.
Every other probe starts the moment its needs are met.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING

from tasks_conformance.core.wires import WireDialect
from tasks_conformance.server.evidence.records import ProbeRecord

if TYPE_CHECKING:
    from tasks_conformance.server.probes.engine.context import ProbeContext

ProbeFn = Callable[["ProbeContext"], Awaitable[None]]
Applies = Callable[[WireDialect], bool]

def every_wire(_dialect: WireDialect) -> bool:
    return True


class Precondition(StrEnum):
    """What a probe may need before it can send anything; the runner skips a probe whose
    precondition is not met, saying which (never a probe that asserts its way past one)."""

    TOOL = "tool"  # a tool to probe: --tool-name, or one discovery (tools/list) found
    TASK = "task"  # the probe task: the declared tools/call created one (implies TOOL)
    ROLE = "role"  # the tool of the probe's role (roles.py)


# The ProbeContext reads that assume a precondition: a probe that makes one must declare it
# (probe_problems() finds the reads in the probe's code; ProbeContext refuses them at run time).
PRECONDITION_READS: dict[str, Precondition] = {
    "tool_params": Precondition.TOOL,
    "require_task_id": Precondition.TASK,
    "role_params": Precondition.ROLE,
}


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
    last: bool = False  # after every probe that reads the probe task (see the module's doc)
    # Probes that must finish first when they are planned too, without being planned for it.
    after: tuple[type[ProbeRecord], ...] = ()
    # The probe role whose tool it calls (roles.py); the runner skips it, saying why, when the
    # role has no tool.
    role: str | None = None
    brief: bool = False  # takes turns with the other brief probes (see the module's doc)
    # After every other planned probe: it stops the server (the restart probe, profile durable).
    final: bool = False

    @property
    def name(self) -> str:
        return self.record.probe

    @property
    def preconditions(self) -> frozenset[Precondition]:
        """What this probe declares it needs (a created task implies a tool)."""
        out = {p for p, declared in ((Precondition.TOOL, self.needs_tool or self.needs_task),
                                     (Precondition.TASK, self.needs_task),
                                     (Precondition.ROLE, self.role is not None)) if declared}
        return frozenset(out)


PROBES: dict[str, ProbeSpec] = {}


def probe(
    record: type[ProbeRecord], *, order: int, description: str, needs: tuple[type[ProbeRecord], ...] = (),
    applies: Applies = every_wire, needs_tool: bool = False, needs_task: bool = False, last: bool = False,
    after: tuple[type[ProbeRecord], ...] = (), role: str | None = None, brief: bool = False,
    final: bool = False,
) -> Callable[[ProbeFn], ProbeFn]:
    def register(fn: ProbeFn) -> ProbeFn:
        if record.probe in PROBES:
            raise ValueError(f"probe {record.probe!r} registered twice")
        PROBES[record.probe] = ProbeSpec(
            record, order, needs, applies, needs_tool, needs_task, description, fn, last, after, role, brief, final
        )
        return fn

    return register


def load_probes() -> dict[str, ProbeSpec]:
    """Every probe, registered (the modules register on import)."""
    from tasks_conformance.server.probes import (  # noqa: F401
        base_http,
        calls,
        cancel,
        durability,
        envelope,
        input_depth,
        legacy,
        legacy_declares_extension,
        listen,
        other_principal,
        poll,
        removed,
        rereads,
        restart,
        roles,
        routing,
        task_ids,
        unknown_ids,
    )

    return PROBES


def probe_problems() -> list[str]:
    """Every probe that reads what it does not declare (a tool, the created task, its role's
    tool), found in its code and in the probe modules' functions it calls."""
    from tasks_conformance.server.probes.engine.preconditions import undeclared_reads

    return [f"probe {spec.name}: {problem}" for spec in load_probes().values() for problem in undeclared_reads(spec)]


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
