"""The command line in this process, through typer's CliRunner: usage errors (exact one-line
messages, exit 2), --help, --version, --list-checks, schema, report-path errors and flag
parsing. Nothing here needs a server to answer; the end-to-end runs stay subprocess tests."""

from __future__ import annotations

import ast
import io
import json
import sys
from pathlib import Path

import pytest
from helpers.runs import invoke, usage_error

from tasks_conformance import __version__
from tasks_conformance.core.errors import UsageError
from tasks_conformance.core.flag_values import ReporterSpec
from tasks_conformance.entry.cli import demo_options, reference_command
from tasks_conformance.server.checks import CATEGORIES, ordered_checks
from tasks_conformance.settings.config import Catalog, RunOptions, build_config, build_run_config

ALL_IDS = ", ".join(c.id for c in ordered_checks())


# Every message a user can get from the flags, exactly as the command line prints it.
USAGE_ERRORS: list[tuple[list[str], str]] = [
    ([], "no target: give --url URL, --command CMD, --tcp HOST:PORT or --unix PATH"),
    (["--url", "http://127.0.0.1:1/mcp", "--command", "true"], "give one target, not --url and --command"),
    (["--url", "http://a/mcp", "--tcp", "h:1", "--unix", "/s"], "give one target, not --url and --tcp and --unix"),
    (["--url", "ftp://x"], "--url must start with http:// or https://, got 'ftp://x'"),
    (["--url", "http://a/mcp", "--transport", "stdio"], "--transport stdio does not match the target given (--url)"),
    (["--command", "/nonexistent/tc-server"], "--command: '/nonexistent/tc-server' not found"),
    (["--command", "no-such-program-tc"], "--command: 'no-such-program-tc' not found on PATH"),
    (["--command", "/tmp"], "--command: '/tmp' is a directory, not a program"),
    (["--command", "'unbalanced x"], "--command: No closing quotation"),
    (["--url", "http://a/mcp", "--args", "x"], "--args/--command-args need --command"),
    (["--url", "http://a/mcp", "--cwd", "/tmp"], "--cwd and --env apply to --command and --server-command only"),
    (["--url", "http://a/mcp", "-e", "A=1"], "--cwd and --env apply to --command and --server-command only"),
    (["--command", "true", "--cwd", "/nonexistent-dir"], "--cwd: '/nonexistent-dir' is not a directory"),
    (["--url", "http://a/mcp", "--header", "bad header"],
     "--header: expected 'Name: value', got 'bad'… without a colon"),
    (["--url", "http://a/mcp", "--header", "X Y: z"], "--header: expected 'Name: value', got 'X Y'…"),
    (["--url", "http://a/mcp", "--access-token", "a", "--oauth-access-token", "b"],
     "give --access-token or --oauth-access-token, not both"),
    (["--command", "true", "--protocol-version", "2024-01-01"],
     "--protocol-version must be one of 2025-11-25, 2026-07-28, got '2024-01-01'"),
    (["--command", "true", "--expect-wire", "both"], "--expect-wire must be legacy, extension or any, got 'both'"),
    (["--command", "true", "--check-id", "tasks-nope"], f"unknown --check-id tasks-nope; valid ids: {ALL_IDS}"),
    (["--command", "true", "--category", "weird"],
     f"unknown --category weird; valid categories: {', '.join(CATEGORIES)}"),
    (["--command", "true", "--timeout", "0"], "--timeout must be a positive number of milliseconds"),
    (["--command", "true", "--poll-timeout", "-1"], "--poll-timeout must be a positive number of milliseconds"),
    (["--command", "true", "--max-message-bytes", "10"], "--max-message-bytes must be at least 1024"),
    (["--command", "true", "--format", "xml"], "--format must be human or json, got 'xml'"),
    (["--command", "true", "-e", "NOEQ"], "--env: expected KEY=VALUE, got 'NOEQ' without '='"),
    (["--tcp", "nohost"], "--tcp: expected HOST:PORT, got 'nohost'"),
    (["--tcp", "h:99999"], "--tcp: expected HOST:PORT, got 'h:99999'"),
    (["--command", "true", "--tool-args", "{not json"],
     "--tool-args: not valid JSON (Expecting property name enclosed in double quotes at line 1 column 2)"),
    (["--command", "true", "--tool-args", "[1]"], "--tool-args: expected a JSON object"),
    (["--command", "true", "--client-capabilities", "[1]"], "--client-capabilities: expected a JSON object"),
    (["--command", "true", "--input-responses", "@/nonexistent/file.json"],
     "--input-responses: cannot read '/nonexistent/file.json': No such file or directory"),
    (["--command", "true", "--elicitation-response", "1"], "--elicitation-response: expected a JSON object"),
    (["--command", "true", "--sampling-response", "nope"],
     "--sampling-response: not valid JSON (Expecting value at line 1 column 1)"),
    (["--command", "true", "--reporter", "=x"], "--reporter: expected NAME or NAME=PATH"),
    (["--command", "true", "--reporter", "no-such-reporter"],
     "--reporter: unknown reporter 'no-such-reporter'; available: "
     "human, json, json-summary, junit-xml, markdown, badge, html"),
    (["--command", "true", "--reporter", "junit-xml=/nonexistent-dir/r.xml"],
     "--reporter: cannot write '/nonexistent-dir/r.xml': No such file or directory"),
    (["--command", "true", "--wire-log", "/nonexistent-dir/w.ndjson"],
     "--wire-log: cannot write '/nonexistent-dir/w.ndjson': No such file or directory"),
    (["--command", "true", "--format", "json", "--reporter", "markdown"],
     "--reporter markdown has no path and --format already chose stdout; write it to a file with "
     "--reporter markdown=PATH"),
    (["--command", "true", "--reporter", "markdown", "--reporter", "json"],
     "only one --reporter may write to stdout; give the others a =PATH"),
    (["schema", "xml"], "schema: expected json, json-summary or multi, got 'xml'"),
    (["demo", "--check-id", "nope"], f"unknown --check-id nope; valid ids: {ALL_IDS}"),
    (["demo", "--category", "weird"], f"unknown --category weird; valid categories: {', '.join(CATEGORIES)}"),
    (["demo", "--protocol-version", "1"], "--protocol-version must be one of 2025-11-25, 2026-07-28, got '1'"),
    (["demo", "--format", "xml"], "--format must be human or json, got 'xml'"),
    (["demo", "--expect-wire", "x"], "--expect-wire must be legacy, extension or any, got 'x'"),
    (["demo", "--reporter", "markdown", "--reporter", "json"],
     "only one --reporter may write to stdout; give the others a =PATH"),
]


