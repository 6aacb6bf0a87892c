"""The coverage matrix: every requirement in requirements.toml, its level, and the checks that
judge it, or why none does ("not tested: …"). Both subjects: a server rule (S-…) is judged by the
server checks, a client rule (C-…) by `tasks-conformance client`'s checks, so the matrix lives in
entry/, the one layer that may read both.

`tasks-conformance requirements` prints it (`--format json` for scripts), and
`scripts/update_docs.py` writes `docs/requirements.md` from `markdown()`; a test fails
while that file is stale.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tasks_conformance.core.requirements import BOTH_WIRES, Requirement, Subject, load
from tasks_conformance.core.wires import DIALECTS

NO_CHECK_YET = "no check judges it yet"
TESTABILITY_TEXT = {
    "T": "black-box testable",
    "P": "partly testable (heuristic, or needs a cooperating tool)",
    "N": "not observable from outside",
}
# Each era's heading, the newest wire first (the order of the matrix's sections).
ERA_TEXT = {
    **{str(d.wire): d.title for d in sorted(DIALECTS.values(), key=lambda d: d.protocol_version, reverse=True)},
    BOTH_WIRES: "both wires (base JSON-RPC and transport)",
}
# The subjects in the matrix's order: the server rules first, then the client rules.
SUBJECTS: tuple[Subject, ...] = ("server", "client")


def heading(subject: Subject, era: str) -> str:
    """A section of the matrix: the era's heading, prefixed "Clients: " for the client rules."""
    return ERA_TEXT[era] if subject == "server" else f"Clients: {ERA_TEXT[era]}"


@dataclass(frozen=True)
class Row:
    requirement: Requirement
    checks: tuple[str, ...]  # the check ids whose judges cite it, in report order
    permitted_by: tuple[str, ...] = ()  # for a MAY: the checks that declare they accept the behaviour

    @property
    def tested(self) -> bool:
        return bool(self.checks)

    @property
    def permitted(self) -> bool:
        """A freedom (MAY) that no check judges but that the checks seeing it declare they honour."""
        return not self.checks and bool(self.permitted_by)

    @property
    def why_not(self) -> str | None:
        """Why no check judges it: the registry's `untestable` or `notTested` reason, or that none does
        yet; None when a check judges it or honours it (a MAY)."""
        if self.checks or self.permitted_by:
            return None
        return self.requirement.untestable or self.requirement.not_tested or NO_CHECK_YET

    @property
    def verdict_text(self) -> str:
        """The matrix cell: the judging checks, the honouring checks, or why neither."""
        if self.checks:
            return ", ".join(self.checks)
        if self.permitted_by:
            return f"permitted; honoured by: {', '.join(self.permitted_by)}"
        return f"not tested: {self.why_not}"

    def to_json(self) -> dict[str, Any]:
        r = self.requirement
        return {
            "id": r.id,
            "subject": r.subject,
            "level": r.level,
            "era": r.era,
            "derived": r.derived,
            "testability": r.testability,
            "text": r.text,
            "url": r.url,
            "checks": list(self.checks),
            "permittedBy": list(self.permitted_by),
            "notTested": self.why_not,
        }


def judged_by() -> dict[str, tuple[str, ...]]:
    """Requirement id -> the ids of the checks that cite it (server checks on some wire, client checks),
    in report order."""
    from tasks_conformance.client.checks import CLIENT_CHECKS
    from tasks_conformance.server.checks import ordered_checks

    out: dict[str, dict[str, None]] = {}
    for spec in ordered_checks():
        for judge in spec.judges.values():
            for rid in judge.requirements:
                out.setdefault(rid, {})[spec.id] = None
    for client_check in CLIENT_CHECKS.values():
        for rid in client_check.requirements:
            out.setdefault(rid, {})[client_check.id] = None
    return {rid: tuple(ids) for rid, ids in out.items()}


def permitted_by() -> dict[str, tuple[str, ...]]:
    """MAY requirement id -> the ids of the checks (server or client) that declare they honour it, in
    report order."""
    from tasks_conformance.client.checks import CLIENT_CHECKS
    from tasks_conformance.server.checks import ordered_checks

    out: dict[str, dict[str, None]] = {}
    for spec in ordered_checks():
        for rid in spec.permits:
            out.setdefault(rid, {})[spec.id] = None
    for client_check in CLIENT_CHECKS.values():
        for rid in client_check.permits:
            out.setdefault(rid, {})[client_check.id] = None
    return {rid: tuple(ids) for rid, ids in out.items()}


def rows() -> list[Row]:
    """One row per requirement, in the registry's order."""
    by = judged_by()
    honour = permitted_by()
    return [Row(req, by.get(rid, ()), honour.get(rid, ())) for rid, req in load().items()]


