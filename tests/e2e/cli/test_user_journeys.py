"""The README's features used together, as a new user would: a config file that names its
baseline, `--era both`, suites with probes, the printed command lines. Each test is one journey
that fell short once; it runs the command line in a project directory of its own."""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import subprocess
import sys
import tomllib
from pathlib import Path

from helpers.paths import BROKEN, DEMO_INPUT
from helpers.processes import HttpServer
from helpers.runs import tool


def cli_in(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The command line run from `folder` (where it finds tasks-conformance.toml), off a terminal,
    in this process: a journey's subject is what the tool reads, writes and prints."""
    env = {"CI": "true", "TASKS_CONFORMANCE_ACCESS_TOKEN": None, "TASKS_CONFORMANCE_HEADERS": None}
    with contextlib.chdir(folder):
        return tool(*args, env=env)


def write_project(folder: Path, variant: str) -> None:
    """tasks-conformance.toml as the README's example has it: the baseline named in the file."""
    argv = json.dumps([*BROKEN, "--break", variant, "--transport", "stdio"])
    folder.joinpath("tasks-conformance.toml").write_text(
        f"command = {argv}\n"
        'tool-name = "confirm_action"\n'
        f"input-responses = {json.dumps(DEMO_INPUT)}\n"
        'baseline = "tasks-conformance-baseline.toml"\n',
        encoding="utf-8",
    )


def test_the_first_update_baseline_writes_the_file_the_config_file_names(tmp_path: Path) -> None:
    write_project(tmp_path, "ttl-not-integer")
    first = cli_in(tmp_path, "--update-baseline", "tasks-conformance-baseline.toml", "--check-id",
                   "tasks-ttl-integer-shape")
    assert first.returncode == 1, first.stdout + first.stderr
    assert "wrote 1 baseline entry to tasks-conformance-baseline.toml" in first.stderr
    entries = tomllib.loads((tmp_path / "tasks-conformance-baseline.toml").read_text())["known"]
    assert [e["check"] for e in entries] == ["tasks-ttl-integer-shape"]

    again = cli_in(tmp_path, "--check-id", "tasks-ttl-integer-shape")
    assert again.returncode == 0, again.stdout + again.stderr
    assert "1 known (baseline)" in again.stdout


def test_a_baseline_the_config_file_names_must_still_exist_for_a_plain_run(tmp_path: Path) -> None:
    write_project(tmp_path, "ttl-not-integer")
    proc = cli_in(tmp_path, "--check-id", "tasks-ttl-integer-shape")
    assert proc.returncode == 2 and proc.stdout == ""
    # The value came from the config file: the error names the file's key, and how to write it.
    assert proc.stderr.strip() == ("tasks-conformance: error: tasks-conformance.toml: baseline: cannot read "
                                   "'tasks-conformance-baseline.toml': no such file (--update-baseline "
                                   "tasks-conformance-baseline.toml writes it from a run's failures)")


def test_update_baseline_with_era_both_writes_each_eras_failures(tmp_path: Path) -> None:
    write_project(tmp_path, "ttl-not-integer")
    # An entry for the legacy era that this server does not fail: the legacy run drops it.
    (tmp_path / "tasks-conformance-baseline.toml").write_text(
        '[[known]]\ncheck = "tasks-ttl-shape"\nera = "2025-11-25"\nreason = "old"\n', encoding="utf-8")
    first = cli_in(tmp_path, "--era", "both", "--update-baseline", "tasks-conformance-baseline.toml",
                   "--check-id", "tasks-ttl-integer-shape", "--check-id", "tasks-ttl-shape")
    assert first.returncode == 1, first.stdout + first.stderr
    assert "wrote 1 baseline entry to tasks-conformance-baseline.toml" in first.stderr
    entries = tomllib.loads((tmp_path / "tasks-conformance-baseline.toml").read_text())["known"]
    assert [(e["check"], e["era"]) for e in entries] == [("tasks-ttl-integer-shape", "2026-07-28")]

    strict = cli_in(tmp_path, "--era", "both", "--strict-baseline", "--format", "json",
                    "--check-id", "tasks-ttl-integer-shape", "--check-id", "tasks-ttl-shape")
    assert strict.returncode == 0, strict.stdout + strict.stderr
    doc = json.loads(strict.stdout)
    extension = {c["id"]: c for c in doc["eras"]["2026-07-28"]["checks"]}
    assert extension["tasks-ttl-integer-shape"]["baseline"]["state"] == "known"
    assert doc["eras"]["2025-11-25"]["outcome"] == "passed"


def test_demo_runs_every_role_check_even_under_the_full_profile(tmp_path: Path) -> None:
    # The reference server has a tool for every probe role; the demo names them, so no check is
    # left not applicable for want of a tool, and --profile full is complete.
    proc = cli_in(tmp_path, "demo", "--era", "both", "--profile", "full", "--format", "json")
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr
    doc = json.loads(proc.stdout)
    for era, run in doc["eras"].items():
        roles = {c["id"]: c for c in run["checks"]}
        for check_id in ("tasks-tool-error-outcome", "tasks-fault-outcome", "tasks-required-tool-needs-task"):
            assert roles[check_id]["status"] == "passed", (era, roles[check_id])


def test_the_printed_multi_schema_validates_era_both_output_on_its_own(tmp_path: Path) -> None:
    # A user saves `tasks-conformance schema multi` and validates with it alone: no registry of
    # the single-run schemas, and no attempt to fetch their urn: ids.
    import jsonschema  # type: ignore[import-untyped,unused-ignore]

    schema = json.loads(cli_in(tmp_path, "schema", "multi").stdout)
    jsonschema.Draft202012Validator.check_schema(schema)
    proc = cli_in(tmp_path, "demo", "--era", "both", "--check-id", "tasks-ttl-shape", "--format", "json",
                  "--reporter", f"json-summary={tmp_path / 'summary.json'}")
    assert proc.returncode == 0, proc.stderr
    validator = jsonschema.Draft202012Validator(schema)
    validator.validate(json.loads(proc.stdout))
    validator.validate(json.loads((tmp_path / "summary.json").read_text()))
    broken = json.loads(proc.stdout)
    del broken["eras"]["2026-07-28"]["checks"][0]["status"]  # the embedded single-run schema is applied
    assert not validator.is_valid(broken)


def test_a_suite_with_a_baseline_probes_and_secrets_reports_known_failures_and_no_secret(
    tmp_path: Path, reference_http: HttpServer,
) -> None:
    secrets = ["file-tok-sekrit-222", "env-sekrit-333", "qs-sekrit-444", "hdr-sekrit-555"]
    (tmp_path / "tok.txt").write_text(secrets[0], encoding="utf-8")
    (tmp_path / "bl.toml").write_text('[[known]]\ncheck = "tasks-ttl-integer-shape"\nreason = "v2"\n', encoding="utf-8")
    argv = json.dumps([*BROKEN, "--break", "ttl-not-integer", "--transport", "stdio"])
    (tmp_path / "suite.toml").write_text(
        "[defaults]\n"
        'tool-name = "confirm_action"\n'
        f"input-responses = {json.dumps(DEMO_INPUT)}\n"
        'probe = ["required=long_job", "tool-error=tool_error", "fault=rpc_error"]\n'
        "check-id = [\"tasks-ttl-integer-shape\", \"tasks-fault-outcome\"]\n"
        f'[[targets]]\nname = "local"\ncommand = {argv}\nenv = {{API_KEY = "{secrets[1]}"}}\nbaseline = "bl.toml"\n'
        f'[[targets]]\nname = "http"\nurl = "{reference_http.url}?api_key={secrets[2]}"\n'
        f'access-token = "@tok.txt"\nheader = ["X-Api-Key: {secrets[3]}"]\nera = "both"\nwire-log = "wire.ndjson"\n',
        encoding="utf-8",
    )
    reports = {"junit-xml": "s.xml", "json": "s.json", "json-summary": "ss.json", "markdown": "s.md"}
    proc = cli_in(tmp_path, "suite", "suite.toml", "--format", "human",
                  *(a for name, path in reports.items() for a in ("--reporter", f"{name}={path}")))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    markdown = (tmp_path / "s.md").read_text(encoding="utf-8")
    # The known failure shows as the single-run markdown shows it, and the legend says what it is.
    assert "| `tasks-ttl-integer-shape` | 🟡 | ✅ | ✅ |" in markdown, markdown
    assert "🟡 known failure (baseline)" in markdown
    doc = json.loads((tmp_path / "s.json").read_text())
    assert [(t["name"], t["era"]) for t in doc["targets"]] == [
        ("local", None), ("http", "2025-11-25"), ("http", "2026-07-28")]
    outputs = [proc.stdout, proc.stderr, *(p.read_text(encoding="utf-8") for p in tmp_path.iterdir()
                                          if p.name not in ("tok.txt", "suite.toml"))]
    for secret in secrets:
        assert not any(secret in text for text in outputs), secret


def test_era_both_in_the_config_file_with_its_baseline(tmp_path: Path) -> None:
    write_project(tmp_path, "ttl-not-integer")
    conf = tmp_path / "tasks-conformance.toml"
    conf.write_text(conf.read_text() + 'era = "both"\ncheck-id = ["tasks-ttl-integer-shape"]\n', encoding="utf-8")
    shown = json.loads(cli_in(tmp_path, "config", "show", "--format", "json").stdout)["settings"]
    assert {r["key"]: (r["value"], r["source"]) for r in shown}["era"] == ("both", "file tasks-conformance.toml")
    flag = json.loads(cli_in(tmp_path, "--era", "auto", "config", "show", "--format", "json").stdout)["settings"]
    assert {r["key"]: (r["value"], r["source"]) for r in flag}["era"] == ("auto", "flag --era")

    first = cli_in(tmp_path, "--update-baseline", "tasks-conformance-baseline.toml")
    assert first.returncode == 1, first.stdout + first.stderr
    assert "both eras: 2025-11-25 passed, 2026-07-28 failed" in first.stdout
    again = cli_in(tmp_path, "--format", "json")
    assert again.returncode == 0, again.stdout + again.stderr
    assert sorted(json.loads(again.stdout)["eras"]) == ["2025-11-25", "2026-07-28"]
    one = cli_in(tmp_path, "--era", "auto", "--format", "json")  # the flag wins over the file
    assert one.returncode == 0 and "eras" not in json.loads(one.stdout)


def test_a_bad_era_in_the_config_file_is_a_usage_error(tmp_path: Path) -> None:
    (tmp_path / "tasks-conformance.toml").write_text('url = "http://127.0.0.1:9/mcp"\nera = "sometimes"\n')
    proc = cli_in(tmp_path)
    assert (proc.returncode, proc.stdout) == (2, "")
    assert proc.stderr == ("tasks-conformance: error: tasks-conformance.toml: "
                           "era must be 'auto', 'legacy', 'extension' or 'both', got 'sometimes'\n")
    (tmp_path / "tasks-conformance.toml").write_text('url = "http://127.0.0.1:9/mcp"\neras = "both"\n')
    assert cli_in(tmp_path).stderr.endswith("unknown key 'eras'; did you mean era?\n")


def test_the_python_api_refuses_a_config_files_era_both(tmp_path: Path) -> None:
    import pytest

    import tasks_conformance

    conf = tmp_path / "c.toml"
    conf.write_text('url = "http://127.0.0.1:9/mcp"\nera = "both"\n', encoding="utf-8")
    with pytest.raises(tasks_conformance.ConfigError, match="era = 'both' is for the command line"):
        tasks_conformance.run(config=conf)


def test_serve_reference_help_lists_the_reference_servers_flags(tmp_path: Path) -> None:
    # As its own process: the usage line's program name is the interpreter's command line.
    proc = subprocess.run([sys.executable, "-m", "tasks_conformance", "serve-reference", "--help"],
                          capture_output=True, text=True, timeout=60, env={**os.environ, "NO_COLOR": "1"},
                          stdin=subprocess.DEVNULL, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("Usage: python -m tasks_conformance serve-reference [OPTIONS]")
    assert "--bearer-token TOKEN" in proc.stdout and "--transport stdio|http|tcp|unix" in proc.stdout


def test_a_bad_serve_reference_flag_is_one_line(tmp_path: Path) -> None:
    proc = cli_in(tmp_path, "serve-reference", "--bogus")
    assert (proc.returncode, proc.stdout) == (2, "")
    assert proc.stderr.startswith("tasks-conformance: error: No such option: --bogus") and proc.stderr.count("\n") == 1
    assert proc.stderr.endswith(" (see --help)\n")


def test_the_profile_help_says_what_full_does(tmp_path: Path) -> None:
    env = {**os.environ, "COLUMNS": "400", "NO_COLOR": "1"}
    out = subprocess.run([sys.executable, "-m", "tasks_conformance", "--help"], capture_output=True, text=True,
                         timeout=60, env=env, stdin=subprocess.DEVNULL).stdout
    assert "today the same as standard" not in out
    assert "could not run (the run is incomplete until --probe ROLE=TOOL names it)" in " ".join(out.split())


def test_update_baseline_with_era_both_keeps_the_failure_of_an_era_the_server_does_not_speak(tmp_path: Path) -> None:
    from helpers.paths import REFERENCE

    # A server of the extension only: on 2025-11-25 tasks-wire-resolvable fails. That entry must
    # name its era, or the 2026-07-28 run, where the check passes, would drop it.
    (tmp_path / "tasks-conformance.toml").write_text(
        f"command = {json.dumps([*REFERENCE, '--transport', 'stdio', '--era', 'extension'])}\n"
        'check-id = ["tasks-wire-resolvable"]\n', encoding="utf-8")
    first = cli_in(tmp_path, "--era", "both", "--update-baseline", "b.toml")
    assert first.returncode == 1, first.stdout + first.stderr
    entries = tomllib.loads((tmp_path / "b.toml").read_text())["known"]
    assert [(e["check"], e["era"]) for e in entries] == [("tasks-wire-resolvable", "2025-11-25")]
    again = cli_in(tmp_path, "--era", "both", "--baseline", "b.toml", "--strict-baseline")
    assert again.returncode == 0, again.stdout + again.stderr


def test_the_live_table_of_several_runs_reads_like_the_single_run_line() -> None:
    import io

    from tasks_conformance.core import steps
    from tasks_conformance.entry.multirun import MultiProgress
    from tasks_conformance.reporters.progress import RunProgress

    now = [100.0]
    state = RunProgress(30.0, clock=lambda: now[0])
    state.say(steps.CONNECTING)
    now[0] = 102.5
    out = io.StringIO()
    with MultiProgress(["2025-11-25", "2026-07-28"], enabled=True, file=out) as progress:
        progress.follow(0, state)
        progress.update(0, steps.CONNECTING)
        progress.update(1, "done: passed")
    drawn = out.getvalue()
    assert "connecting · 2.5s" in drawn and "done: passed" in drawn
    assert "negotiating the protocol era" not in drawn  # the runner's words give way to the line


def test_usage_errors_never_echo_a_credential(tmp_path: Path) -> None:
    from helpers.runs import usage_error

    url = "http://127.0.0.1:9/mcp"
    cases = [
        (["--url", url, "--header", "Authorization Bearer sekrit-hdr-1"],
         "--header: expected 'Name: value', got 'Authorization'… without a colon"),
        (["--url", url, "--other-header", "sekrit-hdr-2"],
         "--other-header: expected 'Name: value', got a value without a colon (not shown)"),
        (["--command", "true", "-e", "sekrit-env-3"], "--env: expected KEY=VALUE, got a value (not shown) without '='"),
        (["--command", "true", "-e", "=sekrit-env-4"], "--env: expected KEY=VALUE, got no KEY before '='"),
        (["--url", "ftp://user:sekrit-pw-5@host/mcp?token=sekrit-q-6"],
         "--url must start with http:// or https://, got 'ftp://user:[REDACTED]@host/mcp?token=[REDACTED]'"),
    ]
    for args, message in cases:
        got = usage_error(*args)
        assert got == message, args
        assert "sekrit" not in got


def test_every_markdown_report_starts_at_the_same_heading_level(tmp_path: Path) -> None:
    # Appended to $GITHUB_STEP_SUMMARY one after the other, a single run's report and a
    # combined one sit side by side under the job's title: both at level 2, sections below it.
    summary = tmp_path / "summary.md"
    for extra in ([], ["--era", "both"]):
        proc = cli_in(tmp_path, "demo", "--check-id", "tasks-ttl-shape", "-q", "--reporter", f"markdown=+{summary}",
                      *extra)
        assert proc.returncode == 0, proc.stderr
    headings = [line.split(" ", 1)[0] for line in summary.read_text(encoding="utf-8").splitlines()
                if line.startswith("#")]
    assert headings == ["##", "##", "###", "###"], headings


def test_one_failure_that_blocks_the_rest_states_the_cause_once(tmp_path: Path) -> None:
    # A stdio server that prints text instead of JSON-RPC: tasks-wire-framing fails, the run is
    # failed, and every other check could not run for one cause. The report states that cause
    # once, with its fix, below the table, and each blocked row points at it (failed or not).
    noisy = shlex.join([sys.executable, "-c", "print('hello, not JSON')"])
    proc = cli_in(tmp_path, "--command", noisy, "--tool-name", "x", "--format", "human")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "✗ FAIL     tasks-wire-framing" in proc.stdout
    from tasks_conformance.core.profiles import OPT_IN_CHECKS
    from tasks_conformance.server.checks import CHECKS

    blocked = len(set(CHECKS) - set(OPT_IN_CHECKS)) - 1  # the default profile's, all but tasks-wire-framing
    assert proc.stdout.count("see the cause below") == blocked
    assert proc.stdout.count("  fix: the server printed something other than JSON-RPC on stdout") == 1
    assert proc.stdout.count("(see tasks-wire-resolvable)") == 0  # no row repeats the cause
    assert "tasks-base-input-required-where-allowed" in proc.stdout  # named in the blocked list
