"""The config file (tasks-conformance.toml, [tool.tasks-conformance] in pyproject.toml, --config):
found in the working directory, overridden by flags, strict about its keys and their types, and
shown by `config show` with the source of every setting and its secrets masked. The command line
runs in this process; the servers are the reference server and the breaking fixture."""

from __future__ import annotations

import datetime as dt
import json
import re
import shlex
import sys
from pathlib import Path
from typing import Any

import pytest
from helpers.paths import BROKEN, REFERENCE, ROOT
from helpers.runs import PREFIX, invoke, usage_error

import tasks_conformance
from tasks_conformance.entry.cli import app
from tasks_conformance.settings import FILE, RUN, applying
from tasks_conformance.settings.config import RunOptions
from tasks_conformance.settings.config_file import BY_FIELD, CLIENT_BY_NAME, FLAG_ONLY, KEYS, find

TWO_CHECKS = ["tasks-wire-resolvable", "tasks-inline-result"]


def toml_list(values: list[str]) -> str:
    return json.dumps(values)  # a JSON array of strings is a TOML array


def reference_toml(*, check_ids: list[str] = TWO_CHECKS, extra: str = "") -> str:
    command = [*REFERENCE, "--transport", "stdio"]
    return (
        f"command = {toml_list(command)}\n"
        'tool-name = "slow_compute"\n'
        "timeout = 5000\n"
        "poll-timeout = 5000\n"
        f"check-id = {toml_list(check_ids)}\n"
        + extra
    )


def run_json(*args: str) -> tuple[int, dict[str, Any]]:
    res = invoke(*args, "--format", "json")
    assert res.stdout, res
    return res.code, json.loads(res.stdout)


def test_every_setting_has_a_file_key_named_after_its_long_flag() -> None:
    # The file's keys are the flags' long names: each key is an option of the main command,
    # and every RunOptions field is a key (or deliberately command-line only).
    main = typer_command()
    flags = {opt for p in main.params for opt in getattr(p, "opts", ()) if opt.startswith("--")}
    assert {f"--{k.name}" for k in KEYS} <= flags
    assert {f"--{name}" for name in FLAG_ONLY.values()} <= flags
    assert set(BY_FIELD) | set(FLAG_ONLY) == {s.name for s in applying(RUN)} - {"era"}  # era: the file's own key
    assert not set(BY_FIELD) & set(FLAG_ONLY)
    # A client's keys ([client]) are the options of `tasks-conformance client`.
    client = {opt for p in typer_command().commands["client"].params for opt in getattr(p, "opts", ())}
    assert {f"--{name}" for name in CLIENT_BY_NAME} <= client and "era" in CLIENT_BY_NAME


def typer_command() -> Any:
    import typer.main

    return typer.main.get_command(app)


