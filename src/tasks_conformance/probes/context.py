"""What a probe gets: the session, the run's settings, and the Evidence it writes into."""

from __future__ import annotations

from dataclasses import dataclass

from tasks_conformance.config import RunConfig
from tasks_conformance.evidence import Evidence, ProbeRecord
from tasks_conformance.session.base import Session


@dataclass
class ProbeContext:
    session: Session
    config: RunConfig
    evidence: Evidence

    def record(self, name: str) -> ProbeRecord:
        rec = self.evidence.probes.get(name)
        if rec is None:
            rec = ProbeRecord(name=name)
            self.evidence.probes[name] = rec
        return rec

    @property
    def wire(self) -> str:
        return self.evidence.wire
