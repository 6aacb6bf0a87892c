"""The client subject on every surface, from the one settings schema: `tasks-conformance client`'s
options, --profile (its own ids and score; full: the outcome-line check could not run without the
line), --baseline, the config file's [client] table and `config show`, the Python API
(`run(subject="client")`), the pytest plugin (--tasks-conformance-client-*), suite (a target with
subject = "client") and the GitHub Action (client-command). The clients are the reference client,
a breaking one (fixtures/broken_client.py) and the reference client with its outcome line removed."""

from __future__ import annotations

import json
import shlex
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
import typer.main
from helpers.action import BIN, RECORDER, run_step
from helpers.paths import ROOT
from helpers.runs import invoke
from helpers.zygote import forked

import tasks_conformance
from tasks_conformance.entry.cli import app
from tasks_conformance.settings import CLIENT, RUN, SETTINGS, applying
from tasks_conformance.settings.commands import LIST_SCENARIOS

pytest_plugins = ["pytester"]

REFERENCE = [sys.executable, "-m", "tasks_conformance.client.reference_client"]
BROKEN = [sys.executable, str(ROOT / "fixtures" / "broken_client.py")]
# Breaks C-EXT-MUST-01 (tasks/get without the extension declared): tasks-client-declares-extension fails.
NO_DECLARATION = [*BROKEN, "--break", "no-extension-on-get"]
DECLARES = "tasks-client-declares-extension"
LIFECYCLE = "tasks-client-lifecycle"
SURFACES = "tasks-client-surfaces-outcome"
# The reference client, its TASKS-CONFORMANCE-OUTCOME line left out: what a harness without one is.
SILENT = """\
import contextlib, io, sys
from tasks_conformance.client.reference.client import main
out = io.StringIO()
with contextlib.redirect_stdout(out):
    code = main(sys.argv[1:])
sys.stdout.write("".join(l for l in out.getvalue().splitlines(True) if not l.startswith("TASKS-CONFORMANCE-OUTCOME")))
sys.exit(code)
"""


def _silent(tmp_path: Path) -> list[str]:
    script = tmp_path / "silent_client.py"
    script.write_text(SILENT, encoding="utf-8")
    return [sys.executable, str(script)]


def _client(*args: str) -> tuple[int, dict[str, Any], str]:
    res = invoke("client", "--format", "json", *args)
    return res.code, json.loads(res.stdout) if res.stdout.strip() else {}, res.stderr


