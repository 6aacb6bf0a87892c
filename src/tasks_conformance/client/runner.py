"""The client runner: every scenario once per era, each with its own scripted server and client
process (several at a time), then every client check judged on the runs it reads."""

from __future__ import annotations

import os
import shlex
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import cast

from tasks_conformance import __version__
from tasks_conformance.client.checks import CLIENT_CHECKS, ClientCheck
from tasks_conformance.client.checks.registry import CATEGORY
from tasks_conformance.client.evidence import ScenarioRun, exchanges_of, server_requests_of
from tasks_conformance.client.launch import ClientRun, harness_env, run_client
from tasks_conformance.client.scenarios import BY_NAME, PROTOCOL_VERSION, SCENARIOS, Era, Scenario, Transport
from tasks_conformance.client.scripted_http import serving
from tasks_conformance.client.scripted_stdio import scripted_server
from tasks_conformance.client.stdio_relay import relaying
from tasks_conformance.core.causes import Cause, CauseKind, setting
from tasks_conformance.core.profiles import CLIENT_PROFILES, DEFAULT_PROFILE
from tasks_conformance.core.result import CheckResult, Discovery, RunResult, decide_outcome, incomplete_reason
from tasks_conformance.core.verdict import could_not_run, not_applicable
from tasks_conformance.core.wirelog import WireLog, frames_text, in_lane
from tasks_conformance.core.wires import Wire

DEFAULT_TIMEOUT_S = 30.0


@dataclass(frozen=True)
class ClientConfig:
    """One client run: the command that starts the client under test and what to run it through."""

    command: tuple[str, ...]
    eras: tuple[Era, ...] = ("extension",)
    scenarios: tuple[str, ...] = ()  # empty: every scenario of the chosen eras
    timeout_s: float = DEFAULT_TIMEOUT_S  # per scenario
    jobs: int = field(default_factory=lambda: os.cpu_count() or 2)
    cwd: str | None = None
    # http: the scripted server listens and the client gets its URL; stdio: the client spawns it;
    # both (`client demo`): each scenario once over each.
    transport: str = "http"
    profile: str = DEFAULT_PROFILE  # a key of profiles.CLIENT_PROFILES: which checks, and the score's id

    @property
    def transports(self) -> tuple[Transport, ...]:
        return ("http", "stdio") if self.transport == "both" else (cast(Transport, self.transport),)

    def planned(self) -> list[tuple[Scenario, Era, Transport]]:
        return [(s, era, transport) for transport in self.transports for s in SCENARIOS for era in self.eras
                if era in s.eras and transport in s.transports
                and (not self.scenarios or s.name in self.scenarios)]

    def target(self) -> str:
        return " ".join(self.command)

    def judges(self, check: ClientCheck) -> bool:
        """Whether a check belongs to this run: it reads a scenario of one of the chosen eras (a
        check of another era is left out of the report; one whose scenarios were not selected is
        reported not applicable). The profile chooses among them."""
        if not CLIENT_PROFILES[self.profile].includes(check.id):
            return False
        names = check.scenarios or tuple(BY_NAME)
        return any(era in BY_NAME[name].eras for name in names if name in BY_NAME for era in self.eras)


@dataclass
class ClientExecution:
    result: RunResult
    runs: list[ScenarioRun]
    wire: WireLog  # every scenario's frames, in one log (frame numbers are unique in the run)


async def run_one(scenario: Scenario, era: Era, config: ClientConfig, wire: WireLog,
                  transport: Transport = "http") -> ScenarioRun:
    env = harness_env(scenario.name, PROTOCOL_VERSION[era], scenario.context_for(era))
    if transport == "stdio":
        return await _run_stdio(scenario, era, config, wire, env)
    app = scripted_server(scenario, wire)
    try:
        async with serving(app) as url:
            client = await run_client(config.command, url, env, config.timeout_s, cwd=config.cwd)
    except OSError as exc:
        empty = ClientRun(tuple(config.command), False, None, False, 0.0, "", "", None)
        return ScenarioRun(scenario, era, empty, server_problem=f"the scripted server could not listen: {exc}")
    return ScenarioRun(scenario, era, client, exchanges_of(wire, app.seqs), reached=app.requests > 0,
                       server_requests=server_requests_of(wire, app.seqs))


async def _run_stdio(scenario: Scenario, era: Era, config: ClientConfig, wire: WireLog,
                     env: dict[str, str]) -> ScenarioRun:
    """The client spawns the scripted server (its command the last argument, and in
    MCP_CONFORMANCE_SERVER_COMMAND); the server reports its frames to the relay."""
    try:
        async with relaying(scenario, wire, config.timeout_s) as relay:
            client = await run_client(config.command, shlex.join(relay.argv), {**env, **relay.server_env()},
                                      config.timeout_s, cwd=config.cwd, settle=relay.settle)
    except OSError as exc:
        empty = ClientRun(tuple(config.command), False, None, False, 0.0, "", "", None)
        return ScenarioRun(scenario, era, empty, server_problem=f"the scripted server could not listen: {exc}",
                           transport="stdio")
    seqs = sorted(relay.seqs)
    return ScenarioRun(scenario, era, client, exchanges_of(wire, seqs), reached=relay.requests > 0,
                       server_requests=server_requests_of(wire, seqs), transport="stdio")


