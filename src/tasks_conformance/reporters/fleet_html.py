"""The fleet page: the `html` report of a suite or a merge (`--reporter html=fleet.html`).

One self-contained file: the matrix targets × checks (the checks grouped by spec area), each cell
the verdict; filters by outcome, era, subject, rule and name (and regressions, after `merge
--history`); the rules the fleet breaks, the most broken first ("S-LEG-MUST-02: 4 of 31 servers");
each target's last outcomes and regressions. A click on a target or a cell opens that target's
section as the single-run page draws it (html_report.js: its checks, causes and timeline), below
the matrix, with the check selected.

Made for hundreds of targets: the sections are drawn only when opened, the page embeds each
rule's wording and each check's title once (the sections get them back when drawn), and the
timelines only up to TIMELINE_BUDGET bytes in all (the targets that did not pass first; the
others' sections say their frames are in --wire-log). A merge has no timelines: a json report
holds no wire log.

As the single-run page (html.py): everything is data in `<script type="application/json">`
elements (`embedded_json`: nothing in them can close the element), drawn with DOM calls and
textContent only, under a Content-Security-Policy that admits the page's own scripts and styles
by hash and nothing else. html_report.js is kept in a `<script type="text/plain">` element, never
run as the page loads; to draw a section, fleet_report.js runs that same text as a new inline
script (admitted by its hash) over a data element holding that one run.
"""

from __future__ import annotations

import base64
import hashlib
import json
from importlib.resources import files
from typing import TYPE_CHECKING, Any

from tasks_conformance.core.areas import area_title
from tasks_conformance.core.fleet_history import CODES, FAILING
from tasks_conformance.reporters.html import embedded_json, run_data
from tasks_conformance.reporters.html import subject as run_subject

if TYPE_CHECKING:
    from tasks_conformance.core.multirun_result import Combined, NamedRun
    from tasks_conformance.core.result import CheckResult

TIMELINE_BUDGET = 8 * 1024 * 1024  # bytes of timeline JSON a fleet page embeds, over every target
_EXIT = {"passed": 0, "failed": 1, "incomplete": 3, "interrupted": 130}


def _asset(name: str) -> str:
    return (files("tasks_conformance.reporters") / name).read_text(encoding="utf-8")


def _hash(source: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(source.encode("utf-8")).digest()).decode("ascii") + "'"


def subject(run: NamedRun) -> str:
    return run_subject(run.result)


def era(run: NamedRun) -> str:
    return run.era or run.result.discovery.protocolVersion or "none"


def columns(combined: Combined) -> list[tuple[str, list[CheckResult]]]:
    """Every check any run has, grouped by area: areas and checks in the order the runs first have them."""
    areas: dict[str, dict[str, CheckResult]] = {}
    for run in combined.runs:
        for check in run.result.checks:
            areas.setdefault(check.section, {}).setdefault(check.id, check)
    return [(area, list(checks.values())) for area, checks in areas.items()]


def _broken(check: CheckResult) -> list[str]:
    """The rules a failure (a known one too) broke; none for any other verdict."""
    return [r.id for r in check.broken_rules[0]] if check.status == "failed" else []


def rule_counts(combined: Combined) -> list[dict[str, Any]]:
    """Each rule some target broke: in how many targets of a subject (a target that ran each era
    counts once), of how many that judged it, how many a baseline accepts; the most broken first."""
    judged: dict[tuple[str, str], set[str]] = {}
    broke: dict[tuple[str, str], set[str]] = {}
    known: dict[tuple[str, str], set[str]] = {}
    runs: dict[tuple[str, str], list[int]] = {}
    for index, run in enumerate(combined.runs):
        who, name = subject(run), run.target or run.name
        for check in run.result.checks:
            if check.status in ("passed", "failed"):
                for rule in check.requirements:
                    judged.setdefault((rule, who), set()).add(name)
            for rule in _broken(check):
                broke.setdefault((rule, who), set()).add(name)
                runs.setdefault((rule, who), []).append(index)
                if check.bucket == "known":
                    known.setdefault((rule, who), set()).add(name)
    def rank(key: tuple[str, str]) -> tuple[int, float, str, str]:
        failed, of = len(broke[key]), len(judged.get(key, set()) | broke[key])
        return -failed, -failed / of, key[0], key[1]

    return [{"rule": rule, "subject": who, "failed": len(broke[(rule, who)]),
             "of": len(judged.get((rule, who), set()) | broke[(rule, who)]),
             "known": len(known.get((rule, who), set())), "runs": sorted(set(runs[(rule, who)]))}
            for rule, who in sorted(broke, key=rank)]


