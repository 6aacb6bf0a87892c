"""Baselines: known failures a project cannot fix yet, each with a reason and maybe an expiry.

A baseline file (TOML or JSON) lists entries; `apply` marks the run's failures that an entry
names as `known` after the run, so the runner and the checks never see a baseline:

    # tasks-conformance-baseline.toml
    [[known]]
    check = "tasks-ttl-shape"          # a check id (required)
    era = "2026-07-28"                 # optional: 2025-11-25 | 2026-07-28 | legacy | extension (or several: a, b)
    reason = "ttl lands in v2 (#41)"   # required: why it is accepted for now
    expires = 2027-03-31               # optional: after this day the failure counts again

    {"known": [{"check": "tasks-ttl-shape", "reason": "…", "expires": "2027-03-31"}]}

An entry written by --update-baseline names the era of its run, and none (every era) when the run
covered several (a client run over both eras). Each entry ends up in one state: `known` (its
check failed and the entry accepts it), `expired` (its check failed, but the entry's day has
passed: the failure counts), `fixed` (its check passed: remove the entry; a failure with
--strict-baseline) or `unused` (its check did not pass or fail in this run: not selected, not
applicable, could not run, or another era).

Stdlib only, cheap to import (tomli_w loads only to write a TOML file).
"""

from __future__ import annotations

import datetime as dt
import difflib
import json
import os
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

# The marks a baseline leaves on a result are part of the result model (baseline_marks.py):
# result.py names them without importing this module, which is one layer above it.
from tasks_conformance.core.baseline_marks import BaselineEntry, BaselineMark, BaselineReport, EntryState
from tasks_conformance.core.errors import UsageError

if TYPE_CHECKING:
    from tasks_conformance.core.result import RunResult

__all__ = ["ENTRY_KEYS", "MAX_BASELINE_BYTES", "PLACEHOLDER_REASON", "Baseline", "BaselineEntry", "BaselineMark",
           "BaselineReport", "EntryState", "apply", "dump", "entries_for", "load", "parse", "update"]

ENTRY_KEYS = ("check", "era", "reason", "expires")
PLACEHOLDER_REASON = "TODO: say why this failure is accepted for now"
MAX_BASELINE_BYTES = 4 * 1024 * 1024  # a baseline lists checks: anything larger is not one


@dataclass(frozen=True)
class Baseline:
    path: str
    entries: tuple[BaselineEntry, ...]
    strict: bool = False  # --strict-baseline: a fixed entry fails the run


# ---------------------------------------------------------------------------------------------
# Reading


def _wire_of(era: str, where: str) -> str | None:
    """The wire name of an era as written: a protocol version or a wire name, or several of them
    separated by commas (as a run over several eras once wrote them); None when they name every
    era (the entry applies to all)."""
    from tasks_conformance.core.wires import DIALECTS, dialect_for_version

    names = {str(w) for w in DIALECTS}
    wires: set[str] = set()
    for part in (p.strip() for p in era.split(",")):
        dialect = dialect_for_version(part)
        if dialect is None and part not in names:
            valid = [d.protocol_version for d in DIALECTS.values()] + [str(w) for w in DIALECTS]
            raise UsageError(f"{where}: era must be one of {', '.join(valid)}, got {era[:40]!r}")
        wires.add(str(dialect.wire) if dialect is not None else part)
    return None if wires == names else wires.pop() if len(wires) == 1 else None


def run_wires(result: RunResult, pinned: str | None = None) -> frozenset[str]:
    """The wires a run judged: the era it was pinned to (--era both), else the one it found, else
    (a client run over several eras, or a server that spoke no tasks wire) those of the protocol
    versions it names."""
    from tasks_conformance.core.wires import DIALECTS, dialect_for_version

    if pinned:
        wire = _wire_of(pinned, "--era")
        return frozenset({wire} if wire else {str(w) for w in DIALECTS})
    if str(result.discovery.wire) in {str(w) for w in DIALECTS}:
        return frozenset({str(result.discovery.wire)})
    if result.discovery.wires:
        return frozenset(result.discovery.wires)
    versions = (dialect_for_version(v.strip()) for v in str(result.discovery.protocolVersion or "").split(","))
    return frozenset(str(d.wire) for d in versions if d is not None)


