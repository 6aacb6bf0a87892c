"""The `json` and `json-summary` reporters.

`json` is `RunResult.to_json()` in full (shape: schemas/json.schema.json). `json-summary` is the
stable, smaller document dashboards read (schemas/json-summary.schema.json): it keeps
`discovery` (what was negotiated and probed: the verdicts mean little without it) and leaves out
descriptions, evidence and check details. Both are always valid UTF-8 JSON whatever the server
sent (see `_text.dumps`).

Both carry the run's `profile` id and `score`, and per check `requirements` as objects
`{id, level, text, url}` with the plain ids in `requirementIds` (summary schema 2; in schema 1
`requirements` was the id list) and the cited `policies` as `{id, url}`. `json` also has each
check's `evidenceFrames`: the redacted frames behind `evidence`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TextIO

from tasks_conformance.core.text import dumps
from tasks_conformance.reporters import PLAIN

if TYPE_CHECKING:
    from tasks_conformance.core.result import RunResult
    from tasks_conformance.reporters import ReportOptions

SUMMARY_SCHEMA_VERSION = "2"
SUMMARY_KIND = "tasks-conformance"


def render_json(result: RunResult, out: TextIO, *, options: ReportOptions = PLAIN) -> None:
    out.write(dumps(result.to_json(), indent=2))
    out.write("\n")


def summary_document(result: RunResult) -> dict[str, Any]:
    return {
        "schemaVersion": SUMMARY_SCHEMA_VERSION,
        "kind": SUMMARY_KIND,
        "toolVersion": result.toolVersion,
        "profile": result.profile,
        "score": result.score,
        "target": result.target,
        "outcome": result.outcome,
        "passed": result.passed,
        "interrupted": result.interrupted,
        "incompleteReason": result.incompleteReason,
        "incompleteCauses": [c.to_json() for c in result.incompleteCauses],
        "summary": result.summary,
        "durationMs": result.durationMs,
        "counts": result.counts(),
        "discovery": result.discovery.to_json(),
        "categorySummary": {k: v.to_json() for k, v in result.category_summary().items()},
        "checks": [
            {
                "id": c.id,
                "category": c.category,
                "status": c.status.value,
                "skipReason": c.skipReason,
                "deferredTo": c.deferredTo,
                "message": c.message,
                "warnings": [w.text for w in c.warnings],
                "policies": [p.to_json() for p in c.policies],
                "requirements": [r.to_json() for r in c.rules],
                "requirementIds": list(c.requirements),
                "durationMs": c.durationMs,
                # Only with a --baseline, as RunResult.to_json: otherwise the document is unchanged.
                **({"baseline": c.baseline.to_json() if c.baseline else None} if result.baseline else {}),
            }
            for c in result.checks
        ],
        **({"baseline": result.baseline.to_json()} if result.baseline is not None else {}),
    }


def render_json_summary(result: RunResult, out: TextIO, *, options: ReportOptions = PLAIN) -> None:
    out.write(dumps(summary_document(result), indent=2))
    out.write("\n")
