"""The client checks' registry: each check an id, the client rules it judges (and the freedoms it
permits), the scenarios whose runs it reads, and its judge. A judge returns a Verdict
(core/verdict.py), as a server check does.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from tasks_conformance.client.evidence import ScenarioRun
from tasks_conformance.core.verdict import Verdict

Judge = Callable[[list[ScenarioRun]], Verdict]
CATEGORY = "client"


@dataclass(frozen=True)
class ClientCheck:
    id: str
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
    # Of the scenarios it reads, those of which one at least must be selected for it to judge
    # anything (the cancel scenario, for the cancel checks, which read every run): with none
    # selected it is not applicable, whether or not the client reached the scripted server.
    needs: tuple[str, ...] = ()

    @property
    def area(self) -> str:
        return self.judge.__module__.rsplit(".", 1)[-1]

    def reads(self, scenario: str) -> bool:
        return not self.scenarios or scenario in self.scenarios


CLIENT_CHECKS: dict[str, ClientCheck] = {}


def client_check(*, id: str, title: str, description: str, requirements: tuple[str, ...],
                 scenarios: tuple[str, ...] = (), permits: tuple[str, ...] = (),
                 outcome_line: bool = False, needs: tuple[str, ...] = ()) -> Callable[[Judge], Judge]:
    def register(fn: Judge) -> Judge:
        if id in CLIENT_CHECKS:
            raise ValueError(f"client check {id!r} registered twice")
        if any(not (not scenarios or n in scenarios) for n in needs):
            raise ValueError(f"client check {id!r} needs a scenario it does not read")
        CLIENT_CHECKS[id] = ClientCheck(id, title, description, requirements, scenarios, fn, permits, outcome_line,
                                        needs)
        return fn

    return register

