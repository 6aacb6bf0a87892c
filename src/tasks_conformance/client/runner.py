"""The client runner: every scenario once per era, each with its own scripted server and client
process (several at a time), then every client check judged on the runs it reads."""

from __future__ import annotations

import os
import shlex
import sys
import time
import traceback
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any, cast

from tasks_conformance import __version__
from tasks_conformance.client.checks import CLIENT_CHECKS, ClientCheck
from tasks_conformance.client.checks.registry import CATEGORY
from tasks_conformance.client.evidence import ScenarioRun, exchanges_of, malformed_of, server_requests_of
from tasks_conformance.client.launch import ClientRun, harness_env, run_client
from tasks_conformance.client.limits import reached
from tasks_conformance.client.scenarios import BY_NAME, PROTOCOL_VERSION, SCENARIOS, Scenario, Transport
from tasks_conformance.client.scripted.http import serving
from tasks_conformance.client.scripted.play import scripted_server
from tasks_conformance.client.scripted.waits import DEFAULT_WAITS, ScriptedWaits
from tasks_conformance.client.stdio_relay import relaying
from tasks_conformance.core.causes import Cause, CauseKind, by_flag
from tasks_conformance.core.eras import Era
from tasks_conformance.core.profiles import CLIENT_PROFILES, DEFAULT_PROFILE
from tasks_conformance.core.redact import Redactor
from tasks_conformance.core.result import (
    CheckResult,
    CheckWarning,
    Discovery,
    RunResult,
    decide_outcome,
    incomplete_reason,
)
from tasks_conformance.core.scenario_record import ScenarioRecord
from tasks_conformance.core.text import one_line
from tasks_conformance.core.verdict import Verdict, could_not_run, not_applicable, warn
from tasks_conformance.core.wirelog import MAX_FRAME_BYTES, WireLog, frames_text, in_lane
from tasks_conformance.core.wires import Wire

DEFAULT_TIMEOUT_S = 30.0



def default_jobs() -> int:
    """Scenarios at once unless --jobs says: the CPU count, at least 4, as a scenario spends most of
    its time waiting on its task's polls, not on a core."""
    return max(4, os.cpu_count() or 1)

@dataclass(frozen=True)
class ClientConfig:
    """One client run: the command that starts the client under test and what to run it through."""

    command: tuple[str, ...]
    eras: tuple[Era, ...] = ("extension",)
    scenarios: tuple[str, ...] = ()  # empty: every scenario of the chosen eras
    timeout_s: float = DEFAULT_TIMEOUT_S  # per scenario
    jobs: int = field(default_factory=lambda: default_jobs())
    cwd: str | None = None
    # http: the scripted server listens and the client gets its URL; stdio: the client spawns it;
    # both (`client demo`): each scenario once over each.
    transport: str = "http"
    profile: str = DEFAULT_PROFILE  # a key of profiles.CLIENT_PROFILES: which checks, and the score's id
    env: Mapping[str, str] = field(default_factory=dict)  # -e: added to the client's environment
    # What no output may show (-e values, secret-looking flags of the command): the run's Redactor's.
    secrets: tuple[str, ...] = ()
    debug: bool = False  # --debug: an internal error in a check prints its traceback on stderr
    # The wire log's cap on kept frame bytes, for the whole run (tests lower it; README: "Limits").
    max_frame_bytes: int = MAX_FRAME_BYTES
    # How long a scenario's scripted server waits for what a client may never do (tests shorten it).
    waits: ScriptedWaits = DEFAULT_WAITS
    check_ids: tuple[str, ...] = ()  # the checks --area chose (empty: every check of the profile)
    # Wraps the scripted stdio server's command before the client is given it (None: as it is).
    # Tests start it from their zygote where neither process is the test's subject: no fresh
    # interpreter importing the scripted servers for each scenario.
    server_launch: Callable[[Sequence[str]], tuple[str, ...]] | None = None

    @property
    def transports(self) -> tuple[Transport, ...]:
        return ("http", "stdio") if self.transport == "both" else (cast(Transport, self.transport),)

    def planned(self) -> list[tuple[Scenario, Era, Transport]]:
        return [(s, era, transport) for transport in self.transports for s in SCENARIOS for era in self.eras
                if era in s.eras and transport in s.transports
                and (not self.scenarios or s.name in self.scenarios)]

    def target(self) -> str:
        """The client's command line as the server mode shows its stdio command (shell-quoted);
        reports show it through the run's Redactor."""
        return shlex.join(self.command)

    def judges(self, check: ClientCheck) -> bool:
        """Whether a check belongs to this run: it reads a scenario of one of the chosen eras (a
        check of another era is left out of the report; one whose scenarios were not selected is
        reported not applicable). The profile chooses among them, and --area among those."""
        if not CLIENT_PROFILES[self.profile].includes(check.id):
            return False
        if self.check_ids and check.id not in self.check_ids:
            return False
        names = check.scenarios or tuple(BY_NAME)
        return any(era in BY_NAME[name].eras for name in names if name in BY_NAME for era in self.eras)


