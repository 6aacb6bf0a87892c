"""Profiles (which checks a run judges, under a versioned id) and the 0–100 score.

A profile is a named, versioned selection of checks. Its id (`tasks-conformance/core@2026-12`)
goes into every report, so that a dashboard compares scores only between runs of one profile:
adding a check to a profile is a new revision, never a silent change of what a score means.

- `core`: the eight checks every tasks server must pass, whatever else it does.
- `standard` (the default): every check; a check whose probe role (roles.py) has no tool is
  not-applicable, so the run judges what the roles given allow.
- `full`: every check too, but a check whose role has no tool could not run, so the run is
  incomplete until the server author names the tools (`--probe ROLE=TOOL`).
- `durable`: `standard` plus the opt-in checks of a durable task store's claim (OPT_IN_CHECKS),
  which stop and start the server; no other profile runs them.

A client run has its own `CLIENT_PROFILES`, of the same names but durable, over the client checks.

`--check-id` and `--category` narrow the selection within the profile; a `--check-id` of an
opt-in check asks for it in any profile of every check.

The score is defined here once (`score`), and documented in the README. Stdlib only, cheap to
import: `--help` and `--list-checks` read the profile names.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Final, Protocol

REVISION: Final = "2026-12"

CORE_CHECKS: Final[tuple[str, ...]] = (
    "tasks-wire-resolvable",
    "tasks-declaration-hygiene",
    "tasks-result-type-discipline",
    "tasks-undeclared-creation-refused",
    "tasks-ttl-shape",
    "tasks-inline-result",
    "tasks-mcp-name-routing",
    "tasks-undeclared-capability-rejected",
)


# Checks of a claim the specification does not make (a task surviving a restart of the server):
# only the durable profile, or their --check-id, runs them.
OPT_IN_CHECKS: Final[tuple[str, ...]] = ("tasks-task-survives-restart",)


@dataclass(frozen=True)
class Profile:
    name: str
    description: str
    checks: tuple[str, ...] | None  # None: every registered check but the opt-in ones
    revision: str = REVISION
    opt_in: tuple[str, ...] = ()  # the opt-in checks it adds to the rest

    @property
    def id(self) -> str:
        """The versioned id written into every report, e.g. tasks-conformance/core@2026-12."""
        return f"tasks-conformance/{self.name}@{self.revision}"

    def includes(self, check_id: str) -> bool:
        """Whether the profile runs the check when no --check-id narrows it."""
        if check_id in OPT_IN_CHECKS:
            return check_id in self.opt_in
        return self.checks is None or check_id in self.checks

    def accepts(self, check_id: str) -> bool:
        """Whether --check-id may name it: a check the profile includes, or an opt-in check in a
        profile of every check (naming it is asking for it)."""
        return self.includes(check_id) or (check_id in OPT_IN_CHECKS and self.checks is None)


PROFILES: Final[dict[str, Profile]] = {
    "core": Profile("core", "the eight checks every tasks server must pass", CORE_CHECKS),
    "standard": Profile("standard", "every check; one whose probe role has no tool is not applicable", None),
    "full": Profile(
        "full",
        "every check; one whose probe role has no tool could not run (pass --probe ROLE=TOOL)",
        None,
    ),
    "durable": Profile(
        "durable",
        "standard, plus a task surviving a restart of the server (the claim of a durable task store; it stops and "
        "starts the server, so only with a stdio command or --server-command)",
        None, opt_in=OPT_IN_CHECKS,
    ),
}
DEFAULT_PROFILE: Final = "standard"

# A client run (`tasks-conformance client`) has profiles of the same names over the client checks,
# with ids of their own (tasks-conformance/client-core@2026-12), so that a client's score is never
# compared with a server's. `core` is the MUST rules every tasks client meets on the requests it
# sends, whatever its harness reports; `full` differs from `standard` in the checks judged from
# the harness's optional outcome line: could not run without it, instead of not applicable.
CLIENT_CORE_CHECKS: Final[tuple[str, ...]] = (
    "tasks-client-follows-task",
    "tasks-client-declares-extension",
    "tasks-client-core-meta",
    "tasks-client-routing-headers",
    "tasks-client-no-removed-methods",
    "tasks-client-legacy-task-augmentation",
    "tasks-client-legacy-fetches-result",
    "tasks-client-legacy-no-extension-wire",
)
CLIENT_PROFILES: Final[dict[str, Profile]] = {
    "core": Profile("client-core", "the client checks of the MUST rules every tasks client meets", CLIENT_CORE_CHECKS),
    "standard": Profile("client-standard", "every client check; one judged from the outcome line not applicable "
                        "without it", None),
    "full": Profile("client-full", "every client check; one judged from the outcome line could not run without it",
                    None),
}


def profile_id(name: str) -> str:
    return PROFILES[name].id


# ---------------------------------------------------------------------------------------------
# The score

# A check that judges a MUST (or MUST NOT) rule on the run's wire weighs MUST_WEIGHT; one that
# judges only SHOULD/MAY rules (or none) weighs OTHER_WEIGHT. A passed check with warnings (the
# SHOULD-level findings and spec ambiguities) loses WARNING_COST of its weight, once.
MUST_WEIGHT: Final = 2
OTHER_WEIGHT: Final = 1
WARNING_COST: Final = Fraction(1, 2)
_MUST_LEVELS: Final = frozenset({"MUST", "MUST NOT"})
_LEFT_OUT: Final = frozenset({"not-applicable", "deferred"})  # buckets the score does not count


class Rule(Protocol):
    @property
    def level(self) -> str: ...


class ScoredCheck(Protocol):
    """What the score reads of a check result (result.CheckResult has it), so that the result
    model can name its score without the two modules importing each other."""

    @property
    def bucket(self) -> str: ...
    @property
    def warnings(self) -> Sequence[object]: ...
    @property
    def rules(self) -> Sequence[Rule]: ...


def check_weight(check: ScoredCheck) -> int:
    """MUST_WEIGHT when the check judges a MUST/MUST NOT rule, else OTHER_WEIGHT."""
    return MUST_WEIGHT if any(r.level in _MUST_LEVELS for r in check.rules) else OTHER_WEIGHT


def check_points(check: ScoredCheck) -> Fraction:
    """What an applicable check earns: its weight when passed, less WARNING_COST when it warned;
    nothing when it failed or could not run."""
    if check.bucket != "passed":
        return Fraction(0)
    weight = check_weight(check)
    return weight - WARNING_COST if check.warnings else Fraction(weight)


def score(checks: Iterable[ScoredCheck]) -> int | None:
    """The 0–100 score of a run: floor(100 × Σ points / Σ weight) over the applicable checks.

    Applicable means passed, failed or could-not-run (a could-not-run check earns nothing: a run
    that could not look has not shown conformance); not-applicable checks are left out, and so
    are deferrals (the check they defer to costs the defect, once). None when no check was
    applicable. 100 only when every applicable check passed without warnings. The score never
    changes the exit code.
    """
    applicable = [c for c in checks if c.bucket not in _LEFT_OUT]
    if not applicable:
        return None
    total = sum(check_weight(c) for c in applicable)
    earned = sum((check_points(c) for c in applicable), Fraction(0))
    return math.floor(Fraction(100) * earned / total)