def test_the_file_in_the_working_directory_is_used(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "tasks-conformance.toml").write_text(reference_toml(), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    code, doc = run_json()
    assert code == 0, doc["summary"]
    assert [c["id"] for c in doc["checks"]] == TWO_CHECKS
    assert doc["discovery"]["probedTool"] == "slow_compute"


def test_pyproject_table_is_used_and_a_pyproject_without_it_is_not(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "server"\n', encoding="utf-8")
    assert find() is None
    assert usage_error().startswith("no target")
    table = reference_toml(check_ids=["tasks-wire-resolvable"])
    (tmp_path / "pyproject.toml").write_text(f'[project]\nname = "server"\n\n[tool.tasks-conformance]\n{table}',
                                             encoding="utf-8")
    assert find() == str(tmp_path / "pyproject.toml")
    code, doc = run_json()
    assert code == 0 and [c["id"] for c in doc["checks"]] == ["tasks-wire-resolvable"]


# Every way TOML can spell tool.tasks-conformance, and pyprojects that only mention the name:
# find() parses a pyproject only when it may hold the table (config_file._may_hold_our_table).
OUR_TABLE_SPELLINGS = [
    '[tool.tasks-conformance]\nurl = "http://x/mcp"\n',
    '[ tool . "tasks-conformance" ]\nurl = "http://x/mcp"\n',
    "[tool.'tasks-conformance'.env]\nA = \"1\"\n",
    '[tool]\ntasks-conformance = { url = "http://x/mcp" }\n',
    '[tool]\n"tasks-conformance".url = "http://x/mcp"\n',
    'tool.tasks-conformance.url = "http://x/mcp"\n',
    '"tool"."tasks-conformance".url = "http://x/mcp"\n',
    'tool = { tasks-conformance = { url = "http://x/mcp" } }\n',
    '[project]\nname = "s"\n\n[tool.ruff]\nline-length = 100\n\n  [tool.tasks-conformance]\nurl = "http://x/mcp"\n',
]
ONLY_THE_NAME = [
    '[project]\nname = "tasks-conformance"\ndependencies = ["tasks-conformance>=1"]\n',
    '[project.scripts]\ntasks-conformance = "tasks_conformance.entry.cli:main"\n[tool.ruff]\nline-length = 100\n',
    '[tool.hatch.envs.default]\ndependencies = ["tasks-conformance"]\n',
]


@pytest.mark.parametrize("text", OUR_TABLE_SPELLINGS)
def test_every_spelling_of_the_pyproject_table_is_found(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                        text: str) -> None:
    import tomllib

    assert "tasks-conformance" in tomllib.loads(text)["tool"]  # the sample itself is right
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pyproject.toml").write_text(text, encoding="utf-8")
    assert find() == str(tmp_path / "pyproject.toml")


@pytest.mark.parametrize("text", ONLY_THE_NAME)
def test_a_pyproject_that_only_names_the_tool_is_not_parsed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                            text: str) -> None:
    import tomllib

    from tasks_conformance.settings import config_file

    assert "tasks-conformance" not in tomllib.loads(text).get("tool", {})
    assert not config_file._may_hold_our_table(text.encode())
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pyproject.toml").write_text(text, encoding="utf-8")
    assert find() is None


def test_our_own_pyproject_is_not_parsed_for_a_run_from_the_checkout() -> None:
    # The benchmark and every run from a checkout start here: no tomllib before the first frame.
    from tasks_conformance.settings import config_file

    assert not config_file._may_hold_our_table((ROOT / "pyproject.toml").read_bytes())


def test_the_own_file_wins_over_pyproject(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pyproject.toml").write_text('[tool.tasks-conformance]\nurl = "http://127.0.0.1:1/mcp"\n',
                                             encoding="utf-8")
    (tmp_path / "tasks-conformance.toml").write_text(reference_toml(), encoding="utf-8")
    assert find() == str(tmp_path / "tasks-conformance.toml")


def test_config_flag_names_a_file_elsewhere(tmp_path: Path) -> None:
    conf = tmp_path / "ci" / "conformance.toml"
    conf.parent.mkdir()
    conf.write_text(reference_toml(check_ids=["tasks-inline-result"]), encoding="utf-8")
    code, doc = run_json("--config", str(conf))
    assert code == 0 and [c["id"] for c in doc["checks"]] == ["tasks-inline-result"]


def test_flags_override_the_file_lists_included(tmp_path: Path) -> None:
    conf = tmp_path / "c.toml"
    conf.write_text(reference_toml(), encoding="utf-8")
    code, doc = run_json("--config", str(conf), "--check-id", "tasks-wire-resolvable")
    assert code == 0 and [c["id"] for c in doc["checks"]] == ["tasks-wire-resolvable"]
    # A flag's value wins even where the file's is valid and the flag's is not.
    assert usage_error("--config", str(conf), "--timeout", "0") == "--timeout must be a positive number of milliseconds"


def test_a_failing_server_from_the_file_fails_the_run(tmp_path: Path) -> None:
    conf = tmp_path / "c.toml"
    command = [*BROKEN, "--break", "legacy-ttl-names", "--transport", "stdio"]
    conf.write_text(f'command = {toml_list(command)}\ntool-name = "slow_compute"\ntimeout = 5000\n'
                    'poll-timeout = 5000\ncheck-id = ["tasks-ttl-shape"]\n', encoding="utf-8")
    code, doc = run_json("--config", str(conf))
    assert code == 1 and doc["checks"][0]["status"] == "failed"


@pytest.mark.parametrize(("text", "message"), [
    ("timout = 5000\n", "unknown key 'timout'; did you mean timeout?"),
    ("headers = [\"A: b\"]\n", "unknown key 'headers'; did you mean header?"),
    ("check-ids = [\"tasks-inline-result\"]\n", "unknown key 'check-ids'; did you mean check-id?"),
    ("zzz = 1\n", "unknown key 'zzz'; keys are the long flag names, e.g. tool-name"),
    ("timeout = \"5000\"\n", "timeout must be an integer (milliseconds), got a string"),
    ("quiet = 1\n", "quiet must be true or false, got an integer"),
    ("timeout = true\n", "timeout must be an integer (milliseconds), got a boolean"),
    ("check-id = 3\n", "check-id must be a string or an array of strings, got an integer"),
    ("env = [1]\n", "env must be a table of NAME = \"value\" or an array of \"NAME=VALUE\" strings, "
                    "got an array of other values"),
    ("tool-args = 3\n", "tool-args must be a table or a JSON string, got an integer"),
    ("update-baseline = \"b.toml\"\n",
     "update-baseline cannot be set in a config file; give --update-baseline on the command line"),
    ("timeout = \n", "not valid TOML: Invalid value (at line 1, column 11)"),
    ("tool = 3\n", "unknown key 'tool'; did you mean tool-name?"),
])
def test_a_bad_file_is_a_one_line_usage_error_naming_it(tmp_path: Path, text: str, message: str) -> None:
    conf = tmp_path / "c.toml"
    conf.write_text(text, encoding="utf-8")
    assert usage_error("--config", str(conf)) == f"{conf}: {message}"


def test_a_pyproject_given_without_the_table_and_a_missing_file_are_usage_errors(tmp_path: Path) -> None:
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text('[project]\nname = "x"\n', encoding="utf-8")
    assert usage_error("--config", str(pyproject)) == f"{pyproject}: no [tool.tasks-conformance] table"
    pyproject.write_text('[tool.tasks-conformance]\ntool-nam = "x"\n', encoding="utf-8")
    assert usage_error("--config", str(pyproject)) == (
        f"{pyproject} [tool.tasks-conformance]: unknown key 'tool-nam'; did you mean tool-name?"
    )
    missing = tmp_path / "nope.toml"
    assert usage_error("--config", str(missing)) == f"--config: cannot read {str(missing)!r}: No such file or directory"


def test_file_settings_reach_the_junit_suite_name_and_show_env(tmp_path: Path) -> None:
    conf = tmp_path / "c.toml"
    junit = tmp_path / "out.xml"
    conf.write_text(reference_toml(check_ids=["tasks-wire-resolvable"], extra=(
        'junit-suite-name = "nightly from the file"\n'
        f'reporter = ["junit-xml={junit}"]\n'
        'show-env = ["NOPE"]\n'
    )), encoding="utf-8")
    # show-env must name an -e variable, from the file as from the flag (the error names the file's key).
    assert usage_error("--config", str(conf)) == f"{conf}: show-env NOPE: no -e NAME=VALUE gives it"
    conf.write_text(conf.read_text(encoding="utf-8").replace('show-env = ["NOPE"]\n', ""), encoding="utf-8")
    res = invoke("--config", str(conf), "-q")
    assert res.code == 0, res
    assert 'name="nightly from the file"' in junit.read_text(encoding="utf-8")


def show(*args: str, env: dict[str, str] | None = None,
         monkeypatch: pytest.MonkeyPatch | None = None) -> dict[str, Any]:
    if monkeypatch is not None:
        for k, v in (env or {}).items():
            monkeypatch.setenv(k, v)
    res = invoke(*args, "config", "show", "--format", "json")
    assert res.code == 0, res
    return {row["key"]: (row["value"], row["source"]) for row in json.loads(res.stdout)["settings"]}


def test_config_show_names_the_source_of_every_setting(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "tasks-conformance.toml").write_text(
        'url = "http://127.0.0.1:9/mcp"\ntool-name = "long_job"\ntimeout = 7000\n', encoding="utf-8")
    rows = show("--timeout", "9000", env={"TASKS_CONFORMANCE_ACCESS_TOKEN": "tok-from-env-123456"},
                monkeypatch=monkeypatch)
    assert rows["timeout"] == (9000, "flag --timeout")
    assert rows["tool-name"] == ("long_job", "file tasks-conformance.toml")
    assert rows["url"] == ("http://127.0.0.1:9/mcp", "file tasks-conformance.toml")
    assert rows["poll-timeout"] == (30000, "default")
    assert rows["access-token"] == ("[REDACTED]", "environment $TASKS_CONFORMANCE_ACCESS_TOKEN")
    assert rows["config"][1] == "found in the working directory"
    # Every server setting of the command line or the file (a client's are its [client] table's), and era.
    assert set(rows) == {s.key for s in applying(RUN)} | {s.key for s in applying(FILE)}
    assert rows["era"] == ("auto", "default")


def test_config_show_masks_every_secret(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    conf = tmp_path / "c.toml"
    conf.write_text(
        'url = "https://user:hunter2pw@example.test/mcp?api_key=qk-secret-1&page=2"\n'
        'access-token = "file-token-abcdef"\n'
        'header = {Authorization = "Bearer hdr-secret-999", X-Trace = "trace-1"}\n',
        encoding="utf-8",
    )
    res = invoke("--config", str(conf), "config", "show")
    assert res.code == 0, res
    for secret in ("hunter2pw", "qk-secret-1", "file-token-abcdef", "hdr-secret-999"):
        assert secret not in res.stdout
    assert "page=2" in res.stdout and "X-Trace: trace-1" in res.stdout and "[REDACTED]" in res.stdout
    res = invoke("--command", sys.executable, "--args", "--api-key", "--args", "argsecret7", "-e", "DB_PASSWORD=pw77",
                 "-e", "SHORT=ab", "-e", "MODE=fast", "--show-env", "MODE", "config", "show")
    assert res.code == 0, res
    assert "argsecret7" not in res.stdout and "pw77" not in res.stdout and "SHORT=ab" not in res.stdout
    assert "MODE=fast" in res.stdout and "SHORT=[REDACTED]" in res.stdout
    assert res.stdout.startswith("# config file: none")


def test_a_target_flag_replaces_the_file_s_target(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "tasks-conformance.toml").write_text(
        reference_toml() + 'cwd = "."\nenv = {MODE = "x"}\n', encoding="utf-8")
    rows = show("--url", "http://127.0.0.1:9/mcp")
    assert rows["url"] == ("http://127.0.0.1:9/mcp", "flag --url")
    for key in ("command", "args", "cwd", "env"):
        assert rows[key][1] == "default", key
    assert rows["tool-name"] == ("slow_compute", "file tasks-conformance.toml")
    # Not "give one target, not --url and --command": the run goes to the flag's target.
    res = invoke("--url", "http://127.0.0.1:1/mcp", "--timeout", "2000", "--format", "json")
    assert res.code == 3 and json.loads(res.stdout)["target"] == "http://127.0.0.1:1/mcp"


def test_config_show_masks_secrets_inside_a_command_string() -> None:
    res = invoke("--command", f"{sys.executable} -c pass --api-key cmdsecret9", "config", "show")
    assert res.code == 0 and "cmdsecret9" not in res.stdout and "--api-key '[REDACTED]'" in res.stdout


def test_config_show_takes_config_after_it_too(tmp_path: Path) -> None:
    conf = tmp_path / "c.toml"
    conf.write_text('tool-name = "x"\n', encoding="utf-8")
    res = invoke("config", "show", "--config", str(conf), "--format", "json")
    rows = {r["key"]: r for r in json.loads(res.stdout)["settings"]}
    assert rows["tool-name"]["source"] == f"file {conf}" and rows["config"]["source"] == "flag --config"
    conf.write_text('tool-nam = "x"\n', encoding="utf-8")
    lines = invoke("config", "show", "--config", str(conf)).stderr.strip().splitlines()
    assert lines == [f"{PREFIX}{conf}: unknown key 'tool-nam'; did you mean tool-name?"]


def test_the_api_reads_a_config_file_and_keywords_win(tmp_path: Path) -> None:
    conf = tmp_path / "c.toml"
    conf.write_text(reference_toml(), encoding="utf-8")
    report = tasks_conformance.run(config=conf)
    assert report.passed and [c.id for c in report.checks] == TWO_CHECKS
    report = tasks_conformance.run(config=str(conf), check_ids=["tasks-inline-result"])
    assert [c.id for c in report.checks] == ["tasks-inline-result"]
    conf.write_text("timout = 1\n", encoding="utf-8")
    with pytest.raises(tasks_conformance.ConfigError, match="unknown key 'timout'; did you mean timeout"):
        tasks_conformance.run(config=conf)


def readme_section(title: str) -> str:
    """The README's `### title` section, up to the next heading."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    start = text.index(f"\n### {title}\n")
    end = re.compile(r"^#{2,3} ", re.M).search(text, start + 5)
    return text[start: end.start() if end else len(text)]


def blocks(section: str, lang: str) -> list[str]:
    return re.findall(rf"^```{lang}\n(.*?)^```$", section, re.M | re.S)


def readme_commands(section: str) -> list[list[str]]:
    out = []
    for line in "".join(blocks(section, "sh")).splitlines():
        argv = shlex.split(line, comments=True)
        assert argv[0] == "tasks-conformance"
        out.append(argv[1:])
    return out


def test_the_readme_config_and_baseline_examples_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The README's files as written, with only the server swapped for the breaking fixture (its
    # one failure is the example's tasks-ttl-shape) and the expiry kept ahead of today.
    config_section, baseline_section = readme_section("Config file"), readme_section("Baselines")
    (config_toml,), (baseline_toml,) = blocks(config_section, "toml"), blocks(baseline_section, "toml")
    server = [*BROKEN, "--break", "legacy-ttl-names", "--transport", "stdio"]
    config_toml = re.sub(r"^command = .*$", f"command = {toml_list(server)}", config_toml, flags=re.M)
    config_toml = config_toml.replace('tool-name = "long_job"', 'tool-name = "slow_compute"')
    config_toml += 'poll-timeout = 5000\ncheck-id = ["tasks-ttl-shape", "tasks-inline-result"]\n'
    next_year = (dt.date.today() + dt.timedelta(days=365)).isoformat()
    baseline_toml = re.sub(r"expires = \d{4}-\d{2}-\d{2}", f"expires = {next_year}", baseline_toml)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "tasks-conformance.toml").write_text(config_toml, encoding="utf-8")
    (tmp_path / "tasks-conformance-baseline.toml").write_text(baseline_toml, encoding="utf-8")
    (tmp_path / "ci").mkdir()
    (tmp_path / "ci" / "conformance.toml").write_text(config_toml, encoding="utf-8")
    commands = readme_commands(config_section) + readme_commands(baseline_section)
    assert len(commands) == 7
    for argv in commands:
        res = invoke(*argv)
        assert res.code == 0, (argv, res)
    assert "<testsuite" in (tmp_path / "tasks-conformance.xml").read_text(encoding="utf-8")
    summary = json.loads((tmp_path / "tasks-conformance.json").read_text(encoding="utf-8"))
    assert summary["counts"]["known"] == 1 and summary["outcome"] == "passed"
    # --update-baseline kept the README's reason.
    assert "ttlMs arrives with server v2 (#41)" in (tmp_path / "tasks-conformance-baseline.toml").read_text()
    # Without the baseline the example's server fails: the baseline is what made the runs pass.
    plain = config_toml.replace('baseline = "tasks-conformance-baseline.toml"\n', "")
    (tmp_path / "tasks-conformance.toml").write_text(plain, encoding="utf-8")
    assert invoke("-q").code == 1


def test_probe_roles_from_the_file_become_the_flags_values(tmp_path: Path) -> None:
    """`probe` and `probe-args` tables mean what --probe ROLE=TOOL and --probe-args ROLE=JSON mean."""
    from tasks_conformance.settings.config import Catalog, build_run_config
    from tasks_conformance.settings.config_file import resolve

    path = tmp_path / "c.toml"
    path.write_text('url = "http://127.0.0.1:9/mcp"\n[probe]\ninput = "confirm_action"\nfault = "rpc_error"\n'
                    '[probe-args]\nfault = {durationMs = 10}\ninput = \'{"x": 1}\'\n')
    options = resolve(RunOptions(config=str(path)), {"config"}, discover=False).options
    assert options.probes == ("input=confirm_action", "fault=rpc_error")
    assert options.probe_args == ('fault={"durationMs": 10}', 'input={"x": 1}')
    config = build_run_config(options, Catalog())
    assert config.probes == {"input": "confirm_action", "fault": "rpc_error"}
    assert config.probe_args == {"fault": {"durationMs": 10}, "input": {"x": 1}}


def test_a_config_or_baseline_file_too_large_to_be_one_is_a_usage_error(tmp_path: Path) -> None:
    big = tmp_path / "big.toml"
    big.write_text("# " + "x" * (4 * 1024 * 1024 + 10) + "\n")
    assert usage_error("--config", str(big), "--url", "http://127.0.0.1:9/mcp").endswith("larger than 1 MiB")
    assert usage_error("--baseline", str(big), "--url", "http://127.0.0.1:9/mcp").endswith("larger than 4 MiB")


# -- a setting's error names where its value came from (issue 35) ---------------------------------


def _client_example() -> str:
    """The README's `[client]` config example (under "Testing a tasks client"), as printed."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text[text.index("\n## Testing a tasks client\n"):]
    (example,) = [b for b in blocks(section, "toml") if "\n[client]\n" in b]
    return example


def test_the_readmes_client_example_as_printed_names_the_files_key(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    example = _client_example()
    (tmp_path / "tasks-conformance.toml").write_text(example, encoding="utf-8")
    res = invoke("client")
    assert res.code == 2 and res.stdout == "", res
    assert res.stderr.strip() == (
        "tasks-conformance client: tasks-conformance.toml [client]: baseline: cannot read 'client-baseline.toml': "
        "no such file (--update-baseline client-baseline.toml writes it from a run's failures)")
    # What the README says next: the first --update-baseline writes it, and then the example runs
    # (the client swapped for the reference one, two scenarios to keep it short).
    reference = [sys.executable, "-m", "tasks_conformance.client.reference_client"]
    runnable = example.replace('command = ["node", "my-client.js"]', f"command = {toml_list(reference)}")
    (tmp_path / "tasks-conformance.toml").write_text(runnable, encoding="utf-8")
    short = ("--scenario", "tasks-client-lifecycle", "--scenario", "tasks-client-legacy-lifecycle", "-q")
    first = invoke("client", *short, "--update-baseline", "client-baseline.toml")
    assert first.code == 0 and "wrote 0 baseline entries to client-baseline.toml" in first.stderr, first
    assert invoke("client", *short).code == 0


@pytest.mark.parametrize(("subject", "table"), [((), ""), (("client",), "[client]\ncommand = \"x\"\n")])
def test_a_settings_error_names_the_file_and_key_it_came_from_and_the_flag_otherwise(
        tmp_path: Path, subject: tuple[str, ...], table: str) -> None:
    conf = tmp_path / "c.toml"
    target = "" if subject else 'url = "http://127.0.0.1:9/mcp"\n'
    conf.write_text(target + table + "timeout = -5\n", encoding="utf-8")
    prefix = "tasks-conformance client: " if subject else PREFIX
    shown = f"{conf.relative_to(Path.cwd()) if conf.is_relative_to(Path.cwd()) else conf}"
    where = f"{shown} [client]" if subject else shown
    res = invoke(*subject, "--config", str(conf))
    assert res.code == 2 and res.stderr.strip() == f"{prefix}{where}: timeout must be a positive number of milliseconds"
    flag = invoke(*subject, "--config", str(conf), "--timeout", "0")
    assert flag.stderr.strip() == f"{prefix}--timeout must be a positive number of milliseconds"
