"""`tasks-conformance merge REPORT…`: the json reports of single runs, `--era both` runs, suites and
suite shards, combined into the report one `suite` of them all would have written.

Each report names its runs: a suite's (or a shard's) by each target's name and era, a single
run's by its target (the URL or the command line, as the report has it), each era of an
`--era both` run as that target with the era. The combined report is a suite's (kind
tasks-conformance-suite, schemas/multi.schema.json) with every reporter, its exit code the
suite's rule (the worst run: incomplete, then failed, then passed; 130 when one was interrupted).
Shards of one suite (`--shard I/N`, the same N) go back into the file's order: the k-th target of
shard I was the file's target (I-1) + k*N. A run present twice is a usage error naming it, unless
`latest`: then the newest by `startedAt` stays (of equal times, the later report on the command line).

Every input is read before any report is opened, so a report written over an input loses nothing.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from tasks_conformance.core.errors import UsageError
from tasks_conformance.core.multirun_result import Combined, NamedRun
from tasks_conformance.core.result_doc import NotAReport, ReportedResult, reported

MULTI_VERSION = "1"
_SUITE, _ERAS = "tasks-conformance-suite", "tasks-conformance-eras"
MAX_REPORT_BYTES = 512 * 1024 * 1024


@dataclass(frozen=True)
class _Run:
    """One run read from a report, with where it came from and where it goes in the merge."""

    label: str
    name: str
    era: str | None
    result: ReportedResult
    path: str
    order: tuple[int, int, int]  # (the report's place, or its suite's first shard's; the target's; the run's)


@dataclass(frozen=True)
class Merged:
    combined: Combined
    notes: tuple[str, ...]  # said on stderr: shards missing from a sharded suite


def read_report(path: str) -> Any:
    """The document in `path`; a UsageError naming it when it cannot be read or is not JSON."""
    try:
        with open(path, "rb") as fh:
            data = fh.read(MAX_REPORT_BYTES + 1)
    except OSError as exc:
        raise UsageError(f"merge: cannot read {path!r}: {exc.strerror}") from None
    if len(data) > MAX_REPORT_BYTES:
        raise UsageError(f"merge: {path}: larger than {MAX_REPORT_BYTES >> 20} MiB, not a report")
    try:
        return json.loads(data)
    except (ValueError, UnicodeDecodeError) as exc:
        raise UsageError(f"merge: {path}: not JSON ({str(exc).splitlines()[0][:100]}), so not a report") from None


def _one(path: str, doc: Any, place: int) -> tuple[list[_Run], tuple[int, int] | None, bool]:
    """The runs of one report, its shard (I, N) if it is a suite's shard, and whether it was interrupted."""
    def bad(why: str) -> UsageError:
        return UsageError(f"merge: {path}: {why}")

    if not isinstance(doc, dict):
        raise bad("not a JSON object, so not a report")
    kind = doc.get("kind")
    if kind in (_SUITE, _ERAS):
        version = doc.get("schemaVersion")
        if version != MULTI_VERSION:
            raise bad(f"a report of multi schema version {str(version)[:20]}; this tasks-conformance reads "
                      f"version {MULTI_VERSION} (merge it with the version that wrote it)")
    try:
        if kind == _SUITE:
            shard = _shard(doc.get("shard"))
            targets = doc["targets"]
            if not isinstance(targets, list):
                raise NotAReport("targets is not a list")
            names = list(dict.fromkeys(str(t["name"]) for t in targets))
            runs = []
            for n, t in enumerate(targets):
                index = names.index(str(t["name"]))
                if shard is not None:  # its place in the file the shards were cut from
                    index = shard[0] - 1 + index * shard[1]
                era = t.get("era") if isinstance(t.get("era"), str) else None
                runs.append(_Run(str(t["label"]), str(t["name"]), era, reported(t["result"]), path,
                                 (place, index, n)))
            return runs, shard, doc.get("interrupted") is True
        if kind == _ERAS:
            eras = doc["eras"]
            target = str(doc["target"])
            if not isinstance(eras, dict):
                raise NotAReport("eras is not an object")
            return [_Run(f"{target} ({era})", target, str(era), reported(run), path, (place, 0, n))
                    for n, (era, run) in enumerate(eras.items())], None, doc.get("interrupted") is True
        result = reported(doc)
        return [_Run(result.target, result.target, None, result, path, (place, 0, 0))], None, False
    except NotAReport as exc:
        raise bad(str(exc)) from None
    except (KeyError, TypeError, AttributeError) as exc:
        raise bad(f"not a tasks-conformance report ({type(exc).__name__}: {str(exc)[:60]})") from None


