"""The result model: the contract every reporter reads.

Plain dataclasses with no heavy imports, so reporters, the CLI and tests can use them cheaply.
`to_json()` produces the exact JSON field names CI users already parse.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Any, Final, Literal

from tasks_conformance.core.causes import Cause

# The causes of an incomplete run are part of the result model, in a module of their own
# (incomplete.py); their names are imported from here too.
from tasks_conformance.core.incomplete import (
    IncompleteCause,
    causes_text,
    incomplete_causes,
    incomplete_reason,
    nothing_tested,
)
from tasks_conformance.core.profiles import DEFAULT_PROFILE, profile_id
from tasks_conformance.core.wires import Wire

if TYPE_CHECKING:
    from tasks_conformance.core.baseline_marks import BaselineMark, BaselineReport
    from tasks_conformance.core.scenario_record import ScenarioRecord
    from tasks_conformance.core.wirelog import WireLog

__all__ = ["EXIT_CODES", "EXIT_INTERRUPTED", "EXIT_USAGE", "POLICIES_DOC", "CategoryCounts", "CheckResult",
           "CheckStatus", "CheckWarning", "Discovery", "IncompleteCause", "Outcome", "PolicyRef", "RuleRef",
           "RunResult", "SkipReason", "causes_text", "decide_outcome", "incomplete_causes", "incomplete_reason",
           "policy_refs", "policy_url", "rule_refs"]


class CheckStatus(StrEnum):
    """What a check concluded. A StrEnum: equal to its value ("passed" == CheckStatus.PASSED) and
    written as it in every JSON document."""

    PASSED = "passed"
    FAILED = "failed"
    SKIPPED = "skipped"  # not applicable, could not run, or deferred: `skipReason` says which


# deferred: what the check found broken is a rule another check owns and fails too; that check
# reports it (one defect, one failure), and this one names it (`deferredTo`).
SkipReason = Literal["not-applicable", "could-not-run", "deferred"]
Outcome = Literal["passed", "failed", "incomplete"]

EXIT_CODES: dict[str, int] = {"passed": 0, "failed": 1, "incomplete": 3}
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130

# Where a cited policy P-NN is explained: a path relative to the repository root, so that it
# resolves on any host (GitHub, a fork, a local clone). Each policy section has the anchor p-nn.
POLICIES_DOC: Final = "docs/policies.md"


@dataclass(frozen=True)
class RuleRef:
    """One requirement a check judges, as reports show it: id, level, the rule, the spec link."""

    id: str
    level: str  # MUST | MUST NOT | SHOULD | SHOULD NOT | MAY; "unknown" for an id not in the registry
    text: str
    url: str

    def to_json(self) -> dict[str, str]:
        return {"id": self.id, "level": self.level, "text": self.text, "url": self.url}


@dataclass(frozen=True)
class PolicyRef:
    """A policy of docs/policies.md that a check's message or a warning cites."""

    id: str  # P-NN
    url: str  # docs/policies.md#p-nn

    def to_json(self) -> dict[str, str]:
        return {"id": self.id, "url": self.url}


def rule_refs(ids: list[str]) -> list[RuleRef]:
    """The registry entries of `ids`, in order (requirements.toml is read once per process)."""
    from tasks_conformance.core.requirements import load

    registry = load()
    out: list[RuleRef] = []
    for rid in ids:
        req = registry.get(rid)
        if req is None:
            out.append(RuleRef(rid, "unknown", "not in the requirements registry", ""))
        else:
            out.append(RuleRef(req.id, req.level, req.text, req.url))
    return out


def policy_url(policy_id: str) -> str:
    return f"{POLICIES_DOC}#{policy_id.lower()}"


def policy_refs(ids: Iterable[str]) -> list[PolicyRef]:
    """The policies `ids` name (P-NN), once each, in order."""
    return [PolicyRef(p, policy_url(p)) for p in dict.fromkeys(ids)]


