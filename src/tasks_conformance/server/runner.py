"""The runner: open the connection, resolve the wire, run the planned probes once, judge.

Selection decides the probes: only what the selected checks need is sent. Interrupts (SIGINT)
end the traffic at once; the checks are still judged over what was seen, and the run says it
was interrupted.
"""

from __future__ import annotations

import signal
import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any

import anyio

from tasks_conformance import __version__
from tasks_conformance.core import steps
from tasks_conformance.core.areas import matching
from tasks_conformance.core.causes import Cause, CauseKind, Reason, by_flag, unmet
from tasks_conformance.core.profiles import PROFILES
from tasks_conformance.core.protocol import get_path
from tasks_conformance.core.redact import Redactor
from tasks_conformance.core.result import CheckResult, RunResult, decide_outcome, incomplete_reason
from tasks_conformance.core.result import Discovery as DiscoveryReport
from tasks_conformance.core.verdict import Verdict, could_not_run, not_applicable
from tasks_conformance.core.wirelog import Frame, FrameFlag, WireLog, frames_text, in_lane
from tasks_conformance.core.wires import DIALECTS, Wire, WireDialect, listed_task_support, task_support
from tasks_conformance.server.checks import CHECKS, CheckSpec, ordered_checks
from tasks_conformance.server.checks.engine.common import NO_TASKS_WIRE, PRECONDITIONS, need_wire
from tasks_conformance.server.checks.engine.ownership import defer, follow_failures
from tasks_conformance.server.checks.liveness import after_server_gone
from tasks_conformance.server.evidence import Discovery, Evidence, ProbeRecord, ToolChoice
from tasks_conformance.server.evidence.reasons import NO_TASK_CREATED, no_tool
from tasks_conformance.server.managed import ManagedServer, ServerExit, managed_server
from tasks_conformance.server.probes import ProbeSpec, plan
from tasks_conformance.server.probes.engine.context import ProbeContext
from tasks_conformance.server.probes.engine.schedule import ScheduleTrace, run_schedule
from tasks_conformance.server.roles import assign_roles
from tasks_conformance.server.server_gone import server_gone
from tasks_conformance.server.session.connect import Connection
from tasks_conformance.server.session.factory import TransportFactory
from tasks_conformance.settings.config import RunConfig
from tasks_conformance.settings.role_flags import ROLE_HELP, role_flag

Progress = Callable[[str], None]
SESSION_LANE = "session"  # the lane of the main connection's own frames (wirelog.in_lane); a probe's is its name


@dataclass
class Execution:
    result: RunResult
    wire: WireLog
    schedule: ScheduleTrace = field(default_factory=ScheduleTrace)


def select_checks(config: RunConfig) -> list[CheckSpec]:
    """The profile's checks, narrowed by --check-id (which wins), or by --category and --area (a
    check of both); none of them means every check of the profile."""
    profile = PROFILES[config.profile]
    if config.check_ids:
        return [CHECKS[i] for i in config.check_ids if profile.accepts(i)]
    pool = [c for c in ordered_checks() if profile.includes(c.id)]
    if config.categories:
        pool = [c for c in pool if c.category in config.categories]
    if config.areas:
        pool = [c for c in pool if any(matching(a, [c.area]) for a in config.areas)]
    return pool


def choose_tool(config: RunConfig, d: Discovery, dialect: WireDialect) -> ToolChoice:
    if d.tools_replies and not d.tools_replies[-1].ok:
        if config.tool_name:  # the user named it: called unlisted, since nothing listed contradicts the name
            return ToolChoice(config.tool_name, "chosen with --tool-name (tools/list failed, so it is called unlisted)",
                              dict(config.tool_args), source="flag")
        return ToolChoice(None, f"tools/list got {d.tools_replies[-1].describe()}, so no tool can be probed")
    listed = [str(t.get("name")) for t in d.tools if isinstance(t.get("name"), str)]
    shown = ", ".join(listed[:10]) + (f" (+{len(listed) - 10} more)" if len(listed) > 10 else "")
    if d.lists_no_tool:  # no flag can name a tool the server says it does not have
        return ToolChoice(None, Reason(unmet(
            "tools/list lists no tool", "give the server a tool that runs as a task: every task check needs one")))
    if config.tool_name:
        return _named_tool(config, d, dialect, listed, shown)
    capable = dialect.task_capable_tools(d.tools)
    if capable is None:
        return ToolChoice(None, Reason(by_flag(
            "on the extension wire tools carry no task metadata, so tasks-conformance cannot guess which tool "
            "runs as a task", f"name one with --tool-name (listed: {shown or 'none'})",
        )))
    return _picked_tool(config, capable, shown)