def _shard(value: Any) -> tuple[int, int] | None:
    if value is None:
        return None
    from tasks_conformance.entry.suite import parse_shard

    try:
        return parse_shard(str(value))
    except UsageError:
        raise NotAReport(f"its shard {str(value)[:20]!r} is not I/N") from None


def merge(paths: Sequence[str], *, latest: bool = False) -> Merged:
    """Read every report and combine their runs as one suite's (see the module's docstring)."""
    if not paths:
        raise UsageError("merge: give the json reports to merge (REPORT…)")
    runs: list[_Run] = []
    groups: dict[int, int] = {}  # shard count N -> the place of the first shard of N
    shards: dict[int, set[int]] = {}
    interrupted = False
    for place, path in enumerate(paths):
        found, shard, stopped = _one(path, read_report(path), place)
        interrupted = interrupted or stopped
        if shard is not None:
            first = groups.setdefault(shard[1], place)
            shards.setdefault(shard[1], set()).add(shard[0])
            found = [replace(r, order=(first, *r.order[1:])) for r in found]
        runs.extend(found)
    kept: dict[str, _Run] = {}
    for run in sorted(runs, key=lambda r: r.order):
        seen = kept.get(run.label)
        if seen is None:
            kept[run.label] = run
            continue
        if not latest:
            raise UsageError(f"merge: {run.label!r} is in {seen.path} and in {run.path}; give --latest to keep "
                             "the newer run of it")
        newer = (run.result.startedAt, paths.index(run.path)) >= (seen.result.startedAt, paths.index(seen.path))
        if newer:  # the newest result, in the place the first one had
            kept[run.label] = replace(run, order=seen.order)
    notes = tuple(f"shard {', '.join(f'{i}/{n}' for i in sorted(set(range(1, n + 1)) - have))} of a suite "
                  f"sharded {n} ways not given: the merged report lacks its targets"
                  for n, have in shards.items() if len(have) < n)
    named = tuple(NamedRun(name=r.label, era=r.era, target=r.name, result=r.result, wire=None)
                  for r in kept.values())
    return Merged(Combined(kind="suite", runs=named, interrupted=interrupted), notes)


def run_merge(paths: Sequence[str], *, latest: bool, history: str | None, history_length: int,
              fail_on_regression: bool, format: str | None, reporters: Sequence[str], quiet: bool,
              verbose: bool, debug: bool) -> int:
    """The `merge` command: every input read and checked first, then the reports; the exit code."""
    from tasks_conformance.entry.multirun import write_combined
    from tasks_conformance.entry.suite import output_config
    from tasks_conformance.reporters.output import prepare_reports

    out = output_config(format, reporters, quiet=quiet, verbose=verbose, debug=debug)
    if fail_on_regression and history is None:
        raise UsageError("--fail-on-regression needs --history DIR (a regression is a change since the last run)")
    if history_length < 1:
        raise UsageError(f"--history-length must be at least 1, got {history_length}")
    merged = merge(paths, latest=latest)
    if history is not None:
        import os

        try:
            os.makedirs(history, exist_ok=True)
        except OSError as exc:
            raise UsageError(f"--history: cannot make the folder {history!r}: {exc.strerror}") from None
    combined, record, notes = merged.combined, None, list(merged.notes)
    if history is not None:
        from tasks_conformance.core import fleet_history as fh

        record = fh.free_name(history, combined.history_record(fh.run_name(r.result.startedAt for r in combined.runs)))
        earlier, problems = fh.read_records(history, before=record.run)
        notes += problems
        combined = replace(combined, history=fh.marks(record, earlier, history_length))
    targets = prepare_reports(out)
    try:
        for note in notes:
            print(f"tasks-conformance: merge: {note}", file=sys.stderr)
        for problem in write_combined(out, targets, combined):
            print(f"tasks-conformance: reporter error: {problem}", file=sys.stderr)
    finally:
        targets.close()
    if history is not None and record is not None:
        from tasks_conformance.core.fleet_history import write_record

        try:
            write_record(history, record)
        except OSError as exc:
            raise UsageError(f"--history: cannot write into {history!r}: {exc.strerror}") from None
    code = combined.exit_code
    if fail_on_regression and code == 0 and combined.history is not None and combined.history.regressions:
        code = 1  # a regression fails the merge, even where a baseline accepts the failure
    return code