def counts(all_rows: list[Row]) -> dict[str, int]:
    """Every row falls in exactly one count: judged, permitted (a MAY honoured), not judged with the
    reason (untestable, or what is not built yet), or not judged yet."""
    return {
        "requirements": len(all_rows),
        "tested": sum(r.tested for r in all_rows),
        "permitted": sum(r.permitted for r in all_rows),
        "untestable": sum(r.why_not is not None and r.why_not != NO_CHECK_YET for r in all_rows),
        "notTestedYet": sum(r.why_not == NO_CHECK_YET for r in all_rows),
    }


def document() -> dict[str, Any]:
    """The matrix as JSON (`tasks-conformance requirements --format json`)."""
    all_rows = rows()
    return {
        "counts": counts(all_rows),
        "countsBySubject": {subject: counts(_of(all_rows, subject)) for subject in SUBJECTS},
        "requirements": [r.to_json() for r in all_rows],
    }


def _of(all_rows: list[Row], subject: Subject) -> list[Row]:
    return [r for r in all_rows if r.requirement.subject == subject]


# The terminal layout: the id, the level, then the checks (or why none); the rule wraps beneath.
_ID_WIDTH = 15
_LEVEL_WIDTH = 10
DEFAULT_WIDTH = 100
MIN_WIDTH = 60


def text(width: int = DEFAULT_WIDTH) -> str:
    """The matrix for a terminal, `width` columns wide: per requirement, a line with its id, level and
    the checks that judge it (or the reason none does), the rule in our words wrapped beneath it,
    indented under the level, and a blank line."""
    import textwrap

    width = max(width, MIN_WIDTH)
    checks_at = " " * (_ID_WIDTH + 1 + _LEVEL_WIDTH + 1)
    rule_at = " " * (_ID_WIDTH + 1)
    all_rows = rows()
    lines: list[str] = []
    for row in all_rows:
        r = row.requirement
        head = f"{r.id:<{_ID_WIDTH}} {r.level:<{_LEVEL_WIDTH}} "
        # Check ids are never split at their hyphens, so each can be copied whole.
        lines += textwrap.wrap(row.verdict_text, width, initial_indent=head, subsequent_indent=checks_at,
                               break_on_hyphens=False, break_long_words=False)
        lines += textwrap.wrap(r.text, width, initial_indent=rule_at, subsequent_indent=rule_at,
                               break_on_hyphens=False, break_long_words=False)
        lines.append("")
    lines.append(f"{_summary(all_rows)} `tasks-conformance explain ID` says more about one.")
    return "\n".join(lines)


def _summary(all_rows: list[Row]) -> str:
    n = counts(all_rows)
    by = ", ".join(f"{len(_of(all_rows, subject))} {subject}" for subject in SUBJECTS)
    return (
        f"{n['requirements']} requirements ({by}): {n['tested']} judged by a check, {n['permitted']} freedoms "
        f"(MAY) the checks honour, {n['untestable']} not judged for the reason given, {n['notTestedYet']} not "
        "tested yet."
    )


def _md(value: str) -> str:
    return value.replace("|", "\\|").replace("\n", " ")


def markdown() -> str:
    """docs/requirements.md: the whole matrix, the server rules then the client rules, each grouped by era,
    every id linked to its spec section."""
    all_rows = rows()
    out = [
        "# Requirements and the checks that judge them",
        "",
        "<!-- generated by scripts/update_docs.py from src/tasks_conformance/core/requirements.toml "
        "and the check registry; do not edit by hand -->",
        "",
        "Every rule tasks-conformance knows, in our own words, linked to the section of the public specification "
        "it comes from, with the checks that judge it, or why none does: first the rules a tasks server keeps "
        "(S-…, judged by the server checks), then those a tasks client keeps (C-…, judged by "
        "`tasks-conformance client`). The same matrix is printed by "
        "`tasks-conformance requirements` (`--format json` for scripts); `tasks-conformance explain ID` explains "
        "one requirement or check. Where the specification is ambiguous, checks follow the policies in "
        "[policies.md](policies.md).",
        "",
        _summary(all_rows),
    ]
    sections = [(subject, era) for subject in SUBJECTS for era in ERA_TEXT]
    for subject, era in sections:
        era_rows = [r for r in _of(all_rows, subject) if r.requirement.era == era]
        if not era_rows:
            continue
        out += ["", f"## {heading(subject, era)}", "", "| id | level | rule | checks |", "|---|---|---|---|"]
        for row in era_rows:
            r = row.requirement
            if row.checks:
                checks = ", ".join(f"`{c}`" for c in row.checks)
            elif row.permitted_by:
                checks = "permitted; honoured by: " + ", ".join(f"`{c}`" for c in row.permitted_by)
            else:
                checks = f"not tested: {_md(row.why_not or '')}"
            out.append(f"| [{r.id}]({r.url}) | {r.level} | {_md(r.text)} | {checks} |")
    return "\n".join(out) + "\n"
