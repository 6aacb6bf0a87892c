"""Secrets that used to slip through: -e variables whose names say PASS or PWD (--show-env could
show them), and secret values shorter than six characters (never scrubbed at all)."""

from __future__ import annotations

import shlex
import sys
import uuid
from pathlib import Path

import pytest
from helpers.runs import cli

from tasks_conformance.core.redact import REDACTED, Redactor
from tasks_conformance.settings.config import RunOptions, build_run_config, show_env

R = REDACTED

# -- secret-looking names ---------------------------------------------------------------------

SECRET_NAMES = ["MY_PASS", "DB_PWD", "MYSQL_PWD", "DBPASS", "smtp-pass", "ROOT_PASSWD", "SSH_KEY_PASSPHRASE",
                "GPG_PASSCODE", "dbPass", "PASS", "PGPASSWORD", "SESSION_ID", "SESSIONID", "GITHUB_JWT",
                "BEARER", "PRIVATE_PEM"]
HARMLESS_NAMES = ["LOG_LEVEL", "FTP_PASSIVE", "BYPASS_CACHE", "COMPASS_HOME", "PASSTHROUGH", "TESTS_PASSED",
                  "HOME", "EDITOR", "NODE_ENV"]


@pytest.mark.parametrize("name", SECRET_NAMES)
def test_show_env_never_shows_a_pass_or_pwd_name(name: str) -> None:
    value = "v" + uuid.uuid4().hex
    config = show_env(build_run_config(RunOptions(command="true", env=(f"{name}={value}",))), (name,))
    assert value in config.secrets()
    assert Redactor(config.secrets()).text(f"{name}={value}") == f"{name}={R}"


@pytest.mark.parametrize("name", HARMLESS_NAMES)
def test_show_env_still_shows_a_harmless_name(name: str) -> None:
    value = "v" + uuid.uuid4().hex
    config = build_run_config(RunOptions(command="true", env=(f"{name}={value}",)))
    assert value in config.secrets()  # hidden unless named
    shown = show_env(config, (name,))
    assert value not in shown.secrets()
    assert Redactor(shown.secrets()).text(f"{name}={value}") == f"{name}={value}"


@pytest.mark.parametrize("name", ["MY_PASS", "DB_PWD"])
def test_config_show_masks_a_pass_or_pwd_name_even_when_shown(name: str) -> None:
    from tasks_conformance.settings.config_file import _masked

    options = RunOptions(command="true", env=(f"{name}=hunter2", "LOG_LEVEL=debug"), show_env=(name, "LOG_LEVEL"))
    assert _masked("env", options.env, options) == (f"{name}={R}", "LOG_LEVEL=debug")


@pytest.mark.parametrize("flag", ["--db-pass", "--pwd", "--admin_pwd"])
def test_server_flags_named_pass_or_pwd_are_secrets(flag: str) -> None:
    config = build_run_config(RunOptions(command="true", args=(flag, "flagvalue9", f"{flag}=inlinevalue9")))
    assert {"flagvalue9", "inlinevalue9"} <= set(config.secrets())


# -- short secret values ----------------------------------------------------------------------


@pytest.mark.parametrize("text, want", [
    ("token abcd here", f"token {R} here"),
    ("abcd", R),
    ("API_TOKEN=abcd", f"API_TOKEN={R}"),
    ("GET /mcp?key=abcd&x=1", f"GET /mcp?key={R}&x=1"),
    ("Authorization: Bearer abcd", f"Authorization: Bearer {R}"),
    ('{"token": "abcd"}', f'{{"token": "{R}"}}'),
    ("(abcd).", f"({R})."),
    ("x_abcd_y", f"x_{R}_y"),  # "_" ends an alphanumeric word: hidden rather than risked
    ("abcde", "abcde"),
    ("xabcd", "xabcd"),
    ("abcd1 1abcd", "abcd1 1abcd"),
    ("ABCD", "ABCD"),
])
def test_a_short_secret_is_scrubbed_where_it_stands_as_a_whole_token(text: str, want: str) -> None:
    red = Redactor(["abcd"])
    assert red.text(text) == want
    assert red.data(text.encode()) == want.encode()


def test_a_short_secret_with_punctuation_at_its_edge() -> None:
    red = Redactor(["ab!"])  # only a letter or digit edge asks for a word boundary
    assert red.text("x ab! y, zab!, ab!z") == f"x {R} y, zab!, {R}z"


def test_a_three_letter_secret_and_json_escapes() -> None:
    red = Redactor(['a"b'])
    assert red.text('{"v": "a\\"b"}') == f'{{"v": "{R}"}}'


@pytest.mark.parametrize("value", ["1", "ab", "true", "null", "42", "8080", "3.11"])
def test_tiny_numeric_and_literal_values_are_hidden_as_their_own_variable_only(value: str) -> None:
    """A value too common to scrub from arbitrary text is still hidden after its own name."""
    config = build_run_config(RunOptions(command="true", env=(f"API_TOKEN={value}",)))
    red = Redactor(config.secrets())
    for seen in (f"API_TOKEN={value}", f"API_TOKEN='{value}'", f'"API_TOKEN": "{value}"', f"'API_TOKEN': '{value}'",
                 f"export API_TOKEN=\"{value}\"", f"?API_TOKEN={value}&x=1", f'"…\\nAPI_TOKEN={value}\\n"'):
        hidden = red.text(seen)
        assert value not in hidden.replace("API_TOKEN", "").replace("x=1", "").replace("\\n", ""), seen
        assert R in hidden
        assert red.data(seen.encode()) == hidden.encode()
    # …but nowhere else: numbers and literals in frames stay intact.
    frame = (f'{{"id": 1, "ttl": 8080, "ok": true, "v": null, "n": 42, "s": "ab", "py": "3.11.7", '
             f'"API_TOKEN_X": "{value}"}}')
    assert red.text(frame) == frame
    assert red.text(f"API_TOKEN={value}0") == f"API_TOKEN={value}0"
    assert red.text(f"api_token={value}") == f"api_token={value}"  # a variable's name is matched as written


