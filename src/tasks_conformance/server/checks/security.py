"""Security: task ids a third party cannot guess (judged by a heuristic over a few ids, policy P-30),
and tasks that only their creator's credentials reach."""

from __future__ import annotations

import itertools
import math
import re
import string
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from tasks_conformance.core.causes import by_flag, unmet
from tasks_conformance.core.result import CheckWarning
from tasks_conformance.core.verdict import Verdict, could_not_run, failed, not_applicable, passed, warn
from tasks_conformance.core.wires import Wire
from tasks_conformance.server.checks.engine.common import got, unrun
from tasks_conformance.server.checks.engine.registry import check
from tasks_conformance.server.evidence import DeclaredCall, Evidence, OtherPrincipal, TaskIds

if TYPE_CHECKING:
    # Annotations only: listing the checks must not import the JSON-RPC layer.
    from tasks_conformance.core.rpc.peer import Reply

# Below this many estimated bits in the part of the ids that varies, an id may be guessed (P-30).
MIN_BITS = 64
# A counter other clients also advance may skip a few values between our calls; a bigger step
# between every pair is no longer "obviously" sequential, only suspicious (P-30).
MAX_COUNTER_STEP = 16
_COUNTER = re.compile(r"^(.*?)(\d+)$", re.DOTALL)

TASK_ID_ENTROPY = check(
    id="tasks-task-id-entropy",
    area="security",
    category="creation",
    title="Task ids cannot be guessed: not sequential, not short",
    description=(
        "Two more tasks are created with the probe task's own declared tools/call (and cancelled); the three "
        "ids must not be obviously sequential (one prefix and a decimal counter stepping by 1 to 16: fail). "
        "Ids whose varying part carries fewer than 64 estimated bits, or whose numbers only increase, pass with "
        "a warning: from the outside the entropy can only be estimated (policy P-30). On 2025-11-25 the rule "
        "binds where tasks cannot be tied to an authorization context: a run without credentials fails "
        "sequential ids, a run with credentials only warns (policy P-31)."
    ),
    probes=(DeclaredCall, TaskIds),
    needs="task",
)


@dataclass(frozen=True)
class IdReading:
    """What a few ids, in creation order, give away."""

    sequential: bool
    increasing: bool
    varying_chars: int
    alphabet: int

    @property
    def bits(self) -> float:
        return self.varying_chars * math.log2(self.alphabet) if self.alphabet > 1 else 0.0


def _alphabet(chars: set[str]) -> int:
    """The smallest usual alphabet the characters fit (digits, hex, base36, base62, base64url)."""
    for size, pool in ((10, string.digits), (16, string.digits + "abcdef"), (16, string.digits + "ABCDEF"),
                       (36, string.digits + string.ascii_lowercase), (36, string.digits + string.ascii_uppercase),
                       (62, string.digits + string.ascii_letters), (64, string.digits + string.ascii_letters + "-_")):
        if chars <= set(pool):
            return size
    return 64 + len(chars - set(string.digits + string.ascii_letters + "-_"))


def _common_prefix(ids: list[str]) -> int:
    """How many leading characters every id shares (a time-ordered id shares its clock part)."""
    n = 0
    for chars in zip(*ids, strict=False):
        if len(set(chars)) != 1:
            break
        n += 1
    return n


def read_ids(ids: list[str]) -> IdReading:
    counters = [_COUNTER.match(i) for i in ids]
    numbers: list[int] = []
    if all(counters) and len({m.group(1) for m in counters if m}) == 1:
        numbers = [int(m.group(2)) for m in counters if m]
    steps = [b - a for a, b in itertools.pairwise(numbers)]
    prefix = _common_prefix(ids)
    parts = [i[prefix:] for i in ids]
    chars = {c for p in parts for c in p}
    if "-" in chars and _alphabet(chars - {"-"}) <= 36:
        # Dashes between digit/letter groups (a UUID) are layout, not symbols that vary.
        parts, chars = [p.replace("-", "") for p in parts], chars - {"-"}
    varying = min(len(p) for p in parts)
    return IdReading(
        sequential=bool(steps) and all(1 <= s <= MAX_COUNTER_STEP for s in steps),
        increasing=bool(steps) and all(s > 0 for s in steps),
        varying_chars=max(varying, 0), alphabet=_alphabet(chars) if chars else 1,
    )


