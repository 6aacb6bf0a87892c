"""What the markdown and human reports of a merge say of its history (`merge --history DIR`):
each target's last outcomes, since when each current failure has lasted, and the regressions.
The marks are computed in core/fleet_history.py; this only words them."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tasks_conformance.core.fleet_history import FleetHistory
    from tasks_conformance.core.multirun_result import Combined

_EMOJI = {"passed": "✅", "failed": "❌", "incomplete": "⚠️", "interrupted": "⏹️"}
MAX_SINCE = 6  # failing checks named per target in the markdown table (the json report has all)


def compared(history: FleetHistory) -> str:
    """One sentence: which runs the marks come from, how many regressions."""
    n = len(history.regressions)
    where = (f"compared with {len(history.earlier)} earlier run{'' if len(history.earlier) == 1 else 's'}, "
             f"the last {history.earlier[-1]}" if history.earlier else "the first run kept in this history")
    return f"History: run {history.run}, {where}; {n} regression{'' if n == 1 else 's'}."


def markdown_lines(combined: Combined) -> list[str]:
    """A table: target, its last outcomes (oldest first), its failures and since when, its regressions."""
    from tasks_conformance.reporters.markdown import cell, code

    history = combined.history
    if history is None:
        return []
    lines = ["### History", "", cell(compared(history)), "",
             "| Target | last outcomes | failing since | regressions |", "|---|---|---|---|"]
    for run in combined.runs:
        marks = history.targets.get(run.name)
        if marks is None:
            continue
        recent = " ".join(_EMOJI.get(outcome, "❔") for _run, outcome in marks.recent)
        failing = list(marks.failing_since.items())
        since = "<br>".join(f"{code(check)} since {cell(start, 40)}" for check, start in failing[:MAX_SINCE])
        if len(failing) > MAX_SINCE:
            since += f"<br>… and {len(failing) - MAX_SINCE} more"
        regressed = " ".join(f"⬇️ {code(check)}" for check in marks.regressions)
        lines.append(f"| {cell(run.name, 80)} | {recent} | {since} | {regressed} |")
    lines += ["", "⬇️ regression: passed the last time the target ran, fails now (a failure a baseline accepts too)", ""]
    return lines


def human_lines(combined: Combined) -> list[str]:
    """The history sentence and one line per regression."""
    history = combined.history
    if history is None:
        return []
    return [compared(history), *(f"  regression: {label}: {check} passed in "
                                 f"{history.targets[label].previous}, fails now"
                                 for label, check in history.regressions)]
