"""Reporters: every built-in one on passed, failed, incomplete and interrupted runs, with hostile
server strings; JSON against the shipped schemas, JUnit against a Jenkins/Ant XSD; third-party
reporters through the entry point; wire-log export; the progress line."""

from __future__ import annotations

import io
import json
import re
import subprocess
import sys
import tomllib
import xml.etree.ElementTree as ET
from datetime import datetime
from typing import Any

import jsonschema  # type: ignore[import-untyped,unused-ignore]
import pytest
import xmlschema
from helpers.made_runs import (
    BLOCKED_IDS,
    CDATA_END,
    HOSTILE_TEXT,
    MARKUP,
    NUL,
    OSC8,
    RAW_CONTROL,
    RUNS,
    SCRIPT,
    UNREACHABLE,
    a_check,
    a_run,
    failed_run,
    incomplete_run,
    interrupted_run,
    no_tool_run,
    no_wire_run,
    passed_run,
    render_text,
    unreachable_run,
)
from helpers.paths import ROOT

from tasks_conformance.core.causes import by_flag
from tasks_conformance.core.requirements import load as load_requirements
from tasks_conformance.core.result import (
    CheckResult,
    Discovery,
    RunResult,
)
from tasks_conformance.core.text import one_line, visible
from tasks_conformance.core.wirelog import WireLog
from tasks_conformance.reporters import (
    BUILTIN_NAMES,
    ENTRY_POINT_GROUP,
    ProgressLine,
    ReporterError,
    ReportOptions,
    UnknownReporterError,
    available_reporters,
    known_reporter,
    load_reporter,
    render,
    schema_text,
    write_wire_log,
)
from tasks_conformance.reporters.json_report import summary_document
from tasks_conformance.reporters.junit import MAX_FRAME_BYTES, MAX_FRAMES, MAX_MESSAGE, suite_name

TESTS = ROOT / "tests"
JUNIT_XSD = TESTS / "data" / "junit.xsd"
PLUGIN_PKG = TESTS / "plugin_pkg"

# ---------------------------------------------------------------------------------------------
# Hostile strings, as a server could send them back in error messages, names and payloads.


def test_outcomes_of_the_fixtures() -> None:
    assert passed_run().outcome == "passed"
    assert failed_run().outcome == "failed"
    assert incomplete_run().outcome == "incomplete"
    assert interrupted_run().outcome == "incomplete" and interrupted_run().interrupted
    assert no_wire_run().outcome == "failed"


@pytest.mark.parametrize("run", sorted(RUNS))
@pytest.mark.parametrize("name", BUILTIN_NAMES)
@pytest.mark.parametrize("color", [False, True])
def test_every_builtin_reporter_writes_encodable_text(name: str, run: str, color: bool) -> None:
    text = render_text(name, RUNS[run](), ReportOptions(color=color))
    assert text.endswith("\n")
    text.encode("utf-8")  # no lone surrogate reaches the stream
    if name != "human" or not color:
        assert "\x1b" not in text
    assert not RAW_CONTROL.search(re.sub(r"\x1b\[[0-9;]*m", "", text))


def test_registry_names() -> None:
    assert BUILTIN_NAMES == ("human", "json", "json-summary", "junit-xml", "markdown", "badge", "html")
    for name in BUILTIN_NAMES:
        assert known_reporter(name)
    assert available_reporters()[: len(BUILTIN_NAMES)] == list(BUILTIN_NAMES)
    assert not known_reporter("no-such-reporter")
    with pytest.raises(UnknownReporterError, match="no-such-reporter") as info:
        render("no-such-reporter", passed_run(), io.StringIO())
    assert info.value.reporter == "no-such-reporter"
    assert isinstance(info.value, ReporterError)