async def execute_client(config: ClientConfig, progress: Callable[[str], None] | None = None) -> ClientExecution:
    import anyio

    started = time.monotonic()
    started_at = datetime.now(UTC).replace(microsecond=0, tzinfo=None).isoformat()
    planned = config.planned()
    done: dict[int, ScenarioRun] = {}
    wire = WireLog()
    limiter = anyio.Semaphore(max(1, config.jobs))
    say = progress or (lambda _text: None)

    async def one(i: int, scenario: Scenario, era: Era, transport: Transport) -> None:
        async with limiter:
            lane = f"{scenario.name} ({era}{', stdio' if transport == 'stdio' else ''})"
            say(f"scenario: {lane}")
            with in_lane(lane):  # the scripted server (or the stdio relay) records in this context
                done[i] = await run_one(scenario, era, config, wire, transport)

    async with anyio.create_task_group() as tg:
        for i, (scenario, era, transport) in enumerate(planned):
            tg.start_soon(one, i, scenario, era, transport)
    runs = [done[i] for i in range(len(planned))]
    checks = [judge(check, runs, wire, config.profile) for check in CLIENT_CHECKS.values() if config.judges(check)]
    target = config.target()
    outcome = decide_outcome(checks)
    result = RunResult(
        outcome=outcome, target=target, durationMs=int((time.monotonic() - started) * 1000),
        discovery=Discovery(protocolVersion=", ".join(PROTOCOL_VERSION[e] for e in config.eras),
                            wire=Wire(config.eras[0]) if len(config.eras) == 1 else Wire.NONE), checks=checks,
        incompleteReason=incomplete_reason(checks, False, target) if outcome == "incomplete" else None,
        startedAt=started_at, toolVersion=__version__, profile=CLIENT_PROFILES[config.profile].id, wire=wire,
    )
    return ClientExecution(result, runs, wire)


def _unreached(runs: Sequence[ScenarioRun]) -> Cause:
    """Why no run of a check's scenarios reached the scripted server, said once for all checks."""
    run = runs[0]
    c = run.client
    if run.server_problem:
        return Cause(run.server_problem, CauseKind.HARNESS, "")
    if not c.started:
        return Cause(f"the client command could not be started: {c.start_error}", CauseKind.SETTING,
                     "check --command", ("--command",))
    if c.timed_out:
        what = f"the client sent nothing to the scripted server and was stopped after --timeout {c.duration_s:.0f} s"
    else:
        what = f"the client exited with code {c.exit_code} without sending anything to the scripted server"
    tail = c.stderr_tail.strip().splitlines()[-1:] if c.stderr_tail.strip() else []
    if tail:
        what += f"; its stderr ends: {tail[0][:200]}"
    if run.transport == "stdio":
        fix = ("check that --command starts the client and that it spawns the server command given as its last "
               "argument (or, as a JSON array, in MCP_CONFORMANCE_SERVER_COMMAND) and talks to it on stdio")
    else:
        fix = "check that --command starts the client and that it connects to the URL given as its last argument"
    return Cause(what, CauseKind.SETTING, fix, ("--command", "--transport"))


# --profile full: a check judged from the outcome line could not run without one (policy P-36).
NO_OUTCOME_LINE = Cause("the harness printed no TASKS-CONFORMANCE-OUTCOME line, so what the client showed its user "
                        "cannot be judged", CauseKind.SETTING,
                        'make the harness print one line TASKS-CONFORMANCE-OUTCOME {"status", "isError", "error"} '
                        "on stdout (or use --profile standard)", ("--command",))


def judge(check: ClientCheck, runs: list[ScenarioRun], wire: WireLog, profile: str = DEFAULT_PROFILE) -> CheckResult:
    t0 = time.monotonic()
    mine = [r for r in runs if check.reads(r.name)]
    reached = [r for r in mine if r.reached]
    if not mine:
        scenarios = " ".join(f"--scenario {name}" for name in check.scenarios)
        verdict = not_applicable("none of its scenarios was selected",
                                 cause=setting("none of its scenarios was selected", f"select one: {scenarios}"))
    elif not reached:
        verdict = could_not_run(_unreached(mine))
    elif profile == "full" and check.outcome_line and all(r.client.outcome is None for r in reached):
        verdict = could_not_run(NO_OUTCOME_LINE)
    else:
        try:
            verdict = check.judge(reached)
        except Exception as exc:  # our own bug: this check is incomplete, never a crash
            verdict = could_not_run(Cause(f"internal error in this check (a tasks-conformance bug): "
                                          f"{type(exc).__name__}: {exc}", CauseKind.HARNESS, ""))
    seqs = sorted(set(verdict.evidence))
    return CheckResult(
        id=check.id, category=CATEGORY, area=check.area, title=check.title, description=check.description,
        requirements=list(check.requirements), broken=[r for r in check.requirements if r in verdict.broken],
        cause=verdict.cause, status=verdict.status, skipReason=verdict.skip_reason,  # type: ignore[arg-type]
        deferredTo=verdict.deferred_to,
        message=verdict.message, warnings=list(verdict.warnings), evidence=seqs,
        details=dict(verdict.details), durationMs=int((time.monotonic() - t0) * 1000),
        frames=frames_text(wire, seqs),
    )