def _checks(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {c["id"]: c for c in doc["checks"]}


# -- the command line -----------------------------------------------------------------------------


def test_the_client_commands_options_are_the_schemas_client_settings() -> None:
    client = typer.main.get_command(app).commands["client"]  # type: ignore[attr-defined]
    options = {opt: p for p in client.params for opt in getattr(p, "opts", ()) if opt.startswith("--")}
    for spec in applying(RUN, CLIENT):
        param = options.pop(spec.flag)
        assert (param.name, param.help, param.metavar) == (spec.name, spec.help_for(CLIENT), spec.metavar_for(CLIENT))
    assert set(options) - {"--help"} == {LIST_SCENARIOS.flag}  # its own option, declared in settings/commands.py
    assert options[LIST_SCENARIOS.flag].help == LIST_SCENARIOS.help
    wanted = {"command", "era", "scenarios", "timeout_ms", "jobs", "format", "reporters", "wire_log", "baseline",
              "profile", "transport"}
    assert wanted <= {s.name for s in applying(RUN, CLIENT)}
    assert SETTINGS["transport"].metavar_for(CLIENT) == "http|stdio"


def test_profile_full_makes_the_outcome_line_check_could_not_run_without_the_line(tmp_path: Path) -> None:
    silent = shlex.join(forked(_silent(tmp_path)))
    scenarios = ("--scenario", LIFECYCLE, "--scenario", "tasks-client-tool-error")
    code, doc, _ = _client("--command", silent, *scenarios)
    assert code == 0 and _checks(doc)[SURFACES]["skipReason"] == "not-applicable"
    assert doc["profile"] == "tasks-conformance/client-standard@2026-12" and doc["score"] == 100
    code, doc, _ = _client("--command", silent, *scenarios, "--profile", "full")
    assert code == 3 and doc["profile"] == "tasks-conformance/client-full@2026-12"
    surfaces = _checks(doc)[SURFACES]
    assert surfaces["skipReason"] == "could-not-run" and "TASKS-CONFORMANCE-OUTCOME" in surfaces["message"]
    assert [c["checks"] for c in doc["incompleteCauses"]] == [[SURFACES]] and doc["score"] < 100
    # With the line, full judges it as standard does.
    code, doc, _ = _client("--command", shlex.join(forked(REFERENCE)), *scenarios, "--profile", "full")
    assert code == 0 and _checks(doc)[SURFACES]["status"] == "passed"


def test_a_client_run_whose_checks_all_did_not_apply_tested_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    # No shipped profile selects only checks that cannot apply: a profile of one check, run on a
    # scenario it does not read, is such a run. It tested nothing, so it is not a pass (policy P-46).
    import anyio

    from tasks_conformance.client.runner import ClientConfig, execute_client
    from tasks_conformance.core.profiles import CLIENT_PROFILES, Profile

    answered = "tasks-client-input-answered"
    monkeypatch.setitem(CLIENT_PROFILES, "one", Profile("client-one", "one check", (answered,)))

    def outcome(scenario: str) -> Any:
        config = ClientConfig(command=forked(REFERENCE), scenarios=(scenario,), timeout_s=20, jobs=1, profile="one")
        return anyio.run(execute_client, config).result

    result = outcome(LIFECYCLE)
    assert [(c.id, c.bucket) for c in result.checks] == [(answered, "not-applicable")]
    assert result.outcome == "incomplete" and result.score is None
    (cause,) = result.incompleteCauses
    assert cause.cause.startswith("nothing was tested") and cause.checks == ()
    assert cause.fix == "select one: --scenario tasks-client-input"
    # Its own scenario selected, the same check is judged, and the run passes.
    judged = outcome("tasks-client-input")
    assert [(c.id, c.bucket) for c in judged.checks] == [(answered, "passed")] and judged.outcome == "passed"


def test_profile_core_selects_the_client_core_checks() -> None:
    from tasks_conformance.core.profiles import CLIENT_CORE_CHECKS

    code, doc, _ = _client("--command", shlex.join(forked(REFERENCE)), "--profile", "core", "--scenario", LIFECYCLE)
    assert code == 0 and doc["profile"] == "tasks-conformance/client-core@2026-12"
    assert set(_checks(doc)) <= set(CLIENT_CORE_CHECKS) and DECLARES in _checks(doc)
    assert "could-not-run" not in {c.get("skipReason") for c in doc["checks"]}
    res = invoke("client", "--command", "x", "--profile", "nope")
    assert res.code == 2 and "valid client profiles: core, standard, full" in res.stderr


def test_a_baseline_marks_a_clients_known_failure_and_fails_on_a_new_one(tmp_path: Path) -> None:
    broken = shlex.join(forked(NO_DECLARATION))
    code, doc, _ = _client("--command", broken, "--scenario", LIFECYCLE)
    assert code == 1 and [c["id"] for c in doc["checks"] if c["status"] == "failed"] == [DECLARES]
    known = tmp_path / "known.toml"
    known.write_text(f'[[known]]\ncheck = "{DECLARES}"\nreason = "fixed in 2.0"\n', encoding="utf-8")
    code, doc, _ = _client("--command", broken, "--scenario", LIFECYCLE, "--baseline", str(known))
    assert code == 0 and doc["outcome"] == "passed"
    assert _checks(doc)[DECLARES]["baseline"]["state"] == "known"
    other = tmp_path / "other.toml"
    other.write_text('[[known]]\ncheck = "tasks-client-core-meta"\nreason = "r"\n', encoding="utf-8")
    code, _doc, _ = _client("--command", broken, "--scenario", LIFECYCLE, "--baseline", str(other))
    assert code == 1  # the failure the baseline does not name is new
    res = invoke("client", "--command", broken, "--baseline", str(tmp_path / "bad.toml"))
    assert res.code == 2
    written = tmp_path / "written.toml"
    code, _doc, err = _client("--command", broken, "--scenario", LIFECYCLE, "--update-baseline", str(written))
    assert code == 1 and "wrote 1 baseline entry" in err and DECLARES in written.read_text()


# -- the config file ------------------------------------------------------------------------------


def test_the_config_files_client_table_sets_the_client_run_and_config_show_shows_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "tasks-conformance.toml").write_text(
        f'tool-name = "long_job"\n\n[client]\ncommand = {json.dumps(NO_DECLARATION)}\n'
        f'scenario = ["{LIFECYCLE}"]\nprofile = "core"\n', encoding="utf-8")
    code, doc, _ = _client()
    assert code == 1 and doc["profile"] == "tasks-conformance/client-core@2026-12"
    assert [c["id"] for c in doc["checks"] if c["status"] == "failed"] == [DECLARES]
    code, doc, _ = _client("--profile", "standard")  # a flag wins over the table
    assert code == 1 and doc["profile"] == "tasks-conformance/client-standard@2026-12"
    shown = invoke("config", "show", "--format", "json")
    assert shown.code == 0, shown.stderr
    shown_doc = json.loads(shown.stdout)
    client = {r["key"]: (r["value"], r["source"]) for r in shown_doc["client"]}
    assert client["profile"] == ("core", "file tasks-conformance.toml [client]")
    assert client["era"] == ("extension", "default") and client["scenario"][0] == [LIFECYCLE]
    assert "tool-name" not in client and "scenario" not in {r["key"] for r in shown_doc["settings"]}
    text = invoke("config", "show").stdout
    assert "\n[client]\n" in text and "file tasks-conformance.toml [client]" in text


