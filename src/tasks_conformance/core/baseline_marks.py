"""What a baseline made of a run's result: the marks the result model carries.

`CheckResult.baseline` holds a `BaselineMark`, `RunResult.baseline` a `BaselineReport`; both are
plain data at the result model's layer. `baseline.py` (one layer above the result model) reads
the baseline file and applies it to a RunResult after the run, making these marks.

Stdlib only, cheap to import.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any, Literal

EntryState = Literal["known", "expired", "fixed", "unused"]


@dataclass(frozen=True)
class BaselineEntry:
    check: str
    reason: str
    wire: str | None = None  # "legacy" | "extension": the era it applies to; None: every era
    era: str | None = None  # as written in the file (a protocol version or a wire name)
    expires: dt.date | None = None

    def expired(self, today: dt.date) -> bool:
        """Past its day: an entry that expires on D still holds on D."""
        return self.expires is not None and today > self.expires

    def to_json(self) -> dict[str, Any]:
        return {
            "check": self.check,
            "era": self.era,
            "reason": self.reason,
            "expires": self.expires.isoformat() if self.expires else None,
        }


@dataclass(frozen=True)
class BaselineMark:
    """What a baseline entry made of one check's result (CheckResult.baseline)."""

    state: EntryState
    reason: str
    era: str | None = None
    expires: str | None = None  # YYYY-MM-DD

    @property
    def note(self) -> str:
        """One line for a report: what this means and what to do."""
        if self.state == "known":
            until = f" (until {self.expires})" if self.expires else ""
            return f"known failure{until}: {self.reason}"
        if self.state == "expired":
            return f"baseline entry expired on {self.expires}; this failure counts again: {self.reason}"
        if self.state == "fixed":
            return "fixed — remove it from the baseline"
        return "baseline entry not used in this run"

    def to_json(self) -> dict[str, Any]:
        return {"state": self.state, "reason": self.reason, "era": self.era, "expires": self.expires,
                "note": self.note}


@dataclass(frozen=True)
class BaselineReport:
    """The baseline as applied to one run (RunResult.baseline): every entry and its state."""

    path: str
    strict: bool
    entries: tuple[tuple[BaselineEntry, EntryState], ...]

    def count(self, state: EntryState) -> int:
        return sum(1 for _entry, s in self.entries if s == state)

    def to_json(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "strict": self.strict,
            "entries": [{**entry.to_json(), "state": state} for entry, state in self.entries],
        }
