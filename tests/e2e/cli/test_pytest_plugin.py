"""The pytest plugin, run the way a server project runs it (pytester), against the bundled
reference server and a fixture server that breaks one rule."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
import xml.etree.ElementTree as ET
from importlib import metadata

import pytest
from helpers.paths import BROKEN, REFERENCE

from tasks_conformance.core.profiles import OPT_IN_CHECKS
from tasks_conformance.server.checks import ordered_checks

pytest_plugins = ["pytester"]

REFERENCE_CMD = shlex.join([*REFERENCE, "--transport", "stdio"])
NESTED_CREATE_CMD = shlex.join([*BROKEN, "--break", "nested-create", "--transport", "stdio"])
ALL_IDS = [c.id for c in ordered_checks() if c.id not in OPT_IN_CHECKS]  # the default profile's
FAST = ("--tasks-conformance-timeout", "5000", "--tasks-conformance-poll-timeout", "5000")
PROJECT_TEST = "def test_the_project_s_own():\n    assert True\n"


def target(command: str, tool: str = "slow_compute") -> tuple[str, ...]:
    return ("--tasks-conformance-command", command, "--tasks-conformance-tool", tool, *FAST)


def test_the_plugin_is_registered_as_a_pytest11_entry_point() -> None:
    eps = [ep for ep in metadata.entry_points(group="pytest11") if ep.value == "tasks_conformance.entry.pytest_plugin"]
    assert len(eps) == 1, "reinstall (pip install -e .) after changing entry points"


def test_loading_the_plugin_imports_nothing_of_the_runner() -> None:
    code = (
        "import sys, tasks_conformance.entry.pytest_plugin\n"
        "print(sorted(m for m in sys.modules if m.startswith('tasks_conformance.') or m.split('.')[0] in "
        "('anyio', 'httpx', 'pydantic', 'typer', 'rich')))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.strip() == "['tasks_conformance.entry', 'tasks_conformance.entry.pytest_plugin']"


def test_without_its_options_the_plugin_collects_nothing(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_project=PROJECT_TEST)
    collected = pytester.runpytest("--collect-only", "-q")
    assert [line for line in collected.outlines if "::" in line] == ["test_project.py::test_the_project_s_own"]
    pytester.runpytest().assert_outcomes(passed=1)


def test_each_check_becomes_an_item_in_the_report_and_junit(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_project=PROJECT_TEST)
    # In a fresh process: the plugin is found through its entry point, as in a server project.
    result = pytester.runpytest_subprocess("-v", "-rs", "--junitxml=junit.xml", *target(REFERENCE_CMD))
    assert result.ret == 0, result.stdout.str()
    for check_id in ALL_IDS:
        result.stdout.re_match_lines([rf"tasks-conformance::{check_id} (PASSED|SKIPPED)"], consecutive=False)
    result.stdout.fnmatch_lines(["*tasks-conformance:1: not-applicable: applies over http only, not stdio"])
    result.stdout.fnmatch_lines(["passed: *checks passed, 0 failed, 0 could not run*"])
    cases = ET.parse(pytester.path / "junit.xml").getroot().iter("testcase")
    ours = {case.get("name"): case for case in cases if (case.get("classname") or "").startswith("tasks_conformance.")}
    assert list(ours) == ALL_IDS
    # Each check's classname is its spec area, as in the command line's junit-xml.
    from tasks_conformance.server.checks import CHECKS

    assert {n: c.get("classname") for n, c in ours.items()} == {n: f"tasks_conformance.{CHECKS[n].area}" for n in ours}
    routing = ours["tasks-mcp-name-routing"].find("skipped")
    assert routing is not None and "not-applicable" in (routing.get("message") or "")
    props = {p.get("name"): p.get("value") for p in ours["tasks-wire-resolvable"].iter("property")}
    assert props == {"category": "dispatch", "requirements": "S-CORE-MUST-08"}


def test_a_failed_check_fails_its_item_with_message_requirements_and_frames(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("--junitxml=junit.xml", *target(NESTED_CREATE_CMD))
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines([f"collected {len(ALL_IDS)} items"])
    outcomes = result.parseoutcomes()
    assert outcomes["failed"] == 1 and outcomes["passed"] + outcomes.get("skipped", 0) == len(ALL_IDS) - 1
    result.stdout.fnmatch_lines([
        "*_ tasks-conformance: tasks-result-type-discipline _*",
        "tasks-result-type-discipline: A created task is a flat CreateTaskResult*",
        '  the CreateTaskResult nests the task under "task"*',
        "  requirements: S-EXT-MUST-03, S-EXT-MUST-04, S-EXT-MUST-06",
        "  evidence frames:",
        "    #* out stdio [[]declared tools/call]: *",
        '    #* in stdio: *"task":{"taskId"*',
    ])
    assert "pytest_plugin.py" not in result.stdout.str()  # the check's words, not our traceback
    failure = next(c for c in ET.parse(pytester.path / "junit.xml").getroot().iter("testcase")
                   if c.get("name") == "tasks-result-type-discipline").find("failure")
    assert failure is not None and "S-EXT-MUST-06" in (failure.text or "")


def test_selection_options_and_k_choose_the_items(pytester: pytest.Pytester) -> None:
    by_id = pytester.runpytest("-v", *target(REFERENCE_CMD), "--tasks-conformance-check-id", "tasks-inline-result")
    by_id.assert_outcomes(passed=1)
    by_id.stdout.fnmatch_lines(["tasks-conformance::tasks-inline-result PASSED*"])
    by_k = pytester.runpytest(*target(REFERENCE_CMD), "-k", "ttl")
    by_k.assert_outcomes(passed=len([i for i in ALL_IDS if "ttl" in i]), deselected=len(ALL_IDS) - 2)


def test_a_config_file_gives_the_target_and_probe_options_name_roles(pytester: pytest.Pytester) -> None:
    """--tasks-conformance-config alone collects the checks (the target comes from the file), and
    --tasks-conformance-probe hands a role its tool: the role's check runs instead of skipping."""
    cfg = pytester.path / "conformance.toml"
    cfg.write_text(f"command = {REFERENCE_CMD!r}\ntool-name = \"slow_compute\"\ntimeout = 5000\npoll-timeout = 5000\n")
    pick = ("--tasks-conformance-check-id", "tasks-fault-outcome")
    unnamed = pytester.runpytest("-v", "--tasks-conformance-config", str(cfg), *pick)
    unnamed.assert_outcomes(skipped=1)  # no tool for the fault role: not applicable
    named = pytester.runpytest("-v", "--tasks-conformance-config", str(cfg), *pick,
                               "--tasks-conformance-probe", "fault=rpc_error")
    named.assert_outcomes(passed=1)
    named.stdout.fnmatch_lines(["tasks-conformance::tasks-fault-outcome PASSED*"])


