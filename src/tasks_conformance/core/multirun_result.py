"""The result model of several runs in one invocation (`--era both`, `suite FILE`), as result.py
is of one run: what multirun.py returns and reporters/combined.py renders.

Plain data; it sits below both. multirun.py plans the runs, runs them and combines them into a
`Combined`; the reporters read it and never import multirun.py.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from tasks_conformance.core.result import EXIT_CODES, EXIT_INTERRUPTED, RunResult

if TYPE_CHECKING:
    from tasks_conformance.core.fleet_history import FleetHistory, RunRecord
    from tasks_conformance.core.wirelog import WireLog

Kind = Literal["eras", "suite"]

# Worst first: the combined outcome is the first of these that any run has.
_SEVERITY = ("incomplete", "failed", "passed")


@dataclass(frozen=True)
class NamedRun:
    """One finished (or never started) run of a combined invocation."""

    name: str
    era: str | None
    target: str | None
    result: RunResult
    wire: WireLog | None  # None: the run never started (interrupted before its turn)


def worst(outcomes: Sequence[str]) -> str:
    """incomplete > failed > passed; no runs at all is passed (nothing was asked)."""
    for outcome in _SEVERITY:
        if outcome in outcomes:
            return outcome
    return "passed"


@dataclass(frozen=True)
class Combined:
    """Every run of one invocation, in the planned order."""

    kind: Kind
    runs: tuple[NamedRun, ...]
    interrupted: bool = False
    shard: str | None = None  # suite --shard I/N as given
    history: FleetHistory | None = None  # merge --history: each target's earlier runs (fleet_history.py)

    @property
    def outcome(self) -> str:
        return worst([r.result.outcome for r in self.runs])

    @property
    def passed(self) -> bool:
        return self.outcome == "passed"

    @property
    def headline(self) -> str:
        """The word the reports lead with: the outcome, or "interrupted" when SIGINT/SIGTERM
        ended the invocation or one of its runs (the exit code is then 130)."""
        return "interrupted" if self.interrupted or any(r.result.interrupted for r in self.runs) else self.outcome

    @property
    def exit_code(self) -> int:
        if self.interrupted or any(r.result.interrupted for r in self.runs):
            return EXIT_INTERRUPTED
        return EXIT_CODES[self.outcome]

    def counts(self) -> dict[str, int]:
        outcomes = [r.result.outcome for r in self.runs]
        return {"total": len(outcomes), "passed": outcomes.count("passed"), "failed": outcomes.count("failed"),
                "incomplete": outcomes.count("incomplete")}

    @property
    def summary(self) -> str:
        n = self.counts()
        if not self.runs:  # e.g. a --shard with more shards than targets: nothing to do, passed
            return "no targets" + (f" in shard {self.shard}" if self.shard else "")
        if self.kind == "eras":
            text = ", ".join(f"{r.name} {r.result.outcome}" for r in self.runs)
        else:
            noun = "target" if all(r.era is None for r in self.runs) else "run"  # era both: a target, 2 runs
            runs = f"{n['total']} {noun}{'' if n['total'] == 1 else 's'}"
            text = f"{runs}: {n['passed']} passed, {n['failed']} failed, {n['incomplete']} incomplete"
        return text + (" (interrupted)" if self.interrupted else "")

    def history_record(self, run: str) -> RunRecord:
        """This run as `merge --history` keeps it: each run's headline and the letter of each check."""
        from tasks_conformance.core.fleet_history import CODES, RunRecord, TargetRecord

        targets = {r.name: TargetRecord(r.result.headline, {c.id: CODES.get(c.bucket, "C") for c in r.result.checks})
                   for r in self.runs}
        return RunRecord(run, self.headline, targets)