def _named_tool(config: RunConfig, d: Discovery, dialect: WireDialect, listed: list[str], shown: str) -> ToolChoice:
    if d.names_known and config.tool_name not in listed:
        return ToolChoice(None, Reason(by_flag(
            f"--tool-name {config.tool_name!r} is not among the listed tools: {shown or 'none'}", "", "--tool-name")))
    capable = dialect.task_capable_tools(d.tools)
    tool = d.tool_named(config.tool_name)
    if capable is not None and d.tools_replies and tool not in capable and (tool is not None or d.names_known):
        support = listed_task_support(tool)
        names = [str(t.get("name")) for t in capable][:10]
        # A client MUST NOT send params.task for it; doing so would judge our mistake.
        return ToolChoice(None, Reason(by_flag(
            f"--tool-name {config.tool_name!r} has execution.taskSupport {support or 'absent (forbidden)'!r}, "
            "so it cannot run as a task on 2025-11-25; name one of: "
            + (", ".join(names) or "none of the listed tools is task-capable"), "", "--tool-name",
        )))
    return ToolChoice(config.tool_name, "chosen with --tool-name", dict(config.tool_args), source="flag")


def _picked_tool(config: RunConfig, capable: list[dict[str, Any]], shown: str) -> ToolChoice:
    """The first task-capable tool: required before optional, read-only first, never destructive."""
    candidates = []
    for t in capable:
        support = task_support(t)
        if get_path(t, "annotations", "destructiveHint") is True:
            continue
        read_only = get_path(t, "annotations", "readOnlyHint") is True
        candidates.append(((0 if support == "required" else 1, 0 if read_only else 1), t))
    if not candidates:
        return ToolChoice(None, Reason(by_flag(
            "no listed tool has execution.taskSupport required or optional without destructiveHint "
            f"(listed: {shown or 'none'})", "name one with --tool-name",
        )))
    candidates.sort(key=lambda c: c[0])
    (support_rank, ro_rank), tool = candidates[0]
    why = (f"taskSupport {'required' if support_rank == 0 else 'optional'}"
           f"{', readOnlyHint' if ro_rank == 0 else ''}; destructive tools skipped")
    return ToolChoice(str(tool.get("name")), f"picked automatically ({why})", dict(config.tool_args))


def _not_kept(frame: Frame | None) -> bool:
    return frame is None or FrameFlag.DROPPED_BYTES in frame.flags


def judge(spec: CheckSpec, ev: Evidence, interrupted: bool) -> Verdict:
    judge_fn = spec.judges.get(ev.wire)
    if judge_fn is None:
        if ev.wire is Wire.NONE:
            return need_wire(ev) or could_not_run(NO_TASKS_WIRE, blocked_by="tasks-wire-resolvable")
        wires = sorted(spec.wires - {Wire.NONE})
        pins = " or ".join(f"--protocol-version {DIALECTS[w].protocol_version}" for w in wires if w in DIALECTS)
        return not_applicable(f"applies to the {'/'.join(wires)} wire, not {ev.wire}",
                              cause=by_flag("the server was checked on another wire", f"pin the wire with {pins} "
                                            "(if the server speaks it)"))
    if spec.transports is not None and ev.transport not in spec.transports:
        over = "/".join(sorted(spec.transports))
        return not_applicable(f"applies over {over} only, not {ev.transport}",
                              cause=by_flag(f"the run was not over {over}", f"run it over {over} (its target flag)"))
    if spec.role is not None:
        unassigned = role_unassigned(spec.role, ev)
        if unassigned is not None:
            return unassigned
    for name in spec.probes:
        rec = ev.records.get(name)
        if rec is not None and rec.harness_problem:
            where = {"traceback": rec.harness_traceback} if rec.harness_traceback else {}
            return could_not_run(Cause(rec.harness_problem, CauseKind.HARNESS), details={"origin": "harness", **where})
    try:
        pre = PRECONDITIONS[spec.needs](ev) if spec.needs else None
        verdict = pre if pre is not None else judge_fn.fn(ev.restricted_to(spec.probes))
    except Exception as exc:
        return could_not_run(
            Cause(f"internal error in the check (a tasks-conformance bug, not the server's): "
                  f"{type(exc).__name__}: {exc}", CauseKind.HARNESS),
            details={"origin": "harness", "traceback": traceback.format_exc(limit=5)},
        )
    if interrupted and verdict.skip_reason == "could-not-run":
        return could_not_run(Cause("the run was interrupted before this check's traffic finished",
                                   CauseKind.INTERRUPTED))
    if verdict.status == "failed":
        missing = [seq for seq in verdict.evidence if _not_kept(ev.wire_log.get(seq))]
        if missing:
            # A failure must rest on frames we still hold; past the log's bounds (a flood) it cannot.
            return could_not_run(Cause(
                f"the frames this verdict rests on ({', '.join(map(str, missing[:5]))}) were not kept: the wire "
                f"log was over its bounds ({ev.wire_log.dropped} frames dropped)", CauseKind.FRAMES_DROPPED,
            ))
    return after_server_gone(spec, ev, verdict)


