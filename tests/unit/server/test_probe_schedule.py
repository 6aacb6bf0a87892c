"""The probe schedule (probes/engine/schedule.py): needs first, `last` after every probe that reads the
probe task, brief probes taking turns while every other probe starts the moment its needs are
met, and the trace whose critical path benchmarks/critical_path.py prints."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from tasks_conformance.server.probes import PROBES, ProbeSpec, every_wire, load_probes
from tasks_conformance.server.probes.engine.schedule import BRIEF_AT_ONCE, ScheduleTrace, run_schedule


def _spec(name: str, *, brief: bool = False, last: bool = False, needs: tuple[Any, ...] = (),
          needs_task: bool = False) -> ProbeSpec:
    record: Any = type(name, (), {"probe": name})

    async def fn(_ctx: Any) -> None:
        raise AssertionError("the schedule runs specs through its `run` callback")

    return ProbeSpec(record, 0, needs, every_wire, False, needs_task, name, fn, last=last, brief=brief)


def _schedule(specs: list[ProbeSpec]) -> list[tuple[str, str, int]]:
    """Run the specs, each holding on until every probe that can start has started; the log
    of (event, name, how many brief probes ran at that moment)."""
    log: list[tuple[str, str, int]] = []
    running_brief = 0

    async def run(spec: ProbeSpec) -> None:
        nonlocal running_brief
        running_brief += spec.brief
        log.append(("start", spec.name, running_brief))
        for _ in range(5):  # long enough for every probe not held back to start meanwhile
            await anyio.sleep(0)
        running_brief -= spec.brief
        log.append(("end", spec.name, running_brief))

    anyio.run(run_schedule, specs, run)
    return log


def test_brief_probes_take_turns_and_the_others_do_not_wait_for_them() -> None:
    specs = [*(_spec(f"brief-{n}", brief=True) for n in range(5)), _spec("task-timeline")]
    log = _schedule(specs)
    assert max(n for _e, _name, n in log) == BRIEF_AT_ONCE
    assert sorted(name for e, name, _n in log if e == "end") == sorted(s.name for s in specs)
    starts = [name for e, name, _n in log if e == "start"]
    brief_starts = [name for name in starts if name.startswith("brief")]
    # Not queued behind the turns: it starts before any brief probe has to wait for one.
    assert starts.index("task-timeline") < starts.index(brief_starts[BRIEF_AT_ONCE]), log


def test_without_the_turns_brief_probes_would_all_start_at_once() -> None:
    # The counterpart: the same probes not marked brief all run together (the check above can fail).
    log = _schedule([_spec(f"p-{n}") for n in range(5)])
    assert len([e for e, _name, _n in log[:5] if e == "start"]) == 5


def test_a_last_probe_starts_after_every_probe_that_reads_the_task_and_needs_come_first() -> None:
    first = _spec("first", needs_task=True)
    log = _schedule([_spec("final", last=True), _spec("then", needs=(first.record,), needs_task=True), first,
                     _spec("brief", brief=True, needs_task=True)])
    order = [name for e, name, _n in log if e == "start"]
    assert order.index("first") < order.index("then")
    assert order[-1] == "final"
    assert log.index(("start", "final", 0)) > max(i for i, (e, name, _n) in enumerate(log) if e == "end"
                                                  and name != "final")


def test_a_last_probe_does_not_wait_for_a_probe_that_never_touches_the_task() -> None:
    # A second connection's probe (it spawns its own server, runs its own tool) is no reason to
    # hold back the undeclared tasks/* requests, which only need to follow the task's reads: here
    # the second connection ends only once the last probe has started (bounded, so a schedule
    # that made the last probe wait for it fails instead of hanging).
    reader = _spec("reader", needs_task=True)
    specs = [_spec("second-connection"), reader, _spec("final", last=True)]
    started: list[str] = []

    async def main() -> None:
        final_started = anyio.Event()

        async def run(spec: ProbeSpec) -> None:
            started.append(spec.name)
            if spec.name == "final":
                assert "reader" in started
                final_started.set()
            elif spec.name == "second-connection":
                await final_started.wait()

        with anyio.fail_after(5):
            await run_schedule(specs, run)

    anyio.run(main)
    assert started[-1] == "final"


def test_the_trace_names_the_chain_that_ended_last() -> None:
    slow_first = _spec("create")
    then = _spec("poll", needs=(slow_first.record,))
    quick = _spec("quick")
    trace: ScheduleTrace = anyio.run(_traced, [quick, then, slow_first])
    assert [t.name for t in trace.critical_path()] == ["create", "poll"]
    poll = trace.timings["poll"]
    assert poll.released_by == "create" and poll.ready_s >= trace.timings["create"].ended_s
    assert trace.timings["quick"].released_by is None


async def _traced(specs: list[ProbeSpec]) -> ScheduleTrace:
    async def run(spec: ProbeSpec) -> None:
        await anyio.sleep(0.05 if spec.name in ("create", "poll") else 0)

    return await run_schedule(specs, run)


@pytest.mark.parametrize("name", sorted(load_probes()))
def test_a_brief_probe_follows_no_task_holds_no_stream_and_reads_no_issued_task(name: str) -> None:
    # Brief means a few quick exchanges. A probe that polls a task, waits for a tool to finish or
    # keeps a stream open would hold a turn for the task's length and stall the others. Nor does
    # it read the created task: a server rate-limiting reads (S-EXT-MAY-02) allows the reads
    # beyond the poll cadence only in its first burst, which a probe waiting for its turn misses.
    import inspect

    spec = PROBES[name]
    if not spec.brief:
        return
    source = inspect.getsource(spec.fn)
    for waiting in ("Poller", "anyio.sleep", "_listen", "read_tolerating_rate_limit"):
        assert waiting not in source, f"{name} is brief but uses {waiting}"
    assert '"tasks/get"' not in source or "unknown_task_id()" in source, f"{name} is brief but reads a task"