def test_a_setting_the_cli_would_refuse_is_a_pytest_usage_error(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("--tasks-conformance-url", "ftp://example")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*tasks-conformance: --url must start with http:// or https://, got 'ftp://example'"])
    unknown = pytester.runpytest(*target(REFERENCE_CMD), "--tasks-conformance-check-id", "tasks-nope")
    assert unknown.ret == pytest.ExitCode.USAGE_ERROR
    unknown.stderr.fnmatch_lines(["*unknown --check-id tasks-nope; valid ids: *"])


def test_an_unreachable_tool_skips_as_could_not_run_and_the_summary_says_incomplete(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("-rs", *target(REFERENCE_CMD, tool="no_such_tool"))
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines(["incomplete: *", "Could not establish conformance — *"])
    result.stdout.fnmatch_lines(["SKIPPED * could-not-run: *'no_such_tool' is not among the listed tools*"])
    strict = pytester.runpytest(*target(REFERENCE_CMD, tool="no_such_tool"), "--tasks-conformance-strict")
    outcomes = strict.parseoutcomes()
    # The not-applicable ones: the six HTTP-only checks over stdio (Mcp-Name routing, task
    # authorization, the endpoint's unknown method, notification, Origin and base64 Mcp-Name), the
    # five probe-role checks (no tool for the required, tool-error, fault and input roles; the sync
    # role's check is legacy-only), and the eight tasks-legacy-* checks (extension wire).
    assert strict.ret == pytest.ExitCode.TESTS_FAILED and outcomes["skipped"] == 19
    strict.stdout.fnmatch_lines(["*_ tasks-conformance: tasks-inline-result _*", "could-not-run: *no_such_tool*"])


FIXTURE_TESTS = f"""
import re
import shlex

def test_reference(tasks_conformance):
    report = tasks_conformance.check(command=shlex.split({REFERENCE_CMD!r}), tool_name="slow_compute",
                                     timeout_ms=5000, poll_timeout_ms=5000)
    assert report.passed

def test_broken(tasks_conformance):
    tasks_conformance.check(command=shlex.split({NESTED_CREATE_CMD!r}), tool_name="slow_compute",
                            timeout_ms=5000, poll_timeout_ms=5000)

def test_incomplete(tasks_conformance):
    tasks_conformance.check(command=shlex.split({REFERENCE_CMD!r}), tool_name="no_such_tool",
                            check_ids=["tasks-inline-result"], timeout_ms=5000)

def test_incomplete_allowed(tasks_conformance):
    report = tasks_conformance.check(command=shlex.split({REFERENCE_CMD!r}), tool_name="no_such_tool",
                                     check_ids=["tasks-inline-result"], timeout_ms=5000, allow_incomplete=True)
    assert report.outcome == "incomplete"

def test_bad_setting(tasks_conformance):
    tasks_conformance.check(url="ftp://example")
"""


def test_the_fixture_checks_and_fails_with_a_readable_summary(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_server=FIXTURE_TESTS)
    result = pytester.runpytest()
    result.assert_outcomes(passed=2, failed=3)
    text = result.stdout.str()
    result.stdout.fnmatch_lines([
        "*_ test_broken _*",
        "tasks-conformance failed against *: *checks passed, 1 failed*",
        "  FAILED tasks-result-type-discipline: the CreateTaskResult nests the task*"
        "[[]S-EXT-MUST-03, S-EXT-MUST-04, S-EXT-MUST-06]",
    ])
    result.stdout.fnmatch_lines(["*_ test_incomplete _*", "tasks-conformance incomplete against *",
                                 "  COULD NOT RUN tasks-inline-result: *no_such_tool*"])
    result.stdout.fnmatch_lines(["*_ test_bad_setting _*",
                                 "tasks-conformance: --url must start with http:// or https://, got 'ftp://example'"])
    assert "def check(" not in text  # pytest.fail(pytrace=False): the summary, not the plugin's code


def test_a_client_that_sends_nothing_is_one_cause_in_pytest_not_one_per_item(pytester: pytest.Pytester) -> None:
    """Every client check could not run for one reason: pytest's report says it in the grouped skip
    line and the summary, never once per check."""
    code = "import sys; print('no config', file=sys.stderr); sys.exit(1)"
    result = pytester.runpytest("-rs", "--tasks-conformance-client-command", shlex.join([sys.executable, "-c", code]),
                                "--tasks-conformance-client-timeout", "5000")
    out = result.stdout.str()
    items = result.parseoutcomes()["skipped"]
    assert items > 1 and out.count("exited with code 1 without sending anything") == 2, out
    result.stdout.fnmatch_lines(["Could not establish conformance — the client exited with code 1*",
                                 f"SKIPPED [[]{items}[]] *could-not-run: the client exited with code 1*"])


def test_docs_api_md_lists_every_option_of_the_plugin() -> None:
    from types import SimpleNamespace

    from helpers.paths import ROOT

    from tasks_conformance.entry.pytest_plugin import pytest_addoption

    # The options the plugin registers (derived from the settings schema), as pytest sees them.
    declared: set[str] = set()
    group = SimpleNamespace(addoption=lambda name, **_kw: declared.add(name))
    pytest_addoption(SimpleNamespace(getgroup=lambda *_a: group))  # type: ignore[arg-type]
    documented = set(re.findall(r"--tasks-conformance-[a-z-]+[a-z]", (ROOT / "docs" / "api.md").read_text()))
    assert declared and declared == documented