def test_a_bad_key_in_the_client_table_is_a_usage_error_naming_the_table(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "tasks-conformance.toml").write_text('[client]\ncommand = "x"\ntool-name = "t"\n', encoding="utf-8")
    res = invoke("client")
    assert res.code == 2 and "tasks-conformance.toml [client]: unknown key 'tool-name'" in res.stderr
    (tmp_path / "tasks-conformance.toml").write_text('client = "node c.js"\n', encoding="utf-8")
    assert "client must be a table" in invoke("client").stderr


def test_pyproject_holds_the_client_table_under_tool_tasks_conformance(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pyproject.toml").write_text(
        f'[project]\nname = "x"\n\n[tool.tasks-conformance.client]\ncommand = {json.dumps(NO_DECLARATION)}\n'
        f'scenario = ["{LIFECYCLE}"]\n', encoding="utf-8")
    code, doc, _ = _client()
    assert code == 1 and [c["id"] for c in doc["checks"] if c["status"] == "failed"] == [DECLARES]


# -- the Python API -------------------------------------------------------------------------------


def test_the_api_runs_a_client_with_subject_client(tmp_path: Path) -> None:
    report = tasks_conformance.run(subject="client", command=list(forked(NO_DECLARATION)), scenarios=[LIFECYCLE])
    assert report.outcome == "failed" and [c.id for c in report.failed] == [DECLARES]
    assert report.result.profile == "tasks-conformance/client-standard@2026-12" and report.exit_code == 1
    junit = tmp_path / "client.xml"
    report = tasks_conformance.run(subject="client", command=list(forked(_silent(tmp_path))), profile="full",
                                   scenarios=[LIFECYCLE, "tasks-client-failed"], reporters=[f"junit-xml={junit}"])
    assert report.outcome == "incomplete" and [c.id for c in report.could_not_run] == [SURFACES]
    assert DECLARES in junit.read_text()
    with pytest.raises(tasks_conformance.ConfigError, match="tool_name is a setting of a server run"):
        tasks_conformance.run(subject="client", command=REFERENCE, tool_name="t")
    with pytest.raises(tasks_conformance.ConfigError, match="era is a setting of a client run"):
        tasks_conformance.run(command=REFERENCE, era="both")
    with pytest.raises(tasks_conformance.ConfigError, match="--scenario: unknown 'nope'"):
        tasks_conformance.run(subject="client", command=REFERENCE, scenarios=["nope"])


def test_the_api_reads_the_client_table_of_a_config_file(tmp_path: Path) -> None:
    conf = tmp_path / "tc.toml"
    conf.write_text(f'command = "python server.py"\n[client]\ncommand = {json.dumps(REFERENCE)}\n'
                    f'scenario = ["{LIFECYCLE}"]\nprofile = "core"\n', encoding="utf-8")
    report = tasks_conformance.run(subject="client", config=str(conf))
    assert report.passed and report.result.profile == "tasks-conformance/client-core@2026-12"


