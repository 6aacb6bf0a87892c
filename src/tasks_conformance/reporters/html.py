"""The `html` reporter: one self-contained HTML file (`--reporter html=report.html`).

The run's header; for a client run, what the client did in each scenario (how it ended, its
outcome line, the end of its stderr: open when one did not end cleanly); on a failing run, the
failed checks first (`lead`: each with the rule it broke and expected/actual), before what could
not run; the checks grouped by spec area, titled in words (failed first and open, a filter for
failed / warnings of passed checks / all, on "failed" when something failed), and the exchange
drawn as a timeline (html_timeline.py, long pauses drawn as breaks): a check lights up the frames
it rests on, a frame shows its bytes. `--era both` and `suite` get one section per run.

Nothing a server sent can act in the page: the run is embedded as JSON in a
`<script type="application/json">` (never executed; `<`, `>`, `&`, U+2028/2029 escaped, so no
sequence in it can close the element), the page's own script draws everything with `textContent`
and DOM calls (never innerHTML with data), and a Content-Security-Policy admits only the page's
own inline script and style, by hash: no network, no font, no image, no other script.
"""

from __future__ import annotations

import base64
import hashlib
import json
from importlib.resources import files
from typing import TYPE_CHECKING, Any, TextIO

from tasks_conformance.core.areas import area_title
from tasks_conformance.core.profiles import CLIENT_PROFILES
from tasks_conformance.core.result import EXIT_CODES, EXIT_INTERRUPTED
from tasks_conformance.reporters import PLAIN
from tasks_conformance.reporters._failure import expected_actual
from tasks_conformance.reporters.html_timeline import inert, timeline

if TYPE_CHECKING:
    from tasks_conformance.core.result import CheckResult, RunResult
    from tasks_conformance.core.scenario_record import ScenarioRecord
    from tasks_conformance.core.wirelog import WireLog
    from tasks_conformance.reporters import ReportOptions

# Which checks come first: the order of their bucket (a check with warnings comes after failures).
_ORDER = {"failed": 0, "could-not-run": 1, "known": 2, "deferred": 3, "passed": 4, "not-applicable": 5}
MAX_TEXT = 20_000  # one message, detail or cause in the page (the json report has them whole)
_CLIENT_PROFILE_IDS = frozenset(p.id for p in CLIENT_PROFILES.values())



def _asset(name: str) -> str:
    return (files("tasks_conformance.reporters") / name).read_text(encoding="utf-8")


def _hash(source: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(source.encode("utf-8")).digest()).decode("ascii") + "'"


