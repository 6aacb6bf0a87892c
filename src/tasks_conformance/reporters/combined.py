"""Reports of several runs at once (`--era both`, `suite FILE`), built from each run's own report.

One document per invocation, whatever the number of runs:

* `json` / `json-summary`: the runs' documents (each exactly the single-run shape) under `eras`
  (an object keyed by protocol version) or `targets` (a list, in the file's order), with the
  combined `outcome`; shape: schemas/multi.schema.json (`tasks-conformance schema multi`).
* `junit-xml`: one `<testsuites>` with one `<testsuite>` per run, named after the era or target.
* `markdown`: one section per era; for a suite a matrix check × target, then each target's
  failures. `human`: one section per era; for a suite one line per target, then the failures.
* A third-party reporter knows only the single-run signature: it is called once per run, the
  reports separated by a blank line.

Every value that may come from a server goes through the same escaping as the single-run
reporters (markdown `cell`, human `Text` with `one_line`, ElementTree for XML).
"""

from __future__ import annotations

import io
import xml.etree.ElementTree as ET
from typing import TYPE_CHECKING, Any, TextIO

from tasks_conformance.core.text import dumps, one_line
from tasks_conformance.reporters import PLAIN, render

if TYPE_CHECKING:
    from tasks_conformance.core.multirun_result import Combined, NamedRun
    from tasks_conformance.reporters import ReportOptions

MULTI_SCHEMA_VERSION = "1"
WIRE_CHECK = "tasks-wire-resolvable"  # fails when the server offers no tasks wire in the era asked
KINDS = {"eras": "tasks-conformance-eras", "suite": "tasks-conformance-suite"}


def render_combined(name: str, combined: Combined, out: TextIO, options: ReportOptions = PLAIN) -> None:
    """Write the report called `name` for every run of `combined` to `out`."""
    writer = _WRITERS.get(name)
    if writer is not None:
        writer(combined, out, options)
        return
    for n, run in enumerate(combined.runs):
        if n:
            out.write("\n")
        render(name, run.result, out, options)


# Said above an era's section when the server offered no tasks wire in it: --era both asked for
# both, so that era's wire check fails, and its message names the --expect-wire the run used.
_MISSING_ERA = ("The server offered no tasks wire on {era}: --era both runs each era as --expect-wire "
                "of that era's wire, so tasks-wire-resolvable fails for this one.")


def _missing_era(run: NamedRun) -> bool:
    """Did the server answer but offer no tasks wire in this era? Not said of a run that was
    interrupted or never started, nor of a server that could not be reached: then the wire
    check could not run, it did not fail."""
    return run.result.discovery.wire == "none" and any(
        c.id == WIRE_CHECK and c.bucket == "failed" for c in run.result.checks)


def _era_label(run: NamedRun) -> str:
    """`2026-07-28, extension wire`; `…, no tasks wire` when the server did not speak it; the
    era alone when nothing is known of its wire (not reached, interrupted, never started)."""
    wire = run.result.discovery.wire
    if wire != "none":
        return f"{run.era}, {wire} wire"
    return f"{run.era}, no tasks wire" if _missing_era(run) else f"{run.era}"


def _label(run: NamedRun) -> str:
    return _era_label(run) if run.era and not run.target else run.name


# -- json ----------------------------------------------------------------------------------


def document(combined: Combined, summary: bool = False) -> dict[str, Any]:
    """The combined JSON document; each run's entry is its `json` (or `json-summary`) document."""
    from tasks_conformance import __version__
    from tasks_conformance.reporters.json_report import summary_document

    def one(run: NamedRun) -> dict[str, Any]:
        return summary_document(run.result) if summary else run.result.to_json()

    doc: dict[str, Any] = {
        "schemaVersion": MULTI_SCHEMA_VERSION,
        "kind": KINDS[combined.kind],
        "toolVersion": __version__,
        "outcome": combined.outcome,
        "passed": combined.passed,
        "interrupted": combined.interrupted,
        "summary": combined.summary,
        "counts": combined.counts(),
    }
    if combined.kind == "eras":
        doc["target"] = combined.runs[0].result.target if combined.runs else ""
        doc["eras"] = {run.era or run.name: one(run) for run in combined.runs}
    else:
        doc["shard"] = combined.shard
        # name: the target's name in the file; label: what the reports call this run (the name,
        # and the era when the target ran each era).
        doc["targets"] = [{"name": run.target or run.name, "era": run.era, "label": run.name,
                           "outcome": run.result.outcome, "result": one(run), **_marks(combined, run)}
                          for run in combined.runs]
        if combined.history is not None:  # merge --history: which runs the marks come from
            doc["history"] = combined.history.to_json()
    return doc