# -- the pytest plugin ----------------------------------------------------------------------------


def test_the_pytest_plugin_makes_one_item_per_client_check(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_project="def test_own():\n    assert True\n")
    result = pytester.runpytest_subprocess("-v", "-p", "no:randomly", "--tasks-conformance-client-command",
                                           shlex.join(NO_DECLARATION), "--tasks-conformance-client-scenario", LIFECYCLE)
    result.stdout.fnmatch_lines([f"tasks-conformance-client::{DECLARES} FAILED*",
                                 "tasks-conformance-client::tasks-client-core-meta PASSED*"])
    outcomes = result.parseoutcomes()
    assert outcomes["failed"] == 1 and outcomes["passed"] >= 5
    assert "C-EXT-MUST-01" in result.stdout.str()  # the failure names its rule, as a server item's does
    good = pytester.runpytest_subprocess("-p", "no:randomly", "--tasks-conformance-client-command",
                                         shlex.join(REFERENCE), "--tasks-conformance-client-scenario", LIFECYCLE,
                                         "--junitxml=client.xml")
    assert good.ret == 0 and good.parseoutcomes().get("failed", 0) == 0
    # Each client check's JUnit classname is its spec area, as a server check's is.
    from tasks_conformance.client.checks import CLIENT_CHECKS

    cases = ET.parse(pytester.path / "client.xml").getroot().iter("testcase")
    ours = {c.get("name"): c.get("classname") for c in cases if c.get("name") in CLIENT_CHECKS}
    assert DECLARES in ours and ours == {i: f"tasks_conformance.{CLIENT_CHECKS[i].area}" for i in ours}


# -- suite ----------------------------------------------------------------------------------------


def test_a_suite_target_may_be_a_client(tmp_path: Path) -> None:
    suite = tmp_path / "suite.toml"
    suite.write_text(
        '[defaults]\ntool-name = "slow_compute"\ntimeout = 20000\n\n'
        f'[[targets]]\nname = "good-client"\nsubject = "client"\ncommand = {json.dumps(REFERENCE)}\n'
        f'scenario = ["{LIFECYCLE}"]\n\n'
        f'[[targets]]\nname = "broken-client"\nsubject = "client"\ncommand = {json.dumps(NO_DECLARATION)}\n'
        f'scenario = ["{LIFECYCLE}"]\n', encoding="utf-8")
    res = invoke("suite", str(suite), "--format", "json")
    assert res.code == 1, res.stderr
    runs = {r["name"]: r["result"] for r in json.loads(res.stdout)["targets"]}
    assert runs["good-client"]["outcome"] == "passed" and runs["broken-client"]["outcome"] == "failed"
    assert runs["good-client"]["profile"] == "tasks-conformance/client-standard@2026-12"
    assert [c["id"] for c in runs["broken-client"]["checks"] if c["status"] == "failed"] == [DECLARES]
    suite.write_text('[[targets]]\nname = "c"\nsubject = "client"\ncommand = "x"\nprobe = ["task=t"]\n')
    res = invoke("suite", str(suite))
    assert res.code == 2 and "target 'c': unknown key 'probe'" in res.stderr


# -- the GitHub Action ----------------------------------------------------------------------------


def test_the_action_passes_client_command_to_tasks_conformance_client(tmp_path: Path) -> None:
    fake = tmp_path / "fake-tasks-conformance"
    fake.write_text(RECORDER)
    fake.chmod(0o755)
    record = tmp_path / "argv.txt"
    proc, _outputs, _ = run_step(tmp_path, TC_BIN=str(fake), RECORD=str(record), TC_CLIENT_COMMAND="node my client.js",
                                TC_PROFILE="full", TC_BASELINE="known.toml")
    argv = record.read_text().splitlines()
    assert proc.returncode == 3 and argv[:3] == ["client", "--command", "node my client.js"]
    assert argv[argv.index("--profile") + 1] == "full" and argv[argv.index("--baseline") + 1] == "known.toml"
    proc, _outputs, _ = run_step(tmp_path, TC_BIN=str(fake), RECORD=str(record), TC_CLIENT_COMMAND="c",
                                TC_URL="http://127.0.0.1:9/mcp")
    assert proc.returncode == 2 and "client-command judges a client" in proc.stdout


