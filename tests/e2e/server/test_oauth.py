"""OAuth refresh (issue 14): --refresh-token, --client-id, --client-secret and --credentials-file
get an access token before the run and again on a 401 during it, the token endpoint found from
the server's metadata; a refused refresh is one clear cause (exit 3). The refresh token, the
client secret and every access token issued appear in no output, report, wire log or message.

The server is fixtures/oauth_server.py: the reference server behind a bearer token, with its
own authorization server on the same port (and a /stats document counting grants and 401s)."""

from __future__ import annotations

import base64
import json
import re
import subprocess
import sys
import urllib.request
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import pytest
from helpers.paths import DEMO_INPUT, FIXTURES
from helpers.processes import HttpServer
from helpers.runs import cli

from tasks_conformance.core.errors import UsageError
from tasks_conformance.core.oauth import (
    authorization_server_candidates,
    canonical_resource,
    grant_request,
    protected_resource_candidates,
    resource_metadata_url,
)
from tasks_conformance.core.profiles import OPT_IN_CHECKS
from tasks_conformance.core.redact import Redactor
from tasks_conformance.server.checks import CHECKS
from tasks_conformance.settings.config import RunOptions, build_run_config

REPORTS = ("json", "json-summary", "junit-xml", "markdown")
FULL_SUITE = ("--tool-name", "confirm_action", "--input-responses", DEMO_INPUT)


@dataclass
class OAuthServer:
    server: HttpServer
    refresh_token: str
    client_id: str
    client_secret: str

    @property
    def url(self) -> str:
        return self.server.url

    def stats(self) -> dict[str, int]:
        origin = self.url.rsplit("/mcp", 1)[0]
        with urllib.request.urlopen(f"{origin}/stats", timeout=10) as resp:
            return dict(json.load(resp))

    def flags(self) -> list[str]:
        return ["--refresh-token", self.refresh_token, "--client-id", self.client_id,
                "--client-secret", self.client_secret]


def _start(*extra: str) -> OAuthServer:
    rt, cid, cs = "rt" + uuid.uuid4().hex, "client-" + uuid.uuid4().hex[:8], "cs" + uuid.uuid4().hex
    server = HttpServer([sys.executable, str(FIXTURES / "oauth_server.py"), "--refresh-token", rt, "--client-id", cid,
                         "--client-secret", cs, "--port", "0", *extra])
    return OAuthServer(server, rt, cid, cs)


@pytest.fixture
def oauth_server(request: pytest.FixtureRequest) -> Iterator[OAuthServer]:
    server = _start(*getattr(request, "param", ()))
    try:
        yield server
    finally:
        server.server.stop()


def server_flags(*flags: str) -> pytest.MarkDecorator:
    """Start the fixture server with these flags."""
    return pytest.mark.parametrize("oauth_server", [flags], indirect=True, ids=[" ".join(flags)])


def _everything(tmp_path: Path, *args: str) -> tuple[subprocess.CompletedProcess[str], str]:
    """Run with every report and the wire log; the process and all text the run wrote."""
    flags = [a for name in REPORTS for a in ("--reporter", f"{name}={tmp_path / name}")]
    proc = cli(*args, *flags, "--wire-log", str(tmp_path / "wire.ndjson"), "--timeout", "10000")
    files = [(tmp_path / n).read_text() for n in (*REPORTS, "wire.ndjson")]
    return proc, "\n".join([proc.stdout, proc.stderr, *files])


# The fixture issues tokens as at-<32 hex> and rt-<32 hex>. Eight hex digits after the prefix catch
# a token cut short too; the prefix alone also occurs in the server's random task ids (a CI run
# failed on the id "evHEr44VuJat-9Q0").
ISSUED_TOKEN = re.compile(r"(?:at|rt)-[0-9a-f]{8}")


def _issued_tokens(wire_text: str) -> None:
    """None of the tokens the fixture issued may be in the text."""
    assert not ISSUED_TOKEN.findall(wire_text), ISSUED_TOKEN.findall(wire_text)


# -- a run with OAuth refresh --------------------------------------------------------------------