@pytest.mark.parametrize(("args", "message"), USAGE_ERRORS, ids=[m[:48] for _, m in USAGE_ERRORS])
def test_usage_errors_are_one_exact_line_and_exit_2(args: list[str], message: str) -> None:
    assert usage_error(*args) == message


@pytest.mark.parametrize(("args", "start"), [
    (["--bogus-flag"], "No such option: --bogus-flag"),
    (["--command"], "Option '--command' requires an argument."),
    (["--command", "true", "--timeout", "abc"], "Invalid value for '--timeout'"),
])
def test_parser_errors_are_one_line_pointing_at_help(args: list[str], start: str) -> None:
    # Worded by typer's parser, so only the start and the pointer are ours to promise.
    line = usage_error(*args)
    assert line.startswith(start) and line.endswith(" (see --help)")


def test_a_report_path_that_cannot_be_written_opens_no_other_report(tmp_path: Path) -> None:
    good = tmp_path / "ok.xml"
    line = usage_error("--command", "true", "--reporter", f"junit-xml={good}",
                       "--reporter", f"markdown={tmp_path}/missing/r.md")
    assert line.startswith("--reporter: cannot write")
    # The first file was opened, then closed again; no run happened, so it stays empty.
    assert good.read_text() == ""


def test_help_lists_the_options_and_subcommands() -> None:
    res = invoke("--help")
    assert res.code == 0 and res.stderr == ""
    for word in ("--url", "--command", "--reporter", "--list-checks", "demo", "schema", "serve-reference"):
        assert word in res.stdout
    demo = invoke("demo", "--help")
    assert demo.code == 0
    for word in ("--check-id", "--category", "--format", "--reporter", "--quiet", "--wire-log"):
        assert word in demo.stdout
    assert "--url" not in demo.stdout  # demo always targets the bundled reference server