@pytest.mark.skipif(not BIN.exists(), reason=f"{BIN} is not installed (pip install -e .)")
def test_the_action_judges_a_client(tmp_path: Path) -> None:
    proc, outputs, summary = run_step(tmp_path, TC_CLIENT_COMMAND=shlex.join(NO_DECLARATION),
                                      TC_ARGS=f"--scenario {LIFECYCLE}")
    assert proc.returncode == 1 and outputs["exit-code"] == "1", proc.stdout + proc.stderr
    assert json.loads(Path(outputs["json"]).read_text())["profile"] == "tasks-conformance/client-standard@2026-12"
    assert DECLARES in summary and Path(outputs["wire-log"]).read_text().count("\n") > 5


# -- what a client run says about itself (issue 35) -----------------------------------------------


def test_a_client_run_over_both_eras_names_both_wires_never_no_tasks_wire() -> None:
    import jsonschema  # type: ignore[import-untyped,unused-ignore]

    from tasks_conformance.reporters import schema_text

    args = ("--command", shlex.join(forked(REFERENCE)), "--era", "both", "--scenario", LIFECYCLE,
            "--scenario", "tasks-client-legacy-lifecycle")
    code, doc, _ = _client(*args)
    assert code == 0 and doc["discovery"]["wires"] == ["legacy", "extension"]
    jsonschema.Draft202012Validator(json.loads(schema_text("json"))).validate(doc)
    human = invoke("client", *args, "--format", "human").stdout
    assert "protocol  2025-11-25, 2026-07-28 (legacy and extension wires)" in human and "no tasks wire" not in human
    code, doc, _ = _client("--command", shlex.join(forked(REFERENCE)), "--scenario", LIFECYCLE)
    assert doc["discovery"]["wire"] == "extension" and "wires" not in doc["discovery"]


@pytest.mark.parametrize(("era", "scenario", "check"), [
    ("extension", LIFECYCLE, "tasks-client-cancels-with-tasks-cancel"),
    ("legacy", "tasks-client-legacy-lifecycle", "tasks-client-legacy-cancels-with-tasks-cancel"),
])
def test_a_check_whose_scenario_was_not_selected_is_not_applicable_whether_the_client_works_or_not(
        era: str, scenario: str, check: str) -> None:
    """The cancel checks read every run but judge the cancel scenario: left out, they are n/a with the
    reason, for a client that fails as for one that works (a failing one had made them could-not-run)."""
    for client in (shlex.join(forked(REFERENCE)), "false"):
        _code, doc, _ = _client("--command", client, "--era", era, "--scenario", scenario)
        verdict = _checks(doc)[check]
        assert verdict["skipReason"] == "not-applicable", (client, verdict)
        assert verdict["message"].endswith("-cancel was not selected"), (client, verdict)


def test_area_runs_the_client_checks_of_a_spec_area_over_the_scenarios_they_read() -> None:
    """--area narrows a client run as it narrows a server run (by prefix): only that area's checks
    are judged, and, with no --scenario, only the scenarios they read are played. A break of
    another area's rule then fails nothing."""
    from tasks_conformance.client.checks import CLIENT_CHECKS

    mrtr = [c for c in CLIENT_CHECKS.values() if c.area == "mrtr"]
    code, doc, err = _client("--command", shlex.join(forked(NO_DECLARATION)), "--area", "mrt")
    assert code == 0, (err, {c["id"]: c["status"] for c in doc.get("checks", [])})
    assert {c["id"] for c in doc["checks"]} == {c.id for c in mrtr}
    assert {s["scenario"] for s in doc["scenarios"]} == {s for c in mrtr for s in c.scenarios}
    # Without --area the same client fails its own rule's check.
    code, doc, _ = _client("--command", shlex.join(forked(NO_DECLARATION)), "--scenario", LIFECYCLE)
    assert code == 1 and _checks(doc)[DECLARES]["status"] == "failed"


def test_an_area_no_client_check_has_is_a_usage_error_naming_the_areas() -> None:
    code, _doc, err = _client("--command", shlex.join(forked(REFERENCE)), "--area", "nope")
    assert code == 2 and "--area nope names no client check's spec area; the areas: " in err and "mrtr" in err
    code, _doc, err = _client("--command", shlex.join(forked(REFERENCE)), "--area", "legacy", "--era", "extension")
    assert code == 2 and "its checks read no scenario of --era extension" in err