def _era_of(wires: frozenset[str]) -> str | None:
    """What an entry written for a run over `wires` says: the protocol version of its one era;
    None (every era) for a run over several, or none."""
    from tasks_conformance.core.wires import DIALECTS, Wire

    return DIALECTS[Wire(next(iter(wires)))].protocol_version if len(wires) == 1 else None


def _date(value: object, where: str) -> dt.date:
    if isinstance(value, dt.datetime):
        return value.date()
    if isinstance(value, dt.date):
        return value
    if isinstance(value, str):
        try:
            return dt.date.fromisoformat(value)
        except ValueError:
            pass
    raise UsageError(f"{where}: expires must be a date YYYY-MM-DD, got {str(value)[:40]!r}")


def _entry(raw: object, where: str, known_ids: tuple[str, ...]) -> BaselineEntry:
    if not isinstance(raw, Mapping):
        raise UsageError(f"{where}: expected a table with check and reason, got {type(raw).__name__}")
    for key in raw:
        if key not in ENTRY_KEYS:
            close = difflib.get_close_matches(str(key), ENTRY_KEYS, n=1)
            hint = f" (did you mean {close[0]}?)" if close else f"; valid keys: {', '.join(ENTRY_KEYS)}"
            raise UsageError(f"{where}: unknown key {str(key)[:40]!r}{hint}")
    check = raw.get("check")
    if not isinstance(check, str) or not check:
        raise UsageError(f"{where}: check must be a check id (a string)")
    if known_ids and check not in known_ids:
        close = difflib.get_close_matches(check, known_ids, n=3)
        hint = f"; did you mean {' or '.join(close)}?" if close else "; `tasks-conformance --list-checks` lists them"
        raise UsageError(f"{where}: unknown check id {check[:80]!r}{hint}")
    reason = raw.get("reason")
    if not isinstance(reason, str) or not reason.strip():
        raise UsageError(f"{where} ({check}): reason must be a non-empty string: say why the failure is accepted")
    era = raw.get("era")
    if era is not None and not isinstance(era, str):
        raise UsageError(f"{where} ({check}): era must be a string")
    expires = raw.get("expires")
    return BaselineEntry(
        check=check,
        reason=reason.strip(),
        wire=_wire_of(era, f"{where} ({check})") if era else None,
        era=era or None,
        expires=_date(expires, f"{where} ({check})") if expires is not None else None,
    )


def parse(text: str, path: str, known_ids: tuple[str, ...] = ()) -> tuple[BaselineEntry, ...]:
    """The entries of a baseline file's text (JSON when it starts with `{`, else TOML)."""
    flag = f"--baseline {path}"
    try:
        doc: Any = json.loads(text) if text.lstrip().startswith("{") else tomllib.loads(text)
    except (ValueError, tomllib.TOMLDecodeError) as exc:
        raise UsageError(f"{flag}: not valid JSON or TOML: {str(exc).splitlines()[0]}") from None
    if not isinstance(doc, Mapping):
        raise UsageError(f"{flag}: expected an object with a `known` list")
    extra = [str(k) for k in doc if k != "known"]
    if extra:
        raise UsageError(f"{flag}: unknown key {extra[0][:40]!r}; a baseline has one key, known (a list of entries)")
    raw = doc.get("known", [])
    if not isinstance(raw, list):
        raise UsageError(f"{flag}: known must be a list of entries")
    entries = tuple(_entry(item, f"{flag}: entry {n}", known_ids) for n, item in enumerate(raw, 1))
    seen: set[tuple[str, str | None]] = set()
    for entry in entries:
        key = (entry.check, entry.wire)
        if key in seen:
            era = f" for era {entry.era}" if entry.era else ""
            raise UsageError(f"{flag}: {entry.check} is listed twice{era}")
        seen.add(key)
    return entries


def load(path: str, known_ids: tuple[str, ...] = (), strict: bool = False) -> Baseline:
    """Read and check a baseline file; every problem is a UsageError naming it."""
    from tasks_conformance.core.flag_values import read_small_file

    data = read_small_file("--baseline", path, MAX_BASELINE_BYTES)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise UsageError(f"--baseline {path}: not UTF-8 text") from None
    return Baseline(path=path, entries=parse(text, path, known_ids), strict=strict)


# ---------------------------------------------------------------------------------------------
# Applying


def _applies(entry: BaselineEntry, wires: frozenset[str]) -> bool:
    return entry.wire is None or entry.wire in wires


