"""One defect, one failure: when two checks fail one rule, the check that owns the rule fails and
the other defers to it (CONTRIBUTING.md, "One defect, one failure").

Ownership is data: `check(..., owns=...)` in the registry (`rule_owners`). A failure stands for
every rule whose owner passed, was not selected or could not run: then it is the only report of
that rule. A deferral is a verdict of its own (`deferred`, skipReason "deferred", naming its
owner): neither a failure nor a could-not-run, so it never makes a run incomplete, costs no score,
and follows its owner under a baseline. It keeps its own frames, so the report still shows what it
saw.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from tasks_conformance.core.verdict import Verdict, deferred
from tasks_conformance.server.checks.engine.registry import CheckSpec, rule_owners
from tasks_conformance.server.evidence import Evidence


def broken_rules(spec: CheckSpec, verdict: Verdict, ev: Evidence) -> tuple[str, ...]:
    """The rules a failed verdict broke, among those its judge judges (none named: all of them)."""
    judged = spec.requirement_ids(ev.wire)
    return tuple(r for r in verdict.broken if r in judged) or tuple(judged)


def defer(verdicts: Mapping[str, Verdict], specs: Mapping[str, CheckSpec], ev: Evidence) -> dict[str, Verdict]:
    """The verdicts after deferral: a failure whose every broken rule another selected check owns
    and fails too becomes a deferral naming that owner (`deferred_to`); a failure of which only
    some rules are so owned fails on the rest alone. Owners never defer."""
    owners = rule_owners(specs)
    out = dict(verdicts)
    for check_id, verdict in verdicts.items():
        if verdict.status != "failed":
            continue
        rules = broken_rules(specs[check_id], verdict, ev)
        owned: dict[str, str] = {}  # rule -> its owner, which fails it
        for rule in rules:
            owner = owners.get(rule)
            theirs = verdicts.get(owner) if owner is not None and owner != check_id else None
            if owner is not None and theirs is not None and theirs.status == "failed" \
                    and rule in broken_rules(specs[owner], theirs, ev):
                owned[rule] = owner
        if owned:
            out[check_id] = _deferred(verdict, rules, owned)
    return out


def _deferred(verdict: Verdict, rules: tuple[str, ...], owned: dict[str, str]) -> Verdict:
    named = ", ".join(f"{rule} ({owner})" for rule, owner in owned.items())
    remaining = tuple(r for r in rules if r not in owned)
    if remaining:
        details = {**verdict.details, "deferredTo": dict(owned)}
        return replace(verdict, broken=remaining, details=details,
                       message=f"{verdict.message} [deferred to the checks that own and fail them: {named}]")
    owners = list(dict.fromkeys(owned.values()))
    rule_words = ", ".join(owned) if len(owners) == 1 else named
    one = len(owned) == 1
    message = (f"{rule_words} {'is' if one else 'are'} failed by the check that owns {'it' if one else 'them'} "
               f"(one defect, one failure); this check saw: {verdict.message}")
    return deferred(owners[0], owned, message, evidence=verdict.evidence, warnings=verdict.warnings,
                    details=verdict.details, policies=verdict.message_policies)


def follow_failures(verdicts: Mapping[str, Verdict]) -> dict[str, Verdict]:
    """A could-not-run whose precondition fell to what another selected check reports as a failure
    (`blocked_by` names it, and it failed) is no advice to the user: it defers to that failure, which
    says what to correct. Followed along a chain of could-not-runs to the failure at its end."""
    out = dict(verdicts)
    for check_id, verdict in verdicts.items():
        if verdict.skip_reason != "could-not-run" or not verdict.blocked_by:
            continue
        owner, seen = verdict.blocked_by, {check_id}
        while owner not in seen and (theirs := verdicts.get(owner)) is not None \
                and theirs.skip_reason == "could-not-run" and theirs.blocked_by:
            seen.add(owner)
            owner = theirs.blocked_by
        theirs = verdicts.get(owner)
        if theirs is None or theirs.status != "failed":
            continue
        why = verdict.cause.statement() if verdict.cause is not None else verdict.message
        out[check_id] = deferred(owner, {}, f"{why}: {owner} fails what this check needed (one defect, one failure)",
                                 evidence=verdict.evidence, details=verdict.details, policies=verdict.message_policies)
    return out