def test_version() -> None:
    res = invoke("--version")
    assert (res.code, res.stdout, res.stderr) == (0, f"tasks-conformance {__version__}\n", "")


def test_list_checks_is_a_table_of_every_check() -> None:
    res = invoke("--list-checks")
    assert res.code == 0 and res.stderr == ""
    lines = res.stdout.splitlines()
    checks = ordered_checks()
    assert len(lines) == len(checks)
    for line, spec in zip(lines, checks, strict=True):
        assert line.split()[:2] == [spec.id, spec.category] and line.endswith(spec.title)


@pytest.mark.parametrize("order", [
    ("--list-checks", "--format", "json"), ("--format", "json", "--list-checks"), ("--list-checks", "--format=json"),
])
def test_list_checks_as_json_is_the_registry(order: tuple[str, ...]) -> None:
    res = invoke(*order)
    assert res.code == 0 and res.stderr == ""
    doc = json.loads(res.stdout)
    assert doc["toolVersion"] == __version__ and doc["categories"] == list(CATEGORIES)
    specs = ordered_checks()
    assert [c["id"] for c in doc["checks"]] == [s.id for s in specs]
    for got, spec in zip(doc["checks"], specs, strict=True):
        assert set(got) == {"id", "area", "category", "title", "description", "wires", "requirements", "probes",
                            "transports", "needs", "role"}
        assert (got["area"], got["category"], got["title"], got["description"]) == (
            spec.area, spec.category, spec.title, spec.description)
        assert got["wires"] == sorted(spec.wires) and got["probes"] == list(spec.probes)
        assert got["requirements"] == {w: list(ids) for w, ids in spec.requirements.items()}
        assert got["transports"] == (sorted(spec.transports) if spec.transports is not None else None)
        assert got["needs"] == spec.needs and got["role"] == spec.probe_role
    assert any(c["transports"] == ["http"] for c in doc["checks"])  # not vacuous: some are HTTP-only


def test_list_checks_needs_no_target_and_checks_the_format() -> None:
    assert invoke("--list-checks", "--format", "human").stdout == invoke("--list-checks").stdout
    assert invoke("--list-checks", "--url", "ftp://not-checked").code == 0
    assert usage_error("--list-checks", "--format", "xml") == "--format must be human or json, got 'xml'"


@pytest.mark.parametrize("kind", ["json", "json-summary"])
def test_schema_prints_the_shipped_schema(kind: str) -> None:
    from tasks_conformance.reporters import schema_text

    res = invoke("schema", kind)
    assert res.code == 0 and res.stdout == schema_text(kind) + "\n"  # type: ignore[arg-type]
    assert json.loads(res.stdout)["$schema"].startswith("https://json-schema.org/")


# ---------------------------------------------------------------------------------------------
# The builder behind both commands: RunOptions in, RunConfig out.


def test_flags_become_a_run_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    caps = tmp_path / "caps.json"
    caps.write_text('{"roots": {}}', encoding="utf-8")
    monkeypatch.setattr(sys, "stdin", io.StringIO('{"k": {"action": "accept"}}'))
    config = build_run_config(RunOptions(
        command=f"{sys.executable} -m tasks_conformance.server.reference", args=("--transport",),
        command_args=("stdio",),
        env=("A=1", "B=x=y"), cwd=str(tmp_path), client_capabilities=f"@{caps}", input_responses="-",
        tool_name="t", tool_args='{"n": 1}', check_ids=("a", "b", "a"), categories=("creation",),
        reporters=("markdown", "junit-xml=r.xml"), timeout_ms=5, poll_timeout_ms=7, format="json",
    ))
    assert config.transport == "stdio"
    assert config.command == (sys.executable, "-m", "tasks_conformance.server.reference", "--transport", "stdio")
    assert config.env == {"A": "1", "B": "x=y"} and config.cwd == str(tmp_path)
    assert config.client_capabilities == {"roots": {}}
    assert config.input_responses == {"k": {"action": "accept"}}
    assert config.tool_args == {"n": 1} and config.elicitation_response is None
    assert config.check_ids == ("a", "b") and config.categories == ("creation",)  # repeats dropped
    assert config.reporters == (ReporterSpec("markdown", None), ReporterSpec("junit-xml", "r.xml"))
    assert (config.timeout_ms, config.poll_timeout_ms, config.format) == (5, 7, "json")


