"""The result model: the contract every reporter reads.

Plain dataclasses with no heavy imports, so reporters, the CLI and tests can use them cheaply.
`to_json()` produces the exact JSON field names CI users already parse.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Final, Literal

from tasks_conformance.profiles import DEFAULT_PROFILE, profile_id

Status = Literal["passed", "failed", "skipped"]
SkipReason = Literal["not-applicable", "could-not-run"]
Outcome = Literal["passed", "failed", "incomplete"]
Wire = Literal["legacy", "extension", "none"]

EXIT_CODES: dict[str, int] = {"passed": 0, "failed": 1, "incomplete": 3}
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130

# Where a warning's `policy P-NN` is explained: a path relative to the repository root, so that
# it resolves on any host (GitHub, a fork, a local clone). Each policy section has the anchor p-nn.
POLICIES_DOC: Final = "docs/policies.md"
_POLICY = re.compile(r"(?<![\w-])P-(\d{2})(?![\w-])")


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
    """A policy of docs/policies.md that a check's message or warning cites."""

    id: str  # P-NN
    url: str  # docs/policies.md#p-nn

    def to_json(self) -> dict[str, str]:
        return {"id": self.id, "url": self.url}


def rule_refs(ids: list[str]) -> list[RuleRef]:
    """The registry entries of `ids`, in order (requirements.toml is read once per process)."""
    from tasks_conformance.requirements import load

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


def policy_refs(*texts: str) -> list[PolicyRef]:
    """Every `P-NN` the texts cite, once each, in order of first mention."""
    seen: dict[str, None] = {}
    for text in texts:
        seen.update(dict.fromkeys(f"P-{m.group(1)}" for m in _POLICY.finditer(text)))
    return [PolicyRef(p, policy_url(p)) for p in seen]


@dataclass
class Discovery:
    protocolVersion: str | None = None
    wire: Wire = "none"
    toolCount: int | None = None
    taskCapableToolCount: int | None = None
    probedTool: str | None = None
    probedToolReason: str | None = None
    createdTaskId: str | None = None
    serverInfo: dict[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "protocolVersion": self.protocolVersion,
            "wire": self.wire,
            "toolCount": self.toolCount,
            "taskCapableToolCount": self.taskCapableToolCount,
            "probedTool": self.probedTool,
            "probedToolReason": self.probedToolReason,
            "createdTaskId": self.createdTaskId,
            "serverInfo": self.serverInfo,
        }


@dataclass
class CheckResult:
    id: str
    category: str
    title: str
    description: str
    requirements: list[str]
    status: Status
    skipReason: SkipReason | None = None
    message: str = ""
    warnings: list[str] = field(default_factory=list)
    evidence: list[int] = field(default_factory=list)
    details: dict[str, Any] = field(default_factory=dict)
    durationMs: int = 0
    # Frames the verdict rests on, as text (already redacted, bounded); filled by the runner. The
    # json report writes them as `evidenceFrames`, JUnit in <system-out>, human under -v.
    frames: list[str] = field(default_factory=list)

    @property
    def rules(self) -> list[RuleRef]:
        """The requirements this check judged, resolved in requirements.toml."""
        return rule_refs(self.requirements)

    @property
    def policies(self) -> list[PolicyRef]:
        """The policies its message and warnings cite."""
        return policy_refs(self.message, *self.warnings)

    @property
    def bucket(self) -> str:
        """passed | failed | not-applicable | could-not-run: the one classification reporters use."""
        if self.status == "skipped":
            return self.skipReason or "could-not-run"
        return self.status

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "category": self.category,
            "title": self.title,
            "description": self.description,
            # Objects since json-summary schema 2; `requirementIds` keeps the plain id list.
            "requirements": [r.to_json() for r in self.rules],
            "requirementIds": list(self.requirements),
            "status": self.status,
            "skipReason": self.skipReason,
            "message": self.message,
            "warnings": list(self.warnings),
            "policies": [p.to_json() for p in self.policies],
            "evidence": list(self.evidence),
            "evidenceFrames": list(self.frames),
            "details": self.details,
            "durationMs": self.durationMs,
        }


@dataclass
class CategoryCounts:
    total: int = 0
    passed: int = 0
    failed: int = 0
    skipped: int = 0
    couldNotRun: int = 0

    def to_json(self) -> dict[str, int]:
        return {
            "total": self.total,
            "passed": self.passed,
            "failed": self.failed,
            "skipped": self.skipped,
            "couldNotRun": self.couldNotRun,
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

    @property
    def score(self) -> int | None:
        """0–100, defined in profiles.score; None when no check was applicable."""
        from tasks_conformance.profiles import score

        return score(self.checks)

    @property
    def passed(self) -> bool:
        return self.outcome == "passed"

    def counts(self) -> dict[str, int]:
        buckets = [c.bucket for c in self.checks]
        return {
            "total": len(buckets),
            "passed": buckets.count("passed"),
            "failed": buckets.count("failed"),
            "couldNotRun": buckets.count("could-not-run"),
            "notApplicable": buckets.count("not-applicable"),
        }

    @property
    def summary(self) -> str:
        n = self.counts()
        ran = n["total"]
        text = (
            f"{n['passed']}/{ran} checks passed, {n['failed']} failed, "
            f"{n['couldNotRun']} could not run, {n['notApplicable']} not applicable"
        )
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
        return out

    def to_json(self) -> dict[str, Any]:
        return {
            "passed": self.passed,
            "outcome": self.outcome,
            "incompleteReason": self.incompleteReason,
            "interrupted": self.interrupted,
            "target": self.target,
            "toolVersion": self.toolVersion,
            "profile": self.profile,
            "score": self.score,
            "durationMs": self.durationMs,
            "summary": self.summary,
            "counts": self.counts(),
            "discovery": self.discovery.to_json(),
            "categorySummary": {k: v.to_json() for k, v in self.category_summary().items()},
            "checks": [c.to_json() for c in self.checks],
        }


def decide_outcome(checks: list[CheckResult], interrupted: bool = False) -> Outcome:
    """any failed -> failed; else any could-not-run (or an interrupted run) -> incomplete; else passed."""
    if any(c.status == "failed" for c in checks):
        return "failed"
    if interrupted or any(c.bucket == "could-not-run" for c in checks):
        return "incomplete"
    return "passed"


def incomplete_reason(checks: list[CheckResult], interrupted: bool = False) -> str | None:
    blocked = [c for c in checks if c.bucket == "could-not-run"]
    parts: list[str] = []
    if interrupted:
        parts.append("the run was interrupted before every check could finish")
    if blocked:
        parts.append("; ".join(f"{c.id}: {c.message}" for c in blocked))
    if not parts:
        return None
    return "Could not establish conformance — " + "; ".join(parts)