def test_a_tiny_query_value_is_hidden_after_its_parameter() -> None:
    config = build_run_config(RunOptions(url="http://h/mcp?api_key=7&page=7"))
    red = Redactor(config.secrets())
    assert red.text("GET /mcp?api_key=7&page=7") == f"GET /mcp?api_key={R}&page=7"


def test_named_secrets_survive_a_copy() -> None:
    import copy
    import pickle

    config = build_run_config(RunOptions(command="true", env=("API_TOKEN=1",), headers=("X-Api-Key: 2",)))
    for secrets in (copy.deepcopy(config.secrets()), pickle.loads(pickle.dumps(config.secrets()))):
        assert Redactor(secrets).text("API_TOKEN=1 x-api-key: 2") == f"API_TOKEN={R} x-api-key: {R}"


def test_a_short_value_is_hidden_in_json_and_headers_under_its_own_name() -> None:
    config = build_run_config(RunOptions(command="true", env=("API_TOKEN=1",), headers=("X-Tenant-Key: 7",)))
    red = Redactor(config.secrets())
    assert red.json({"env": {"API_TOKEN": "1", "OTHER": "1"}, "n": 1, "API_TOKEN": 1, "api_token": "1"}) == \
        {"env": {"API_TOKEN": R, "OTHER": "1"}, "n": 1, "API_TOKEN": R, "api_token": "1"}
    assert red.headers([("X-Tenant-Key", "7"), ("X-Other", "7")]) == [("X-Tenant-Key", R), ("X-Other", "7")]
    assert red.text("x-tenant-key: 7\r\nx-other: 7") == f"x-tenant-key: {R}\r\nx-other: 7"


def test_every_env_value_is_scrubbed_whatever_its_length() -> None:
    config = build_run_config(RunOptions(command="true", env=("API_TOKEN=abcd", "DEBUG=1", "MODE=xyz")))
    red = Redactor(config.secrets())
    assert red.text("API_TOKEN=abcd DEBUG=1 MODE=xyz; echoed: abcd, xyz; counts: 1 2 3") == \
        f"API_TOKEN={R} DEBUG={R} MODE={R}; echoed: {R}, {R}; counts: 1 2 3"


def test_long_secrets_are_still_scrubbed_as_substrings() -> None:
    red = Redactor(["s3cr3t-value"])
    assert red.text("xxs3cr3t-valueyy") == f"xx{R}yy"
    assert red.data(b"xxs3cr3t-valueyy") == f"xx{R}yy".encode()


def test_the_redactor_keeps_undecodable_bytes() -> None:
    red = Redactor(["abcd", "longsecret1"])
    raw = b"\xff\xfe abcd longsecret1 \x80"
    assert red.data(raw) == b"\xff\xfe " + R.encode() + b" " + R.encode() + b" \x80"


# -- end to end: a stdio server that prints its environment to stderr and fails -----------------

ECHO = """import os, sys
for name in sys.argv[1:]:
    print(f"{name}={os.environ.get(name)}", file=sys.stderr)
print("echo " + os.environ["API_TOKEN"] + " done", file=sys.stderr)
sys.exit(1)
"""


def _fail_with_env(tmp_path: Path, env: dict[str, str], shown: tuple[str, ...]) -> str:
    script = tmp_path / "echo_env.py"
    script.write_text(ECHO, encoding="utf-8")
    args = ["--command", shlex.join([sys.executable, str(script), *env]), "--format", "json",
            "--check-id", "tasks-wire-resolvable", "--timeout", "5000", "--wire-log", str(tmp_path / "wire.ndjson")]
    for name, value in env.items():
        args += ["-e", f"{name}={value}"]
    for name in shown:
        args += ["--show-env", name]
    proc = cli(*args, timeout=60)
    text = "\n".join([proc.stdout, proc.stderr, (tmp_path / "wire.ndjson").read_text(encoding="utf-8")])
    assert proc.returncode == 3 and "echo " in text, text[-2000:]  # the stderr tail is quoted
    return text


def test_a_short_token_never_reaches_the_report(tmp_path: Path) -> None:
    text = _fail_with_env(tmp_path, {"API_TOKEN": "abcd", "DEBUG": "1"}, ())
    assert f"API_TOKEN={R}" in text and f"echo {R} done" in text and f"DEBUG={R}" in text
    assert "abcd" not in text


def test_pass_and_pwd_values_stay_hidden_when_shown_on_the_command_line(tmp_path: Path) -> None:
    env = {"API_TOKEN": "longtoken42", "MY_PASS": "mypassvalue42", "DB_PWD": "dbpwdvalue42",
           "LOG_LEVEL": "loglevelvalue42"}
    text = _fail_with_env(tmp_path, env, ("MY_PASS", "DB_PWD", "LOG_LEVEL"))
    assert "mypassvalue42" not in text and "dbpwdvalue42" not in text and "longtoken42" not in text
    assert "LOG_LEVEL=loglevelvalue42" in text