def test_a_token_is_fetched_before_the_run_and_the_run_passes(oauth_server: OAuthServer, tmp_path: Path) -> None:
    proc, text = _everything(tmp_path, "--url", oauth_server.url, *oauth_server.flags(), *FULL_SUITE)
    assert proc.returncode == 0, proc.stdout[-3000:]
    stats = oauth_server.stats()
    # One grant; the only 401 is the credential-less GET that reads the server's challenge.
    assert stats["grants"] == 1 and stats["unauthorized"] == 1 and stats["served"] > 10
    wire = (tmp_path / "wire.ndjson").read_text()
    assert "OAuth: access token obtained" in wire and "resource_metadata" in wire
    for secret in (oauth_server.refresh_token, oauth_server.client_secret):
        assert secret not in text
    _issued_tokens(text)
    # The fixture echoes the Authorization it got in a response header: redacted in the log.
    assert '"x-echo-authorization", "Bearer [REDACTED]"' in wire


@server_flags("--token-uses", "4")
def test_a_401_mid_run_refreshes_once_and_retries(oauth_server: OAuthServer, tmp_path: Path) -> None:
    proc, text = _everything(tmp_path, "--url", oauth_server.url, *oauth_server.flags(), *FULL_SUITE)
    assert proc.returncode == 0, proc.stdout[-3000:]
    stats = oauth_server.stats()
    assert stats["grants"] == 2, stats  # before the run, and once when the first token expired
    wire = [json.loads(line) for line in (tmp_path / "wire.ndjson").read_text().splitlines()]
    notes = [f.get("note") or "" for f in wire]
    assert sum("access token refreshed" in n for n in notes) == 1
    retried = [n for n in notes if n.startswith("HTTP 401: the OAuth access token was refreshed")]
    # Every request refused with the expired token was sent again (several may have been in flight).
    assert retried and len(retried) == stats["unauthorized"] - 1
    for secret in (oauth_server.refresh_token, oauth_server.client_secret):
        assert secret not in text
    _issued_tokens(text)


@server_flags("--token-uses", "4", "--rotate")
def test_a_rotated_refresh_token_is_used_next_and_kept_secret(oauth_server: OAuthServer, tmp_path: Path) -> None:
    proc, text = _everything(tmp_path, "--url", oauth_server.url, *oauth_server.flags(), *FULL_SUITE)
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert oauth_server.stats()["grants"] == 2  # the second grant used the rotated token (no refusal)
    assert oauth_server.stats()["refused"] == 0
    _issued_tokens(text)  # the rotated refresh tokens (rt-<hex>) with the access tokens


@server_flags("--refuse")
def test_a_refused_refresh_is_one_clear_cause_and_exit_3(oauth_server: OAuthServer, tmp_path: Path) -> None:
    # The fixture's refusal quotes the refresh token and the client secret it was sent.
    proc, text = _everything(tmp_path, "--url", oauth_server.url, *oauth_server.flags(), "--format", "human")
    assert proc.returncode == 3, proc.stdout[-3000:]
    flat = " ".join(proc.stdout.split())
    cause = "could not talk to the server: OAuth refresh failed: the token endpoint"
    assert f"not run all {len(set(CHECKS) - set(OPT_IN_CHECKS))} checks: {cause}" in flat
    assert "refused the refresh: invalid_grant" in flat
    assert "fix: correct --refresh-token, --client-id and --client-secret (or --credentials-file)" in flat
    assert proc.stderr == ""
    doc = json.loads((tmp_path / "json").read_text())
    [cause] = doc["incompleteCauses"]
    assert "OAuth refresh failed" in cause["cause"] and "--refresh-token" in cause["fix"]
    assert oauth_server.stats()["refused"] == 1
    for secret in (oauth_server.refresh_token, oauth_server.client_secret):
        assert secret not in text
    assert text.count("[REDACTED]") >= 2


@server_flags("--token-uses", "4", "--refuse-after", "1")
def test_a_refresh_refused_mid_run_is_asked_once_and_said(oauth_server: OAuthServer, tmp_path: Path) -> None:
    proc, text = _everything(tmp_path, "--url", oauth_server.url, *oauth_server.flags(), *FULL_SUITE)
    assert proc.returncode != 0, proc.stdout[-3000:]
    stats = oauth_server.stats()
    # The authorization server is asked once more, not once per request refused meanwhile.
    assert stats["grants"] == 1 and stats["refused"] == 1, stats
    assert "the server refused the OAuth access token and refreshing it failed: OAuth refresh failed" in text
    for secret in (oauth_server.refresh_token, oauth_server.client_secret):
        assert secret not in text
    _issued_tokens(text)


