"""Running the planned probes as a schedule (see probes/__init__.py), and the trace of when each
ran and what it waited for, from which `critical_path` reads the chain that decided the run's
length (benchmarks/critical_path.py prints it).
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from contextlib import nullcontext
from dataclasses import dataclass, field

from tasks_conformance.server.probes import ProbeSpec

# How many brief probes run at once (see probes/__init__.py).
BRIEF_AT_ONCE = 2

ProbeRunner = Callable[[ProbeSpec], Awaitable[None]]


@dataclass(frozen=True)
class ProbeTiming:
    """When one probe ran, in seconds from the schedule's start."""

    name: str
    ready_s: float  # what it waits for had finished (0: it waited for nothing)
    started_s: float  # later than ready_s only for a brief probe waiting for its turn
    ended_s: float
    released_by: str | None  # the probe whose end made it ready; None: ready at once


@dataclass
class ScheduleTrace:
    timings: dict[str, ProbeTiming] = field(default_factory=dict)

    def critical_path(self) -> list[ProbeTiming]:
        """The chain that ended last: the last probe to end, the probe that released it, and so
        on back to one that waited for nothing."""
        if not self.timings:
            return []
        step: ProbeTiming | None = max(self.timings.values(), key=lambda t: t.ended_s)
        path: list[ProbeTiming] = []
        while step is not None and step not in path:
            path.append(step)
            step = self.timings.get(step.released_by) if step.released_by else None
        return path[::-1]


def waits_of(spec: ProbeSpec, planned: list[ProbeSpec]) -> list[str]:
    """What a probe waits for: its needs and `after` probes that are planned and, for a `last`
    probe, every other probe that reads the probe task (needs_task), so that an undeclared
    request a server wrongly obeys cannot change the task under a read; a `final` probe waits for
    every other planned probe."""
    names = {p.name for p in planned}
    if spec.final:  # it stops the server: nothing else may be under way
        return [p.name for p in planned if p.name != spec.name]
    first = [n.probe for n in (*spec.needs, *spec.after) if n.probe in names]
    if spec.last:
        first += [p.name for p in planned if p.needs_task and not p.last and not p.final and p.name not in first]
    return first


async def run_schedule(planned: list[ProbeSpec], run: ProbeRunner) -> ScheduleTrace:
    """Run the planned probes, each as soon as what it waits for has finished; the trace of the
    run. `run` must not raise: the runner contains a probe's failure in its record."""
    import anyio

    done = {spec.name: anyio.Event() for spec in planned}
    ended: dict[str, float] = {}
    trace = ScheduleTrace()
    brief_turns = anyio.Semaphore(BRIEF_AT_ONCE)
    t0 = time.monotonic()

    async def one(spec: ProbeSpec) -> None:
        waits = waits_of(spec, planned)
        ready = started = 0.0
        try:
            for name in waits:
                await done[name].wait()
            ready = time.monotonic() - t0
            async with brief_turns if spec.brief else nullcontext():
                started = time.monotonic() - t0
                await run(spec)
        finally:
            ended[spec.name] = time.monotonic() - t0
            released = max(waits, key=lambda n: ended.get(n, 0.0)) if waits else None
            trace.timings[spec.name] = ProbeTiming(spec.name, ready, started, ended[spec.name], released)
            done[spec.name].set()

    async with anyio.create_task_group() as tg:
        for spec in planned:
            tg.start_soon(one, spec)
    return trace
