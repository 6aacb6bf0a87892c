"""The check registry: definitions only, read-only once the checks are imported.

A check is an id, a title, a description, the probes whose records it reads, a precondition,
and one judge per wire it applies to; each judge names the requirements it judges. Run state
lives in the runner.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from tasks_conformance.core.areas import AREAS
from tasks_conformance.core.verdict import Verdict
from tasks_conformance.core.wires import Wire
from tasks_conformance.settings.role_flags import ROLES

if TYPE_CHECKING:
    from tasks_conformance.server.evidence import Evidence
    from tasks_conformance.server.evidence.records import ProbeRecord

Need = Literal["wire", "tool", "task", "terminal"]
NEEDS: tuple[Need, ...] = ("wire", "tool", "task", "terminal")


CheckFn = Callable[["Evidence"], Verdict]


@dataclass(frozen=True)
class Judge:
    fn: CheckFn
    requirements: tuple[str, ...]


@dataclass(frozen=True)
class CheckSpec:
    id: str
    area: str  # the spec area it judges (core/areas.py): its JUnit classname and report section
    category: str
    title: str
    description: str
    probes: tuple[str, ...]  # the probe records the judges read (and the runner plans)
    judges: dict[Wire, Judge]  # filled by @spec.judge while the check's module is imported
    transports: frozenset[str] | None = None  # None: any transport
    needs: Need | None = None  # the precondition the runner checks before judging
    # The probe role (roles.py) whose tool the check needs beyond the task tool; without one the
    # check is not-applicable (standard profile) or could-not-run (full).
    role: str | None = None
    # The MAY requirements whose behaviour the check accepts: a server that uses the freedom
    # must not fail it. Listed so the coverage matrix can show each freedom as honoured.
    permits: tuple[str, ...] = ()
    # The rules this check owns among those several checks judge: when two checks fail one rule on
    # the same observation, the owner fails and the other defers to it (ownership.py). A rule
    # only one check judges is that check's without saying so.
    owns: tuple[str, ...] = ()

    @property
    def probe_role(self) -> str | None:
        """The role whose tool the check's traffic uses: its own, or the task role when it needs
        the task tool; None when it needs no tool."""
        if self.role is not None:
            return self.role
        return "task" if self.needs in ("tool", "task", "terminal") else None

    @property
    def wires(self) -> frozenset[Wire]:
        return frozenset(self.judges)

    @property
    def requirements(self) -> dict[Wire, tuple[str, ...]]:
        return {w: j.requirements for w, j in self.judges.items()}

    def requirement_ids(self, wire: Wire) -> list[str]:
        """The requirements judged on a wire; on a wire the check does not judge, all of them."""
        if wire in self.judges:
            return list(self.judges[wire].requirements)
        seen: dict[str, None] = {}
        for j in self.judges.values():
            seen.update(dict.fromkeys(j.requirements))
        return list(seen)

    def judge(self, *wires: Wire, requires: tuple[str, ...]) -> Callable[[CheckFn], CheckFn]:
        """Register the judge of this check on the given wires, with the requirements it judges."""
        def register(fn: CheckFn) -> CheckFn:
            for w in wires:
                if w in self.judges:
                    raise ValueError(f"check {self.id!r} has two judges for the {w} wire")
                self.judges[w] = Judge(fn, requires)
            return fn

        return register

    def judge_each(self, requires: Mapping[Wire, tuple[str, ...]]) -> Callable[[CheckFn], CheckFn]:
        """One judge for several wires, each judging its own requirements (the judge asks
        `ev.dialect` for what differs, such as field names)."""
        def register(fn: CheckFn) -> CheckFn:
            for wire, ids in requires.items():
                self.judge(wire, requires=ids)(fn)
            return fn

        return register


CHECKS: dict[str, CheckSpec] = {}


def check(
    *, id: str, area: str, category: str, title: str, description: str,
    probes: tuple[type[ProbeRecord], ...] = (), transports: tuple[str, ...] | None = None, needs: Need | None = None,
    role: str | None = None, permits: tuple[str, ...] = (), owns: tuple[str, ...] = (),
) -> CheckSpec:
    if id in CHECKS:
        raise ValueError(f"check id {id!r} registered twice")
    spec = CheckSpec(
        id=id, area=area, category=category, title=title, description=description,
        probes=tuple(p.probe for p in probes),
        judges={}, transports=frozenset(transports) if transports else None, needs=needs, role=role,
        permits=tuple(permits), owns=tuple(owns),
    )
    CHECKS[id] = spec
    return spec


# The probes a precondition reads, so a check with that need must declare them.
NEED_PROBES: Mapping[Need, tuple[str, ...]] = {
    "wire": (), "tool": (), "task": ("declared-call",), "terminal": ("declared-call", "poll"),
}


def judged_by(checks: Mapping[str, CheckSpec]) -> dict[str, list[str]]:
    """Requirement id -> the checks that judge it (on any wire), in registry order."""
    out: dict[str, list[str]] = {}
    for spec in checks.values():
        for r in dict.fromkeys(r for j in spec.judges.values() for r in j.requirements):
            out.setdefault(r, []).append(spec.id)
    return out


def rule_owners(checks: Mapping[str, CheckSpec]) -> dict[str, str]:
    """Requirement id -> the one check that owns it: the only check judging it, or the one of
    several that declares it in `owns` (validate() holds every shared rule to exactly one)."""
    owners: dict[str, str] = {}
    for rule, ids in judged_by(checks).items():
        claimed = [i for i in ids if rule in checks[i].owns]
        if len(ids) == 1 or len(claimed) == 1:
            owners[rule] = ids[0] if len(ids) == 1 else claimed[0]
    return owners


def _ownership_problems(checks: Mapping[str, CheckSpec]) -> list[str]:
    problems: list[str] = []
    judged = judged_by(checks)
    for spec in checks.values():
        problems += [f"{spec.id}: owns {r!r}, which it does not judge" for r in spec.owns
                     if spec.id not in judged.get(r, [])]
    for rule, ids in judged.items():
        claimed = [i for i in ids if rule in checks[i].owns]
        if len(ids) > 1 and len(claimed) != 1:
            problems.append(f"{rule}: judged by {', '.join(ids)}; exactly one must own it (check(..., owns=...)), "
                            f"{'none does' if not claimed else 'owned by ' + ', '.join(claimed)}")
    return problems


def validate(checks: Mapping[str, CheckSpec], probes: set[str], requirement_ids: set[str],
             may_ids: set[str] | None = None) -> list[str]:
    """Everything wrong with the registry, as sentences (empty when it is sound). `may_ids`, when
    given, are the MAY requirements: the only ones a check can permit."""
    problems: list[str] = []
    for spec in checks.values():
        for r in spec.permits:
            if r not in requirement_ids:
                problems.append(f"{spec.id}: permits unknown requirement {r!r}")
            elif may_ids is not None and r not in may_ids:
                problems.append(f"{spec.id}: permits {r!r}, which is not a MAY (a check judges it instead)")
        if not spec.judges:
            problems.append(f"{spec.id}: no judge registered")
        if spec.area not in AREAS:
            problems.append(f"{spec.id}: unknown area {spec.area!r} (core/areas.py names them)")
        problems += [f"{spec.id}: unknown probe {p!r}" for p in spec.probes if p not in probes]
        if spec.role is not None and spec.role not in ROLES:
            problems.append(f"{spec.id}: unknown probe role {spec.role!r}")
        if spec.needs is not None and spec.needs not in NEEDS:
            problems.append(f"{spec.id}: unknown need {spec.needs!r}")
        elif spec.needs is not None:
            problems += [f"{spec.id}: needs {spec.needs} but does not declare probe {p!r}"
                         for p in NEED_PROBES[spec.needs] if p not in spec.probes]
        for wire, judge in spec.judges.items():
            if not judge.requirements and wire is not Wire.NONE:
                problems.append(f"{spec.id}: the {wire} judge names no requirement")
            problems += [f"{spec.id}: unknown requirement {r!r}" for r in judge.requirements
                         if r not in requirement_ids]
    return problems + _ownership_problems(checks)
