"""First contact and CI hygiene (issue 14): secrets in the URL's query string and in -e values,
--quiet off a terminal, tokens off the command line. Each secret is checked everywhere the
run writes: stdout, stderr, every report file and the wire log."""

from __future__ import annotations

import socket
import uuid
from pathlib import Path

import pytest
from conftest import REFERENCE, HttpServer, cli

from tasks_conformance.config import RunOptions, build_run_config
from tasks_conformance.redact import Redactor

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