@dataclass(repr=False)
class ClientExecution:
    result: RunResult
    runs: list[ScenarioRun]
    wire: WireLog  # every scenario's frames, in one log (frame numbers are unique in the run)

    def __repr__(self) -> str:
        # Short on purpose: asyncio's runner formats the main task, and so its result, when it
        # restores SIGINT at the end of `anyio.run`; a whole repr walked every message the client
        # sent (1 GB and seconds after a flood, benchmarks/client_flood.py).
        return f"ClientExecution({self.result.outcome}, {len(self.runs)} scenario run(s), {len(self.wire)} frames)"


async def run_one(scenario: Scenario, era: Era, config: ClientConfig, wire: WireLog,
                  transport: Transport = "http") -> ScenarioRun:
    env = {**config.env, **harness_env(scenario.name, PROTOCOL_VERSION[era], scenario.context_for(era))}
    if transport == "stdio":
        return await _run_stdio(scenario, era, config, wire, env)
    app = scripted_server(scenario, wire, config.waits)
    try:
        async with serving(app) as url:
            client = await run_client(config.command, url, env, config.timeout_s, cwd=config.cwd)
    except OSError as exc:
        empty = ClientRun(tuple(config.command), False, None, False, 0.0, "", "", None)
        return ScenarioRun(scenario, era, empty, server_problem=f"the scripted server could not listen: {exc}")
    return ScenarioRun(scenario, era, client, exchanges_of(wire, app.seqs), reached=app.requests > 0,
                       server_requests=server_requests_of(wire, app.seqs), malformed=malformed_of(wire, app.seqs),
                       limits=reached(app.limits, wire, app.seqs, client))


async def _run_stdio(scenario: Scenario, era: Era, config: ClientConfig, wire: WireLog,
                     env: dict[str, str]) -> ScenarioRun:
    """The client spawns the scripted server (its command the last argument, and in
    MCP_CONFORMANCE_SERVER_COMMAND); the server reports its frames to the relay."""
    try:
        async with relaying(scenario, wire, config.timeout_s, config.waits, config.server_launch) as relay:
            client = await run_client(config.command, shlex.join(relay.argv), {**env, **relay.server_env()},
                                      config.timeout_s, cwd=config.cwd, settle=relay.settle, release=relay.stop)
    except OSError as exc:
        empty = ClientRun(tuple(config.command), False, None, False, 0.0, "", "", None)
        return ScenarioRun(scenario, era, empty, server_problem=f"the scripted server could not listen: {exc}",
                           transport="stdio")
    seqs = sorted(relay.seqs)
    return ScenarioRun(scenario, era, client, exchanges_of(wire, seqs), reached=relay.requests > 0,
                       server_requests=server_requests_of(wire, seqs), transport="stdio",
                       malformed=malformed_of(wire, seqs), limits=reached(relay.limits, wire, seqs, client),
                       not_signalled=tuple(relay.not_signalled))


