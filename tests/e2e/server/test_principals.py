"""A second principal (--other-access-token, --other-header): the reference server in bearer-token
mode keeps each task to its creator, the check says so, the flags are checked, and neither
credential ever appears in a report or the wire log."""

from __future__ import annotations

import io
import json
import sys

import pytest
from helpers.paths import REFERENCE
from helpers.processes import http_server
from helpers.runs import cli, run, stdio

from tasks_conformance.core.errors import UsageError
from tasks_conformance.reporters import ReportOptions, render, write_wire_log
from tasks_conformance.settings.config import build_config

MAIN, OTHER = "main-principal-secret-1", "other-principal-secret-2"
CHECK = "tasks-task-bound-to-principal"


@pytest.fixture(scope="module")
def auth_server():  # type: ignore[no-untyped-def]
    server = http_server(list(REFERENCE), "--bearer-token", MAIN, "--bearer-token", OTHER)
    try:
        yield server
    finally:
        server.stop()


def test_the_reference_in_token_mode_keeps_each_task_to_its_creator(auth_server) -> None:  # type: ignore[no-untyped-def]
    ex = run(url=auth_server.url, tool_name="slow_compute", access_token=MAIN, other_access_token=OTHER)
    assert ex.result.outcome == "passed", {c.id: c.message for c in ex.result.checks if c.bucket == "failed"}
    check = next(c for c in ex.result.checks if c.id == CHECK)
    assert check.bucket == "passed" and "tasks/get error -32602" in check.message, check.message
    # Neither credential is shown anywhere: reports, messages, the wire log.
    out = io.StringIO()
    write_wire_log(ex.wire, out)
    texts = [out.getvalue()]
    for name in ("json", "human", "markdown", "junit-xml"):
        buf = io.StringIO()
        render(name, ex.result, buf, ReportOptions(width=4000))
        texts.append(buf.getvalue())
    for text in texts:
        assert MAIN not in text and OTHER not in text


def test_an_other_header_is_a_credential_too(auth_server) -> None:  # type: ignore[no-untyped-def]
    ex = run(url=auth_server.url, tool_name="slow_compute", access_token=MAIN, check_ids=[CHECK],
             other_headers=[f"Authorization: Bearer {OTHER}"])
    check = next(c for c in ex.result.checks if c.id == CHECK)
    assert check.bucket == "passed", check.message
    out = io.StringIO()
    write_wire_log(ex.wire, out)
    assert OTHER not in out.getvalue()


def test_credentials_the_server_refuses_outright_are_could_not_run(auth_server) -> None:  # type: ignore[no-untyped-def]
    ex = run(url=auth_server.url, tool_name="slow_compute", access_token=MAIN, check_ids=[CHECK],
             other_access_token="not-a-valid-token")
    check = next(c for c in ex.result.checks if c.id == CHECK)
    assert check.bucket == "could-not-run" and "HTTP 401" in check.message, check.message


def test_without_a_second_principal_or_over_stdio_the_check_is_not_applicable(auth_server) -> None:  # type: ignore[no-untyped-def]
    ex = run(url=auth_server.url, tool_name="slow_compute", access_token=MAIN, check_ids=[CHECK])
    check = next(c for c in ex.result.checks if c.id == CHECK)
    assert check.bucket == "not-applicable" and "--other-access-token" in check.message
    ex = run(**stdio(REFERENCE), tool_name="slow_compute", check_ids=[CHECK])
    assert next(c for c in ex.result.checks if c.id == CHECK).bucket == "not-applicable"


def test_the_second_principal_flags_are_checked() -> None:
    with pytest.raises(UsageError, match="apply to --url only"):
        build_config(command=sys.executable, other_access_token=OTHER)
    with pytest.raises(UsageError, match="must differ"):
        build_config(url="http://127.0.0.1:1/mcp", access_token=MAIN, other_access_token=MAIN)
    with pytest.raises(UsageError, match=r"^--other-header: expected"):
        build_config(url="http://127.0.0.1:1/mcp", other_headers=("no colon here",))
    config = build_config(url="http://127.0.0.1:1/mcp", access_token=MAIN, other_access_token=OTHER,
                          other_headers=("X-Api-Key: other-key",))
    assert config.other_headers == {"X-Api-Key": "other-key", "Authorization": f"Bearer {OTHER}"}
    assert {OTHER, "other-key", f"Bearer {OTHER}"} <= set(config.secrets())


def test_the_cli_flag_is_a_one_line_usage_error_without_a_url() -> None:
    res = cli("--command", sys.executable, "--other-access-token", OTHER)
    assert res.returncode == 2 and "Traceback" not in res.stderr
    assert "--other-access-token and --other-header apply to --url only" in res.stderr
    assert OTHER not in res.stderr + res.stdout


def test_json_report_has_no_credentials_even_in_the_target(auth_server) -> None:  # type: ignore[no-untyped-def]
    ex = run(url=auth_server.url, tool_name="slow_compute", access_token=MAIN, other_access_token=OTHER,
             check_ids=[CHECK])
    buf = io.StringIO()
    render("json", ex.result, buf, ReportOptions(width=4000))
    doc = json.loads(buf.getvalue())
    assert OTHER not in json.dumps(doc) and MAIN not in json.dumps(doc)


def test_on_2025_11_25_the_second_principal_gets_a_session_of_its_own_and_no_task(auth_server) -> None:  # type: ignore[no-untyped-def]
    ex = run(url=auth_server.url, tool_name="slow_compute", access_token=MAIN, other_access_token=OTHER,
             protocol_version="2025-11-25", check_ids=[CHECK])
    check = next(c for c in ex.result.checks if c.id == CHECK)
    assert check.bucket == "passed" and check.requirements == ["S-LEG-MUST-21"], check.message


def test_config_show_masks_the_second_principal(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from tasks_conformance.settings.config import RunOptions
    from tasks_conformance.settings.config_file import resolve
    from tasks_conformance.settings.config_show import show

    monkeypatch.chdir(tmp_path)  # no config file around
    options = RunOptions(url="http://127.0.0.1:1/mcp", other_access_token=OTHER,
                         other_headers=("X-Api-Key: other-key-secret",))
    rows = show(resolve(options, frozenset({"url", "other_access_token", "other_headers"}), environ={}))
    text = json.dumps(rows)
    assert OTHER not in text and "other-key-secret" not in text
    assert {r["key"] for r in rows} >= {"other-access-token", "other-header"}


@pytest.mark.parametrize("era", ["2025-11-25", "2026-07-28"])
def test_a_server_that_authenticates_no_one_has_no_principals_to_keep_apart(era: str) -> None:
    """Without --bearer-token the reference server serves every request; a second token it never
    checks is no evidence of a leak: not applicable, saying why (not failed)."""
    server = http_server(list(REFERENCE))
    try:
        ex = run(url=server.url, tool_name="slow_compute", access_token=MAIN, other_access_token=OTHER,
                 check_ids=[CHECK], protocol_version=era)
    finally:
        server.stop()
    check = next(c for c in ex.result.checks if c.id == CHECK)
    assert check.bucket == "not-applicable", check.message
    assert "sent without any credentials" in check.message and "authenticates no one" in check.message