def role_unassigned(role: str, ev: Evidence) -> Verdict | None:
    """The verdict of a check whose probe role has no tool: not-applicable under the standard
    profile (it judges what the roles given allow), could-not-run under full (the run is
    incomplete until the role is configured) and whenever the role was named on the command line
    but cannot be used. None when the role has a tool."""
    choice = ev.roles.get(role)
    if choice is not None and choice.name is not None:
        return None
    if need_wire(ev) is not None:
        return need_wire(ev)
    why = (no_tool(choice.reason, f"pass {role_flag(role)}").cause if choice is not None
           else by_flag(f"no tool has the {role} role", f"pass {role_flag(role)}"))
    cause = replace(why, text=f"needs a tool for the {role} role ({ROLE_HELP[role]}): {why.text}")
    if ev.profile == "full" or (choice is not None and choice.source == "flag"):
        return could_not_run(cause, details={"role": role, "flag": role_flag(role)})
    return not_applicable(cause.message, cause=cause)


def wanted_roles(selected: list[CheckSpec], wire: Wire) -> set[str]:
    """The probe roles the selected checks need on this wire."""
    return {r for spec in selected if wire in spec.wires and (r := spec.probe_role) is not None}


@dataclass
class Traffic:
    """Connect, negotiate, and run the planned probes once, filling their records."""

    config: RunConfig
    conn: Connection
    selected: list[CheckSpec]
    say: Progress
    records: dict[str, ProbeRecord] = field(default_factory=dict)
    tool: ToolChoice | None = None
    roles: dict[str, ToolChoice] = field(default_factory=dict)  # every role but task (that is `tool`)
    schedule: ScheduleTrace = field(default_factory=ScheduleTrace)  # when each probe ran (benchmarks read it)
    server: ManagedServer | None = None  # the --server-command server, when the run starts one

    async def run(self) -> None:
        self.say(steps.CONNECTING)
        try:
            with in_lane(SESSION_LANE):  # the handshake and what the main connection hears unasked
                await self.conn.open()
        except Exception as exc:  # our own bug: the run is incomplete, never a crash
            self.conn.record_problem(
                f"internal error while connecting (a tasks-conformance bug): {type(exc).__name__}: {exc}"
            )
            return
        d = self.conn.discovery
        dialect = d.dialect
        if dialect is None or self.conn.session is None:
            return
        wanted = {p for spec in self.selected if d.wire in spec.wires for p in spec.probes}
        probes = plan(wanted, dialect)
        if any(p.needs_tool for p in probes):
            self.tool = choose_tool(self.config, d, dialect)
        roles = wanted_roles(self.selected, d.wire)
        if roles - {"task"}:
            task = self.tool or choose_tool(self.config, d, dialect)
            self.roles = assign_roles(roles, probes=self.config.probes, probe_args=self.config.probe_args,
                                      input_responses=self.config.input_responses, d=d, dialect=dialect, task=task)
        ctx = ProbeContext(session=self.conn.session, config=self.config, discovery=d, dialect=dialect,
                           wire_log=self.conn.wire, tool=self.tool, records=self.records, roles=self.roles,
                           server=self.server)

        async def run_probe(spec: ProbeSpec) -> None:
            await self._run_probe(ctx.for_probe(spec.preconditions), spec)

        self.schedule = await run_schedule(probes, run_probe)

    async def _run_probe(self, ctx: ProbeContext, spec: ProbeSpec) -> None:
        if spec.needs_tool and (self.tool is None or self.tool.name is None):
            ctx.record(spec.record).not_run = no_tool(self.tool.reason if self.tool else "no tool was chosen",
                                                        "name a tool that runs as a task with --tool-name")
            return
        role = self.roles.get(spec.role) if spec.role is not None else None
        if spec.role is not None and (role is None or role.name is None):
            ctx.record(spec.record).not_run = no_tool(
                role.reason if role is not None else f"no tool has the {spec.role} role",
                f"pass {role_flag(spec.role)}")
            return
        if spec.needs_task and ctx.created_task_id is None:
            ctx.record(spec.record).not_run = NO_TASK_CREATED
            return
        self.say(steps.probing(spec.description))
        t0 = time.monotonic()
        try:
            with in_lane(spec.name):
                await spec.fn(ctx)
        except Exception as exc:  # a probe bug is ours: its checks become could-not-run
            rec = ctx.record(spec.record)
            rec.harness_problem = (
                f"internal error in probe {spec.name} (a tasks-conformance bug): {type(exc).__name__}: {exc}"
            )
            rec.harness_traceback = traceback.format_exc(limit=8)
        rec = ctx.record(spec.record)
        rec.elapsed_ms = rec.elapsed_ms or int((time.monotonic() - t0) * 1000)

    def evidence(self, managed: ServerExit | None = None) -> Evidence:
        """Everything seen, frozen for the checks (`managed`: how --server-command's server ended)."""
        conn, config, peer = self.conn, self.config, self.conn.peer
        return Evidence(
            wire_log=conn.wire, discovery=conn.finish(), transport=config.transport, expect_wire=config.expect_wire,
            input_responses=config.input_responses, poll_timeout_ms=config.poll_timeout_ms, tool=self.tool,
            intents=tuple(conn.session.intents) if conn.session is not None else (), records=self.records,
            notifications=tuple(peer.notifications) if peer else (),
            server_requests=tuple(peer.server_requests) if peer else (),
            unmatched=tuple(peer.unmatched) if peer else (),
            dropped_unmatched=peer.dropped_unmatched if peer else 0,
            dropped_notifications=peer.dropped_notifications if peer else 0,
            roles=dict(self.roles), profile=config.profile,
            server_gone=server_gone(self.records.values(), conn.transport, managed),
        )


