"""A check's verdict, as fields: its status, the human sentence, the rules a failure broke, the
policies it cites, the frames it rests on and, for a could-not-run, the typed cause; a deferral
names the check it defers to. Both subjects' checks return one; their runners turn it into the
CheckResult the reporters read.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from tasks_conformance.core.causes import Cause, Reason, cause_of
from tasks_conformance.core.result import CheckStatus, CheckWarning


@dataclass(frozen=True)
class Verdict:
    status: CheckStatus
    message: str  # for people; nothing decides by reading it
    skip_reason: str | None = None
    warnings: tuple[CheckWarning, ...] = ()
    evidence: tuple[int, ...] = ()
    details: dict[str, Any] = field(default_factory=dict)
    blocked_by: str | None = None
    # A failure: the requirement ids it found broken; empty means every rule the judge judges.
    broken: tuple[str, ...] = ()
    # A could-not-run: why, and the one thing to change. A not-applicable verdict may carry one too:
    # what keeps the check from applying, where the user can change it (a flag to give).
    cause: Cause | None = None
    # The policies (P-NN) the message cites, as the words of the message do; each warning carries its own.
    message_policies: tuple[str, ...] = ()
    # A deferral (skip_reason "deferred"): the check that owns the rule this one found broken and
    # fails it too (one defect, one failure). Not a precondition: `blocked_by` is for could-not-run.
    deferred_to: str | None = None


Seqs = list[int] | tuple[int, ...]
# A warning: a sentence that cites no policy, or `warn(sentence, "P-NN", …)`.
Warnings = Sequence[str | CheckWarning]


def warn(text: str, *policies: str) -> CheckWarning:
    """A warning that cites `policies` (ids of docs/policies.md): the text names them in words for
    people, `warn("… (policy P-15)", "P-15")`, and reports link the ids given here."""
    return CheckWarning(text, policies)


def _warnings(warnings: Warnings) -> tuple[CheckWarning, ...]:
    return tuple(w if isinstance(w, CheckWarning) else CheckWarning(w) for w in warnings)


def passed(message: str, *, evidence: Seqs = (), warnings: Warnings = (), details: dict[str, Any] | None = None,
           policies: tuple[str, ...] = (), judged: int | None = None) -> Verdict:
    """A pass: it rests on the frames in `evidence`, or, where it judged things the frames do not
    list one by one (every inbound frame, every request), on `judged` of them. A pass that judged
    none is no pass: with `judged=0` the check is not applicable, nothing having been judged."""
    if judged is not None and judged <= 0:
        return not_applicable(f"nothing was judged ({message})", evidence=evidence, policies=policies,
                              warnings=warnings)
    return Verdict(CheckStatus.PASSED, message, None, _warnings(warnings), tuple(evidence), details or {},
                   message_policies=policies)


def failed(message: str, *, broken: tuple[str, ...] = (), evidence: Seqs = (), warnings: Warnings = (),
           details: dict[str, Any] | None = None, policies: tuple[str, ...] = ()) -> Verdict:
    """A failure of the rules in `broken` (requirement ids; none named: every rule the judge
    judges). The message says it in words and may cite the ids; reports read `broken`. A message
    that cites a policy names its id in `policies` too."""
    return Verdict(CheckStatus.FAILED, message, None, _warnings(warnings), tuple(evidence), details or {},
                   broken=broken, message_policies=policies)


def not_applicable(message: str, *, evidence: Seqs = (), policies: tuple[str, ...] = (),
                   warnings: Warnings = (), cause: Cause | None = None) -> Verdict:
    """The check does not apply to this server or run. `cause`: what keeps it from applying, when
    the user can change that (a flag to give); a Reason given as `message` brings its own. A run
    in which no check applied names those fixes (policy P-46)."""
    if cause is None and isinstance(message, Reason):
        cause = message.cause
    return Verdict(CheckStatus.SKIPPED, message, "not-applicable", _warnings(warnings), tuple(evidence),
                   cause=cause, message_policies=policies)


def could_not_run(cause: Cause | Reason, *, blocked_by: str | None = None, evidence: Seqs = (),
                  details: dict[str, Any] | None = None, policies: tuple[str, ...] = ()) -> Verdict:
    """The check could not run: `cause` says why and what the user changes so that it runs (a
    Cause, or a Reason from a probe record, which brings its own). Never a bare sentence: a cause
    without a fix cannot be built (Cause checks it), so every could-not-run tells the user what to do."""
    typed = cause_of(cause)
    message = typed.message
    if blocked_by:
        message = f"{message} (see {blocked_by})"
    return Verdict(CheckStatus.SKIPPED, message, "could-not-run", (), tuple(evidence), details or {}, blocked_by,
                   cause=typed, message_policies=policies)


def deferred(owner: str, rules: Mapping[str, str], message: str, *, evidence: Seqs = (), warnings: Warnings = (),
             details: dict[str, Any] | None = None, policies: tuple[str, ...] = ()) -> Verdict:
    """A verdict of its own: what this check found broken is a rule another check owns and fails
    too (one defect, one failure), so that check reports it and this one defers to it. `owner`:
    the check it defers to (the first, when the rules have several owners); `rules`: each
    deferred rule and its owner. Neither a failure nor a could-not-run: it never makes a run
    incomplete and costs no score. The message says what this check saw."""
    return Verdict(CheckStatus.SKIPPED, message, "deferred", _warnings(warnings), tuple(evidence),
                   {**(details or {}), "deferredTo": dict(rules)}, message_policies=policies, deferred_to=owner)