def _marks(combined: Combined, run: NamedRun) -> dict[str, Any]:
    marks = combined.history.targets.get(run.name) if combined.history is not None else None
    return {"history": marks.to_json()} if marks is not None else {}


def _json(combined: Combined, out: TextIO, options: ReportOptions) -> None:
    out.write(dumps(document(combined), indent=2) + "\n")


def _json_summary(combined: Combined, out: TextIO, options: ReportOptions) -> None:
    out.write(dumps(document(combined, summary=True), indent=2) + "\n")


# -- junit-xml -----------------------------------------------------------------------------


def _suite_name(combined: Combined, run: NamedRun, options: ReportOptions) -> str:
    from tasks_conformance.reporters.junit import SUITE_NAME, suite_name

    if run.era and not run.target:
        if options.suite_name:
            return f"{options.suite_name} ({run.era})"
        if run.result.discovery.wire != "none":
            return suite_name(run.result)  # names the era and wire, as a single run's does
        return f"{SUITE_NAME}: {one_line(run.result.target, 200)} ({_era_label(run)})"
    return f"{SUITE_NAME}: {one_line(run.name, 200)}"


def _junit(combined: Combined, out: TextIO, options: ReportOptions) -> None:
    from tasks_conformance.reporters.junit import SUITE_NAME, build_tree

    totals = dict.fromkeys(("tests", "failures", "errors"), 0)
    seconds = 0.0
    root = ET.Element("testsuites", {"name": SUITE_NAME})
    for run in combined.runs:
        tree = build_tree(run.result, _suite_name(combined, run, options))
        for key in totals:
            totals[key] += int(tree.get(key, "0"))
        seconds += float(tree.get("time", "0"))
        root.extend(list(tree))
    root.attrib.update({key: str(value) for key, value in totals.items()})
    root.set("time", f"{seconds:.3f}")
    ET.indent(root)
    encoding = getattr(out, "encoding", None) or "UTF-8"
    text = ET.tostring(root, encoding="unicode")
    if encoding.lower().replace("_", "-") not in ("utf-8", "utf8"):
        try:
            text = text.encode(encoding, "xmlcharrefreplace").decode(encoding)
        except LookupError:
            encoding = "UTF-8"
    out.write(f'<?xml version="1.0" encoding="{encoding}"?>\n{text}\n')


# -- markdown ------------------------------------------------------------------------------

_OUTCOME_EMOJI = {"passed": "✅", "failed": "❌", "incomplete": "⚠️", "interrupted": "⏹️"}  # by headline
_CELL_EMOJI = {"passed": "✅", "failed": "❌", "not-applicable": "➖", "could-not-run": "⚠️",
               "known": "🟡", "deferred": "↪️"}  # as the single-run markdown shows each bucket


def _markdown(combined: Combined, out: TextIO, options: ReportOptions) -> None:
    from tasks_conformance.reporters.markdown import cell, render_markdown

    emoji = _OUTCOME_EMOJI.get(combined.headline, "❔")
    what = "both eras" if combined.kind == "eras" else "suite"
    # Level 2, as a single run's report: appended to a job summary, it sits under the job's title.
    lines = [f"## {emoji} MCP Tasks conformance, {what}: {combined.headline}", "", f"**{cell(combined.summary)}**",
             ""]
    if combined.kind == "suite":
        from tasks_conformance.reporters.history_lines import markdown_lines

        lines += _matrix(combined) if combined.runs else []
        lines += markdown_lines(combined)
        out.write("\n".join(lines) + "\n")
        _suite_details(combined, out)
        return
    out.write("\n".join(lines))
    for run in combined.runs:
        text = io.StringIO()
        render_markdown(run.result, text, options=options)
        body = text.getvalue().split("\n", 1)
        # The run's own heading names the outcome only; in a combined report it names the era.
        run_emoji = _OUTCOME_EMOJI.get(run.result.headline, "❔")
        out.write(f"\n### {run_emoji} {cell(_era_label(run), 120)}: {cell(run.result.headline, 40)}\n")
        if _missing_era(run):
            out.write(f"\n{cell(_MISSING_ERA.format(era=run.era))}\n")
        out.write(body[1] if len(body) > 1 else "\n")


