"""The `markdown` reporter: a compact report for `$GITHUB_STEP_SUMMARY` and PR comments.

GitHub renders this Markdown, HTML included, so server text must not be able to leave its table
cell, start a new row, open an HTML element, draw a link or image, or mention a user. Every
value goes through `_cell`: control characters are shown as escapes, `&`, `<` and `>` become
entities, Markdown punctuation (including `|` and backticks) is backslash-escaped, and newlines
become `<br>` (the only HTML this reporter writes itself).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, TextIO

from tasks_conformance.reporters import PLAIN
from tasks_conformance.reporters._text import one_line

if TYPE_CHECKING:
    from tasks_conformance.reporters import ReportOptions
    from tasks_conformance.result import CheckResult, RunResult

_BUCKETS: dict[str, tuple[str, str]] = {
    "passed": ("✅", "passed"),
    "failed": ("❌", "failed"),
    "not-applicable": ("➖", "not applicable"),
    "could-not-run": ("⚠️", "could not run"),
}
_OUTCOMES: dict[str, str] = {"passed": "✅", "failed": "❌", "incomplete": "⚠️"}
MAX_CELL = 500
MAX_REASON = 3000

# Punctuation that means something to GitHub's Markdown anywhere in a line: emphasis, code,
# links and images, tables, strikethrough, math (`$`), emoji shortcodes (`:`), mentions (`@`)
# and the escape character itself. A backslash before ASCII punctuation is always a valid
# escape. Characters that matter only at the start of a line (`#`, `-`, `+`, `.`, `>`) are not
# escaped: a cell or list item never starts a line, and `>` becomes `&gt;` anyway.
_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()!|~:@$])")


def _cell(value: object, limit: int = MAX_CELL) -> str:
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


def _code(value: str) -> str:
    """An identifier in a code span when that is safe, else as escaped text."""
    safe = one_line(value, 120)
    if re.fullmatch(r"[A-Za-z0-9_.:/\-]+", safe):
        return f"`{safe}`"
    return _cell(safe)


def _row(check: CheckResult) -> str:
    emoji, word = _BUCKETS.get(check.bucket, ("❔", check.bucket))
    message = check.message or check.title
    return f"| {emoji} {word} | {_code(check.id)} | {_cell(check.category, 60)} | {_cell(message)} |"


def render_markdown(result: RunResult, out: TextIO, *, options: ReportOptions = PLAIN) -> None:
    d = result.discovery
    emoji = _OUTCOMES.get(result.outcome, "❔")
    lines = [f"## {emoji} MCP Tasks conformance: {_cell(result.outcome, 40)}", ""]
    lines.append(f"**{_cell(result.summary)}**")
    lines.append("")
    facts = [f"target {_cell(result.target, 300)}"]
    if d.protocolVersion:
        facts.append(f"protocol {_cell(d.protocolVersion, 60)}")
    facts.append(f"wire {_cell(d.wire, 40)}")
    if d.probedTool is not None:
        facts.append(f"tool {_cell(d.probedTool, 120)}")
    if d.createdTaskId is not None:
        facts.append(f"task {_cell(d.createdTaskId, 120)}")
    if result.toolVersion:
        facts.append(f"tasks\\-conformance {_cell(result.toolVersion, 40)}")
    lines.append(" · ".join(facts))
    lines.append("")
    if result.incompleteReason and not options.quiet:
        lines.append(f"> **Incomplete:** {_cell(result.incompleteReason, MAX_REASON)}")
        lines.append("")
    if options.quiet:
        out.write("\n".join(lines).rstrip("\n") + "\n")
        return
    if result.checks:
        lines.append("| Result | Check | Category | Message |")
        lines.append("|---|---|---|---|")
        lines.extend(_row(c) for c in result.checks)
        lines.append("")
    warned = [c for c in result.checks if c.warnings]
    if warned:
        lines.append("**Warnings**")
        lines.append("")
        for check in warned:
            for warning in check.warnings:
                lines.append(f"- {_code(check.id)}: {_cell(warning)}")
        lines.append("")
    out.write("\n".join(lines).rstrip("\n") + "\n")
