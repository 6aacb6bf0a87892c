"""First contact and CI hygiene (issue 14): secrets in the URL's query string and in -e values,
--quiet off a terminal, tokens off the command line. Each secret is checked everywhere the
run writes: stdout, stderr, every report file and the wire log."""

from __future__ import annotations

import json
import socket
import uuid
from pathlib import Path

import pytest
from helpers.paths import REFERENCE
from helpers.processes import HttpServer
from helpers.runs import cli

from tasks_conformance.core.redact import Redactor
from tasks_conformance.settings.config import RunOptions, build_run_config, show_env

REF = " ".join(REFERENCE)
REPORTS = ("json", "json-summary", "junit-xml", "markdown")


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _everything(tmp_path: Path, *args: str, env: dict[str, str] | None = None) -> tuple[int, str]:
    """Run with every report and the wire log; returns the exit code and all text the run wrote."""
    flags = [a for name in REPORTS for a in ("--reporter", f"{name}={tmp_path / name}")]
    proc = cli(*args, *flags, "--wire-log", str(tmp_path / "wire.ndjson"), "--timeout", "5000", env=env)
    files = [(tmp_path / n).read_text() for n in (*REPORTS, "wire.ndjson")]
    return proc.returncode, "\n".join([proc.stdout, proc.stderr, *files])


@pytest.mark.parametrize("name", ["api_key", "token", "access_token", "sig", "X-Amz-Signature", "code",
                                  "password", "pass", "auth", "client_secret", "sessionId", "credential"])
def test_secret_looking_query_values_are_secrets(name: str) -> None:
    value = "q" + uuid.uuid4().hex
    config = build_run_config(RunOptions(url=f"http://h/mcp?page=2&{name}={value}&x=ok-value"))
    assert value in config.secrets()
    text = Redactor(config.secrets()).text(config.target())
    assert value not in text and f"{name}=[REDACTED]" in text and "page=2" in text and "x=ok-value" in text


def test_percent_encoded_query_secrets_are_hidden_in_both_forms() -> None:
    config = build_run_config(RunOptions(url="http://h/mcp?token=a%2Fsecret%2Bvalue"))
    assert {"a%2Fsecret%2Bvalue", "a/secret+value"} <= set(config.secrets())


def test_ordinary_query_values_are_not_secrets() -> None:
    config = build_run_config(RunOptions(url="http://h/mcp?page=200000&region=eu-west-1"))
    assert config.secrets() == []


def test_a_query_secret_reaches_no_output_from_a_live_server(reference_http: HttpServer, tmp_path: Path) -> None:
    secret = "SECRETQ" + uuid.uuid4().hex
    code, text = _everything(tmp_path, "--url", f"{reference_http.url}?api_key={secret}", "--check-id",
                             "tasks-wire-resolvable")
    assert code == 0, text[-2000:]
    assert secret not in text and "api_key=[REDACTED]" in text


def test_a_query_secret_reaches_no_output_when_the_server_is_unreachable(tmp_path: Path) -> None:
    secret = "SECRETQ" + uuid.uuid4().hex
    code, text = _everything(tmp_path, "--url", f"http://127.0.0.1:{_closed_port()}/mcp?api_key={secret}")
    assert code == 3
    assert secret not in text and "could not talk to the server" in text


# -e values: all hidden unless --show-env; a password in a URL-shaped value always.

def test_every_env_value_is_a_secret_unless_shown() -> None:
    env = ("PLAIN_VAR=plainvalue42", "API_TOKEN=tokenvalue42", "DATABASE_URL=postgres://u:pw-in-url42@db/x")
    config = build_run_config(RunOptions(command="true", env=env))
    assert {"plainvalue42", "tokenvalue42", "postgres://u:pw-in-url42@db/x", "pw-in-url42"} <= set(config.secrets())
    shown = show_env(config, ("PLAIN_VAR", "API_TOKEN", "DATABASE_URL"))
    assert "plainvalue42" not in shown.secrets()
    assert "tokenvalue42" in shown.secrets()  # a secret-looking name stays hidden
    assert "pw-in-url42" in shown.secrets() and "postgres://u:pw-in-url42@db/x" not in shown.secrets()
    assert Redactor(shown.secrets()).text("DATABASE_URL=postgres://u:pw-in-url42@db/x") == \
        "DATABASE_URL=postgres://[REDACTED]@db/x"