@server_flags("--no-resource-metadata", "--auth-method", "post")
def test_without_a_challenge_the_well_known_metadata_is_found(oauth_server: OAuthServer, tmp_path: Path) -> None:
    proc, _text = _everything(tmp_path, "--url", oauth_server.url, *oauth_server.flags(),
                              "--check-id", "tasks-wire-resolvable")
    assert proc.returncode == 0, proc.stdout[-3000:]
    wire = (tmp_path / "wire.ndjson").read_text()
    assert "/.well-known/oauth-authorization-server/as" in wire and "resource_metadata" not in wire
    # client_secret_post, as the metadata says: the fixture refuses a client it cannot authenticate.
    assert oauth_server.stats() == {**oauth_server.stats(), "grants": 1, "refused": 0}


def test_a_credentials_file_with_a_token_endpoint_skips_discovery(oauth_server: OAuthServer, tmp_path: Path) -> None:
    origin = oauth_server.url.rsplit("/mcp", 1)[0]
    creds = tmp_path / "creds.json"
    creds.write_text(json.dumps({"refresh_token": oauth_server.refresh_token, "client_id": oauth_server.client_id,
                                 "client_secret": oauth_server.client_secret,
                                 "token_endpoint": f"{origin}/as/token"}))
    proc, text = _everything(tmp_path, "--url", oauth_server.url, "--credentials-file", str(creds),
                             "--check-id", "tasks-wire-resolvable")
    assert proc.returncode == 0, proc.stdout[-3000:]
    stats = oauth_server.stats()
    assert stats["grants"] == 1 and stats["unauthorized"] == 0  # no credential-less request was needed
    assert oauth_server.refresh_token not in text and oauth_server.client_secret not in text


def test_the_python_api_takes_the_same_settings(oauth_server: OAuthServer) -> None:
    from tasks_conformance import run

    report = run(url=oauth_server.url, refresh_token=oauth_server.refresh_token, client_id=oauth_server.client_id,
                 client_secret=oauth_server.client_secret, check_ids=["tasks-wire-resolvable"], timeout_ms=10_000)
    assert report.passed, report.failure_summary()
    ndjson = report.wire_ndjson()
    assert oauth_server.refresh_token not in ndjson and oauth_server.client_secret not in ndjson
    _issued_tokens(ndjson)