@dataclass(frozen=True)
class CheckWarning:
    """One warning of a check: the sentence for people, and the policies it cites as data.

    The sentence names them too ("… (policy P-15)"); reports link `policies`, never the words.
    (Not a Python warning category: a plain value.)"""

    text: str
    policies: tuple[str, ...] = ()  # ids of docs/policies.md, P-NN

    @property
    def refs(self) -> list[PolicyRef]:
        return policy_refs(self.policies)

    def __str__(self) -> str:
        return self.text


@dataclass
class Discovery:
    protocolVersion: str | None = None
    wire: Wire = Wire.NONE  # its value in reports: "legacy", "extension" or "none"
    toolCount: int | None = None
    taskCapableToolCount: int | None = None
    probedTool: str | None = None
    probedToolReason: str | None = None
    createdTaskId: str | None = None
    serverInfo: dict[str, Any] | None = None
    # Probe roles (roles.py): role -> {tool, source, reason}; which tool took which role and why.
    roles: dict[str, dict[str, str | None]] = field(default_factory=dict)
    wires: tuple[str, ...] = ()  # a run that played several wires (a client over both eras): them; `wire` is none

    @property
    def wire_words(self) -> str:
        """In words: "extension wire", "legacy and extension wires" (a run over both), "no tasks wire"."""
        return (f"{' and '.join(self.wires)} wires" if self.wires
                else "no tasks wire" if self.wire == "none" else f"{self.wire} wire")

    def to_json(self) -> dict[str, Any]:
        return {
            "protocolVersion": self.protocolVersion,
            "wire": self.wire,
            **({"wires": list(self.wires)} if self.wires else {}),
            "toolCount": self.toolCount,
            "taskCapableToolCount": self.taskCapableToolCount,
            "probedTool": self.probedTool,
            "probedToolReason": self.probedToolReason,
            "createdTaskId": self.createdTaskId,
            "serverInfo": self.serverInfo,
            "roles": self.roles,
        }


@dataclass
class CheckResult:
    id: str
    category: str
    title: str
    description: str
    requirements: list[str]
    status: CheckStatus  # a plain "passed"/"failed"/"skipped" given by hand becomes the enum
    skipReason: SkipReason | None = None
    message: str = ""
    warnings: list[CheckWarning] = field(default_factory=list)
    evidence: list[int] = field(default_factory=list)
    details: dict[str, Any] = field(default_factory=dict)
    durationMs: int = 0
    # Frames the verdict rests on, as text (already redacted, bounded); filled by the runner. The
    # json report writes them as `evidenceFrames`, JUnit in <system-out>, human under -v.
    frames: list[str] = field(default_factory=list)
    # What a --baseline entry made of this result (baseline.py): known, expired, fixed, or None.
    baseline: BaselineMark | None = None
    # A failure's broken requirement ids (of `requirements`; empty: all), typed, not in the JSON.
    broken: list[str] = field(default_factory=list)
    # The spec area the check belongs to (the JUnit classname); "" for a result made by hand.
    area: str = ""
    # A could-not-run's typed cause (causes.py): what the fix list and the cause pointers read. A
    # not-applicable check's, where the user can make it apply (a run that tested nothing says it).
    cause: Cause | None = None
    # The policy ids the message cites (each warning carries its own); typed, like `broken`.
    message_policies: list[str] = field(default_factory=list)
    # A deferral (skipReason "deferred"): the check that owns the rule this one found broken and
    # fails it too; None otherwise. `details.deferredTo` maps each deferred rule to its owner.
    deferredTo: str | None = None

    def __post_init__(self) -> None:
        self.status = CheckStatus(self.status)

    @property
    def section(self) -> str:
        """The area reports group it by (the JUnit classname, the HTML and markdown sections): its
        spec area, or its category for a result made by hand without one."""
        return self.area or self.category

    @property
    def rules(self) -> list[RuleRef]:
        """The requirements this check judged, resolved in requirements.toml."""
        return rule_refs(self.requirements)

    @property
    def broken_rules(self) -> tuple[list[RuleRef], list[RuleRef]]:
        """(the rules this failure is about, the check's other rules)."""
        rules = self.rules
        named = [r for r in rules if r.id in self.broken]
        if not named:
            return rules, []
        return named, [r for r in rules if r.id not in self.broken]

    @property
    def policies(self) -> list[PolicyRef]:
        """The policies its message and warnings cite, once each, the message's first."""
        return policy_refs([*self.message_policies, *(p for w in self.warnings for p in w.policies)])

    @property
    def bucket(self) -> str:
        """passed | failed | known | not-applicable | could-not-run | deferred: the one
        classification reporters use. `known`: a failure a --baseline entry accepts (it does not
        fail the run). `deferred`: neither failed nor could-not-run; its owner reports the finding."""
        if self.status == "skipped":
            return self.skipReason or "could-not-run"
        if self.status == "failed" and self.baseline is not None and self.baseline.state == "known":
            return "known"
        return self.status.value

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "category": self.category,
            "title": self.title,
            "description": self.description,
            # Objects since json-summary schema 2; `requirementIds` keeps the plain id list.
            "requirements": [r.to_json() for r in self.rules],
            "requirementIds": list(self.requirements),
            "status": self.status.value,
            "skipReason": self.skipReason,
            "deferredTo": self.deferredTo,
            "message": self.message,
            "warnings": [w.text for w in self.warnings],
            "policies": [p.to_json() for p in self.policies],
            "evidence": list(self.evidence),
            "evidenceFrames": list(self.frames),
            "details": self.details,
            "durationMs": self.durationMs,
            # The area, and the rules a failure broke (none named: all), so `merge` rebuilds every report.
            "area": self.section,
            "brokenRequirementIds": [r.id for r in self.broken_rules[0]] if self.status == "failed" else [],
            **({"baseline": self.baseline.to_json()} if self.baseline is not None else {}),
        }


