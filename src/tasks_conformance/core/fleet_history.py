"""A fleet's history: one small JSON per merged run in a folder (`merge --history DIR`), and what
the reports mark from it for each target: its last outcomes, the run where each current failure
first appeared, and its regressions (checks that passed the last time the target ran and fail now,
a failure a baseline accepts included).

A record is named by its run's time, the newest `startedAt` of the runs merged (UTC,
`20261204T202118Z.json`; `…Z-2.json` for another run whose newest began in the same second), so
merging the same reports again rewrites the same record rather than adding a run that never
happened; it holds every target's outcome and one letter per check (`CODES`).
Plain data and the folder's files; stdlib only.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

HISTORY_KIND = "tasks-conformance-history"
HISTORY_SCHEMA_VERSION = "1"
DEFAULT_LENGTH = 10  # outcomes shown per target
# One letter per check bucket in a record; "-": the target did not run the check.
CODES = {"passed": "P", "failed": "F", "known": "K", "could-not-run": "C", "not-applicable": "N"}
FAILING = frozenset("FK")  # a failure, counted whether or not a baseline accepts it
_NAME = re.compile(r"^\d{8}T\d{6}Z(-\d+)?$")


@dataclass(frozen=True)
class TargetRecord:
    """One target of a recorded run: its outcome and the letter of each check."""

    outcome: str
    verdicts: dict[str, str]  # check id -> letter of CODES


@dataclass(frozen=True)
class RunRecord:
    """One merged run, as its record in the folder holds it."""

    run: str  # the record's name: the run's time
    outcome: str
    targets: dict[str, TargetRecord]  # by the target's label (its name, and its era when it ran each)

    def to_json(self) -> dict[str, Any]:
        checks = list(dict.fromkeys(c for t in self.targets.values() for c in t.verdicts))
        return {"schemaVersion": HISTORY_SCHEMA_VERSION, "kind": HISTORY_KIND, "run": self.run,
                "outcome": self.outcome, "checks": checks, "codes": {v: k for k, v in CODES.items()},
                "targets": {label: {"outcome": t.outcome, "verdicts": "".join(t.verdicts.get(c, "-") for c in checks)}
                            for label, t in self.targets.items()}}


@dataclass(frozen=True)
class TargetMarks:
    """What the history says of one target of this run."""

    recent: tuple[tuple[str, str], ...]  # (run, outcome), oldest first, this run last
    failing_since: dict[str, str]  # each failing check -> the run where its current failure began
    regressions: tuple[str, ...]  # checks that passed the last time the target ran and fail now
    previous: str | None  # the last earlier run that had this target (None: its first)

    def to_json(self) -> dict[str, Any]:
        return {"recent": [{"run": r, "outcome": o} for r, o in self.recent], "previous": self.previous,
                "failingSince": self.failing_since, "regressions": list(self.regressions)}


@dataclass(frozen=True)
class FleetHistory:
    """The marks of every target of this run, and which runs they were read from."""

    run: str
    earlier: tuple[str, ...]  # the earlier records read, oldest first
    targets: dict[str, TargetMarks] = field(default_factory=dict)
    skipped: tuple[str, ...] = ()  # records of the folder that could not be read (one line each)

    @property
    def regressions(self) -> list[tuple[str, str]]:
        """(target label, check id) of every regression, in target order."""
        return [(label, check) for label, marks in self.targets.items() for check in marks.regressions]

    def to_json(self) -> dict[str, Any]:
        return {"run": self.run, "earlierRuns": len(self.earlier),
                "previous": self.earlier[-1] if self.earlier else None, "regressions": len(self.regressions)}


def run_name(started: Iterable[str], now: dt.datetime | None = None) -> str:
    """The record's name: the newest of the runs' `startedAt` (YYYY-MM-DDTHH:MM:SS, UTC), or now."""
    times = sorted(s for s in started if s)
    if times:
        try:
            return dt.datetime.fromisoformat(times[-1]).strftime("%Y%m%dT%H%M%SZ")
        except ValueError:
            pass
    return (now or dt.datetime.now(dt.UTC)).strftime("%Y%m%dT%H%M%SZ")


def free_name(folder: str, record: RunRecord) -> RunRecord:
    """`record` under the name it keeps in the folder: its own, unless a record of another run has
    it (two fleets' newest runs began in the same second): then the next `-2`, `-3`… that is free or
    holds this same run (merging the same reports again rewrites their record)."""
    base, n = record.run, 1
    while True:
        name = base if n == 1 else f"{base}-{n}"
        path = os.path.join(folder, name + ".json")
        try:
            with open(path, encoding="utf-8") as fh:
                same = _record(name, json.load(fh)) == replace(record, run=name)
        except FileNotFoundError:
            return replace(record, run=name)
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            same = False
        if same:
            return replace(record, run=name)
        n += 1


def _key(name: str) -> tuple[str, int]:
    """Records in time order: a name's `-N` counts as a number (`…Z-10` after `…Z-9`)."""
    head, _, n = name.partition("-")
    return head, int(n) if n else 1


def read_records(folder: str, before: str) -> tuple[list[RunRecord], list[str]]:
    """The folder's records older than `before`, oldest first, and a line for each it could not read."""
    try:
        names = sorted((n[:-5] for n in os.listdir(folder) if n.endswith(".json") and _NAME.match(n[:-5])), key=_key)
    except FileNotFoundError:
        return [], []
    records, problems = [], []
    for name in (n for n in names if _key(n) < _key(before)):
        path = os.path.join(folder, name + ".json")
        try:
            with open(path, encoding="utf-8") as fh:
                records.append(_record(name, json.load(fh)))
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
            problems.append(f"{path}: not a history record ({type(exc).__name__}), left out")
    return records, problems


def _record(name: str, doc: Mapping[str, Any]) -> RunRecord:
    if doc.get("kind") != HISTORY_KIND or doc.get("schemaVersion") != HISTORY_SCHEMA_VERSION:
        raise ValueError("another kind or version")
    checks = [str(c) for c in doc["checks"]]
    targets = {}
    for label, t in doc["targets"].items():
        letters = str(t["verdicts"])
        if len(letters) != len(checks):
            raise ValueError("verdicts and checks differ in length")
        targets[str(label)] = TargetRecord(str(t["outcome"]), {c: v for c, v in zip(checks, letters, strict=True)
                                                               if v != "-"})
    return RunRecord(name, str(doc["outcome"]), targets)


def write_record(folder: str, record: RunRecord) -> str:
    """Write `record` into the folder (made if need be); returns its path."""
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, record.run + ".json")
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8", newline="\n") as fh:
        json.dump(record.to_json(), fh, ensure_ascii=False, separators=(",", ":"))
        fh.write("\n")
    os.replace(tmp, path)
    return path


def marks(current: RunRecord, earlier: list[RunRecord], length: int = DEFAULT_LENGTH) -> FleetHistory:
    """Each target's marks: `earlier` are the older records, oldest first."""
    out: dict[str, TargetMarks] = {}
    for label, now in current.targets.items():
        past = [(r.run, r.targets[label]) for r in earlier if label in r.targets]
        recent = tuple((run, t.outcome) for run, t in past[-max(length - 1, 0):]) if length > 1 else ()
        last = past[-1][1] if past else None
        failing = [c for c, v in now.verdicts.items() if v in FAILING]
        regressions = tuple(c for c in failing if last is not None and last.verdicts.get(c) == "P")
        since: dict[str, str] = {}
        for check in failing:
            start = current.run
            for run, t in reversed(past):
                if t.verdicts.get(check) not in FAILING:
                    break
                start = run
            since[check] = start
        out[label] = TargetMarks((*recent, (current.run, now.outcome)), since, regressions,
                                 past[-1][0] if past else None)
    return FleetHistory(current.run, tuple(r.run for r in earlier), out)

