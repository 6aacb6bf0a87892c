"""The `markdown` reporter: a compact report for `$GITHUB_STEP_SUMMARY` and PR comments.

GitHub renders this Markdown, HTML included, so server text must not be able to leave its table
cell, start a new row, open an HTML element, draw a link or image, or mention a user. Every
value goes through `cell`: control characters are shown as escapes, `&`, `<` and `>` become
entities, Markdown punctuation (including `|` and backticks) is backslash-escaped, and newlines
become `<br>` (the only HTML this reporter writes itself).

The links this reporter does write are its own: each failed check's requirements link to the
public spec section (from requirements.toml), and cited policies to `docs/policies.md#p-nn`.
They are reference-style links (`[S-EXT-MUST-03]` with the definitions at the end of the
report), so no server text can ever become a link: it cannot produce an unescaped `[`.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, TextIO

from tasks_conformance.core.areas import area_title
from tasks_conformance.core.text import one_line
from tasks_conformance.reporters import PLAIN
from tasks_conformance.reporters._failure import broken_rules, expected_actual, explains, shown_message

if TYPE_CHECKING:
    from tasks_conformance.core.result import CheckResult, RunResult
    from tasks_conformance.reporters import ReportOptions

_BUCKETS: dict[str, tuple[str, str]] = {
    "passed": ("✅", "passed"),
    "failed": ("❌", "failed"),
    "not-applicable": ("➖", "not applicable"),
    "could-not-run": ("⚠️", "could not run"),
    "known": ("🟡", "known failure"),  # accepted by a --baseline entry
    "deferred": ("↪️", "deferred"),  # its owner reports the finding (one defect, one failure)
}
# headline (RunResult.headline: the outcome, or "interrupted") -> emoji
_OUTCOMES: dict[str, str] = {"passed": "✅", "failed": "❌", "incomplete": "⚠️", "interrupted": "⏹️"}
MAX_CELL = 500
MAX_REASON = 3000

# Punctuation that means something to GitHub's Markdown anywhere in a line: emphasis, code,
# links and images, tables, strikethrough, math (`$`), emoji shortcodes (`:`), mentions (`@`)
# and the escape character itself. A backslash before ASCII punctuation is always a valid
# escape. Characters that matter only at the start of a line (`#`, `-`, `+`, `.`, `>`) are not
# escaped: a cell or list item never starts a line, and `>` becomes `&gt;` anyway.
_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()!|~:@$])")
_PROFILE_ID = re.compile(r"tasks-conformance/[a-z]+(?:-[a-z]+)*@\d{4}-\d{2}")
# Link labels and targets we write: requirement and policy ids, https URLs or the policies doc.
_LABEL = re.compile(r"[A-Z]+(?:-[A-Z]+)*-\d{2}")
_TARGET = re.compile(r"(https://[A-Za-z0-9._~:/?#@!$&'*+,;=%-]+|docs/policies\.md#p-\d{2})")


def cell(value: object, limit: int = MAX_CELL) -> str:
    text = "" if value is None else value if isinstance(value, str) else str(value)
    # Keep line breaks as <br>; everything else invisible or dangerous becomes a visible escape.
    lines = [one_line(line) for line in text.replace("\r\n", "\n").split("\n")]
    out: list[str] = []
    used = 0
    for line in lines:
        if used + len(line) > limit:
            out.append(line[: max(0, limit - used)] + "…")
            break
        out.append(line)
        used += len(line)
    escaped = [
        _MD_SPECIAL.sub(r"\\\1", s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;"))
        for s in out
    ]
    return "<br>".join(escaped)


def code(value: str) -> str:
    """An identifier in a code span when that is safe, else as escaped text."""
    safe = one_line(value, 120)
    if re.fullmatch(r"[A-Za-z0-9_.:/\-]+", safe):
        return f"`{safe}`"
    return cell(safe)


def _row(check: CheckResult, pointer: str | None = None) -> str:
    emoji, word = _BUCKETS.get(check.bucket, ("❔", check.bucket))
    message = pointer or shown_message(check)
    if check.baseline is not None:  # the baseline's word first (a long message is cut): known (why), expired, fixed
        message = f"baseline: {check.baseline.note}\n{message}"
    return f"| {emoji} {word} | {code(check.id)} | {cell(area_title(check.section), 60)} | {cell(message)} |"


def by_area(checks: list[CheckResult]) -> list[CheckResult]:
    """The checks grouped by spec area, the areas in the order they first come, each area's checks
    in the run's order."""
    first: dict[str, int] = {}
    for check in checks:
        first.setdefault(check.section, len(first))
    return sorted(checks, key=lambda check: first[check.section])


class Links:
    """Reference-style link definitions, collected while writing and appended at the end."""

    def __init__(self) -> None:
        self.targets: dict[str, str] = {}

    def ref(self, label: str, target: str) -> str:
        """`[label]` as a link when both are ours and well-formed, else the escaped label."""
        if not (_LABEL.fullmatch(label) and _TARGET.fullmatch(target)):
            return cell(label, 120)
        self.targets.setdefault(label, target)
        return f"[{label}]"

    def definitions(self) -> list[str]:
        return [f"[{label}]: {target}" for label, target in self.targets.items()]