def test_show_env_must_name_an_env_variable() -> None:
    from tasks_conformance.core.errors import UsageError

    with pytest.raises(UsageError, match="--show-env NOPE: no -e NAME=VALUE gives it"):
        show_env(build_run_config(RunOptions(command="true", env=("A=b",))), ("NOPE",))


def test_passwords_in_url_shaped_server_arguments_are_secrets() -> None:
    config = build_run_config(RunOptions(command="true", args=("--db", "mysql://root:argpass99@127.0.0.1/x")))
    assert "argpass99" in config.secrets()


# The server prints its environment to stderr and exits: the message quotes that stderr.
ECHO_ENV = "sh -c 'echo \"plain=$PLAIN_VAR db=$DATABASE_URL\" >&2; exit 3'"


@pytest.mark.parametrize("show", [False, True])
def test_env_values_reach_no_output_unless_shown(tmp_path: Path, show: bool) -> None:
    plain, password = "plain" + uuid.uuid4().hex, "pw" + uuid.uuid4().hex
    args = ["--command", ECHO_ENV, "-e", f"PLAIN_VAR={plain}", "-e", f"DATABASE_URL=postgres://app:{password}@db/x",
            "--check-id", "tasks-wire-resolvable"]
    shown = ["--show-env", "PLAIN_VAR", "--show-env", "DATABASE_URL"] if show else []
    code, text = _everything(tmp_path, *args, *shown)
    assert code == 3 and "plain=" in text, text[-2000:]  # the server's stderr is quoted
    assert password not in text
    assert (plain in text) is show
    assert ("db=postgres://[REDACTED]@db/x" in text) is show  # shown, but never its password
    assert ("db=[REDACTED]" in text) is not show


def test_show_env_without_its_variable_is_a_usage_error_on_the_command_line() -> None:
    from helpers.runs import usage_error

    assert usage_error("--command", "true", "-e", "A=b", "--show-env", "B") == "--show-env B: no -e NAME=VALUE gives it"


# --quiet: one line on stdout off a terminal too, whatever the format; files stay full.

@pytest.mark.parametrize("extra", [[], ["--format", "json"], ["--format", "human"], ["--reporter", "markdown"]])
def test_quiet_prints_only_the_summary_line_off_a_terminal(extra: list[str]) -> None:
    proc = cli("demo", "-q", "--check-id", "tasks-wire-resolvable", *extra, env={"CI": ""})
    assert proc.returncode == 0, proc.stderr
    (line,) = proc.stdout.splitlines()
    assert line.startswith("PASSED  1/1 checks passed")


def test_quiet_still_writes_full_report_files(tmp_path: Path) -> None:
    report = tmp_path / "r.json"
    proc = cli("demo", "--quiet", "--check-id", "tasks-wire-resolvable", "--reporter", f"json={report}")
    assert len(proc.stdout.splitlines()) == 1 and proc.returncode == 0
    assert json.loads(report.read_text())["checks"][0]["id"] == "tasks-wire-resolvable"


# Tokens off the command line: --access-token @file and -, and the environment.

def test_access_token_from_a_file_or_stdin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import io
    import sys

    from tasks_conformance.core.errors import UsageError

    token_file = tmp_path / "token"
    token_file.write_text("tok-from-file-123\n")
    config = build_run_config(RunOptions(url="http://h/mcp", access_token=f"@{token_file}"))
    assert config.access_token == "tok-from-file-123"
    assert config.headers["Authorization"] == "Bearer tok-from-file-123"
    assert "tok-from-file-123" in config.secrets()
    monkeypatch.setattr(sys, "stdin", io.StringIO("tok-from-stdin-456\n"))
    assert build_run_config(RunOptions(url="http://h/mcp", access_token="-")).access_token == "tok-from-stdin-456"
    (tmp_path / "empty").write_text("\n")
    for value, message in ((f"@{tmp_path / 'empty'}", f"--access-token: {str(tmp_path / 'empty')!r} holds no token"),
                           (f"@{tmp_path / 'nope'}", f"--access-token: cannot read {str(tmp_path / 'nope')!r}")):
        with pytest.raises(UsageError) as exc:
            build_run_config(RunOptions(url="http://h/mcp", access_token=value))
        assert str(exc.value).startswith(message)
    with pytest.raises(UsageError, match="only one flag may read standard input"):
        build_run_config(RunOptions(url="http://h/mcp", access_token="-", tool_args="-"))


