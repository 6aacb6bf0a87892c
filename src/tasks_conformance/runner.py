"""The runner: open the connection, resolve the wire, run the planned probes once, judge.

Selection decides the probes: only what the selected checks need is sent. Interrupts (SIGINT)
end the traffic at once; the checks are still judged over what was seen, and the run says it
was interrupted.
"""

from __future__ import annotations

import signal
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass

import anyio

from tasks_conformance import __version__
from tasks_conformance.checks import CATEGORIES, CHECKS, CheckSpec, ordered_checks
from tasks_conformance.checks.common import need_task, need_terminal, need_tool, need_wire
from tasks_conformance.checks.registry import Verdict, could_not_run, not_applicable
from tasks_conformance.config import RunConfig
from tasks_conformance.evidence import Evidence, ToolChoice
from tasks_conformance.probes import plan
from tasks_conformance.probes.context import ProbeContext
from tasks_conformance.protocol import get_path
from tasks_conformance.redact import Redactor
from tasks_conformance.result import CheckResult, Discovery, RunResult, decide_outcome, incomplete_reason
from tasks_conformance.session.connect import Connection, Discovered
from tasks_conformance.wirelog import Frame, WireLog

MAX_FRAME_TEXT = 2_000
PRECONDITIONS = {"wire": need_wire, "tool": need_tool, "task": need_task, "terminal": need_terminal}
MAX_FRAMES_PER_CHECK = 20

Progress = Callable[[str], None]


@dataclass
class Execution:
    result: RunResult
    wire: WireLog


def select_checks(config: RunConfig) -> list[CheckSpec]:
    """--check-id wins over --category; neither means every check."""
    if config.check_ids:
        return [CHECKS[i] for i in config.check_ids]
    if config.categories:
        return [c for c in ordered_checks() if c.category in config.categories]
    return ordered_checks()


def choose_tool(config: RunConfig, d: Discovered) -> ToolChoice:
    if d.tools_replies and not d.tools_replies[-1].ok:
        return ToolChoice(None, f"tools/list got {d.tools_replies[-1].describe()}, so no tool can be probed")
    listed = [str(t.get("name")) for t in d.tools if isinstance(t.get("name"), str)]
    shown = ", ".join(listed[:10]) + (f" (+{len(listed) - 10} more)" if len(listed) > 10 else "")
    if config.tool_name:
        if d.tools_replies and d.tools_replies[-1].ok and config.tool_name not in listed:
            return ToolChoice(None, f"--tool-name {config.tool_name!r} is not among the listed tools: "
                                    f"{shown or 'none'}")
        if d.wire == "legacy" and d.tools_replies:
            named = next((t for t in d.tools if t.get("name") == config.tool_name), {})
            support = get_path(named, "execution", "taskSupport")
            if support not in ("optional", "required"):
                capable = [str(t.get("name")) for t in d.task_capable_tools][:10]
                # A client MUST NOT send params.task for it; doing so would judge our mistake.
                return ToolChoice(
                    None,
                    f"--tool-name {config.tool_name!r} has execution.taskSupport {support or 'absent (forbidden)'!r}, "
                    "so it cannot run as a task on 2025-11-25; name one of: "
                    + (", ".join(capable) or "none of the listed tools is task-capable"),
                )
        return ToolChoice(config.tool_name, "chosen with --tool-name", dict(config.tool_args))
    if d.wire == "extension":
        return ToolChoice(
            None,
            "on the extension wire tools carry no task metadata, so tasks-conformance cannot guess which tool "
            f"runs as a task; name one with --tool-name (listed: {shown or 'none'})",
        )
    candidates = []
    for t in d.tools:
        support = get_path(t, "execution", "taskSupport")
        if support not in ("required", "optional") or get_path(t, "annotations", "destructiveHint") is True:
            continue
        read_only = get_path(t, "annotations", "readOnlyHint") is True
        rank = (0 if support == "required" else 1, 0 if read_only else 1)
        candidates.append((rank, t))
    if not candidates:
        return ToolChoice(
            None,
            "no listed tool has execution.taskSupport required or optional without destructiveHint "
            f"(listed: {shown or 'none'}); name one with --tool-name",
        )
    candidates.sort(key=lambda c: c[0])
    (support_rank, ro_rank), tool = candidates[0]
    why = (f"taskSupport {'required' if support_rank == 0 else 'optional'}"
           f"{', readOnlyHint' if ro_rank == 0 else ''}; destructive tools skipped")
    return ToolChoice(str(tool.get("name")), f"picked automatically ({why})", dict(config.tool_args))