async def execute_client(config: ClientConfig, progress: Callable[[str], None] | None = None) -> ClientExecution:
    import anyio

    started = time.monotonic()
    started_at = datetime.now(UTC).replace(microsecond=0, tzinfo=None).isoformat()
    planned = config.planned()
    done: dict[int, ScenarioRun] = {}
    wire = WireLog(Redactor(config.secrets), max_bytes=config.max_frame_bytes)
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
    checks = [judge(check, runs, wire, config) for check in CLIENT_CHECKS.values() if config.judges(check)]
    target = wire.redactor.text(config.target())
    outcome = decide_outcome(checks)
    result = RunResult(
        outcome=outcome, target=target, durationMs=int((time.monotonic() - started) * 1000),
        discovery=Discovery(protocolVersion=", ".join(PROTOCOL_VERSION[e] for e in config.eras),
                            wire=Wire(config.eras[0]) if len(config.eras) == 1 else Wire.NONE,
                            wires=tuple(config.eras) if len(config.eras) > 1 else ()), checks=checks,
        incompleteReason=incomplete_reason(checks, False, target) if outcome == "incomplete" else None,
        startedAt=started_at, toolVersion=__version__, profile=CLIENT_PROFILES[config.profile].id, wire=wire,
        scenarios=tuple(record(run, config, wire.redactor) for run in runs),
    )
    return ClientExecution(result, runs, wire)


STDERR_LINES = 10  # the lines of the client's stderr a scenario's record keeps


def record(run: ScenarioRun, config: ClientConfig, redactor: Redactor) -> ScenarioRecord:
    """What the client did in one scenario, for the reports: redacted, every string bounded."""
    c = run.client
    tail = [one_line(line, STDERR_LINE_CHARS) for line in redactor.text(c.stderr_tail).splitlines() if line.strip()]
    problem = run.server_problem or (redactor.text(f"could not be started: {c.start_error}") if not c.started else None)
    return ScenarioRecord(
        run.name, run.era, run.transport, c.started, c.exit_code, c.timed_out, int(c.duration_s * 1000),
        int(config.timeout_s * 1000), run.reached, len(run.exchanges) + len(run.malformed),
        len(run.connection_numbers()) if run.reached else 0,
        outcome_line=_cut(redactor.text(c.outcome_line)) if c.outcome_line is not None else None,
        outcome_problem=c.outcome_problem, stderr_tail=tuple(tail[-STDERR_LINES:]), problem=problem,
        limits=run.limits,
        left_behind=left_behind(c, redactor), descendants_tracked=c.tracked or not c.started,
        not_signalled=tuple(one_line(redactor.text(n), MAX_TEXT_CHARS) for n in run.not_signalled))


def left_behind(c: ClientRun, redactor: Redactor) -> tuple[str, ...]:
    """The processes the client left behind, each `pid N: its command` (redacted before it is cut)."""
    said = tuple(f"pid {pid}: {one_line(redactor.text(command), STDERR_LINE_CHARS)}" for pid, command in c.left_behind)
    return (*said, "and more (a limit cut the list)") if c.more_left else said


def _unreached(runs: Sequence[ScenarioRun], redactor: Redactor) -> Cause:
    """Why no run of a check's scenarios reached the scripted server, said once for all checks
    (the client's stderr quoted through the run's Redactor, and cut)."""
    run = runs[0]
    c = run.client
    if run.server_problem:
        return Cause(run.server_problem, CauseKind.HARNESS, "")
    if not c.started:
        return Cause(redactor.text(f"the client command could not be started: {c.start_error}"), CauseKind.SETTING,
                     "check --command", ("--command",))
    if c.timed_out:
        what = f"the client sent nothing to the scripted server and was stopped after --timeout {c.duration_s:.0f} s"
    else:
        what = f"the client exited with code {c.exit_code} without sending anything to the scripted server"
    # A harness may say why it gave up on either stream (a print() goes to stdout): both are quoted.
    for stream, text in (("stderr", c.stderr_tail), ("stdout", c.stdout_tail)):
        tail = [line for line in redactor.text(text).splitlines() if line.strip()][-1:]
        if tail:
            what += f"; its {stream} ends: {one_line(tail[0], STDERR_LINE_CHARS)}"
    if run.transport == "stdio":
        fix = ("check that --command starts the client and that it spawns the server command given as its last "
               "argument (or, as a JSON array, in MCP_CONFORMANCE_SERVER_COMMAND) and talks to it on stdio")
    else:
        fix = "check that --command starts the client and that it connects to the URL given as its last argument"
    return Cause(what, CauseKind.SETTING, fix, ("--command", "--transport"))