async def _run_until_interrupted(traffic: Traffic, interrupt: anyio.Event | None = None) -> bool:
    """Run the traffic; SIGINT/SIGTERM end it at once. True when interrupted.

    With `interrupt`, that event ends it instead of the signals: several runs in one event loop
    (a suite) share one signal watcher, since each signal has one handler per loop."""
    interrupted = False
    async with anyio.create_task_group() as tg:

        async def watch_event(event: anyio.Event) -> None:
            nonlocal interrupted
            await event.wait()
            interrupted = True
            tg.cancel_scope.cancel()

        async def watch_signals() -> None:
            nonlocal interrupted
            with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
                async for _sig in signals:
                    interrupted = True
                    tg.cancel_scope.cancel()
                    return

        async def run_traffic() -> None:
            try:
                await traffic.run()
            finally:
                # Closed in the task that opened it (anyio task groups demand it). The parts
                # that must survive an interrupt (reaping the server) shield themselves.
                await traffic.conn.aclose()
                tg.cancel_scope.cancel()

        # Python lets only the main thread watch signals; a run started elsewhere (the Python API
        # from a worker thread) is ended by its caller instead.
        if interrupt is not None:
            tg.start_soon(watch_event, interrupt)
        elif threading.current_thread() is threading.main_thread():
            tg.start_soon(watch_signals)
        tg.start_soon(run_traffic)
    return interrupted


def _judge_all(selected: list[CheckSpec], ev: Evidence, interrupted: bool) -> list[tuple[CheckSpec, Verdict, int]]:
    """Every selected check's verdict (and how long its judge took), after deferral: a check that
    fails a rule another check owns, on the same observation, defers to that owner."""
    judged: dict[str, tuple[Verdict, int]] = {}
    for spec in selected:
        t0 = time.monotonic()
        judged[spec.id] = (judge(spec, ev, interrupted), int((time.monotonic() - t0) * 1000))
    final = follow_failures(defer({i: v for i, (v, _ms) in judged.items()}, {s.id: s for s in selected}, ev))
    return [(spec, final[spec.id], judged[spec.id][1]) for spec in selected]


