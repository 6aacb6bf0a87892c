"""The `junit-xml` reporter: the Jenkins/Ant JUnit format that CI viewers understand.

Why a small stdlib writer (xml.etree.ElementTree) and not a library:

* `junit-xml` (PyPI) has had no release since 2020 and still depends on `six`. It removes
  characters XML does not allow without a trace, so a NUL or an ESC that a server sent simply
  disappears from the evidence, and it cannot say more about a skip than one message.
* `junitparser` is maintained and good at reading and merging reports, but as a writer it gives
  us nothing ElementTree does not: it does not make illegal characters safe either (a NUL in a
  message still yields a document that no parser accepts), so the escaping would be ours anyway,
  plus a runtime dependency and its object model to learn.
* What this report needs is small and fixed: one `<testsuites>` with one `<testsuite>`, a
  `<properties>` block, and per check a `<testcase>` with at most one of `<failure>`,
  `<error>`, `<skipped>` and a bounded `<system-out>`. ElementTree escapes `&`, `<`, `>` and
  quotes (so `]]>` in server text is written as `]]&gt;`; no CDATA is used), and the only
  remaining hazard, characters outside the XML 1.0 `Char` production, is handled in one
  function (`_text.visible`) that shows them as `\\x00`-style escapes instead of dropping them.
  The output is parsed back and validated against an XSD of the Jenkins/Ant format in the
  tests. schemathesis's JUnit writer takes the same approach in about as many lines.

The `<testsuite>` is named `tasks-conformance: TARGET (ERA)` (or `--junit-suite-name`) and
carries `timestamp` (the run's start, UTC) and `hostname`.

Mapping: testcase `name` is the check id (what users put in `--check-id`), `classname` is
`tasks_conformance.<spec area>` (the checks module that defines the check: `results`,
`listing`, …; the category for a result made without one). A failed check is a `<failure>`
whose `type` lists the requirement ids and whose `message` starts with the id, level and rule of each requirement broken
(those the check's message names, else all it judges), then the check's message; its body adds
each rule's spec link, expected/actual, warnings (with the policies they cite), evidence and
details; not-applicable is `<skipped message="not-applicable: ...">`; a deferral is
`<skipped message="deferred to OWNER: ...">` (the owner's `<failure>` reports the defect, once);
could-not-run is `<error type="could-not-run">` (the run is incomplete, which viewers must not
show as green).
A passed check with warnings stays passed; its warnings go to `<system-out>`.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from typing import TYPE_CHECKING, TextIO

from tasks_conformance.core.result import causes_text
from tasks_conformance.core.text import dumps, one_line, visible
from tasks_conformance.reporters import PLAIN
from tasks_conformance.reporters._failure import broken_rules, expected_actual, explains, rule_line, shown_message

if TYPE_CHECKING:
    from tasks_conformance.core.result import CheckResult, RunResult
    from tasks_conformance.reporters import ReportOptions

SUITE_NAME = "tasks-conformance"
MAX_FRAMES = 20
MAX_FRAME_BYTES = 16 * 1024
MAX_MESSAGE = 1000  # characters in a message="..." attribute
MAX_DETAILS = 4 * 1024


def _seconds(ms: int) -> str:
    return f"{max(ms, 0) / 1000:.3f}"


def _attr(value: object, limit: int = MAX_MESSAGE) -> str:
    return one_line("" if value is None else value, limit)


def _body(value: object) -> str:
    return visible(value, keep_newlines=True)


def _frames_text(frames: list[str]) -> list[str]:
    """The check's wire frames, at most MAX_FRAMES of them and MAX_FRAME_BYTES in all."""
    lines: list[str] = []
    budget = MAX_FRAME_BYTES
    shown = 0
    for text in frames[:MAX_FRAMES]:
        if budget <= 0:
            break
        safe = _body(text)
        size = len(safe.encode("utf-8"))
        if size > budget:
            cut = safe.encode("utf-8")[:budget].decode("utf-8", "ignore")
            safe = f"{cut}… [{size - len(cut.encode('utf-8'))} bytes cut]"
        lines.append(safe)
        budget -= min(size, budget)
        shown += 1
    if shown < len(frames):
        lines.append(
            f"[{len(frames) - shown} of {len(frames)} frames not shown; "
            "write the full wire log with --wire-log]"
        )
    return lines