def _frames_text(wire: WireLog, seqs: list[int]) -> list[str]:
    out: list[str] = []
    for seq in seqs[:MAX_FRAMES_PER_CHECK]:
        f = wire.get(seq)
        if f is None:
            continue
        text = wire.redacted_text(f)
        if len(text) > MAX_FRAME_TEXT:
            text = text[:MAX_FRAME_TEXT] + f"… ({len(f.data)} bytes)"
        head = f"#{f.seq} {f.direction} {f.channel}"
        if f.http is not None:
            head += f" {f.http.method} {f.http.status or ''}".rstrip()
        if f.note:
            head += f" [{f.note}]"
        out.append(f"{head}: {text}")
    if len(seqs) > MAX_FRAMES_PER_CHECK:
        out.append(f"… {len(seqs) - MAX_FRAMES_PER_CHECK} more frames in the wire log")
    return out


def _not_kept(frame: Frame | None) -> bool:
    return frame is None or (not frame.data and "the wire log is full" in (frame.note or ""))


def judge(spec: CheckSpec, ev: Evidence, interrupted: bool) -> Verdict:
    wire = ev.wire
    if wire not in spec.wires:
        if wire == "none":
            if ev.discovered.connection_problem is not None:
                return could_not_run("could not talk to the server", blocked_by="tasks-wire-resolvable")
            return could_not_run("the server offers no tasks wire", blocked_by="tasks-wire-resolvable")
        return not_applicable(f"applies to the {'/'.join(sorted(spec.wires - {'none'}))} wire, not {wire}")
    if spec.transports is not None and ev.transport not in spec.transports:
        return not_applicable(f"applies over {'/'.join(sorted(spec.transports))} only, not {ev.transport}")
    for name in spec.probes:
        rec = ev.probes.get(name)
        if rec is not None and rec.harness_problem:
            return could_not_run(rec.harness_problem, details={"origin": "harness"})
    try:
        pre = PRECONDITIONS[spec.needs](ev) if spec.needs else None
        verdict = pre if pre is not None else spec.fn(ev)
    except Exception as exc:
        return could_not_run(
            f"internal error in the check (a tasks-conformance bug, not the server's): {type(exc).__name__}: {exc}",
            details={"origin": "harness", "traceback": traceback.format_exc(limit=5)},
        )
    if interrupted and verdict.skip_reason == "could-not-run":
        return could_not_run("the run was interrupted before this check's traffic finished")
    if verdict.status == "failed":
        missing = [seq for seq in verdict.evidence if _not_kept(ev.wire_log.get(seq))]
        if missing:
            # A failure must rest on frames we still hold; past the log's bounds (a flood) it cannot.
            return could_not_run(
                f"the frames this verdict rests on ({', '.join(map(str, missing[:5]))}) were not kept: the wire "
                f"log was over its bounds ({ev.wire_log.dropped} frames dropped)",
            )
    return verdict