def _shown(ids: list[str]) -> str:
    return ", ".join(repr(i[:48]) for i in ids)


@TASK_ID_ENTROPY.judge(Wire.EXTENSION, requires=("S-EXT-MUST-22",))
def task_id_entropy(ev: Evidence) -> Verdict:
    return _task_id_entropy(ev, "S-EXT-MUST-22")


@TASK_ID_ENTROPY.judge(Wire.LEGACY, requires=("S-LEG-MUST-22",))
def legacy_task_id_entropy(ev: Evidence) -> Verdict:
    # 2025-11-25 asks for secure ids only where tasks cannot be bound to an authorization context.
    # Without any credential there is none, so the rule applies; with one, the server may bind its
    # tasks to it (S-LEG-MUST-21, judged by tasks-task-bound-to-principal) and a guessable id only
    # warns (policy P-31).
    verdict = _task_id_entropy(ev, "S-LEG-MUST-22")
    if verdict.status == "failed" and ev.get(TaskIds).credentials:
        return passed("the task ids can be guessed, but the run sent credentials the tasks may be bound to",
                      evidence=verdict.evidence,
                      warnings=[warn(verdict.message + "; with credentials the server may bind tasks to them "
                                     "instead (S-LEG-MUST-21; policy P-31)", "P-31")])
    return verdict


def _task_id_entropy(ev: Evidence, rule: str) -> Verdict:
    rec = ev.get(TaskIds)
    seqs = [s for r in rec.calls for s in r.seqs()]
    if not rec.ran:
        return could_not_run(unrun(rec, "no further tasks were created"))
    if len(rec.ids) < 2:
        why = rec.calls[0].describe() if rec.calls else "nothing"
        return could_not_run(unmet(f"the further declared tools/call created no task (it got {why}), so there is "
                                   "only one task id to look at",
                                   "name a tool that runs as a task with --tool-name every time it is called"),
                             evidence=seqs)
    ids = rec.ids
    if len(set(ids)) < len(ids):
        return failed(f"different tasks got the same id ({_shown(ids)}): an id shared by tasks is known to anyone "
                      f"who saw one of them ({rule})", broken=(rule,), evidence=seqs,
                      details={"expected": "distinct unguessable ids", "actual": ids})
    reading = read_ids(ids)
    if reading.sequential:
        return failed(f"the task ids are sequential ({_shown(ids)}, created one after the other): the next one can "
                      f"be guessed, and every task enumerated ({rule})", broken=(rule,), evidence=seqs,
                      details={"expected": "unguessable ids", "actual": ids})
    warnings: list[CheckWarning] = []
    if reading.increasing:
        warnings.append(warn(f"the task ids end in a number that grows with each task ({_shown(ids)}); ids derived "
                             f"from a counter or a clock can be guessed ({rule}, policy P-30)", "P-30"))
    if reading.bits < MIN_BITS:
        warnings.append(warn(f"the part of the task ids that varies is {reading.varying_chars} characters of a "
                             f"{reading.alphabet}-symbol alphabet, about {reading.bits:.0f} bits, under {MIN_BITS} "
                             f"({_shown(ids)}); such ids may be guessed ({rule}, policy P-30)", "P-30"))
    return passed(f"{len(ids)} task ids, none sequential; about {reading.bits:.0f} bits vary between them",
                  evidence=seqs, warnings=warnings)