def _evidence(check: CheckResult, limit: int = 40) -> str | None:
    if not check.evidence:
        return None
    seqs = ", ".join(f"#{n}" for n in check.evidence[:limit])
    more = f" (+{len(check.evidence) - limit} more)" if len(check.evidence) > limit else ""
    return f"evidence: wire frames {seqs}{more}"


def _warning_lines(check: CheckResult) -> list[str]:
    lines = ["warnings:"]
    for warning in check.warnings:
        lines.append(f"  - {_body(warning.text)}")
        lines.extend(f"    see {p.id}: {p.url}" for p in warning.refs)
    return lines


def _failure_message(check: CheckResult) -> str:
    """`S-EXT-MUST-03 (MUST): <rule> — <message>`: what a CI viewer shows first."""
    message = check.message or check.title
    rules = "; ".join(rule_line(r) for r in broken_rules(check)[0])
    return f"{rules} — {message}" if rules else message


def _verdict_text(check: CheckResult) -> str:
    """The body of <failure>/<error>: message, requirements, expected/actual, warnings, evidence, details."""
    parts = [_body(check.message or check.title)]
    if check.baseline is not None:
        parts.append(f"baseline: {_body(check.baseline.note)}")
    if check.requirements:
        parts.append("requirements: " + ", ".join(_attr(r, 80) for r in check.requirements))
    if explains(check):
        for rule in check.rules:
            parts.append(f"  {_body(rule_line(rule))}")
            if rule.url:
                parts.append(f"    {_body(rule.url)}")
        parts.extend(f"{key}: {_body(value)}" for key, value in expected_actual(check))
    if check.warnings:
        parts.extend(_warning_lines(check))
    evidence = _evidence(check)
    if evidence:
        parts.append(evidence)
    if check.details:
        details = dumps(check.details)
        if len(details) > MAX_DETAILS:
            details = details[:MAX_DETAILS] + f"… [{len(details) - MAX_DETAILS} characters cut]"
        parts.append("details: " + _body(details))
    return "\n".join(parts)


def _system_out(check: CheckResult) -> str:
    parts = [f"{_attr(check.id, 200)}: {_body(check.title)}", f"result: {check.bucket}"]
    if check.requirements:
        parts.append("requirements: " + ", ".join(_attr(r, 80) for r in check.requirements))
    if check.bucket == "passed" and check.warnings:
        parts.extend(_warning_lines(check))
    if check.bucket == "passed" and check.baseline is not None:
        parts.append(f"baseline: {_body(check.baseline.note)}")
    evidence = _evidence(check)
    if evidence:
        parts.append(evidence)
    if check.frames:
        parts.append("")
        parts.append("wire frames:")
        parts.extend(_frames_text(check.frames))
    return "\n".join(parts)


def _testcase(parent: ET.Element, check: CheckResult) -> None:
    case = ET.SubElement(
        parent,
        "testcase",
        {
            "name": _attr(check.id, 200),
            "classname": f"tasks_conformance.{_attr(check.section, 100)}",
            "time": _seconds(check.durationMs),
        },
    )
    bucket = check.bucket
    message = check.message or check.title
    if bucket == "not-applicable":
        ET.SubElement(case, "skipped", {"message": _attr(f"not-applicable: {message}")})
    elif bucket == "known" and check.baseline is not None:
        # A failure a --baseline entry accepts: skipped, so CI stays green, with the reason.
        skipped = ET.SubElement(case, "skipped", {"message": _attr(f"known failure: {check.baseline.reason}")})
        skipped.text = _verdict_text(check)
    elif bucket == "deferred":
        skipped = ET.SubElement(case, "skipped", {"message": _attr(shown_message(check))})
        skipped.text = _verdict_text(check)
    elif bucket == "could-not-run":
        error = ET.SubElement(case, "error", {"type": "could-not-run", "message": _attr(message)})
        error.text = _verdict_text(check)
    elif bucket == "failed":
        kind = ",".join(_attr(r, 80) for r in check.requirements) or "conformance"
        failure = ET.SubElement(case, "failure", {"type": kind, "message": _attr(_failure_message(check))})
        failure.text = _verdict_text(check)
    ET.SubElement(case, "system-out").text = _system_out(check)


