"""A run's result read back from its `json` report: what `tasks-conformance merge` combines.

`reported(doc)` turns one run's `json` document (schemas/json.schema.json) into a `RunResult`
every reporter reads as it reads a run's own: each check with its status, rules, broken rules,
area, warnings, policies, details, frames and baseline mark, the discovery and the baseline.
What a run sums up (counts, summary, score, the incomplete causes) and the document itself are
kept as written (`ReportedResult`), so a merged `json` report holds each run's document as the
run wrote it, and the other reports say what the run's own said. The wire log is not in a
report: a reported result has none (`wire` is None; the html report draws no timeline for it).

Anything that is not such a document is a `NotAReport` naming what is wrong (the json-summary
report is a report of its own kind: it lacks what the others are rebuilt from).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from tasks_conformance.core.baseline_marks import BaselineEntry, BaselineMark, BaselineReport
from tasks_conformance.core.result import CheckResult, CheckWarning, Discovery, IncompleteCause, RunResult
from tasks_conformance.core.wires import Wire

_OUTCOMES = ("passed", "failed", "incomplete")
_STATUSES = ("passed", "failed", "skipped")
_RUN_KEYS = ("outcome", "target", "durationMs", "discovery", "checks", "counts", "summary", "incompleteCauses")
_CHECK_KEYS = ("id", "category", "title", "requirementIds", "status", "message", "warnings", "policies")


class NotAReport(ValueError):
    """The document is not a report this version reads; the text says why, in a few words."""


@dataclass
class ReportedResult(RunResult):
    """A RunResult read from its json document; its sums are the document's."""

    document: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @property
    def score(self) -> int | None:
        value = self.document.get("score")
        return value if isinstance(value, int) and not isinstance(value, bool) else None

    @property
    def summary(self) -> str:
        return str(self.document["summary"])

    @property
    def incompleteCauses(self) -> list[IncompleteCause]:  # named as the JSON field
        return [IncompleteCause(str(c["cause"]), str(c["fix"]), tuple(str(i) for i in c["checks"]))
                for c in self.document["incompleteCauses"]]

    def counts(self) -> dict[str, int]:
        return {str(k): int(v) for k, v in self.document["counts"].items()}

    def to_json(self) -> dict[str, Any]:
        return self.document


def _need(cond: bool, what: str) -> None:
    if not cond:
        raise NotAReport(what)


def _strings(value: Any, what: str) -> list[str]:
    _need(isinstance(value, list) and all(isinstance(v, str) for v in value), f"{what} is not a list of strings")
    return list(value)