def failure_lines(check: CheckResult, links: Links) -> list[str]:
    lines = [f"- ❌ {code(check.id)}: {cell(check.message or check.title)}"]
    broken, others = broken_rules(check)
    for rule in broken:
        ref = links.ref(rule.id, rule.url) if rule.url else cell(rule.id, 120)
        lines.append(f"  - {ref} **{cell(rule.level, 20)}**: {cell(rule.text)}")
    if others:
        lines.append("  - also judged here: " + ", ".join(code(r.id) for r in others))
    pairs = expected_actual(check)
    if pairs:
        lines.append("  - " + "; ".join(f"{key}: {cell(value)}" for key, value in pairs))
    if check.evidence:
        seqs = ", ".join(f"#{n}" for n in check.evidence[:12])
        lines.append(f"  - evidence: wire frames {seqs} (the json and junit-xml reports show them)")
    return lines


def _words(text: str, limit: int = MAX_REASON) -> str:
    """`text` up to `limit` characters, cut at a space (never mid-word) and marked with …."""
    if len(text) <= limit:
        return text
    cut = text[:limit].rsplit(" ", 1)[0].rstrip(",;:")
    return f"{cut} …"


def incomplete_lines(result: RunResult) -> list[str]:
    """Each cause once, whole (never cut mid-word): what it was, what to change, which checks.
    A failed run whose other checks could not run gets them too."""
    causes = result.incompleteCauses
    if not causes:  # a hand-made result with a reason but no could-not-run check
        return [f"> **Incomplete:** {cell(result.incompleteReason, MAX_REASON)}"]
    n = sum(len(c.checks) for c in causes)
    # A run that tested nothing (policy P-46), or was interrupted, may have blocked no check.
    blocked = f" — {n} check{'' if n == 1 else 's'} could not run" if n else ""
    lines = [f"> **Incomplete:** Could not establish conformance{blocked}"]
    for n, cause in enumerate(causes, 1):
        lines.append(">")
        label = f"**Cause {n}:** " if len(causes) > 1 else ""
        lines.append(f"> - {label}{cell(_words(cause.cause), MAX_REASON + 2)}")
        lines.append(f">   **Fix:** {cell(_words(cause.fix), MAX_REASON + 2)}")
        if cause.checks:
            lines.append(f">   **Blocked:** {', '.join(code(i) for i in cause.checks)}")
    return lines


def render_markdown(result: RunResult, out: TextIO, *, options: ReportOptions = PLAIN) -> None:
    d = result.discovery
    emoji = _OUTCOMES.get(result.headline, "❔")
    lines = [f"## {emoji} MCP Tasks conformance: {cell(result.headline, 40)}", ""]
    lines.append(f"**{cell(result.summary)}**")
    lines.append("")
    score = result.score
    profile = f"`{result.profile}`" if _PROFILE_ID.fullmatch(result.profile) else cell(result.profile, 80)
    lines.append(f"score **{score if score is not None else 'n/a'}/100** · profile {profile}")
    lines.append("")
    facts = [f"target {cell(result.target, 300)}"]
    if d.protocolVersion:
        facts.append(f"protocol {cell(d.protocolVersion, 60)}")
    facts.append(f"wire {cell(', '.join(d.wires) if d.wires else d.wire, 40)}")
    if d.probedTool is not None:
        facts.append(f"tool {cell(d.probedTool, 120)}")
    if d.createdTaskId is not None:
        facts.append(f"task {cell(d.createdTaskId, 120)}")
    if result.toolVersion:
        facts.append(f"tasks\\-conformance {cell(result.toolVersion, 40)}")
    lines.append(" · ".join(facts))
    lines.append("")
    roles = [f"{cell(role, 20)} {cell(r.get('tool'), 120) if r.get('tool') else 'none'}"
             for role, r in d.roles.items() if role != "task"]
    if roles:  # which tool took each probe role (the reasons are in the JSON report)
        lines += ["probe roles: " + " · ".join(roles), ""]
    if (result.incompleteCauses or result.incompleteReason) and not options.quiet:  # whatever the outcome
        lines.extend(incomplete_lines(result))
        lines.append("")
    if options.quiet:
        out.write("\n".join(lines).rstrip("\n") + "\n")
        return
    if result.checks:
        lines.append("| Result | Check | Spec area | Message |")
        lines.append("|---|---|---|---|")
        pointers = result.cause_pointers("above")
        lines.extend(_row(c, pointers.get(c.id)) for c in by_area(result.checks))
        lines.append("")
    links = Links()
    failures = [c for c in result.checks if explains(c)]
    if failures:
        lines.append("**Failures**")
        lines.append("")
        for check in failures:
            lines.extend(failure_lines(check, links))
        lines.append("")
    warned = [c for c in result.checks if c.warnings]
    if warned:
        lines.append("**Warnings**")
        lines.append("")
        for check in warned:
            for warning in check.warnings:
                cited = [links.ref(p.id, p.url) for p in warning.refs]
                see = f" (see {', '.join(cited)})" if cited else ""
                lines.append(f"- {code(check.id)}: {cell(warning.text)}{see}")
        lines.append("")
    if links.targets:
        lines.extend(links.definitions())
        lines.append("")
    out.write("\n".join(lines).rstrip("\n") + "\n")