TASK_BOUND_TO_PRINCIPAL = check(
    id="tasks-task-bound-to-principal",
    area="security",
    category="lifecycle",
    title="Another principal can neither read, update nor cancel the task",
    description=(
        "With --other-access-token (or --other-header), the probe task is asked for with the second principal's "
        "credentials instead of the main ones, on an HTTP connection of its own (on 2025-11-25 in a session of its "
        "own): tasks/get, tasks/update (extension) and tasks/cancel must all be refused (an error, or HTTP 403). "
        "Not applicable without a second principal, over stdio, TCP and Unix sockets, and when the server answers "
        "a request sent without any credentials (it authenticates no one)."
    ),
    probes=(DeclaredCall, OtherPrincipal),
    transports=("http",),
    needs="task",
)


def _refused_outright(reply: Reply) -> bool:
    """HTTP 401: the credentials were not accepted at all, which says nothing about the task."""
    return reply.status == 401


def _bound_to_principal(rule: str) -> Callable[[Evidence], Verdict]:
    """The judge of one wire, citing that wire's rule (the same judgement on both)."""

    def judge(ev: Evidence) -> Verdict:
        return task_bound_to_principal(ev, rule)

    return judge


def task_bound_to_principal(ev: Evidence, rule: str) -> Verdict:
    rec = ev.get(OtherPrincipal)
    if not rec.ran:
        if rec.not_run and rec.not_run.startswith("no second principal"):
            return not_applicable(f"{rec.not_run}; pass the credentials of another principal to test task "
                                  "authorization")
        return could_not_run(unrun(rec, "the second principal's requests were not sent"))
    replies = [r for r in (rec.initialize, *rec.replies.values()) if r is not None]
    seqs = [s for r in replies for s in r.seqs()]
    if rec.anonymous is not None and rec.anonymous.ok:
        # No credential is needed for anything: the server authenticates no one, so there are
        # no principals whose tasks it could keep apart (the rule is about checking them).
        what = "initialize" if rec.initialize is not None else "tools/list"
        return not_applicable(f"the server answered a {what} sent without any credentials, so it authenticates no "
                              f"one and has no principals to keep tasks apart; {rule} applies to a server that "
                              "checks credentials", evidence=[*rec.anonymous.seqs(), *seqs])
    if any(_refused_outright(r) for r in replies):
        return could_not_run(by_flag("the server refused the second principal's credentials outright (HTTP 401), so "
                                     "it could not be seen whether tasks are bound to who created them",
                                     "give the credentials of another valid principal (--other-access-token or "
                                     "--other-header)"), evidence=seqs)
    if rec.initialize is not None and not rec.initialize.ok:
        return could_not_run(got(f"the second principal's initialize got {rec.initialize.describe()}", rec.initialize,
                                 fix="give the credentials of another valid principal (--other-access-token)"),
                             evidence=seqs)
    leaks = [f"{method} got a result" for method, r in rec.replies.items() if r.ok]
    unsure = [f"{method}: {r.describe()}" for method, r in rec.replies.items()
              if not r.answered and r.status not in (401, 403, 404)]
    if leaks:
        return failed(f"with another principal's credentials, {', '.join(leaks)} for the task the main credentials "
                      f"created: each task-related request must be checked against who may see the task ({rule})",
                      broken=(rule,), evidence=seqs,
                      details={"expected": "refused (an error, or HTTP 403)", "actual": leaks})
    if unsure:
        return could_not_run(by_flag("the second principal's requests got no answer: " + "; ".join(unsure),
                                     "check that the server stays reachable, or raise --timeout"), evidence=seqs)
    how = ", ".join(f"{m} {r.describe() if r.answered else f'HTTP {r.status}'}" for m, r in rec.replies.items())
    return passed(f"the second principal was refused the task: {how}", evidence=seqs)


TASK_BOUND_TO_PRINCIPAL.judge(Wire.EXTENSION, requires=("S-EXT-MUST-23",))(_bound_to_principal("S-EXT-MUST-23"))
TASK_BOUND_TO_PRINCIPAL.judge(Wire.LEGACY, requires=("S-LEG-MUST-21",))(_bound_to_principal("S-LEG-MUST-21"))