def _check_result(spec: CheckSpec, ev: Evidence, verdict: Verdict, judge_ms: int) -> CheckResult:
    probe_ms = sum(ev.records[p].elapsed_ms for p in spec.probes if p in ev.records)
    seqs = sorted(set(verdict.evidence))
    details = dict(verdict.details)
    if verdict.blocked_by:
        details["blockedBy"] = verdict.blocked_by
    redactor = ev.wire_log.redactor
    requirements = spec.requirement_ids(ev.wire)
    return CheckResult(
        id=spec.id, category=spec.category, area=spec.area, title=spec.title, description=spec.description,
        requirements=requirements, broken=[r for r in requirements if r in verdict.broken], cause=verdict.cause,
        status=verdict.status,
        skipReason=verdict.skip_reason,  # type: ignore[arg-type]
        deferredTo=verdict.deferred_to,
        message=redactor.text(verdict.message), message_policies=list(verdict.message_policies),
        warnings=[replace(w, text=redactor.text(w.text)) for w in verdict.warnings],  # the typed ids kept
        evidence=seqs, details=redactor.json(details),
        durationMs=probe_ms + judge_ms, frames=frames_text(ev.wire_log, seqs),
    )


def _discovery_report(ev: Evidence) -> DiscoveryReport:
    d = ev.discovery
    capable = d.dialect.task_capable_tools(d.tools) if d.dialect is not None else None
    return DiscoveryReport(
        protocolVersion=d.protocol_version, wire=d.wire,
        toolCount=len(d.tools) if d.tools_replies else None,
        taskCapableToolCount=len(capable) if capable is not None else None,
        probedTool=ev.tool.name if ev.tool else None, probedToolReason=ev.tool.reason if ev.tool else None,
        createdTaskId=ev.created_task_id, roles=_roles_report(ev),
        serverInfo=ev.wire_log.redactor.json(d.server_info) if d.server_info is not None else None,
    )


def _roles_report(ev: Evidence) -> dict[str, dict[str, str | None]]:
    """Which tool took which role, and why (the task role first, when a tool was chosen for it)."""
    redact = ev.wire_log.redactor.text
    chosen = {"task": ev.tool} if ev.tool is not None else {}
    chosen.update(ev.roles)
    return {
        role: {"tool": c.name, "source": c.source if c.name is not None else "none", "reason": redact(c.reason)}
        for role, c in chosen.items()
    }


async def execute(
    config: RunConfig,
    progress: Progress | None = None,
    on_frame: Callable[[Frame], None] | None = None,
    interrupt: anyio.Event | None = None,
    *,
    wire: WireLog | None = None,
    transport_factory: TransportFactory | None = None,
) -> Execution:
    """Run `config`; `progress` hears the runner's words, `on_frame` sees every frame recorded;
    with `interrupt`, that event (not a signal) ends the run early. `wire` and
    `transport_factory` let launch.execute_soon hand over a wire log and a server process it
    started before importing this module."""
    started = time.monotonic()
    started_at = datetime.now(UTC).replace(microsecond=0, tzinfo=None).isoformat()
    selected = select_checks(config)
    wire = wire if wire is not None else WireLog(Redactor(config.secrets()))
    wire.observer = on_frame
    say = progress or (lambda _text: None)
    traffic = Traffic(config, Connection(config, wire, transport_factory=transport_factory), selected, say)
    managed = ServerExit()
    async with managed_server(config, wire.redactor, managed) as server:  # --server-command, when given
        traffic.server = server  # the restart probe (profile durable) stops and starts it
        if server.problem is None:
            interrupted = await _run_until_interrupted(traffic, interrupt)
        else:
            traffic.conn.record_problem(server.problem, CauseKind.SERVER_COMMAND)
            interrupted = False
    ev = traffic.evidence(managed if config.server_command else None)
    say(steps.JUDGING)
    results = [_check_result(spec, ev, verdict, ms) for spec, verdict, ms in _judge_all(selected, ev, interrupted)]
    outcome = decide_outcome(results, interrupted)
    target = wire.redactor.text(config.target())
    return Execution(
        result=RunResult(
            outcome=outcome, target=target,
            durationMs=int((time.monotonic() - started) * 1000), discovery=_discovery_report(ev), checks=results,
            incompleteReason=incomplete_reason(results, interrupted, target) if outcome == "incomplete" else None,
            interrupted=interrupted, toolVersion=__version__, profile=PROFILES[config.profile].id,
            startedAt=started_at, wire=wire,
        ),
        wire=wire,
        schedule=traffic.schedule,
    )