def suite_name(result: RunResult) -> str:
    """`tasks-conformance: TARGET (ERA)`: which server, over which era, so that suites from
    several servers or eras stay apart in one CI view."""
    d = result.discovery
    era = d.wire_words if d.wire == "none" and not d.wires else f"{d.protocolVersion or 'unknown'} {d.wire_words}"
    return f"{SUITE_NAME}: {one_line(result.target, 200)} ({one_line(era, 80)})"


def _timestamp(result: RunResult) -> str:
    """When the run started (UTC, no zone, as Ant writes it); now for a result that does not say."""
    if result.startedAt:
        return result.startedAt
    from datetime import UTC, datetime

    return datetime.now(UTC).replace(microsecond=0, tzinfo=None).isoformat()


def build_tree(result: RunResult, name: str | None = None) -> ET.Element:
    """The whole report as an element tree (one <testsuites> with one <testsuite>, named `name`
    or after the target and era)."""
    import socket

    counts = result.counts()
    time = _seconds(result.durationMs)
    tests, failures, errors = str(counts["total"]), str(counts["failed"]), str(counts["couldNotRun"])
    root = ET.Element(
        "testsuites",
        {"name": SUITE_NAME, "tests": tests, "failures": failures, "errors": errors, "time": time},
    )
    suite = ET.SubElement(
        root,
        "testsuite",
        {
            "name": _attr(name, 400) if name else suite_name(result),
            "tests": tests,
            "failures": failures,
            "errors": errors,
            "skipped": str(counts["notApplicable"] + counts["deferred"] + counts.get("known", 0)),
            "time": time,
            "timestamp": _timestamp(result),
            "hostname": _attr(socket.gethostname(), 255),
        },
    )
    d = result.discovery
    props = ET.SubElement(suite, "properties")
    pairs: list[tuple[str, object]] = [
        ("target", result.target),
        ("protocolVersion", d.protocolVersion),
        ("wire", ", ".join(d.wires) if d.wires else d.wire),
        ("outcome", result.outcome),
        ("toolVersion", result.toolVersion),
        ("summary", result.summary),
        ("profile", result.profile),
        ("score", "n/a" if result.score is None else result.score),
    ]
    optional: list[tuple[str, object]] = [
        ("probedTool", d.probedTool),
        ("createdTaskId", d.createdTaskId),
        ("incompleteReason", result.incompleteReason),
        ("interrupted", "true" if result.interrupted else None),
    ]
    pairs.extend((k, v) for k, v in optional if v is not None)
    for name, value in pairs:
        ET.SubElement(props, "property", {"name": name, "value": _attr(value, 4000)})
    for check in result.checks:
        _testcase(suite, check)
    summary = [f"{result.outcome}: {result.summary}"]
    causes = result.incompleteCauses
    if result.incompleteReason:
        summary.append(_body(result.incompleteReason))
    elif causes:  # a failed run whose other checks could not run: why, and what to change, once
        summary.append(_body(f"Some checks could not run — {causes_text(causes)}"))
    if result.scenarios:  # a client run: what the client did in each scenario
        summary.append(_body("\n".join(["The client, scenario by scenario:",
                                        *(line for s in result.scenarios for line in s.lines())])))
    ET.SubElement(suite, "system-out").text = "\n".join(summary)
    return root


def to_xml(result: RunResult, encoding: str = "UTF-8", name: str | None = None) -> str:
    """The report as text with an XML declaration naming `encoding`.

    Characters the encoding cannot represent are written as character references, so the
    document stays well-formed for any output stream.
    """
    root = build_tree(result, name)
    ET.indent(root)
    text = ET.tostring(root, encoding="unicode")
    enc = encoding.lower().replace("_", "-")
    if enc not in ("utf-8", "utf8"):
        try:
            text = text.encode(encoding, "xmlcharrefreplace").decode(encoding)
        except LookupError:
            encoding = "UTF-8"
    return f'<?xml version="1.0" encoding="{encoding}"?>\n{text}\n'


def render_junit(result: RunResult, out: TextIO, *, options: ReportOptions = PLAIN) -> None:
    encoding = getattr(out, "encoding", None) or "UTF-8"
    out.write(to_xml(result, encoding, options.suite_name))
