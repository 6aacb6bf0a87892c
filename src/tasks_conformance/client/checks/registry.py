"""The client checks' registry: each check an id, the client rules it judges (and the freedoms it
permits), the scenarios whose runs it reads, and its judge. A judge returns a Verdict
(core/verdict.py), as a server check does.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from tasks_conformance.client.evidence import ScenarioRun
from tasks_conformance.core.areas import AREAS
from tasks_conformance.core.verdict import Verdict

Judge = Callable[[list[ScenarioRun]], Verdict]
CATEGORY = "client"


@dataclass(frozen=True)
class ClientCheck:
    id: str
    area: str  # the spec area it judges (core/areas.py): its JUnit classname and report section
    title: str
    description: str
    requirements: tuple[str, ...]
    scenarios: tuple[str, ...]  # the scenarios whose runs it reads; empty: every scenario
    judge: Judge
    # The freedoms (MAY client rules) the check accepts where it sees a client use them: using one
    # never fails it. Listed so the coverage matrix can show each freedom as honoured.
    permits: tuple[str, ...] = ()
    # Judged from the harness's optional TASKS-CONFORMANCE-OUTCOME line: without it the check is
    # not applicable, and could not run under --profile full (client/runner.py decides that).
    outcome_line: bool = False
    # The scenarios it cannot judge without: a run of one whose client never made the scenario's
    # request makes it could-not-run (client/runner.py). None: every scenario it reads. A check
    # that reads a whole era's runs for what every request carries needs none in particular.
    needs: tuple[str, ...] | None = None
    # Judged from what the client had done by its end (an absence: no tasks/cancel, a task left
    # live, the outcome line): a client stopped at --timeout makes it could-not-run; any other
    # check warns that the client hung, and is judged on what it sent.
    ends: bool = False
    # Judged on every run that reached the scripted server, whether or not its client made the
    # scenario's request: a check of what every message is, not of what the scenario is about.
    every_run: bool = False

    def reads(self, scenario: str) -> bool:
        return not self.scenarios or scenario in self.scenarios

    def needs_scenario(self, scenario: str) -> bool:
        return self.reads(scenario) if self.needs is None else scenario in self.needs


CLIENT_CHECKS: dict[str, ClientCheck] = {}


def client_check(*, id: str, area: str, title: str, description: str, requirements: tuple[str, ...],
                 scenarios: tuple[str, ...] = (), permits: tuple[str, ...] = (),
                 outcome_line: bool = False, needs: tuple[str, ...] | None = None,
                 ends: bool = False, every_run: bool = False) -> Callable[[Judge], Judge]:
    def register(fn: Judge) -> Judge:
        if id in CLIENT_CHECKS:
            raise ValueError(f"client check {id!r} registered twice")
        if needs is not None and any(not (not scenarios or n in scenarios) for n in needs):
            raise ValueError(f"client check {id!r} needs a scenario it does not read")
        if area not in AREAS:
            raise ValueError(f"client check {id!r}: unknown area {area!r} (core/areas.py names them)")
        CLIENT_CHECKS[id] = ClientCheck(id, area, title, description, requirements, scenarios, fn, permits,
                                        outcome_line, needs, ends, every_run)
        return fn

    return register