def test_builtins_are_entry_points_declared_in_pyproject() -> None:
    # One registration mechanism for all: pyproject.toml declares the built-ins in the plugin
    # group, and the module's fallback copy (for stale installed metadata) must say the same.
    from importlib import metadata

    from tasks_conformance.reporters import _BUILTIN_FALLBACK

    project = tomllib.loads((TESTS.parent / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    declared = project["entry-points"][ENTRY_POINT_GROUP]
    assert declared == _BUILTIN_FALLBACK and tuple(declared) == BUILTIN_NAMES
    installed = {ep.name: ep.value for ep in metadata.entry_points(group=ENTRY_POINT_GROUP)
                 if ep.value.startswith("tasks_conformance.")}
    assert installed.items() <= declared.items()  # empty when the metadata predates them


def test_builtins_are_found_when_the_installed_metadata_lacks_them(monkeypatch: pytest.MonkeyPatch) -> None:
    from importlib import metadata

    monkeypatch.setattr(metadata, "entry_points", lambda **_kw: metadata.EntryPoints(()))
    assert available_reporters() == list(BUILTIN_NAMES)
    assert all(known_reporter(name) for name in BUILTIN_NAMES)
    assert "PASSED" in render_text("human", passed_run(), ReportOptions(quiet=True))


@pytest.mark.parametrize("name", BUILTIN_NAMES)
def test_every_builtin_has_the_plugin_signature(name: str) -> None:
    # A built-in is a plugin-shaped callable: (result, out) works, options are an optional keyword.
    fn = load_reporter(name)
    plain, quiet = io.StringIO(), io.StringIO()
    fn(passed_run(), plain)
    fn(passed_run(), quiet, options=ReportOptions(quiet=True))  # type: ignore[call-arg]
    assert plain.getvalue() == render_text(name, passed_run())
    assert quiet.getvalue() == render_text(name, passed_run(), ReportOptions(quiet=True))


# ---------------------------------------------------------------------------------------------
# json and json-summary


def _validator(kind: str) -> jsonschema.Draft202012Validator:
    schema = json.loads(schema_text(kind))  # type: ignore[arg-type]
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema, format_checker=jsonschema.FormatChecker())


@pytest.mark.parametrize("run", sorted(RUNS))
def test_json_is_valid_and_matches_the_schema(run: str) -> None:
    result = RUNS[run]()
    doc = json.loads(render_text("json", result))
    _validator("json").validate(doc)
    expected = json.loads(json.dumps(result.to_json(), default=str).replace("NaN", '"nan"'))
    assert doc == expected
    assert doc["summary"] == result.summary and doc["outcome"] == result.outcome


def test_json_keeps_hostile_strings_exactly() -> None:
    result = failed_run()
    doc = json.loads(render_text("json", result))
    failed = doc["checks"][1]
    assert failed["details"]["actual"] == HOSTILE_TEXT  # NUL, ESC, lone surrogate: all round-trip
    assert failed["details"]["nan"] == "nan"  # not the invalid JSON token NaN
    assert failed["message"] == result.checks[1].message


@pytest.mark.parametrize("run", sorted(RUNS))
def test_json_summary_matches_the_schema(run: str) -> None:
    result = RUNS[run]()
    doc = json.loads(render_text("json-summary", result))
    _validator("json-summary").validate(doc)
    assert doc["schemaVersion"] == "2" and doc["kind"] == "tasks-conformance"
    assert doc["profile"] == result.profile and doc["score"] == result.score
    assert doc["toolVersion"] == "0.1.0"
    assert doc["outcome"] == result.outcome and doc["passed"] is result.passed
    assert doc["incompleteReason"] == result.incompleteReason
    assert doc["counts"] == result.counts()
    assert doc["discovery"] == result.discovery.to_json()
    assert [c["id"] for c in doc["checks"]] == [c.id for c in result.checks]
    for got, check in zip(doc["checks"], result.checks, strict=True):
        assert set(got) == {
            "id", "category", "status", "skipReason", "deferredTo", "message", "warnings", "policies",
            "requirements", "requirementIds", "durationMs",
        }  # fmt: skip
        assert got["skipReason"] == check.skipReason and got["warnings"] == [w.text for w in check.warnings]
        assert got["requirementIds"] == check.requirements
        assert [r["id"] for r in got["requirements"]] == check.requirements


def test_schemas_are_not_vacuous() -> None:
    doc = json.loads(render_text("json-summary", failed_run()))
    validator = _validator("json-summary")
    assert not list(validator.iter_errors(doc))
    for broken in (
        {**doc, "passed": True},  # contradicts outcome "failed"
        {**doc, "unexpected": 1},
        {**doc, "checks": [{**doc["checks"][0], "status": "ok"}]},
        {**doc, "checks": [{**doc["checks"][0], "skipReason": "could-not-run"}]},  # passed + skipReason
        {k: v for k, v in doc.items() if k != "discovery"},
    ):
        assert list(validator.iter_errors(broken))
    full = json.loads(render_text("json", failed_run()))
    assert list(
        _validator("json").iter_errors({**full, "checks": [{**full["checks"][0], "evidence": ["x"]}]})
    )


def test_schema_text() -> None:
    for kind in ("json", "json-summary"):
        schema = json.loads(schema_text(kind))
        assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    with pytest.raises(ValueError, match="json-summary"):
        schema_text("xml")  # type: ignore[arg-type]


# ---------------------------------------------------------------------------------------------
# junit-xml

_XSD: xmlschema.XMLSchema | None = None


def _junit(result: RunResult) -> tuple[str, ET.Element]:
    global _XSD
    text = render_text("junit-xml", result)
    root = ET.fromstring(text.encode("utf-8"))  # well-formed, or this raises
    if _XSD is None:
        _XSD = xmlschema.XMLSchema(str(JUNIT_XSD))
    _XSD.validate(text)
    return text, root


@pytest.mark.parametrize("run", sorted(RUNS))
def test_junit_is_well_formed_and_valid(run: str) -> None:
    result = RUNS[run]()
    text, root = _junit(result)
    assert text.startswith('<?xml version="1.0" encoding="UTF-8"?>')
    assert root.tag == "testsuites"
    suites = root.findall("testsuite")
    assert len(suites) == 1
    suite = suites[0]
    counts = result.counts()
    # Named after the target and era since issue 14 (test_junit_suite_identity pins the form).
    assert root.get("name") == "tasks-conformance"
    assert suite.get("name") == suite_name(result) and suite_name(result).startswith("tasks-conformance: ")
    assert suite.get("timestamp") and suite.get("hostname") is not None  # validated by the XSD above
    assert suite.get("tests") == str(counts["total"]) == root.get("tests")
    assert suite.get("failures") == str(counts["failed"])
    assert suite.get("errors") == str(counts["couldNotRun"])
    assert suite.get("skipped") == str(counts["notApplicable"] + counts["deferred"])
    assert suite.get("time") == "1.234"
    cases = suite.findall("testcase")
    assert [c.get("name") for c in cases] == [c.id for c in result.checks]
    assert len(cases) == counts["total"]  # nothing injected by ]]> or markup
    for case, check in zip(cases, result.checks, strict=True):
        assert case.get("classname") == f"tasks_conformance.{check.area or check.category}"
        assert case.get("time") == "0.012"
        outcome = [e.tag for e in case if e.tag in ("failure", "error", "skipped")]
        expected = {"passed": [], "failed": ["failure"], "could-not-run": ["error"]}
        assert outcome == expected.get(check.bucket, ["skipped"])
    props = {p.get("name"): p.get("value") for p in suite.iter("property")}
    assert {"target", "protocolVersion", "wire", "outcome", "toolVersion"} <= set(props)
    assert props["outcome"] == result.outcome and props["wire"] == result.discovery.wire
    assert not RAW_CONTROL.search(text)


def test_junit_failure_skip_and_error_details() -> None:
    result = failed_run()
    _, root = _junit(result)
    cases = {c.get("name"): c for c in root.iter("testcase")}

    failure = cases["tasks-result-type-discipline"].find("failure")
    assert failure is not None
    assert failure.get("type") == "S-EXT-MUST-03,S-EXT-MUST-04"
    # The message leads with the broken rule (id, level, text): the message names S-EXT-MUST-03 of
    # the two the check judges. Then the check's own message.
    reg = load_requirements()
    rule = f"S-EXT-MUST-03 ({reg['S-EXT-MUST-03'].level}): {reg['S-EXT-MUST-03'].text}"
    assert failure.get("message") == one_line(f"{rule} — {result.checks[1].message}", MAX_MESSAGE)
    body = failure.text or ""
    assert "evidence: wire frames #3, #4" in body
    assert "also odd" in body and SCRIPT in body  # warnings are kept, as text
    assert CDATA_END in body  # ]]> and </failure> came through as plain text
    assert "\\x00" in body and "\\x1b[31m" in body  # control characters shown, not dropped
    out = cases["tasks-result-type-discipline"].find("system-out")
    assert out is not None and out.text is not None
    assert "wire frames:" in out.text and "\\x00" in out.text and MARKUP in out.text

    skipped = cases["tasks-inline-result"].find("skipped")
    assert skipped is not None
    assert skipped.get("message") == "not-applicable: " + visible(result.checks[3].message)

    error = cases["tasks-cancel-ack-shape"].find("error")
    assert error is not None
    assert error.get("type") == "could-not-run"
    assert error.get("message") == visible(result.checks[4].message)
    assert "\\u202e" in (error.get("message") or "") and "\\x9b" in (error.get("message") or "")


def test_junit_frames_are_bounded() -> None:
    _, root = _junit(failed_run())
    case = next(c for c in root.iter("testcase") if c.get("name") == "tasks-mcp-name-routing")
    out = case.findtext("system-out") or ""
    assert len(out.encode("utf-8")) < MAX_FRAME_BYTES + 4096
    assert "of 59 frames not shown" in out and "#40 (+19 more)" in out
    assert out.count("<<< #") <= MAX_FRAMES


def test_junit_passed_with_warnings_stays_passed() -> None:
    _, root = _junit(passed_run())
    case = next(c for c in root.iter("testcase") if c.get("name") == "tasks-ttl-shape")
    assert case.find("failure") is None and case.find("error") is None and case.find("skipped") is None
    out = case.findtext("system-out") or ""
    assert "warnings:" in out and "ttl is very short" in out and "\\x1b[31m" in out


def test_junit_on_a_non_utf8_stream() -> None:
    raw = io.BytesIO()
    stream = io.TextIOWrapper(raw, encoding="ascii", newline="")
    render("junit-xml", incomplete_run(), stream)
    stream.flush()
    data = raw.getvalue()
    assert data.startswith(b'<?xml version="1.0" encoding="ascii"?>')
    root = ET.fromstring(data)
    case = next(c for c in root.iter("testcase") if c.get("name") == "tasks-input-required-update-completes")
    assert "\\ud800" in (case.find("error").get("message") or "")  # type: ignore[union-attr]


# ---------------------------------------------------------------------------------------------
# human


def _plain_human(result: RunResult, **kw: Any) -> str:
    # Wide enough that no hostile string is wrapped across lines.
    return render_text("human", result, ReportOptions(width=kw.pop("width", 4000), **kw))


def test_human_header_table_and_summary() -> None:
    result = failed_run()
    text = _plain_human(result)
    assert "MCP Tasks conformance" in text
    assert "http://127.0.0.1:8765/mcp" in text
    assert "2026-07-28 (extension wire)" in text
    assert "slow_task (4 tools, 2 task-capable)" in text
    assert "task-7f3a" in text and "reference 1.0" in text
    lines = text.splitlines()
    row = {c.id: next(line for line in lines if c.id in line) for c in result.checks}
    assert "✓ pass" in row["tasks-wire-resolvable"]
    assert (
        "✗ FAIL" in row["tasks-result-type-discipline"] and "dispatch" in row["tasks-result-type-discipline"]
    )
    assert "○ n/a" in row["tasks-inline-result"]
    assert "! not run" in row["tasks-cancel-ack-shape"]
    assert "evidence: frames #3, #4" in text
    assert "⚠ also odd" in text
    assert lines[-2].startswith("FAILED  " + result.summary)
    assert lines[-1].startswith("Could not establish conformance")


@pytest.mark.parametrize("run", sorted(RUNS))
@pytest.mark.parametrize("color", [False, True])
def test_human_never_passes_server_text_through(run: str, color: bool) -> None:
    result = RUNS[run]()
    text = _plain_human(result, color=color)
    if not color:
        assert "\x1b" not in text
    else:
        assert "\x1b[" in (_plain_human(failed_run(), color=True))  # our own styling is on
    # Only our own SGR sequences may remain; no OSC (hyperlinks, clipboard), no bell, no C1.
    stripped = re.sub(r"\x1b\[[0-9;]*m", "", text)
    assert "\x1b" not in stripped and "\x07" not in stripped and "\x9b" not in stripped
    assert not RAW_CONTROL.search(stripped)
    assert "\x1b]8" not in text and "\x1b[31mred" not in text


def test_human_shows_hostile_text_literally() -> None:
    text = _plain_human(incomplete_run(), color=True)
    plain = re.sub(r"\x1b\[[0-9;]*m", "", text)
    assert MARKUP in plain  # markup shown, not interpreted
    assert "[link=file:///etc/passwd]click me[/link]" in plain
    assert "evil [bold red]x[/] \\x1b[31mred\\x1b[0m" in plain  # serverInfo
    assert "tool\\x1b[31mred\\x1b[0m[bold red]x[/]" in plain
    assert "\\x1b]8;;http://evil\\x07" in plain and "\\x00" in plain
    assert "\\ud800" in plain and "\\x1b]52;c;" in plain
    assert "INCOMPLETE  " in plain
    text = _plain_human(failed_run(), color=False)
    assert ":warning: :smile:" in text and "\\u202e" in text and "\\U000e0041" in text


def test_human_quiet_is_one_line() -> None:
    for run, word in (("passed", "PASSED"), ("failed", "FAILED"), ("incomplete", "INCOMPLETE")):
        result = RUNS[run]()
        text = render_text("human", result, ReportOptions(quiet=True))
        assert text.splitlines() == [f"{word}  {result.summary}  score {result.score}/100 ({result.profile})  (1.23 s)"]
    text = render_text("human", interrupted_run(), ReportOptions(quiet=True))
    assert "(interrupted)" in text


def test_human_narrow_and_non_utf8() -> None:
    text = render_text("human", failed_run(), ReportOptions(width=60))
    # A spec link is never split: only a line that is one link may be wider.
    assert all(len(line) <= 60 or re.fullmatch(r"\s*https://\S+", line) for line in text.splitlines())
    raw = io.BytesIO()
    stream = io.TextIOWrapper(raw, encoding="ascii", errors="strict")
    render("human", incomplete_run(), stream, ReportOptions(width=200))
    stream.flush()
    ascii_text = raw.getvalue().decode("ascii")
    assert "! not run" in ascii_text and "o n/a" in ascii_text


# ---------------------------------------------------------------------------------------------
# markdown


def _unescaped_pipes(line: str) -> int:
    return len(re.findall(r"(?<!\\)\|", line))


@pytest.mark.parametrize("run", sorted(RUNS))
def test_markdown_cells_cannot_break_out(run: str) -> None:
    result = RUNS[run]()
    text = render_text("markdown", result)
    rows = [line for line in text.splitlines() if line.startswith("|")]
    if result.checks:
        assert len(rows) == len(result.checks) + 2
        assert all(_unescaped_pipes(row) == 5 for row in rows)
    assert "<script" not in text and "</failure" not in text
    assert "](http" not in text.replace("\\](", "")  # no live link or image syntax
    assert "`rm" not in text.replace("\\`rm", "")
    html = re.findall(r"<[^>]*>", text)
    assert set(html) <= {"<br>"}
    assert not RAW_CONTROL.search(text)


@pytest.mark.parametrize("run", sorted(RUNS))
def test_markdown_links_are_only_ours(run: str) -> None:
    """The only links are reference links to a requirement's spec section or a policy; every
    unescaped `[` opens one of those labels, so server text never becomes a link."""
    result = RUNS[run]()
    text = render_text("markdown", result)
    reg = load_requirements()
    defined = dict(re.findall(r"^\[([^\]]+)\]: (.+)$", text, re.M))
    for label, target in defined.items():
        assert (label in reg and target == reg[label].url) or (
            re.fullmatch(r"P-\d{2}", label) and target == f"docs/policies.md#{label.lower()}"
        ), (label, target)
    for m in re.finditer(r"(?<!\\)\[([^\]]*)\]", text):
        assert m.group(1) in defined, m.group(0)
    if any(c.bucket == "failed" and c.requirements for c in result.checks):
        assert defined  # a failed check's rules are linked


def test_markdown_groups_the_checks_by_spec_area_titled_in_words() -> None:
    """The table's rows come area by area (the areas in the order they first come, each area's
    checks in the run's order), each row naming its area's title, not its module's word."""
    from dataclasses import replace

    checks = [replace(a_check("tasks-a", "passed"), area="status"),
              replace(a_check("tasks-b", "failed"), area="cancel"),
              replace(a_check("tasks-c", "passed"), area="status"),
              a_check("tasks-d", "passed", category="lifecycle")]
    text = render_text("markdown", a_run(checks))
    rows = [line for line in text.splitlines() if line.startswith("| ") and "`tasks-" in line]
    assert [row.split("`")[1] for row in rows] == ["tasks-a", "tasks-c", "tasks-b", "tasks-d"]
    assert "| Spec area |" in text and "| `tasks-b` | Cancellation |" in text
    assert "| `tasks-a` | Task status |" in text and "| `tasks-d` | lifecycle |" in text  # no area: its category


def test_markdown_content() -> None:
    result = failed_run()
    text = render_text("markdown", result)
    assert text.startswith("## ❌ MCP Tasks conformance: failed")
    assert "| ❌ failed | `tasks-result-type-discipline` | dispatch |" in text
    assert "| ➖ not applicable | `tasks-inline-result` |" in text
    assert "| ⚠️ could not run | `tasks-cancel-ack-shape` |" in text
    assert "a \\| b<br>new line<br>\\| c \\|" in text
    assert "&lt;script&gt;" in text
    assert "**Warnings**" in text
    assert "> **Incomplete:** Could not establish conformance" in text
    assert "Incomplete" not in render_text("markdown", no_wire_run())
    text = render_text("markdown", incomplete_run())
    assert text.startswith("## ⚠️ MCP Tasks conformance: incomplete")
    assert "> **Incomplete:** Could not establish conformance" in text
    quiet = render_text("markdown", passed_run(), ReportOptions(quiet=True))
    assert "|" not in quiet and quiet.startswith("## ✅")


# ---------------------------------------------------------------------------------------------
# third-party reporters through the entry point


def test_third_party_reporter_is_discovered_and_called(example_plugin: Any) -> None:
    assert known_reporter("example-count")
    names = available_reporters()
    assert names[: len(BUILTIN_NAMES)] == list(BUILTIN_NAMES)
    assert {"example-count", "example-boom", "example-options"} <= set(names)
    assert names.count("json") == 1
    text = render_text("example-count", failed_run())
    assert text == "example-count outcome=failed total=5 failed=2\n"
    assert example_plugin.CALLS == ["example-count"]


def test_third_party_reporter_that_declares_options_receives_them(example_plugin: Any) -> None:
    text = render_text("example-options", passed_run(), ReportOptions(quiet=True, width=77))
    assert text == "example-options quiet=True color=False width=77\n"
    assert example_plugin.CALLS == ["example-options"]


def test_third_party_reporter_cannot_shadow_a_builtin(example_plugin: Any) -> None:
    text = render_text("json", passed_run())
    assert json.loads(text)["outcome"] == "passed"
    assert "json" not in example_plugin.CALLS


def test_raising_third_party_reporter_is_named(example_plugin: Any) -> None:
    with pytest.raises(ReporterError, match="example-boom") as info:
        render("example-boom", passed_run(), io.StringIO())
    assert info.value.reporter == "example-boom"
    assert "the example reporter always fails" in str(info.value)
    assert isinstance(info.value.__cause__, RuntimeError)
    assert example_plugin.CALLS == ["example-boom"]


def test_unloadable_third_party_reporter_is_named(example_plugin: Any) -> None:
    assert known_reporter("example-missing")
    with pytest.raises(ReporterError, match=r"example-missing.*could not be loaded") as info:
        render("example-missing", passed_run(), io.StringIO())
    assert info.value.reporter == "example-missing"
    assert not isinstance(info.value, UnknownReporterError)


# ---------------------------------------------------------------------------------------------
# wire log, progress line, import cost


def test_write_wire_log_is_ndjson() -> None:
    wire = WireLog()
    wire.record("out", "http", b'{"jsonrpc":"2.0","id":1,"method":"tools/call"}')
    wire.record("in", "sse", b'{"x":"\x1b[31m\x00\\u0000"}\n', reply_to=1, note="event")
    wire.record("in", "stdio", b"\xff\xfe not utf-8")
    out = io.StringIO()
    write_wire_log(wire, out)
    lines = out.getvalue().splitlines()
    assert len(lines) == 3
    docs = [json.loads(line) for line in lines]
    assert docs == [f.to_json() for f in wire]
    assert [d["seq"] for d in docs] == [1, 2, 3]
    assert "base64" in docs[2]
    assert not RAW_CONTROL.search(out.getvalue())


def test_progress_line_is_a_noop_when_disabled() -> None:
    err = io.StringIO()
    with ProgressLine(file=err) as progress:  # a StringIO is not a TTY
        progress.update("probing tools/call")
        assert not progress.active
    assert err.getvalue() == ""
    with ProgressLine(enabled=False, file=err) as progress:
        progress.update(HOSTILE_TEXT)
    assert err.getvalue() == ""


def test_progress_line_escapes_server_text() -> None:
    err = io.StringIO()
    with ProgressLine(enabled=True, file=err) as progress:
        assert progress.active
        progress.update(f"polling task {OSC8} {MARKUP} {NUL}")
    text = err.getvalue()
    assert "\\x1b]8;;http://evil\\x07" in text and MARKUP in text
    assert "\x1b]" not in text and "\x07" not in text and "\x00" not in text
    assert not progress.active
    progress.update("after exit is harmless")


def test_progress_line_leaves_stdout_alone() -> None:
    stdout = sys.stdout
    with ProgressLine(enabled=True, file=io.StringIO()):
        assert sys.stdout is stdout  # a report written to stdout meanwhile stays on stdout


def test_importing_reporters_is_cheap() -> None:
    code = (
        "import sys, tasks_conformance.reporters as r; "
        "heavy = [m for m in ('rich', 'xml.etree.ElementTree', 'importlib.metadata', 'email') "
        "if m in sys.modules]; print(heavy)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


# ---------------------------------------------------------------------------------------------
# the shared escaping helpers


def test_visible_escapes_and_keeps_ordinary_text() -> None:
    assert visible("plain ünïcödé 日本 ✓") == "plain ünïcödé 日本 ✓"
    assert visible("a\x00b\x1bc\x07d\x7fe\x9bf") == "a\\x00b\\x1bc\\x07d\\x7fe\\x9bf"
    assert visible("l1\nl2\tt\r") == "l1\\nl2\\tt\\r"
    assert visible("l1\r\nl2\tt", keep_newlines=True) == "l1\nl2\tt"
    assert visible("\u202e\u2066\u200b\ufeff\ud800\ufffe\U000e0041") == (
        "\\u202e\\u2066\\u200b\\ufeff\\ud800\\ufffe\\U000e0041"
    )


def test_dumps_is_always_valid_json() -> None:
    from tasks_conformance.core.text import dumps

    value = {"s": "\x00\x1b\x9b\u202e\ud800\U000e0041", "n": float("inf"), "l": [float("nan")]}
    text = dumps(value)
    assert json.loads(text) == {"s": value["s"], "n": "inf", "l": ["nan"]}
    text.encode("utf-8")
    assert not RAW_CONTROL.search(text)
    cyclic: list[Any] = []
    cyclic.append(cyclic)
    assert json.loads(dumps({"c": cyclic, "x": float("nan")})) == {"c": ["<cycle>"], "x": "nan"}


def test_narrow_human_report_puts_each_message_under_its_check_id() -> None:
    import io

    from tasks_conformance.core.result import RunResult
    from tasks_conformance.reporters import ReportOptions, render

    check = CheckResult(id="tasks-undeclared-capability-names-requirements", category="lifecycle", title="t",
                        description="d", requirements=[], status="passed",
                        message="all 4 -32021 errors name the extension in data.requiredCapabilities")
    result = RunResult(outcome="passed", target="x", durationMs=1, discovery=Discovery(), checks=[check])
    out = io.StringIO()
    render("human", result, out, ReportOptions(width=80))
    lines = out.getvalue().splitlines()
    i = next(n for n, line in enumerate(lines) if "tasks-undeclared-capability-names-requirements" in line)
    # The message is on the next line, whole words kept (no "requiredCapabilitie s" split).
    assert "data.requiredCapabilities" in lines[i + 1] + lines[i + 2]
    assert all(len(line) <= 80 for line in lines)


# ---------------------------------------------------------------------------------------------
# incomplete: each cause once


def test_one_cause_behind_many_checks_is_stated_once_with_its_fix_and_checks() -> None:
    result = no_tool_run()
    assert result.outcome == "incomplete"
    ids = [*BLOCKED_IDS, "tasks-undeclared-capability-names-requirements"]  # the chained one follows its root
    assert [c.to_json() for c in result.incompleteCauses] == [{
        "cause": "on the extension wire tools carry no task metadata, so tasks-conformance cannot guess which tool "
                 "runs as a task",
        "fix": "name one with --tool-name (listed: echo, slow_compute)",
        "checks": ids,
    }]
    reason = result.incompleteReason or ""
    assert reason.startswith("Could not establish conformance — ")
    assert reason.count("cannot guess which tool") == 1 and reason.count("--tool-name") == 1
    assert all(i in reason for i in ids)
    for kind, doc in (("json", result.to_json()), ("json-summary", summary_document(result))):
        _validator(kind).validate(doc)
        assert doc["incompleteCauses"] == [c.to_json() for c in result.incompleteCauses]
    assert passed_run().to_json()["incompleteCauses"] == []


def test_an_unreachable_server_is_one_cause_and_one_line_in_the_human_report() -> None:
    result = unreachable_run()
    (cause,) = result.incompleteCauses
    assert cause.cause == UNREACHABLE and cause.checks == ("tasks-wire-resolvable", *BLOCKED_IDS)
    assert "http://127.0.0.1:9/mcp" in cause.fix and "--url" in cause.fix
    assert (result.incompleteReason or "").count("could not talk to the server") == 1
    text = _plain_human(result)
    assert "! not run  all 5 checks: could not talk to the server" in text
    assert not any(i in text for i in BLOCKED_IDS)  # no table of "not run" rows
    assert text.count("could not talk to the server") == 1
    assert text.splitlines()[-1] == "Could not establish conformance — 5 checks could not run, 1 cause above"


def test_the_human_report_lists_each_cause_once_after_the_table() -> None:
    text = _plain_human(no_tool_run())
    assert text.count("cannot guess which tool") == 1 and text.count("see the cause below") == len(BLOCKED_IDS) + 1
    block = text[text.index("! on the extension wire"):]
    assert "  fix: name one with --tool-name (listed: echo, slow_compute)" in block
    assert "  blocked: " + ", ".join(BLOCKED_IDS) in block.replace("\n", " ")


def test_markdown_gives_every_cause_whole() -> None:
    long_fix = "name one with --tool-name (listed: " + ", ".join(f"tool_{n:03d}" for n in range(200)) + ")"
    checks = [a_check(i, "skipped", skip="could-not-run", cause=by_flag("no tool", long_fix)) for i in BLOCKED_IDS]
    text = render_text("markdown", a_run(checks))
    assert "> **Incomplete:** Could not establish conformance — 4 checks could not run" in text
    assert "tool\\_199\\)" in text  # the end of the fix is there: nothing is cut mid-word
    assert text.count("no tool") == 1  # once in the causes; each row points at it
    assert text.count("| see the cause above |") == len(BLOCKED_IDS)
    assert "> - no tool" in text and ">   **Blocked:** " + ", ".join(f"`{i}`" for i in BLOCKED_IDS) in text


def test_markdown_cuts_an_overlong_cause_between_words() -> None:
    words = " ".join(f"word{n:04d}" for n in range(600))  # 5,400 characters, past the bound
    text = render_text("markdown", a_run([a_check("tasks-ttl-shape", "skipped", skip="could-not-run", message=words)]))
    line = next(x for x in text.splitlines() if x.startswith("> - word0000"))
    kept = line.removeprefix("> - ").removesuffix(" …").split(" ")
    assert line.endswith(" …") and 100 < len(kept) < 600
    assert kept == [f"word{n:04d}" for n in range(len(kept))]  # whole words only, in order


def test_junit_suite_identity() -> None:
    from tasks_conformance.reporters.junit import build_tree

    result = passed_run()
    suite = build_tree(result).find("testsuite")
    assert suite is not None
    assert suite.get("name") == "tasks-conformance: http://127.0.0.1:8765/mcp (2026-07-28 extension wire)"
    assert suite.get("hostname") and datetime.fromisoformat(suite.get("timestamp") or "").tzinfo is None
    result.startedAt = "2026-12-01T06:00:00"
    assert build_tree(result).find("testsuite").get("timestamp") == "2026-12-01T06:00:00"  # type: ignore[union-attr]
    assert build_tree(no_wire_run()).find("testsuite").get("name", "").endswith("(no tasks wire)")  # type: ignore[union-attr]
    named = render_text("junit-xml", result, ReportOptions(suite_name="nightly\x1b[31m"))
    assert ET.fromstring(named.split("\n", 1)[1]).find("testsuite").get("name") == "nightly\\x1b[31m"  # type: ignore[union-attr]


def test_several_causes_are_numbered_and_the_rows_point_at_theirs() -> None:
    no_tool = by_flag("no tool", "name one with --tool-name")
    checks = [a_check("tasks-ttl-shape", "skipped", skip="could-not-run", cause=no_tool),
              a_check("tasks-inline-result", "skipped", skip="could-not-run", cause=no_tool),
              a_check("tasks-cancel-ack-shape", "skipped", skip="could-not-run", message="the task never ended")]
    result = a_run(checks)
    assert [c.checks for c in result.incompleteCauses] == [("tasks-ttl-shape", "tasks-inline-result"),
                                                            ("tasks-cancel-ack-shape",)]
    pointed = dict.fromkeys(("tasks-ttl-shape", "tasks-inline-result"), "see cause 1 below")
    assert result.cause_pointers("below") == pointed
    text = _plain_human(result)
    assert "! cause 1: no tool" in text and "! cause 2: the task never ended" in text
    row = next(line for line in text.splitlines() if "tasks-cancel-ack-shape" in line and "not run" in line)
    assert "the task never ended" in row  # a cause of its own stays in its row
    md = render_text("markdown", result)
    assert "> - **Cause 1:** no tool" in md and md.count("see cause 1 above") == 2