@dataclass
class CategoryCounts:
    total: int = 0
    passed: int = 0
    failed: int = 0
    skipped: int = 0
    couldNotRun: int = 0  # part of skipped
    deferred: int = 0  # part of skipped

    def to_json(self) -> dict[str, int]:
        return {
            "total": self.total,
            "passed": self.passed,
            "failed": self.failed,
            "skipped": self.skipped,
            "couldNotRun": self.couldNotRun,
            "deferred": self.deferred,
        }


@dataclass
class RunResult:
    outcome: Outcome
    target: str
    durationMs: int
    discovery: Discovery
    checks: list[CheckResult]
    incompleteReason: str | None = None
    interrupted: bool = False
    toolVersion: str = ""
    profile: str = field(default_factory=lambda: profile_id(DEFAULT_PROFILE))  # versioned id (profiles.py)
    # When the run started, UTC, "YYYY-MM-DDTHH:MM:SS" (JUnit's timestamp); "" for a hand-made result.
    startedAt: str = ""
    # The --baseline file as applied to this run (baseline.py); None without one.
    baseline: BaselineReport | None = None
    # Every frame of the run in its lane, for the html reporter; in memory only (None: made by hand).
    wire: WireLog | None = field(default=None, repr=False, compare=False)
    scenarios: tuple[ScenarioRecord, ...] = ()  # a client run: what the client did in each scenario

    @property
    def score(self) -> int | None:
        """0–100, defined in profiles.score; None when no check was applicable."""
        from tasks_conformance.core.profiles import score

        return score(self.checks)

    @property
    def passed(self) -> bool:
        return self.outcome == "passed"

    def counts(self) -> dict[str, int]:
        buckets = [c.bucket for c in self.checks]
        out = {
            "total": len(buckets),
            "passed": buckets.count("passed"),
            "failed": buckets.count("failed"),
            "couldNotRun": buckets.count("could-not-run"),
            "notApplicable": buckets.count("not-applicable"),
            "deferred": buckets.count("deferred"),
        }
        # Only with a baseline: without one, the documents stay exactly what they were.
        if self.baseline is not None:
            out["known"] = buckets.count("known")  # failures the baseline accepts (not in `failed`)
        return out

    @property
    def summary(self) -> str:
        n = self.counts()
        ran = n["total"]
        text = (
            f"{n['passed']}/{ran} checks passed, {n['failed']} failed, "
            f"{n['couldNotRun']} could not run, {n['notApplicable']} not applicable"
        )
        if n["deferred"]:
            text += f", {n['deferred']} deferred"
        if n.get("known"):
            text += f", {n['known']} known (baseline)"
        fixed = self.baseline.count("fixed") if self.baseline is not None else 0
        if fixed:
            text += f", {fixed} baseline entr{'y' if fixed == 1 else 'ies'} fixed"
        return text + (" (interrupted)" if self.interrupted else "")

    def category_summary(self) -> dict[str, CategoryCounts]:
        out: dict[str, CategoryCounts] = {}
        for c in self.checks:
            cc = out.setdefault(c.category, CategoryCounts())
            cc.total += 1
            if c.status == "passed":
                cc.passed += 1
            elif c.status == "failed":
                cc.failed += 1
            else:
                cc.skipped += 1
                if c.skipReason == "could-not-run":
                    cc.couldNotRun += 1
                elif c.skipReason == "deferred":
                    cc.deferred += 1
        return out

    @property
    def headline(self) -> str:
        """The word reports lead with: the outcome, or "interrupted" when SIGINT/SIGTERM ended the
        run (`outcome` stays failed or incomplete, as the JSON says; the exit code is 130)."""
        return "interrupted" if self.interrupted else self.outcome

    @property
    def incompleteCauses(self) -> list[IncompleteCause]:  # named as the JSON field
        """Why checks could not run, each cause once, whatever the outcome: a failed run whose
        other checks could not run lists them too. Empty when every check ran and the run was
        not interrupted."""
        return incomplete_causes(self.checks, self.interrupted, self.target)

    def cause_pointers(self, where: str) -> dict[str, str]:
        """check id -> "see the cause below" (or "see cause N below") for each check blocked by a
        cause it shares with another: reports state that cause once, not in every row. `where`:
        "below" or "above", where the report lists the causes."""
        causes = self.incompleteCauses
        out: dict[str, str] = {}
        for n, cause in enumerate(causes, 1):
            if len(cause.checks) > 1:
                label = f"see the cause {where}" if len(causes) == 1 else f"see cause {n} {where}"
                out.update(dict.fromkeys(cause.checks, label))
        return out

    def to_json(self) -> dict[str, Any]:
        return {
            "passed": self.passed,
            "outcome": self.outcome,
            "incompleteReason": self.incompleteReason,
            "incompleteCauses": [c.to_json() for c in self.incompleteCauses],
            "interrupted": self.interrupted,
            "target": self.target,
            "toolVersion": self.toolVersion,
            "profile": self.profile,
            "score": self.score,
            "durationMs": self.durationMs,
            **({"startedAt": self.startedAt} if self.startedAt else {}),
            "summary": self.summary,
            "counts": self.counts(),
            "discovery": self.discovery.to_json(),
            "categorySummary": {k: v.to_json() for k, v in self.category_summary().items()},
            "checks": [self._check_json(c) for c in self.checks],
            **({"baseline": self.baseline.to_json()} if self.baseline is not None else {}),
            **({"scenarios": [s.to_json() for s in self.scenarios]} if self.scenarios else {}),
        }

    def _check_json(self, check: CheckResult) -> dict[str, Any]:
        """A check's document; with a baseline, every check has `baseline` (null when no entry names it)."""
        doc = check.to_json()
        if self.baseline is not None:
            doc.setdefault("baseline", None)
        return doc


def decide_outcome(checks: list[CheckResult], interrupted: bool = False) -> Outcome:
    """any failed -> failed; else any could-not-run (or an interrupted run), or nothing tested
    (no check passed or failed: policy P-46) -> incomplete; else passed. A known failure
    (accepted by a --baseline entry) does not fail the run; a deferral neither fails it nor makes
    it incomplete (its owner's verdict does)."""
    if any(c.bucket == "failed" for c in checks):
        return "failed"
    if interrupted or any(c.bucket == "could-not-run" for c in checks) or nothing_tested(checks):
        return "incomplete"
    return "passed"