def embedded_json(value: Any) -> str:
    """JSON that is inert inside a <script> element: ASCII only (a lone surrogate becomes \\udXXX,
    U+2028/2029 escaped), and `<`, `>`, `&` as \\u escapes, so nothing in it can end the element
    or open a comment."""
    text = json.dumps(value, ensure_ascii=True, separators=(",", ":"), allow_nan=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _s(value: Any, limit: int = MAX_TEXT) -> str:
    text = str(value)
    return inert(text if len(text) <= limit else text[:limit] + f"… ({len(text)} characters)")


def _json_text(value: Any) -> str:
    return _s(json.dumps(value, indent=2, ensure_ascii=False, default=str))


def exit_code(result: RunResult) -> int:
    return EXIT_INTERRUPTED if result.interrupted else EXIT_CODES.get(result.outcome, 1)


def subject(result: RunResult) -> str:
    """"client" for a run of the client checks (a client profile), else "server"."""
    return "client" if result.profile in _CLIENT_PROFILE_IDS else "server"


def _check(check: CheckResult, causes: dict[str, tuple[str, str]]) -> dict[str, Any]:
    named, others = check.broken_rules if check.status == "failed" else (check.rules, [])
    rules = [{"id": r.id, "level": r.level, "text": _s(r.text), "url": r.url, "broken": check.status == "failed"}
             for r in named] + [{"id": r.id, "level": r.level, "text": _s(r.text), "url": r.url, "broken": False}
                                for r in others]
    out: dict[str, Any] = {
        "id": check.id, "title": _s(check.title), "area": check.section, "bucket": check.bucket,
        "message": _s(check.message), "rules": rules,
        "warnings": [{"text": _s(w.text), "policies": [p.id for p in w.refs]} for w in check.warnings],
        "policies": [{"id": p.id, "url": p.url} for p in check.policies],
        "evidence": list(check.evidence), "durationMs": check.durationMs,
        "details": {_s(k, 200): _json_text(v) for k, v in check.details.items() if k != "traceback"},
    }
    if check.id in causes:
        out["cause"], out["fix"] = (_s(t) for t in causes[check.id])
    if check.baseline is not None:
        out["baseline"] = check.baseline.state
    if check.bucket == "deferred":  # the check that owns the rule and reports the finding
        out["deferredTo"] = _s(check.deferredTo or "", 200)
    if check.bucket == "failed":  # expected/actual on one line each, as every report words them
        out["expectedActual"] = [[key, _s(value)] for key, value in expected_actual(check)]
    return out


def _scenario(record: ScenarioRecord) -> dict[str, Any]:
    """What the client did in one scenario (a client run): how it ended, in words and as a flag a
    reader can sort on, and the record's lines for people after its head line (limits, the outcome
    line, the end of stderr, what it left behind), already redacted and bounded by the runner."""
    clean = record.started and not record.timed_out and record.exit_code == 0 and record.problem is None
    return {
        "scenario": _s(record.scenario, 500), "era": _s(record.era, 100), "transport": _s(record.transport, 100),
        "status": _s(record.status, 500), "ok": clean, "durationMs": record.duration_ms,
        "timeoutMs": record.timeout_ms, "messages": record.messages, "connections": record.connections,
        "problem": _s(record.problem) if record.problem else None,
        "lines": [_s(line.strip()) for line in record.lines()[1:]],
    }


def _rank(check: CheckResult) -> tuple[int, int]:
    return _ORDER.get(check.bucket, 6), 0 if check.warnings else 1


def run_data(label: str, result: RunResult, wire: WireLog | None = None) -> dict[str, Any]:
    """One run's section: header, the failed checks' ids (`lead`, in page order: what the page
    leads with; never a deferral, nor a failure a baseline accepts), checks (areas with failures
    first; in each, failed first), timeline."""
    causes = {cid: (c.cause, c.fix) for c in result.incompleteCauses for cid in c.checks}
    by_area: dict[str, list[CheckResult]] = {}
    for check in sorted(result.checks, key=_rank):
        by_area.setdefault(check.section, []).append(check)
    areas = sorted(by_area.items(), key=lambda item: _rank(item[1][0]))
    d = result.discovery
    return {
        "label": _s(label, 500),
        "header": {
            "target": _s(result.target, 2000), "era": _s(d.protocolVersion or "none"), "wire": str(d.wire),
            "profile": result.profile, "score": result.score, "outcome": result.headline,
            "exitCode": exit_code(result), "summary": result.summary, "startedAt": result.startedAt,
            "durationMs": result.durationMs, "toolVersion": result.toolVersion,
            "tool": _s(d.probedTool) if d.probedTool else None, "subject": subject(result),
        },
        "lead": [c.id for _area, checks in areas for c in checks if c.bucket == "failed"],
        "causes": [{"cause": _s(c.cause), "fix": _s(c.fix), "checks": list(c.checks)}
                   for c in result.incompleteCauses],
        "areas": [{"area": _s(area), "title": _s(area_title(area)), "checks": [_check(c, causes) for c in checks]}
                  for area, checks in areas],
        "scenarios": [_scenario(s) for s in result.scenarios],
        "timeline": timeline(wire if wire is not None else result.wire),
    }


def document(runs: list[dict[str, Any]], title: str = "tasks-conformance report") -> str:
    """The whole page for these runs' sections (run_data)."""
    css, js = _asset("html_report.css"), _asset("html_report.js")
    csp = (f"default-src 'none'; script-src {_hash(js)}; style-src {_hash(css)}; img-src 'none'; "
           "connect-src 'none'; font-src 'none'; base-uri 'none'; form-action 'none'")
    data = embedded_json({"title": title, "runs": runs})
    return (
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        f"<meta http-equiv=\"Content-Security-Policy\" content=\"{csp}\">\n"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
        "<meta name=\"referrer\" content=\"no-referrer\">\n"
        f"<title>tasks-conformance report</title>\n<style>{css}</style>\n</head>\n<body>\n"
        "<noscript>This report draws itself with its own script; the json reporter has the same data.</noscript>\n"
        "<main id=\"report\"></main>\n"
        f"<script type=\"application/json\" id=\"report-data\">{data}</script>\n"
        f"<script>{js}</script>\n</body>\n</html>\n"
    )


def render_html(result: RunResult, out: TextIO, *, options: ReportOptions = PLAIN) -> None:
    out.write(document([run_data("", result)]))
