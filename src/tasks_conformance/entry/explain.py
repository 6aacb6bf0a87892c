"""`tasks-conformance explain ID`: what a check does, or what a requirement says, in plain text.

For a server check: what it sends (its probes' descriptions), its precondition, what it expects on
each wire (its judges' requirements: level, rule, spec link) and the profiles that include it. For a
client check (`tasks-conformance client`): what it judges, the scenarios whose runs it reads (what
the scripted server does in each) and the client rules it judges or permits. For a requirement,
server (S-…) or client (C-…): the rule, its level, era and link, and the checks that judge it, or
why none does. An unknown id raises `UnknownId` carrying the closest known ids (difflib).
"""

from __future__ import annotations

import difflib
import json
import re
from typing import TYPE_CHECKING

from tasks_conformance.core.profiles import PROFILES
from tasks_conformance.core.requirements import Requirement, load
from tasks_conformance.entry.coverage import ERA_TEXT, NO_CHECK_YET, TESTABILITY_TEXT, heading, judged_by, permitted_by

if TYPE_CHECKING:
    from tasks_conformance.client.checks import ClientCheck
    from tasks_conformance.server.checks.engine.registry import CheckSpec

# What each precondition (CheckSpec.needs) asks of the run before the check judges anything.
NEED_TEXT: dict[str, str] = {
    "wire": "the server speaks a tasks wire (tasks-wire-resolvable); otherwise the check could not run",
    "tool": "a tasks wire and a tool to probe (--tool-name; on the legacy wire one is picked from the "
    "tools' execution.taskSupport)",
    "task": "the declared tools/call of the probe tool created a task whose id can be followed",
    "terminal": "the declared tools/call created a task and polling saw it reach a terminal status "
    "(within --poll-timeout; input it asks for is answered from --input-responses)",
}


class UnknownId(LookupError):
    def __init__(self, wanted: str, close: list[str]) -> None:
        hint = f"; close matches: {', '.join(close)}" if close else ""
        super().__init__(f"unknown check or requirement id {wanted!r}{hint}")
        self.wanted = wanted
        self.close = close


def known_ids() -> list[str]:
    from tasks_conformance.client.checks import CLIENT_CHECKS
    from tasks_conformance.server.checks import ordered_checks

    return [c.id for c in ordered_checks()] + list(CLIENT_CHECKS) + list(load())


def resolve(wanted: str) -> CheckSpec | ClientCheck | Requirement:
    """The server check, client check or requirement called `wanted` (case-insensitive), or UnknownId."""
    from tasks_conformance.client.checks import CLIENT_CHECKS
    from tasks_conformance.server.checks import CHECKS

    key = wanted.strip()
    spec = CHECKS.get(key.lower())
    if spec is not None:
        return spec
    client_check = CLIENT_CHECKS.get(key.lower())
    if client_check is not None:
        return client_check
    # S-EXT-MUST-3 means S-EXT-MUST-03: requirement numbers have two digits.
    req = load().get(re.sub(r"-(\d)$", r"-0\1", key.upper()))
    if req is not None:
        return req
    ids = known_ids()
    by_lower = {i.lower(): i for i in ids}
    close = difflib.get_close_matches(key.lower(), list(by_lower), n=5, cutoff=0.6)
    raise UnknownId(wanted, [by_lower[c] for c in close])


def explain(wanted: str) -> str:
    from tasks_conformance.client.checks import ClientCheck

    found = resolve(wanted)
    if isinstance(found, Requirement):
        return explain_requirement(found)
    if isinstance(found, ClientCheck):
        return explain_client_check(found)
    return explain_check(found)


def _rule_lines(rid: str, indent: str) -> list[str]:
    req = load().get(rid)
    if req is None:
        return [f"{indent}{rid}: not in the requirements registry"]
    return [f"{indent}{req.id} ({req.level}): {req.text}", f"{indent}  {req.url}"]