def _matrix(combined: Combined) -> list[str]:
    """Rows: every check any run judged (in first-seen order); columns: the runs."""
    from tasks_conformance.reporters.markdown import cell, code

    order: dict[str, None] = {}
    for run in combined.runs:
        order.update(dict.fromkeys(c.id for c in run.result.checks))
    header = "| Check | " + " | ".join(cell(run.name, 80) for run in combined.runs) + " |"
    lines = [header, "|---|" + "---|" * len(combined.runs)]
    outcome_row = " | ".join(f"{_OUTCOME_EMOJI.get(r.result.headline, '❔')} {r.result.headline}"
                             for r in combined.runs)
    lines.append(f"| **outcome** | {outcome_row} |")
    by_run = [{c.id: c for c in run.result.checks} for run in combined.runs]
    for check_id in order:
        cells = [_CELL_EMOJI.get(checks[check_id].bucket, "❔") if check_id in checks else "" for checks in by_run]
        lines.append(f"| {code(check_id)} | " + " | ".join(cells) + " |")
    lines.append("")
    legend = "✅ passed · ❌ failed · ⚠️ could not run · ➖ not applicable"
    if any(c.bucket == "known" for checks in by_run for c in checks.values()):
        legend += " · 🟡 known failure (baseline)"
    if any(c.bucket == "deferred" for checks in by_run for c in checks.values()):
        legend += " · ↪️ deferred (to the check that owns the rule)"
    lines.append(legend + " · blank: not selected")
    lines.append("")
    return lines


def _suite_details(combined: Combined, out: TextIO) -> None:
    from tasks_conformance.reporters.markdown import Links, cell, failure_lines, incomplete_lines

    links = Links()
    lines: list[str] = []
    for run in combined.runs:
        result = run.result
        if result.outcome == "passed":
            continue
        lines.append(f"### {_OUTCOME_EMOJI.get(result.headline, '❔')} {cell(run.name, 120)}: {result.headline}")
        lines.append("")
        lines.append(f"target {cell(result.target, 300)} · {cell(result.summary)}")
        lines.append("")
        for check in result.checks:
            if check.bucket == "failed":
                lines.extend(failure_lines(check, links))
        if result.incompleteCauses or result.incompleteReason:  # a failed run's causes too
            if lines[-1]:
                lines.append("")
            lines.extend(incomplete_lines(result))
        lines.append("")
    if links.targets:
        lines.extend(links.definitions())
        lines.append("")
    if lines:
        out.write("\n" + "\n".join(lines).rstrip("\n") + "\n")


# -- human ---------------------------------------------------------------------------------


def _human(combined: Combined, out: TextIO, options: ReportOptions) -> None:
    from rich.text import Text

    from tasks_conformance.reporters.human import (
        OUTCOMES,
        TRAILING_SPACE,
        Writer,
        make_console,
        render_human,
        summary_line,
    )

    w = Writer(out)
    console = make_console(out, options)
    word, style = OUTCOMES.get(combined.headline, (combined.headline.upper(), "bold"))
    closing = Text()
    closing.append(word, style=style)
    closing.append(f"  {'both eras' if combined.kind == 'eras' else 'suite'}: {w.s(combined.summary)}")
    if combined.kind == "eras" and not options.quiet:
        for n, run in enumerate(combined.runs):
            if n:
                out.write("\n")
            with console.capture() as capture:
                console.rule(Text(f"era {w.s(_era_label(run))}", style="bold"), characters=w.glyph("━", "="))
            out.write(TRAILING_SPACE.sub(r"\1", capture.get()))
            if _missing_era(run):
                out.write(f"{_MISSING_ERA.format(era=run.era)}\n\n")
            render_human(run.result, out, options=options)
    with console.capture() as capture:
        if combined.kind == "eras" and combined.runs and not options.quiet:
            console.print()  # after the last era's section
        pad = max((len(w.s(_label(run), 80)) for run in combined.runs), default=0)
        for run in combined.runs:
            line = Text(f"{w.s(_label(run), 80):<{pad}}  ", style="bold")
            console.print(line + summary_line(run.result, w), soft_wrap=True)
        if combined.kind == "suite" and not options.quiet:
            from tasks_conformance.reporters.history_lines import human_lines

            _human_failures(console, combined, w, options.verbose)
            if combined.history is not None:
                console.print()
            for said in human_lines(combined):
                console.print(Text(w.s(said, 2000), style="bold" if said.startswith("  ") else ""), soft_wrap=True)
        console.print(closing, soft_wrap=True)
    out.write(TRAILING_SPACE.sub(r"\1", capture.get()))