# A scenario whose client never made the request it is about showed nothing of the client: every
# check that needs the scenario could not run, for this one cause (stated once in the report).
UNCALLED = Cause("the client never called the tool: no tools/call of MCP_CONFORMANCE_CONTEXT's toolName (nor, in a "
                 "scenario whose context has a `request`, that request)", CauseKind.SETTING,
                 "have the harness call MCP_CONFORMANCE_CONTEXT's toolName with its arguments, or send the "
                 "context's `request` where it has one", ("--command",))
# A client stopped at --timeout: what it had done by its end is not known (stated once too).
HUNG = Cause("the client did not exit by itself within --timeout and was stopped, so what it did by its end is "
             "not known", CauseKind.SETTING, "make the client exit once its call has ended, or raise --timeout",
             ("--timeout",))
# --profile full: a check judged from the outcome line could not run without one (policy P-36).
NO_OUTCOME_LINE = Cause("the harness printed no TASKS-CONFORMANCE-OUTCOME line, so what the client showed its user "
                        "cannot be judged", CauseKind.SETTING,
                        'make the harness print one line TASKS-CONFORMANCE-OUTCOME {"status", "isError", "error"} '
                        "on stdout (or use --profile standard)", ("--command",))
def _unreadable(problem: str) -> Cause:
    """The outcome line was printed but cannot be read: its own cause, naming what is wrong."""
    return Cause(f"{problem}, so what the client showed its user cannot be judged", CauseKind.SETTING,
                 'make the harness print one line TASKS-CONFORMANCE-OUTCOME {"status", "isError", "error"} '
                 "(a JSON object with a status string) on stdout", ("--command",))


# What a report quotes of the client's stderr, and how long a message, a warning or a detail's
# string of a client check may be (README: "Limits"): whatever the client sends, a report stays small.
STDERR_LINE_CHARS = 200
MAX_TEXT_CHARS = 2_000
MAX_DETAIL_ITEMS = 40


def _lane(run: ScenarioRun) -> str:
    return f"{run.name} ({run.era}, {run.transport})"


def _judged(check: ClientCheck, runs: list[ScenarioRun], config: ClientConfig) -> tuple[Verdict, bool]:
    """The check's judge on `runs`, and whether it raised: a judge that raises is our own bug, and
    the check could not run (never a crash)."""
    try:
        return check.judge(runs), False
    except Exception as exc:
        if config.debug:
            traceback.print_exc(file=sys.stderr)
        return could_not_run(Cause(f"internal error in this check (a tasks-conformance bug): {type(exc).__name__}: "
                                   f"{exc}", CauseKind.HARNESS, ""),
                             details={"origin": "harness", "traceback": traceback.format_exc(limit=5)}), True


def _verdict(check: ClientCheck, mine: list[ScenarioRun], config: ClientConfig, redactor: Redactor) -> Verdict:
    """The check's verdict on its runs: could not run when none of them shows the client (it never
    reached the scripted server, or never made the scenario's request), judged on the runs that
    do; a failure stands on what was seen, anything else could not run while a run the check
    needs is missing, or (a check judged from the client's end) while the client of a run it
    needs was stopped at --timeout. A client stopped at --timeout warns on every other check
    that passed."""
    called = [r for r in mine if r.reached and (check.every_run or r.called)]
    if not any(r.reached for r in mine):
        return could_not_run(_unreached(mine, redactor))
    if not called:
        return could_not_run(UNCALLED, details={"uncalled": [_lane(r) for r in mine]})
    if config.profile == "full" and check.outcome_line and all(r.client.outcome is None for r in called):
        unread = next((r.client.outcome_problem for r in called if r.client.outcome_problem), None)
        return could_not_run(_unreadable(unread) if unread else NO_OUTCOME_LINE)
    verdict, crashed = _judged(check, called, config)
    if crashed:
        return verdict
    if verdict.status == "failed":
        return verdict
    judged = {id(r) for r in called}
    missing = [r for r in mine if id(r) not in judged and check.needs_scenario(r.name)]
    if missing:
        unreached = [r for r in missing if not r.reached]
        return could_not_run(_unreached(unreached, redactor) if unreached else UNCALLED,
                             details={"uncalled": [_lane(r) for r in missing]})
    leaked = [r for r in called if r.client.left_behind]
    if leaked and verdict.status == "passed":
        # No rule speaks of a client's processes: what one left behind warns (policy P-49).
        said = (f"the client left {'a process' if len(leaked) == 1 else 'processes'} running after its end in "
                f"{', '.join(map(_lane, leaked[:3]))}{' and more' if len(leaked) > 3 else ''}: stopped, and named "
                "in the scenario's record (policy P-49)")
        verdict = replace(verdict, warnings=(*verdict.warnings, warn(said, "P-49")))
    hung = [r for r in called if r.client.timed_out]
    if check.ends and any(check.needs_scenario(r.name) for r in hung):
        return could_not_run(HUNG, details={"stopped": [_lane(r) for r in hung]})
    if hung and verdict.status == "passed":
        said = (f"the client did not exit by itself within --timeout in {', '.join(map(_lane, hung[:3]))}"
                f"{' and more' if len(hung) > 3 else ''}: it was stopped, and is judged on what it sent before")
        return replace(verdict, warnings=(*verdict.warnings, CheckWarning(said)))
    return verdict