def reported(doc: Any) -> ReportedResult:
    """The result of one run from its `json` document; a NotAReport when it is none."""
    _need(isinstance(doc, Mapping), "not a JSON object")
    if doc.get("kind") == "tasks-conformance":
        raise NotAReport("a json-summary report (merge reads the json reporter's reports: --reporter json=FILE)")
    missing = [k for k in _RUN_KEYS if k not in doc]
    _need(not missing, f"no {missing[0] if missing else ''} (not a tasks-conformance json report)")
    _need(doc["outcome"] in _OUTCOMES, f"outcome {str(doc['outcome'])[:20]!r} is not one of {', '.join(_OUTCOMES)}")
    checks = doc["checks"]
    _need(isinstance(checks, list), "checks is not a list")
    _need(isinstance(doc["incompleteCauses"], list) and isinstance(doc["counts"], Mapping)
          and isinstance(doc["summary"], str), "its counts, summary or incompleteCauses have the wrong shape")
    try:
        parsed = [_check(c) for c in checks]
        for cause in doc["incompleteCauses"]:
            _strings(cause["checks"], "a cause's checks")
            str(cause["cause"] + cause["fix"])
        counts = {str(k): int(v) for k, v in doc["counts"].items()}
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        if isinstance(exc, NotAReport):
            raise
        raise NotAReport(f"a check or a cause has the wrong shape ({type(exc).__name__}: {str(exc)[:80]})") from None
    _need("total" in counts, "its counts have no total")
    return ReportedResult(
        outcome=doc["outcome"], target=str(doc["target"]), durationMs=_int(doc["durationMs"]),
        discovery=_discovery(doc["discovery"]), checks=parsed,
        incompleteReason=doc.get("incompleteReason") if isinstance(doc.get("incompleteReason"), str) else None,
        interrupted=doc.get("interrupted") is True, toolVersion=str(doc.get("toolVersion", "")),
        profile=str(doc.get("profile", "")), startedAt=str(doc.get("startedAt") or ""),
        baseline=_baseline(doc.get("baseline")), document=dict(doc),
    )


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _check(doc: Any) -> CheckResult:
    _need(isinstance(doc, Mapping), "a check is not an object")
    missing = [k for k in _CHECK_KEYS if k not in doc]
    _need(not missing, f"a check has no {missing[0] if missing else ''}")
    rules = doc.get("requirements", [])
    # Schema 1 listed the requirement ids under `requirements`; schema 2 has objects there.
    _need(isinstance(rules, list) and all(isinstance(r, Mapping) for r in rules),
          "a report of json schema version 1 (its requirements are ids; this version reads version 2)")
    status = doc["status"]
    _need(status in _STATUSES, f"a check's status {str(status)[:20]!r} is not one of {', '.join(_STATUSES)}")
    skip = doc.get("skipReason")
    _need(skip in (None, "not-applicable", "could-not-run"), f"a check's skipReason {str(skip)[:30]!r} is unknown")
    details = doc.get("details", {})
    mark = doc.get("baseline")
    return CheckResult(
        id=str(doc["id"]), category=str(doc["category"]), title=str(doc["title"]),
        description=str(doc.get("description", "")), requirements=_strings(doc["requirementIds"], "requirementIds"),
        status=status, skipReason=skip, message=str(doc["message"]),
        warnings=[CheckWarning(w) for w in _strings(doc["warnings"], "warnings")],
        evidence=[e for e in doc.get("evidence", []) if isinstance(e, int)],
        details=dict(details) if isinstance(details, Mapping) else {}, durationMs=_int(doc.get("durationMs", 0)),
        frames=_strings(doc.get("evidenceFrames", []), "evidenceFrames"),
        baseline=BaselineMark(mark["state"], str(mark["reason"]), mark.get("era"), mark.get("expires"))
        if isinstance(mark, Mapping) else None,
        broken=_strings(doc.get("brokenRequirementIds", []), "brokenRequirementIds"),
        area=str(doc.get("area") or doc["category"]),
        # The policies of the message and of every warning, once each: where each came from is
        # not in the document, and every report lists them together.
        message_policies=[str(p["id"]) for p in doc["policies"]],
    )


def _discovery(doc: Any) -> Discovery:
    _need(isinstance(doc, Mapping), "discovery is not an object")
    wire = doc.get("wire", "none")
    _need(wire in {str(w) for w in Wire}, f"discovery.wire {str(wire)[:20]!r} is unknown")

    def opt(key: str, kind: type) -> Any:
        value = doc.get(key)
        return value if isinstance(value, kind) and not isinstance(value, bool) else None

    roles = doc.get("roles")
    return Discovery(protocolVersion=opt("protocolVersion", str), wire=Wire(wire), toolCount=opt("toolCount", int),
                     taskCapableToolCount=opt("taskCapableToolCount", int), probedTool=opt("probedTool", str),
                     probedToolReason=opt("probedToolReason", str), createdTaskId=opt("createdTaskId", str),
                     serverInfo=opt("serverInfo", dict), roles=dict(roles) if isinstance(roles, Mapping) else {})


def _day(value: Any) -> dt.date | None:
    try:
        return dt.date.fromisoformat(value) if isinstance(value, str) else None
    except ValueError:
        return None


def _baseline(doc: Any) -> BaselineReport | None:
    if not isinstance(doc, Mapping):
        return None
    entries = tuple((BaselineEntry(str(e["check"]), str(e["reason"]), era=e.get("era"), expires=_day(e.get("expires"))),
                     e["state"]) for e in doc.get("entries", []) if isinstance(e, Mapping))
    return BaselineReport(str(doc.get("path", "")), doc.get("strict") is True, entries)