def test_http_target_headers_and_token() -> None:
    config = build_run_config(RunOptions(url="https://h/mcp", headers=("X-A: 1", "X-B:  two "),
                                         oauth_access_token="tok", transport="http"))
    assert config.transport == "http" and config.url == "https://h/mcp"
    assert config.headers == {"X-A": "1", "X-B": "two", "Authorization": "Bearer tok"}
    assert config.access_token == "tok" and config.target() == "https://h/mcp"


@pytest.mark.parametrize(("options", "target"), [
    (RunOptions(tcp="[::1]:8080"), "tcp://::1:8080"),
    (RunOptions(unix="/run/s.sock"), "unix:/run/s.sock"),
])
def test_socket_targets(options: RunOptions, target: str) -> None:
    assert build_run_config(options).target() == target


def test_catalog_is_only_enforced_when_given() -> None:
    assert build_run_config(RunOptions(url="http://h/mcp", check_ids=("anything",))).check_ids == ("anything",)
    with pytest.raises(UsageError, match="valid ids: x, y"):
        build_run_config(RunOptions(url="http://h/mcp", check_ids=("z",)), Catalog(("x", "y"), ()))


def test_demo_goes_through_the_same_builder() -> None:
    options = demo_options(RunOptions(check_ids=("tasks-ttl-shape",), quiet=True, format="human"))
    config = build_run_config(options)
    assert config.transport == "stdio" and list(config.command) == reference_command()
    assert config.tool_name == "confirm_action" and config.input_responses is not None
    assert config.check_ids == ("tasks-ttl-shape",) and config.quiet and config.format == "human"


def test_the_keyword_form_still_builds_the_same_config() -> None:
    old = build_config(command="true", args=["-x"], env=["A=1"], check_ids=["tasks-ttl-shape"],
                       known_check_ids=("tasks-ttl-shape",), known_categories=CATEGORIES)
    new = build_run_config(RunOptions(command="true", args=("-x",), env=("A=1",), check_ids=("tasks-ttl-shape",)),
                           Catalog(("tasks-ttl-shape",), CATEGORIES))
    assert old == new


def test_builder_steps_stay_short() -> None:
    # The builder was one 138-line function; keep each step small enough to read at a glance.
    import tasks_conformance.settings.config as module

    tree = ast.parse(Path(module.__file__).read_text(encoding="utf-8"))
    lengths = {f.name: (f.end_lineno or f.lineno) - f.lineno + 1 for f in ast.walk(tree)
               if isinstance(f, ast.FunctionDef)}
    assert max(lengths.values()) < 60, lengths


@pytest.mark.parametrize("era", ["2025-11-25", "2026-07-28"])
def test_demo_names_a_tool_for_every_probe_role_so_the_role_checks_run(era: str) -> None:
    res = invoke("demo", "--protocol-version", era, "--format", "json")
    assert res.code == 0, res.stderr
    doc = json.loads(res.stdout)
    roles = {role: r["tool"] for role, r in doc["discovery"]["roles"].items()}
    assert {k: roles.get(k) for k in ("required", "tool-error", "fault", "input")} == {
        "required": "long_job", "tool-error": "tool_error", "fault": "rpc_error", "input": "confirm_action"}
    status = {c["id"]: c["status"] for c in doc["checks"]}
    ran = ["tasks-required-tool-needs-task", "tasks-tool-error-outcome", "tasks-fault-outcome",
           "tasks-input-required-update-completes"]
    if era == "2025-11-25":
        ran.append("tasks-forbidden-tool-task-refused")
    assert {check: status[check] for check in ran} == dict.fromkeys(ran, "passed")