def _target(index: int, run: NamedRun, cols: list[tuple[str, list[CheckResult]]], combined: Combined) -> dict[str, Any]:
    by_id = {c.id: c for c in run.result.checks}
    verdicts = "".join(CODES.get(by_id[c.id].bucket, "C") if c.id in by_id else "-" for _a, cs in cols for c in cs)
    broken = {c.id: _broken(c) for c in run.result.checks if c.status == "failed"}
    marks = combined.history.targets.get(run.name) if combined.history is not None else None
    return {
        "label": run.name, "name": run.target or run.name, "era": era(run), "subject": subject(run),
        "wire": str(run.result.discovery.wire), "outcome": run.result.headline, "summary": run.result.summary,
        "score": run.result.score, "v": verdicts, "broken": broken,
        "history": marks.to_json() if marks is not None else None,
        "failing": sum(1 for v in verdicts if v in FAILING),
    }


def _lean(section: dict[str, Any], rules: dict[str, dict[str, str]], titles: dict[str, str]) -> None:
    """The section without what every section repeats: each rule's wording and link, each check's
    title (the page has them once; fleet_report.js puts them back before drawing it)."""
    for area in section["areas"]:
        for check in area["checks"]:
            titles.setdefault(check["id"], check["title"])
            check["title"] = ""
            for rule in check["rules"]:
                rules.setdefault(rule["id"], {"level": rule["level"], "text": rule["text"], "url": rule["url"]})
                rule["text"] = rule["url"] = ""


def _timelines(sections: list[dict[str, Any]], combined: Combined) -> int:
    """Keep the timelines that fit in TIMELINE_BUDGET, the runs that did not pass first; the
    others' frames are left out (`omitted`: the section says they are in --wire-log). Returns how
    many were left out."""
    order = sorted(range(len(sections)), key=lambda i: (combined.runs[i].result.outcome == "passed", i))
    used = dropped = 0
    for i in order:
        timeline = sections[i]["timeline"]
        size = len(json.dumps(timeline, separators=(",", ":")))
        if used + size <= TIMELINE_BUDGET or not timeline["frames"]:
            used += size
            continue
        dropped += 1
        sections[i]["timeline"] = {**timeline, "frames": [], "polls": [], "statuses": [],
                                   "omitted": len(timeline["frames"]) + int(timeline.get("omitted") or 0)}
    return dropped


def fleet_data(combined: Combined, sections: list[dict[str, Any]]) -> dict[str, Any]:
    """What fleet_report.js draws the overview from; `sections` are made lean in passing."""
    rules: dict[str, dict[str, str]] = {}
    titles: dict[str, str] = {}
    for section in sections:
        _lean(section, rules, titles)
    cols = columns(combined)
    history = combined.history
    return {
        "outcome": combined.headline, "summary": combined.summary, "exitCode": _EXIT.get(combined.headline, 1),
        "columns": [{"area": area, "title": area_title(area),
                     "checks": [{"id": c.id, "title": titles.get(c.id, c.title), "rules": list(c.requirements)}
                                for c in checks]}
                    for area, checks in cols],
        "rules": rules,
        "targets": [_target(i, run, cols, combined) for i, run in enumerate(combined.runs)],
        "ruleCounts": rule_counts(combined),
        "history": None if history is None else {**history.to_json(), "earlier": list(history.earlier)},
        "timelinesLeftOut": _timelines(sections, combined),
    }


def fleet_document(combined: Combined, title: str = "tasks-conformance fleet") -> str:
    """The whole page: the overview's data, every target's section data, both scripts and styles."""
    sections = [run_data(run.name, run.result, run.wire) for run in combined.runs]
    fleet = fleet_data(combined, sections)
    fleet["title"] = title
    run_js, run_css = _asset("html_report.js"), _asset("html_report.css")
    js, css = _asset("fleet_report.js"), _asset("fleet_report.css")
    csp = (f"default-src 'none'; script-src {_hash(js)} {_hash(run_js)}; style-src {_hash(run_css)} {_hash(css)}; "
           "img-src 'none'; connect-src 'none'; font-src 'none'; base-uri 'none'; form-action 'none'")
    return (
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        f"<meta http-equiv=\"Content-Security-Policy\" content=\"{csp}\">\n"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
        "<meta name=\"referrer\" content=\"no-referrer\">\n"
        f"<title>{title}</title>\n<style>{run_css}</style>\n<style>{css}</style>\n</head>\n<body>\n"
        "<noscript>This report draws itself with its own script; the json reporter has the same data.</noscript>\n"
        "<main id=\"fleet\"></main>\n"
        # The sections' data first: html.py's shape ({title, runs}), under the id html_report.js reads.
        f"<script type=\"application/json\" id=\"report-data\">{embedded_json({'title': title, 'runs': sections})}"
        "</script>\n"
        f"<script type=\"application/json\" id=\"fleet-data\">{embedded_json(fleet)}</script>\n"
        f"<script type=\"text/plain\" id=\"run-script\">{run_js}</script>\n"
        f"<script>{js}</script>\n</body>\n</html>\n"
    )