def explain_check(spec: CheckSpec) -> str:
    from tasks_conformance.core.wires import Wire
    from tasks_conformance.server.probes import load_probes

    probes = load_probes()
    wires = sorted(w.value for w in spec.wires if w is not Wire.NONE)
    over = "/".join(sorted(spec.transports)) if spec.transports else "any transport"
    lines = [
        f"{spec.id}: {spec.title}",
        f"category {spec.category} · wires {', '.join(wires) or 'none'} · over {over}",
        "",
        spec.description,
        "",
        "Precondition: " + (NEED_TEXT.get(spec.needs, spec.needs) if spec.needs else "none (it judges whatever "
                            "the run saw)"),
        "Probe role: " + _role_text(spec),
        "",
        "What it sends:",
    ]
    if spec.probes:
        for name in spec.probes:
            probe = probes.get(name)
            lines.append(f"  - {name}: {probe.description if probe else 'unknown probe'}")
    else:
        lines.append("  nothing of its own: it judges the connection and discovery traffic every run sends")
    lines += ["", "What it expects:"]
    for wire, judge in sorted(spec.judges.items(), key=lambda kv: kv[0].value):
        if wire is Wire.NONE:
            lines.append("  when the server offers no tasks wire at all (the check fails, saying what it looked for):")
        else:
            lines.append(f"  on the {ERA_TEXT.get(wire.value, wire.value)} wire:")
        for rid in judge.requirements:
            lines += _rule_lines(rid, "    ")
    if spec.permits:
        lines += ["", "What it permits (freedoms the server has; using them never fails this check):"]
        for rid in spec.permits:
            lines += _rule_lines(rid, "  ")
    from tasks_conformance.server.fixture_index import fixture_commands

    broken = fixture_commands(spec.id)
    lines += ["", "Breaking fixture (a server that breaks exactly this rule; in the source repository):"]
    lines += [f"  {command}" for command in broken] or ["  none"]
    profiles = [p.id for p in PROFILES.values() if p.includes(spec.id)]
    lines += ["", f"Profiles: {', '.join(profiles)}", f"Run only this check: tasks-conformance --check-id {spec.id} …"]
    return "\n".join(lines)


def explain_client_check(check: ClientCheck) -> str:
    from tasks_conformance.client.scenarios import SCENARIOS

    scenarios = [s for s in SCENARIOS if check.reads(s.name)]
    lines = [
        f"{check.id}: {check.title}",
        f"client check (tasks-conformance client) · area {check.area}",
        "",
        check.description,
        "",
        "The scenarios it reads (what the scripted server does in each):" if check.scenarios
        else "The scenarios it reads: every one (what the scripted server does in each):",
    ]
    for scenario in scenarios:
        eras = ", ".join(scenario.eras)
        lines.append(f"  - {scenario.name} ({eras}): {scenario.description}")
        if scenario.context:
            told = json.dumps(scenario.context, ensure_ascii=False)
            lines.append(f"    MCP_CONFORMANCE_CONTEXT also carries {told}")
    lines += ["", "What it expects (the client rules it judges):"]
    for rid in check.requirements:
        lines += _rule_lines(rid, "  ")
    if check.permits:
        lines += ["", "What it permits (freedoms the client has; using them never fails this check):"]
        for rid in check.permits:
            lines += _rule_lines(rid, "  ")
    only = " ".join(f"--scenario {s.name}" for s in scenarios) if check.scenarios else ""
    lines += ["", "Run only its scenarios: tasks-conformance client --command CMD" + (f" {only}" if only else "")]
    return "\n".join(lines)


def _role_text(spec: CheckSpec) -> str:
    from tasks_conformance.settings.role_flags import ROLE_HELP, role_flag

    role = spec.probe_role
    if role is None:
        return "none (it calls no tool)"
    text = f"{role}: {ROLE_HELP[role]}; set it with {role_flag(role)}"
    if spec.role is not None:
        text += ("; without one the check is not-applicable under the standard profile and could-not-run "
                 "under full")
    return text


def explain_requirement(req: Requirement) -> str:
    checks = judged_by().get(req.id, ())
    lines = [
        f"{req.id} ({req.level}) — {heading(req.subject, req.era)}",
        "",
        req.text,
        "",
        f"Specification: {req.url}",
        f"Stated outright: {'no, derived from neighbouring normative text' if req.derived else 'yes'}",
        f"Testability: {req.testability} ({TESTABILITY_TEXT[req.testability]})",
    ]
    honour = permitted_by().get(req.id, ())
    if checks:
        lines.append(f"Judged by: {', '.join(checks)}")
    elif honour:
        lines.append(f"Permitted; honoured by: {', '.join(honour)}")
    else:
        lines.append(f"Not tested: {req.untestable or req.not_tested or NO_CHECK_YET}")
    if req.subject == "client":
        lines += _client_scenario_lines(req)
    if req.level == "MAY":
        lines.append(f"A MAY is a freedom the {req.subject} has: checks accept the behaviour, never fail it.")
    return "\n".join(lines)


def _client_scenario_lines(req: Requirement) -> list[str]:
    """For a client rule: the scenarios that let the checks judge it, and how to run them."""
    from tasks_conformance.client.scenarios import SCENARIOS

    names = [s.name for s in SCENARIOS if req.id in s.rules]
    if not names:
        return []
    return [f"Client scenarios that show it: {', '.join(names)} (tasks-conformance client --command CMD "
            + " ".join(f"--scenario {n}" for n in names) + ")"]