async def execute(config: RunConfig, progress: Progress | None = None) -> Execution:
    started = time.monotonic()
    selected = select_checks(config)
    wire = WireLog(Redactor(config.secrets()))
    conn = Connection(config, wire)
    ev = Evidence(
        wire_log=wire, discovered=conn.discovered, transport=config.transport, expect_wire=config.expect_wire,
        input_responses=config.input_responses, poll_timeout_ms=config.poll_timeout_ms,
    )
    interrupted = False
    say = progress or (lambda _text: None)

    async def traffic() -> None:
        say("connecting and negotiating the protocol era")
        try:
            await conn.open()
        except Exception as exc:  # our own bug: the run is incomplete, never a crash
            conn.discovered.connection_problem = (
                f"internal error while connecting (a tasks-conformance bug): {type(exc).__name__}: {exc}"
            )
            return
        d = conn.discovered
        if d.wire == "none" or conn.session is None:
            return
        wanted = {p for spec in selected if d.wire in spec.wires for p in spec.probes}
        probes = plan(wanted, d.wire)
        if any(p.needs_tool for p in probes):
            ev.tool = choose_tool(config, d)
        ctx = ProbeContext(session=conn.session, config=config, evidence=ev)
        for spec in probes:
            if spec.needs_tool and (ev.tool is None or ev.tool.name is None):
                ctx.record(spec.name).not_run = ev.tool.reason if ev.tool else "no tool"
                continue
            if spec.needs_task and ev.created_task_id is None:
                ctx.record(spec.name).not_run = "no task was created by the declared tools/call"
                continue
            say(f"probe: {spec.description}")
            t0 = time.monotonic()
            try:
                await spec.fn(ctx)
            except Exception as exc:  # a probe bug is ours: its checks become could-not-run
                ctx.record(spec.name).harness_problem = (
                    f"internal error in probe {spec.name} (a tasks-conformance bug): {type(exc).__name__}: {exc}"
                )
            rec = ctx.record(spec.name)
            rec.elapsed_ms = rec.elapsed_ms or int((time.monotonic() - t0) * 1000)

    async with anyio.create_task_group() as tg:

        async def watch_signals() -> None:
            nonlocal interrupted
            with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
                async for _sig in signals:
                    interrupted = True
                    tg.cancel_scope.cancel()
                    return

        async def run_traffic() -> None:
            try:
                await traffic()
            finally:
                # Closed in the task that opened it (anyio task groups demand it). The parts
                # that must survive an interrupt (reaping the server) shield themselves.
                await conn.aclose()
                tg.cancel_scope.cancel()

        tg.start_soon(watch_signals)
        tg.start_soon(run_traffic)

    if conn.session is not None:
        ev.intents = list(conn.session.intents)
    if conn.peer is not None:
        ev.notifications = list(conn.peer.notifications)
        ev.server_requests = list(conn.peer.server_requests)
        ev.unmatched = list(conn.peer.unmatched)
        ev.dropped_unmatched = conn.peer.dropped_unmatched
        ev.dropped_notifications = conn.peer.dropped_notifications
    d = conn.discovered
    if d.connection_problem is None and d.wire == "none" and conn.transport is not None and not d.looked_for:
        d.connection_problem = conn.transport.failure_context() or "the server did not answer"

    say("judging")
    results: list[CheckResult] = []
    for spec in selected:
        t0 = time.monotonic()
        verdict = judge(spec, ev, interrupted)
        probe_ms = sum(ev.probe(p).elapsed_ms for p in spec.probes if p in ev.probes)
        seqs = sorted(set(verdict.evidence))
        details = dict(verdict.details)
        if verdict.blocked_by:
            details["blockedBy"] = verdict.blocked_by
        results.append(
            CheckResult(
                id=spec.id, category=spec.category, title=spec.title, description=spec.description,
                requirements=spec.requirement_ids(d.wire), status=verdict.status,  # type: ignore[arg-type]
                skipReason=verdict.skip_reason,  # type: ignore[arg-type]
                message=wire.redactor.text(verdict.message),
                warnings=[wire.redactor.text(w) for w in verdict.warnings],
                evidence=seqs, details=wire.redactor.json(details),
                durationMs=probe_ms + int((time.monotonic() - t0) * 1000),
                frames=_frames_text(wire, seqs),
            )
        )
    tool = ev.tool.name if ev.tool else None
    discovery = Discovery(
        protocolVersion=d.era, wire=d.wire,  # type: ignore[arg-type]
        toolCount=len(d.tools) if d.tools_replies else None,
        taskCapableToolCount=len(d.task_capable_tools) if d.wire == "legacy" else None,
        probedTool=tool, probedToolReason=ev.tool.reason if ev.tool else None,
        createdTaskId=ev.created_task_id,
        serverInfo=wire.redactor.json(d.server_info) if d.server_info is not None else None,
    )
    outcome = decide_outcome(results, interrupted)
    return Execution(
        result=RunResult(
            outcome=outcome, target=wire.redactor.text(config.target()),
            durationMs=int((time.monotonic() - started) * 1000), discovery=discovery, checks=results,
            incompleteReason=incomplete_reason(results, interrupted) if outcome == "incomplete" else None,
            interrupted=interrupted, toolVersion=__version__,
        ),
        wire=wire,
    )


def all_categories() -> tuple[str, ...]:
    return CATEGORIES