def test_a_token_file_with_two_words_is_refused_without_quoting_it(tmp_path: Path) -> None:
    from helpers.runs import usage_error

    token_file = tmp_path / "token"
    token_file.write_text("secret-word-one secret-word-two\n")
    line = usage_error("--url", "http://h/mcp", "--access-token", f"@{token_file}")
    assert "holds more than one word" in line and "secret-word" not in line


def test_credentials_come_from_the_environment_when_the_flags_are_absent(
    reference_http: HttpServer, tmp_path: Path
) -> None:
    token, key = "envtok" + uuid.uuid4().hex, "envkey" + uuid.uuid4().hex
    env = {"TASKS_CONFORMANCE_ACCESS_TOKEN": token, "TASKS_CONFORMANCE_HEADERS": f"X-Api-Key: {key}\nX-Plain: yes\n"}
    code, text = _everything(tmp_path, "--url", reference_http.url, "--check-id", "tasks-wire-resolvable", env=env)
    assert code == 0, text[-2000:]
    assert token not in text and key not in text
    sent = json.loads((tmp_path / "wire.ndjson").read_text().splitlines()[0])["http"]["requestHeaders"]
    assert ["Authorization", "[REDACTED]"] in sent and ["X-Api-Key", "[REDACTED]"] in sent
    assert ["X-Plain", "yes"] in sent


def test_a_flag_wins_over_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    from tasks_conformance.entry.cli import _credentials_from_environment

    monkeypatch.setenv("TASKS_CONFORMANCE_ACCESS_TOKEN", "from-env-token")
    monkeypatch.setenv("TASKS_CONFORMANCE_HEADERS", "X-A: env")
    assert _credentials_from_environment("flag-token", None, ["X-B: flag"]) == ("flag-token", ["X-B: flag"])
    assert _credentials_from_environment(None, "oauth-flag", None) == (None, ["X-A: env"])
    assert _credentials_from_environment(None, None, None) == ("from-env-token", ["X-A: env"])


def test_secret_looking_header_names_are_secrets() -> None:
    config = build_run_config(RunOptions(url="http://h/mcp", headers=("X-Tenant-Auth: tenant-secret-1",
                                                                      "X-Region: eu-west-1")))
    assert "tenant-secret-1" in config.secrets() and "eu-west-1" not in config.secrets()


# --reporter markdown=+FILE appends (for $GITHUB_STEP_SUMMARY).

def test_markdown_plus_path_appends_to_the_file(tmp_path: Path) -> None:
    summary = tmp_path / "step-summary.md"
    summary.write_text("# an earlier step\n")
    for _ in range(2):
        proc = cli("demo", "--check-id", "tasks-wire-resolvable", "--reporter", f"markdown=+{summary}")
        assert proc.returncode == 0, proc.stderr
    text = summary.read_text()
    assert text.startswith("# an earlier step\n\n## ✅ MCP Tasks conformance: passed")
    assert text.count("## ✅ MCP Tasks conformance: passed") == 2 and "\n\n## ✅" in text.split("passed", 1)[1]


def test_plus_path_is_only_for_reports_that_can_be_concatenated(tmp_path: Path) -> None:
    from helpers.runs import usage_error

    target = tmp_path / "r.json"
    assert usage_error("demo", "--reporter", f"json=+{target}") == (
        f"--reporter json=+{target}: only markdown and human reports can be appended to "
        "(a second document would make the file invalid)")
    assert usage_error("demo", "--reporter", "markdown=+") == "--reporter markdown=+: expected a path after the +"
    assert not target.exists()