def _cut(text: str) -> str:
    return text if len(text) <= MAX_TEXT_CHARS else text[:MAX_TEXT_CHARS - 1] + f"… ({len(text)} characters)"


def _bounded(value: Any, depth: int = 0) -> Any:
    """A verdict's details (redacted first: a cut through a secret would hide it from the Redactor)
    with every string cut to MAX_TEXT_CHARS and every list to MAX_DETAIL_ITEMS items."""
    if isinstance(value, str):
        return _cut(value)
    if depth > 8:
        return "[too deep]"
    if isinstance(value, dict):
        return {_cut(str(k)): _bounded(v, depth + 1) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_bounded(v, depth + 1) for v in value[:MAX_DETAIL_ITEMS]]
    return value



def _could_run(names: Sequence[str], config: ClientConfig) -> bool:
    """Whether one of the scenarios could have run over the run's transports (it was left out by choice)."""
    return any(t in BY_NAME[n].transports for n in names if n in BY_NAME for t in config.transports)


def judge(check: ClientCheck, runs: list[ScenarioRun], wire: WireLog, config: ClientConfig) -> CheckResult:
    t0 = time.monotonic()
    redactor = wire.redactor
    mine = [r for r in runs if check.reads(r.name)]
    if not mine and _could_run(check.scenarios, config):
        scenarios = " ".join(f"--scenario {name}" for name in check.scenarios)
        verdict = not_applicable("none of its scenarios was selected",
                                 cause=by_flag("none of its scenarios was selected", f"select one: {scenarios}"))
    elif not mine:  # its scenarios cannot run over the chosen transports: its judge says why
        verdict = _judged(check, [], config)[0]
    elif check.needs and not any(r.name in check.needs for r in mine) and _could_run(check.needs, config):
        # A check that reads every run but judges one scenario: with that one left out, nothing to judge.
        # (One whose scenario cannot run over the chosen transports is judged: its judge says why.)
        needed = " ".join(f"--scenario {name}" for name in check.needs)
        verdict = not_applicable(f"its scenario {' or '.join(check.needs)} was not selected",
                                 cause=by_flag(f"its scenario {' or '.join(check.needs)} was not selected",
                                               f"select it: {needed}"))
    else:
        verdict = _verdict(check, mine, config, redactor)
    seqs = sorted(set(verdict.evidence))
    cause = verdict.cause
    if cause is not None:
        cause = replace(cause, text=_cut(redactor.text(cause.text)))
    return CheckResult(
        id=check.id, category=CATEGORY, area=check.area, title=check.title, description=check.description,
        requirements=list(check.requirements), broken=[r for r in check.requirements if r in verdict.broken],
        cause=cause, status=verdict.status, skipReason=verdict.skip_reason,  # type: ignore[arg-type]
        deferredTo=verdict.deferred_to,
        message=_cut(redactor.text(verdict.message)), message_policies=list(verdict.message_policies),
        warnings=[replace(w, text=_cut(redactor.text(w.text))) for w in verdict.warnings],
        evidence=seqs, details=_bounded(redactor.json(dict(verdict.details))),
        durationMs=int((time.monotonic() - t0) * 1000), frames=frames_text(wire, seqs),
    )
