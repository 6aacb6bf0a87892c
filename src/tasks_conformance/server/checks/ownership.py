"""One defect, one failure: when two checks fail one rule on the same observation, the check that
owns the rule fails and the other defers to it (CONTRIBUTING.md, "One defect, one failure").

Ownership is data: `check(..., owns=...)` in the registry (`rule_owners`). The same observation
is the same frame, or the same request sent again: the same method with the same params (the
per-request `progressToken` aside), as when the probe tool is also the task-required role's tool
and two probes call it alike. A failure on a rule the owner did not fail, or failed on other
requests, stands: it is another observation, and so possibly another defect.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import replace

from tasks_conformance.core.causes import Cause
from tasks_conformance.core.verdict import Verdict, could_not_run
from tasks_conformance.core.wirelog import WireLog
from tasks_conformance.server.checks.registry import CheckSpec, rule_owners
from tasks_conformance.server.evidence import Evidence


def broken_rules(spec: CheckSpec, verdict: Verdict, ev: Evidence) -> tuple[str, ...]:
    """The rules a failed verdict broke: those it names, or (none named) every rule its judge judges."""
    return verdict.broken or tuple(spec.requirement_ids(ev.wire))


def _requests(seqs: Iterable[int], log: WireLog) -> set[str]:
    """The outbound requests among the frames, each as its method and params (canonical JSON)."""
    out: set[str] = set()
    for seq in seqs:
        frame = log.get(seq)
        msg = frame.json() if frame is not None and frame.direction == "out" else None
        if not isinstance(msg, dict) or not isinstance(msg.get("method"), str) or "id" not in msg:
            continue
        params = msg.get("params")
        if isinstance(params, dict) and isinstance(params.get("_meta"), dict):
            meta = {k: v for k, v in params["_meta"].items() if k != "progressToken"}
            params = {**params, "_meta": meta}
        out.add(json.dumps([msg["method"], params], sort_keys=True, default=str))
    return out


def same_observation(a: Iterable[int], b: Iterable[int], log: WireLog) -> bool:
    """Two verdicts rest on the same observation: a frame in common, or the same request sent twice."""
    a, b = set(a), set(b)
    return bool(a & b) or bool(_requests(a, log) & _requests(b, log))


def defer(verdicts: Mapping[str, Verdict], specs: Mapping[str, CheckSpec], ev: Evidence) -> dict[str, Verdict]:
    """The verdicts after deferral: a failure whose every broken rule another selected check owns
    and fails on the same observation becomes could-not-run naming that owner (`blocked_by`); a
    failure of which only some rules are so owned fails on the rest alone. Owners never defer."""
    owners = rule_owners(specs)
    out = dict(verdicts)
    for check_id, verdict in verdicts.items():
        if verdict.status != "failed":
            continue
        rules = broken_rules(specs[check_id], verdict, ev)
        deferred: dict[str, str] = {}  # rule -> its owner
        for rule in rules:
            owner = owners.get(rule)
            theirs = verdicts.get(owner) if owner is not None and owner != check_id else None
            if owner is not None and theirs is not None and theirs.status == "failed" \
                    and rule in broken_rules(specs[owner], theirs, ev) \
                    and same_observation(verdict.evidence, theirs.evidence, ev.wire_log):
                deferred[rule] = owner
        if deferred:
            out[check_id] = _deferred(verdict, rules, deferred)
    return out


def _deferred(verdict: Verdict, rules: tuple[str, ...], deferred: dict[str, str]) -> Verdict:
    named = ", ".join(f"{rule} ({owner})" for rule, owner in deferred.items())
    details = {**verdict.details, "deferredTo": dict(deferred)}
    remaining = tuple(r for r in rules if r not in deferred)
    if remaining:
        return replace(verdict, broken=remaining, details=details,
                       message=f"{verdict.message} [deferred, failed by their owners on the same request: {named}]")
    owner = next(iter(deferred.values()))
    return could_not_run(
        Cause(f"what this check found broken, {named}, is failed by the check that owns the rule, on the same "
              "request (one defect, one failure)", fix="correct what that check reports; this one judges again then"),
        blocked_by=owner, evidence=verdict.evidence, details=details,
    )