def test_plus_path_is_not_touched_when_another_report_path_fails(tmp_path: Path) -> None:
    from helpers.runs import usage_error

    summary = tmp_path / "s.md"
    summary.write_text("before\n")
    usage_error("demo", "--reporter", f"markdown=+{summary}", "--reporter", f"json={tmp_path}/missing/r.json")
    assert summary.read_text() == "before\n"


def test_help_shows_meaningful_metavars() -> None:
    from helpers.runs import invoke

    for command in ([], ["demo"], ["explain"], ["schema"], ["requirements"]):
        text = invoke(*command, "--help").stdout
        assert not any(t in text for t in ("<str>", "<int>", "<list[str]>")), text
    text = " ".join(invoke("--help").stdout.split())
    for shown in ("--url URL", "--command CMD", "--args ARG", "--timeout MS", "--check-id ID", "--reporter NAME[=PATH]",
                  "--client-capabilities JSON|@FILE|-", "--access-token TOKEN|@FILE|-", "-e, --env NAME=VALUE"):
        assert shown in text, shown
    assert "explain [OPTIONS] {ID}" in " ".join(invoke("explain", "--help").stdout.split())


def test_shell_completion_is_on_and_completes_options() -> None:
    import os
    import shutil
    import subprocess
    import sys

    from helpers.runs import invoke

    help_text = invoke("--help").stdout
    assert "--install-completion" in help_text and "--show-completion" in help_text
    script = Path(sys.executable).parent / "tasks-conformance"
    if not script.exists():
        found = shutil.which("tasks-conformance")
        if found is None:
            pytest.skip("the tasks-conformance console script is not installed (pip install -e .)")
        script = Path(found)
    env = {**os.environ, "COMP_WORDS": "tasks-conformance --pro", "COMP_CWORD": "1",
           "_TASKS_CONFORMANCE_COMPLETE": "complete_bash"}
    proc = subprocess.run([str(script)], capture_output=True, text=True, timeout=60, env=env, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stderr
    assert set(proc.stdout.split()) == {"--profile", "--protocol-version", "--probe", "--probe-args"}


# -- First contact with the last wave (issue 35) -------------------------------------------------


@pytest.mark.parametrize("given", ["", "   "])
@pytest.mark.parametrize("subject", [(), ("client",)])
def test_an_empty_command_is_said_to_be_empty_however_empty(subject: tuple[str, ...], given: str) -> None:
    """`--command ""` and `--command "   "` are one mistake: the same words, on either subject."""
    from helpers.runs import invoke

    res = invoke(*subject, "--command", given)
    assert res.code == 2 and res.stderr.strip().endswith("--command is empty"), res.stderr
    assert invoke(*subject, "--url" if not subject else "--command", "").stderr.strip().endswith(
        "--url is empty" if not subject else "--command is empty")


def test_an_unknown_api_setting_says_which_one_was_meant() -> None:
    """The pytest fixture's `check(subject="client", scenario=[…])`: the keyword is `scenarios`."""
    import tasks_conformance as api
    from tasks_conformance.entry.pytest_plugin import ConformanceFixture

    with pytest.raises(TypeError, match=r"^unknown setting: scenario \(did you mean scenarios\?\)$"):
        ConformanceFixture().check(subject="client", command=["x"], scenario=["tasks-client-lifecycle"])
    with pytest.raises(TypeError, match=r"^unknown settings: tol_name \(did you mean tool_name\?\), zzz$"):
        api.run(url="http://127.0.0.1:9/mcp", tol_name="x", zzz=1)


def test_an_api_error_about_a_config_file_value_names_the_files_key(tmp_path: Path) -> None:
    from tasks_conformance.entry import api

    conf = tmp_path / "c.toml"
    conf.write_text('url = "http://127.0.0.1:9/mcp"\ntimeout = -5\n[client]\ncommand = "x"\ntimeout = -5\n')
    with pytest.raises(api.ConfigError, match=r"c\.toml: timeout must be a positive"):
        api.build_config(config=conf)
    with pytest.raises(api.ConfigError, match=r"c\.toml \[client\]: timeout must be a positive"):
        api.build_client_config(subject="client", config=conf)
    with pytest.raises(api.ConfigError, match=r"^--timeout must be a positive"):
        api.build_config(url="http://127.0.0.1:9/mcp", timeout_ms=-5)