def apply(result: RunResult, baseline: Baseline, today: dt.date | None = None, wire: str | None = None) -> RunResult:
    """`result` (a RunResult) with the baseline applied: known failures marked, fixed entries
    marked on their passing check, the outcome and incomplete reason decided again. `wire`: the
    wire the run was pinned to (--era both), which an entry's era is matched against even when
    the server did not speak it; None: the wire the run found."""
    from tasks_conformance.core.result import decide_outcome, incomplete_reason

    day = today or dt.date.today()
    wires = run_wires(result, wire)
    by_id = {c.id: c for c in result.checks}
    states: list[tuple[BaselineEntry, EntryState]] = []
    marked: dict[str, BaselineMark] = {}
    for entry in baseline.entries:
        check = by_id.get(entry.check)
        state: EntryState = "unused"
        if check is not None and _applies(entry, wires):
            if check.status == "failed":
                state = "expired" if entry.expired(day) else "known"
            elif check.status == "passed":
                state = "fixed"
        states.append((entry, state))
        if state != "unused" and entry.check not in marked:
            expires = entry.expires.isoformat() if entry.expires else None
            marked[entry.check] = BaselineMark(state, entry.reason, entry.era, expires)
    checks = [replace(c, baseline=marked[c.id]) if c.id in marked else c for c in result.checks]
    outcome = decide_outcome(checks, result.interrupted)
    report = BaselineReport(baseline.path, baseline.strict, tuple(states))
    if outcome != "failed" and baseline.strict and report.count("fixed"):
        outcome = "failed"
    reason = incomplete_reason(checks, result.interrupted, result.target) if outcome == "incomplete" else None
    return replace(result, checks=checks, outcome=outcome, incompleteReason=reason, baseline=report)


# ---------------------------------------------------------------------------------------------
# Writing (--update-baseline)


def entries_for(result: RunResult, previous: Iterable[BaselineEntry] = (),
                era: str | None = None) -> list[BaselineEntry]:
    """One entry per failed check of `result` (known ones included), keeping the reason and
    expiry of a previous entry for the same check and era; new ones get a placeholder reason.
    `era`: the protocol version the run was pinned to (--era both), which its entries name even
    when the server did not speak it; None: the era the run found."""
    wires = run_wires(result, era)
    written = _era_of(wires)
    old = [e for e in previous if _applies(e, wires)]
    out: list[BaselineEntry] = []
    for check in result.checks:
        if check.status != "failed":
            continue
        kept = next((e for e in old if e.check == check.id), None)
        if kept is not None:
            # Kept as written, expiry included: extending a deadline is the reader's decision.
            out.append(kept)
        else:
            out.append(BaselineEntry(check=check.id, reason=PLACEHOLDER_REASON, era=written,
                                     wire=_wire_of(written, "--era") if written else None))
    return out


def dump(entries: Iterable[BaselineEntry], path: str) -> str:
    """The baseline file's text: JSON for a .json path, TOML otherwise."""
    docs = [{k: v for k, v in e.to_json().items() if v is not None} for e in entries]
    if path.lower().endswith(".json"):
        return json.dumps({"known": docs}, indent=2, ensure_ascii=False) + "\n"
    import tomli_w

    header = ("# Known failures for tasks-conformance (--baseline). "
              "Each needs a reason; expires = YYYY-MM-DD is optional.\n")
    for doc, entry in zip(docs, entries, strict=True):
        if entry.expires is not None:
            doc["expires"] = entry.expires  # a TOML date, not a string
    return header + tomli_w.dumps({"known": docs})


def update(path: str, result: RunResult, known_ids: tuple[str, ...] = (), era: str | None = None) -> int:
    """Write `path` from the run's failures (reasons kept from the file already there); returns
    how many entries it holds. Written to a temporary file first, then moved into place."""
    previous: tuple[BaselineEntry, ...] = ()
    if os.path.exists(path):
        previous = load(path, known_ids).entries
    entries = entries_for(result, previous, era)
    # Entries for the other era (this run could not judge them) are kept as they were.
    wires = run_wires(result, era)
    entries += [e for e in previous if not _applies(e, wires)]
    text = dump(entries, path)
    tmp = f"{path}.tmp-{os.getpid()}"
    try:
        with open(tmp, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except OSError as exc:
        raise UsageError(f"--update-baseline: cannot write {path!r}: {exc.strerror}") from None
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return len(entries)