def _human_failures(console: Any, combined: Combined, w: Any, verbose: bool) -> None:
    """Each target that did not pass: its failed checks (message, broken rules, expected/actual,
    with --verbose the frames the verdict rests on) and why it is incomplete."""
    from rich.text import Text

    from tasks_conformance.reporters._failure import broken_rules, expected_actual, rule_line
    from tasks_conformance.reporters.human import MAX_VERBOSE_FRAME

    for run in combined.runs:
        result = run.result
        if result.outcome == "passed":
            continue
        console.print()
        console.print(Text(f"{w.s(run.name, 80)}: {w.s(result.target, 300)}", style="bold"))
        for check in result.checks:
            if check.bucket != "failed":
                continue
            console.print(Text(f"  {w.glyph('✗', 'x')} {w.s(check.id)}: {w.s(check.message or check.title, 2000)}",
                               style="red"), soft_wrap=True)
            for rule in broken_rules(check)[0]:
                console.print(Text(f"      {w.s(rule_line(rule), 400)}", style="dim"), soft_wrap=True)
            for key, value in expected_actual(check):
                console.print(Text(f"      {key}: {w.s(value, 300)}"), soft_wrap=True)
            for frame in check.frames if verbose else ():
                console.print(Text(f"      {w.s(frame, MAX_VERBOSE_FRAME)}", style="dim"), soft_wrap=True)
        for cause in result.incompleteCauses:
            console.print(Text(f"  ! {w.s(cause.cause, 2000)}", style="yellow"), soft_wrap=True)
            console.print(Text(f"    fix: {w.s(cause.fix, 2000)}"), soft_wrap=True)
        if result.incompleteReason and not result.incompleteCauses:
            console.print(Text(f"  ! {w.s(result.incompleteReason, 2000)}", style="yellow"), soft_wrap=True)


def _badge(combined: Combined, out: TextIO, _options: ReportOptions) -> None:
    """One badge for every run: the checks passed of all the runs' checks (what each run's summary
    counts, summed), coloured by the worst outcome."""
    from tasks_conformance.reporters.badge import COLOURS, LABEL, svg

    counts = [r.result.counts() for r in combined.runs]
    passed = sum(n["passed"] for n in counts)
    total = sum(n["total"] for n in counts)
    word = combined.headline
    text = "interrupted" if word == "interrupted" else f"{passed}/{total} passed"
    out.write(svg(LABEL, text, COLOURS.get(word, COLOURS["interrupted"])))


def _html(combined: Combined, out: TextIO, _options: ReportOptions) -> None:
    """`--era both`: one page, one section per era, each with its own timeline. A suite or a merge:
    the fleet page (fleet_html.py), each target's section drawn when opened."""
    if combined.kind == "suite":
        from tasks_conformance.reporters.fleet_html import fleet_document

        out.write(fleet_document(combined))
        return
    from tasks_conformance.reporters.html import document, run_data

    out.write(document([run_data(_label(run), run.result, run.wire) for run in combined.runs]))


_WRITERS = {"json": _json, "json-summary": _json_summary, "junit-xml": _junit, "markdown": _markdown,
            "human": _human, "badge": _badge, "html": _html}