def test_a_run_without_oauth_flags_never_imports_the_oauth_module() -> None:
    code = ("import sys, tasks_conformance as t\n"
            "r = t.run(command=[sys.executable, '-m', 'tasks_conformance.server.reference', '--transport', 'stdio'],"
            " check_ids=['tasks-wire-resolvable'])\n"
            "assert r.passed\n"
            "print(sorted(m for m in sys.modules if m == 'tasks_conformance.core.oauth'))\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                          stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"


# -- the flags ------------------------------------------------------------------------------------


def _config(**flags: Any) -> Any:
    return build_run_config(RunOptions(url="http://127.0.0.1:1/mcp", **flags))


def test_the_flags_make_credentials_and_secrets() -> None:
    config = _config(refresh_token="refresh-value-1", client_id="cid", client_secret="secret-value-1")
    assert config.oauth is not None and config.oauth.client_id == "cid"
    assert {"refresh-value-1", "secret-value-1"} <= set(config.secrets())
    assert "refresh-value-1" not in repr(config) and "secret-value-1" not in repr(config)


def test_a_flag_wins_over_the_credentials_file(tmp_path: Path) -> None:
    creds = tmp_path / "c.json"
    creds.write_text(json.dumps({"refresh_token": "file-refresh-1", "client_id": "file-client",
                                 "client_secret": "file-secret-1", "token_endpoint": "https://as.example/token",
                                 "unrelated": 1}))
    config = _config(credentials_file=str(creds), client_id="flag-client")
    assert config.oauth.client_id == "flag-client" and config.oauth.refresh_token == "file-refresh-1"
    assert config.oauth.token_endpoint == "https://as.example/token"


def test_token_flags_read_files(tmp_path: Path) -> None:
    (tmp_path / "rt").write_text("refresh-from-file\n")
    config = _config(refresh_token=f"@{tmp_path / 'rt'}", client_id="cid")
    assert config.oauth.refresh_token == "refresh-from-file" and config.oauth.client_secret is None


@pytest.mark.parametrize(("flags", "message"), [
    ({"refresh_token": "r-123456"}, "OAuth refresh needs --client-id"),
    ({"client_id": "cid"}, "OAuth refresh needs --refresh-token"),
    ({"refresh_token": "r-123456", "client_id": "c", "access_token": "tok-123456"},
     "give --refresh-token/--credentials-file or --access-token/an Authorization header, not both"),
    ({"refresh_token": "-", "client_id": "c", "client_secret": "-"}, "only one flag may read standard input"),
])
def test_bad_oauth_flags_are_usage_errors(flags: dict[str, str], message: str) -> None:
    with pytest.raises(UsageError, match=message):
        _config(**flags)


def test_oauth_flags_need_a_url() -> None:
    with pytest.raises(UsageError, match="apply to --url only"):
        build_run_config(RunOptions(command="true", refresh_token="r-123456", client_id="c"))


@pytest.mark.parametrize(("content", "message"), [
    ('{"refresh_token": "sekrit-in-broken-json', "is not valid JSON"),
    ('["sekrit-in-a-list"]', "must hold a JSON object"),
    ('{"refresh_token": 12345678, "client_id": "c"}', "refresh_token in .* must be a non-empty string"),
    ('{"refresh_token": "r-123456", "client_id": "c", "token_endpoint": "ftp://x"}', "token_endpoint must be"),
])
def test_a_bad_credentials_file_never_quotes_its_content(tmp_path: Path, content: str, message: str) -> None:
    creds = tmp_path / "c.json"
    creds.write_text(content)
    with pytest.raises(UsageError, match=message) as info:
        _config(credentials_file=str(creds))
    assert "sekrit" not in str(info.value)


def test_the_environment_token_gives_way_to_a_refresh_but_its_headers_stay(monkeypatch: pytest.MonkeyPatch) -> None:
    from tasks_conformance.entry.cli import app

    seen: list[Any] = []
    monkeypatch.setenv("TASKS_CONFORMANCE_ACCESS_TOKEN", "env-token-123456")
    monkeypatch.setenv("TASKS_CONFORMANCE_HEADERS", "X-Tenant: blue")
    monkeypatch.setattr("tasks_conformance.entry.cli._run", lambda config: seen.append(config) or 0)
    with pytest.raises(SystemExit) as info:
        app(["--url", "http://127.0.0.1:1/mcp", "--refresh-token", "r-123456", "--client-id", "c"])
    assert info.value.code == 0
    [config] = seen
    assert config.access_token is None and config.oauth is not None
    assert config.headers == {"X-Tenant": "blue"}


def test_a_bad_credentials_file_is_exit_2_and_one_line() -> None:
    proc = cli("--url", "http://127.0.0.1:1/mcp", "--credentials-file", "/nonexistent/creds.json")
    assert proc.returncode == 2
    assert proc.stderr.startswith("tasks-conformance: error: --credentials-file: cannot read")
    assert len(proc.stderr.strip().splitlines()) == 1


# -- discovery rules ------------------------------------------------------------------------------


def test_the_grant_authenticates_the_client_as_rfc_6749_says() -> None:
    # Basic: id and secret form-urlencoded before base64 (section 2.3.1), so ':' in either survives.
    form, headers = grant_request("rt-1", "https://mcp.example/mcp", "id:1", "s/é:2", "client_secret_basic")
    assert form == {"grant_type": "refresh_token", "refresh_token": "rt-1", "resource": "https://mcp.example/mcp"}
    kind, _, encoded = headers["Authorization"].partition(" ")
    ident, _, secret = base64.b64decode(encoded).decode().partition(":")
    assert kind == "Basic" and (unquote(ident), unquote(secret)) == ("id:1", "s/é:2")
    form, headers = grant_request("rt-1", "r", "cid", "cs", "client_secret_post")
    assert (form["client_id"], form["client_secret"]) == ("cid", "cs") and "Authorization" not in headers
    form, headers = grant_request("rt-1", "r", "cid", None, "none")  # a public client names itself
    assert form["client_id"] == "cid" and "client_secret" not in form and "Authorization" not in headers


def test_an_oauth_run_prints_no_library_warning(oauth_server: OAuthServer, tmp_path: Path) -> None:
    # Every warning an error: a deprecation in what the grant uses would end this run red.
    proc = subprocess.run([sys.executable, "-W", "error", "-m", "tasks_conformance", "--url", oauth_server.url,
                           *oauth_server.flags(), "--check-id", "tasks-wire-resolvable", "--format", "json"],
                          capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stderr == ""


def test_the_resource_metadata_parameter_is_read_quoted_or_not() -> None:
    assert resource_metadata_url('Bearer error="invalid_token", resource_metadata="https://a/x"') == "https://a/x"
    assert resource_metadata_url("Bearer resource_metadata=https://a/y, scope=z") == "https://a/y"
    assert resource_metadata_url('Bearer realm="x"') is None and resource_metadata_url(None) is None


def test_metadata_locations_follow_the_specification() -> None:
    assert protected_resource_candidates("https://h:8/api/mcp?k=v", 'Bearer resource_metadata="https://m/p"') == [
        "https://m/p", "https://h:8/.well-known/oauth-protected-resource/api/mcp",
        "https://h:8/.well-known/oauth-protected-resource"]
    assert authorization_server_candidates("https://as.example") == [
        "https://as.example/.well-known/oauth-authorization-server",
        "https://as.example/.well-known/openid-configuration"]
    assert authorization_server_candidates("https://as.example/tenant1/") == [
        "https://as.example/.well-known/oauth-authorization-server/tenant1",
        "https://as.example/.well-known/openid-configuration/tenant1",
        "https://as.example/tenant1/.well-known/openid-configuration"]
    assert canonical_resource("HTTPS://Host.Example/mcp/?api_key=x#f") == "https://host.example/mcp"


def test_secrets_learnt_during_the_run_are_redacted_from_then_on() -> None:
    redactor = Redactor(["known-secret-1"])
    redactor.add("issued-token-2")
    assert redactor.text("a known-secret-1 b issued-token-2") == "a [REDACTED] b [REDACTED]"


def test_credentials_never_go_to_a_plain_http_endpoint_elsewhere() -> None:
    import anyio

    from tasks_conformance.core.oauth import Endpoint, OAuthFailed, TokenSource
    from tasks_conformance.core.oauth_settings import OAuthCredentials
    from tasks_conformance.core.wirelog import WireLog

    creds = OAuthCredentials(refresh_token="refresh-123456", client_id="c", client_secret="secret-123456")
    source = TokenSource(creds, "https://mcp.example/mcp", WireLog(), timeout_s=5)
    with pytest.raises(OAuthFailed, match="is not HTTPS; credentials are sent over HTTPS only") as info:
        anyio.run(source._grant, Endpoint("http://as.example/token", "https://mcp.example/mcp"))
    assert "refresh-123456" not in str(info.value) and "secret-123456" not in str(info.value)


def test_metadata_for_another_server_or_issuer_is_not_trusted() -> None:
    from tasks_conformance.core.oauth import issuer_matches, resource_allowed

    assert resource_allowed("https://h.example/mcp", "https://h.example/mcp")
    assert resource_allowed("https://h.example", "https://h.example/mcp")
    assert resource_allowed("https://H.example/", "https://h.example/mcp/")
    assert not resource_allowed("https://other.example/mcp", "https://h.example/mcp")
    assert not resource_allowed("https://h.example/mc", "https://h.example/mcp")
    assert not resource_allowed("http://h.example/mcp", "https://h.example/mcp")
    assert issuer_matches("https://as.example/t1/", "https://as.example/t1")
    assert not issuer_matches("https://evil.example/t1", "https://as.example/t1")
    assert not issuer_matches(None, "https://as.example")


@pytest.mark.parametrize("debug", [False, True])
def test_a_library_warning_never_reaches_the_users_stderr(debug: bool) -> None:
    # Any dependency that warns during a command-line run stands in for the one that did
    # (authlib's deprecation of its httpx client, printed on every OAuth run).
    code = ("import sys, warnings\n"
            "from tasks_conformance.entry import cli\n"
            "cli.run_cli = lambda: (warnings.warn('a dependency speaks', UserWarning), 0)[1]\n"
            f"sys.argv = {['tasks-conformance', *(['--debug'] if debug else [])]!r}\n"
            "cli.main()\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                          stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stderr
    assert ("a dependency speaks" in proc.stderr) is debug, proc.stderr
