"""Transports, negotiation, wire resolution, raw capture, redaction, reaping."""

from __future__ import annotations

import io
import json
import sys
import time
import uuid
from pathlib import Path

import psutil
import pytest
from helpers.paths import BROKEN, FIXTURES, REFERENCE
from helpers.processes import HttpServer, http_server
from helpers.runs import cli, run, stdio

from tasks_conformance.server.reference.tools import TOOLS

RECORDING = [sys.executable, str(FIXTURES / "recording_server.py")]
WIRE_ONLY = ["tasks-wire-resolvable"]


def _left_with(marker: str, settle_s: float = 3.0) -> list[psutil.Process]:
    """Live processes whose argv carries the marker. A SIGKILL is delivered asynchronously, so
    allow a short settle time before calling a process left behind (a bound, not a timing test)."""
    deadline = time.monotonic() + settle_s
    while True:
        found = []
        for p in psutil.process_iter(["cmdline", "status"]):
            try:
                if p.info["status"] != psutil.STATUS_ZOMBIE and any(
                    marker in part for part in (p.info["cmdline"] or [])
                ):
                    found.append(p)
            except (psutil.NoSuchProcess, psutil.AccessDenied):
                pass
        if not found or time.monotonic() > deadline:
            return found
        time.sleep(0.05)


@pytest.mark.parametrize("pin,wire", [(None, "extension"), ("2026-07-28", "extension"), ("2025-11-25", "legacy")])
def test_stdio_resolves_each_era_of_the_dual_reference(pin: str | None, wire: str) -> None:
    ex = run(**stdio(REFERENCE, process=True), check_ids=WIRE_ONLY, protocol_version=pin)
    assert ex.result.discovery.wire == wire and ex.result.outcome == "passed"
    methods = [f.json().get("method") for f in ex.wire if f.direction == "out" and isinstance(f.json(), dict)]
    if pin is not None:
        # Pinned: no era probing of the other era.
        assert ("initialize" in methods) == (pin == "2025-11-25")
        assert ("server/discover" in methods) == (pin == "2026-07-28")


@pytest.mark.parametrize("pin,wire", [(None, "extension"), ("2025-11-25", "legacy")])
def test_http_resolves_each_era(reference_http: HttpServer, pin: str | None, wire: str) -> None:
    ex = run(url=reference_http.url, check_ids=WIRE_ONLY, protocol_version=pin)
    assert ex.result.discovery.wire == wire and ex.result.outcome == "passed"


def test_legacy_only_server_falls_back_from_discover_to_initialize() -> None:
    ex = run(**stdio(REFERENCE, "--era", "legacy", process=True), check_ids=WIRE_ONLY)
    methods = [f.json().get("method") for f in ex.wire if f.direction == "out" and isinstance(f.json(), dict)]
    assert methods[:2] == ["server/discover", "initialize"]
    assert ex.result.discovery.wire == "legacy" and ex.result.discovery.protocolVersion == "2025-11-25"


def test_legacy_only_http_server_falls_back() -> None:
    server = http_server(REFERENCE, "--era", "legacy")
    try:
        ex = run(url=server.url, check_ids=WIRE_ONLY)
    finally:
        server.stop()
    assert ex.result.discovery.wire == "legacy"


def test_pinning_extension_on_a_legacy_only_server_finds_no_wire() -> None:
    ex = run(**stdio(REFERENCE, "--era", "legacy", process=True), check_ids=WIRE_ONLY, protocol_version="2026-07-28")
    assert ex.result.discovery.wire == "none"
    assert ex.result.outcome in ("failed", "incomplete")


def test_server_without_tasks_fails_wire_resolvable_and_exits_1() -> None:
    proc = cli("--command", " ".join(BROKEN), "--args", "--break", "--args", "no-tasks",
               "--args", "--transport", "--args", "stdio", "--format", "json")
    assert proc.returncode == 1, proc.stderr
    data = json.loads(proc.stdout)
    wr = next(c for c in data["checks"] if c["id"] == "tasks-wire-resolvable")
    assert wr["status"] == "failed"
    assert "2026-07-28" in wr["message"] and "2025-11-25" in wr["message"]  # says what was looked for


def test_expect_wire_mismatch_fails() -> None:
    # An extension-only server asked for the legacy wire: it has none to offer.
    ex = run(**stdio(REFERENCE, "--era", "extension", process=True), check_ids=WIRE_ONLY, expect_wire="legacy")
    message = ex.result.checks[0].message
    assert ex.result.checks[0].status == "failed" and "2025-11-25" in message
    # It says which wire the server does speak, and that --expect-wire asked for the other.
    assert "speaks the extension wire (protocol 2026-07-28)" in message and "--expect-wire legacy" in message
    assert ex.result.discovery.wire == "none"  # the run did not switch to the other wire


def test_expect_wire_extension_on_a_legacy_only_server_names_the_legacy_wire() -> None:
    ex = run(**stdio(REFERENCE, "--era", "legacy", process=True), check_ids=WIRE_ONLY, expect_wire="extension")
    message = ex.result.checks[0].message
    assert ex.result.checks[0].status == "failed" and "speaks the legacy wire (protocol 2025-11-25)" in message


def test_outbound_bytes_in_the_log_equal_what_the_server_received(tmp_path: Path) -> None:
    rec = tmp_path / "received.bin"
    ex = run(**stdio(RECORDING, "--record", str(rec), process=True), check_ids=WIRE_ONLY, protocol_version="2025-11-25")
    sent = [f.data for f in ex.wire if f.direction == "out"]
    received = rec.read_bytes().split(b"\n")[:-1]
    assert sent and sent == received


def test_roots_list_right_after_the_handshake_does_not_stall(tmp_path: Path) -> None:
    ex = run(**stdio(RECORDING, "--roots", process=True), check_ids=WIRE_ONLY, protocol_version="2025-11-25",
             timeout_ms=3_000)
    # tools/list was only answered after our roots/list reply reached the server.
    assert ex.result.discovery.toolCount == 1
    answers = [f.json() for f in ex.wire if f.direction == "out" and f.json().get("id") == "roots-1"]
    assert answers and answers[0]["result"]["roots"][0]["uri"].startswith("file://")


def test_tokens_are_redacted_from_the_wire_log(reference_http: HttpServer, tmp_path: Path) -> None:
    token = "sekrit-" + uuid.uuid4().hex
    log = tmp_path / "wire.ndjson"
    proc = cli("--url", reference_http.url, "--access-token", token, "--header", f"X-Api-Key: {token}k",
               "--check-id", "tasks-wire-resolvable", "--format", "json", "--wire-log", str(log))
    assert proc.returncode == 0, proc.stderr
    text = log.read_text()
    assert token not in text and token not in proc.stdout and token not in proc.stderr
    assert "[REDACTED]" in text
    frames = [json.loads(line) for line in text.splitlines()]
    assert frames[0]["http"]["method"] == "POST"


@pytest.mark.parametrize("flag", ["", "--crash-after-init", "--silent"])
def test_no_child_process_is_left_behind(flag: str) -> None:
    marker = "tc-marker-" + uuid.uuid4().hex
    extra = ["--spawn-child", marker, "--tasks"] + ([flag] if flag else [])
    t0 = time.monotonic()
    # The crash must be named by the exit, not lost in a race with a request deadline that a
    # loaded machine (the fast run's four workers on two cores) can let pass first.
    ex = run(**stdio(RECORDING, *extra, process=True), check_ids=["tasks-wire-resolvable", "tasks-ttl-shape"],
             protocol_version="2025-11-25", timeout_ms=10_000 if flag == "--crash-after-init" else 1_500)
    assert time.monotonic() - t0 < 30
    assert not _left_with(marker)
    if flag == "--crash-after-init":
        msg = " ".join(c.message for c in ex.result.checks)
        assert "exited with code 3" in msg and "simulated crash" in msg
        assert ex.result.outcome == "incomplete"
    if flag == "--silent":
        assert ex.result.outcome == "incomplete"


# Usage errors (one exact line, exit 2) are proven in-process in tests/unit/entry/test_command_line.py.


def test_help_version_and_list_checks_do_not_import_heavy_modules() -> None:
    code = (
        "import sys\nfrom tasks_conformance.entry.cli import app\n"
        "for argv in (['--help'], ['--version'], ['--list-checks'], ['--list-checks', '--format', 'json']):\n"
        "    try:\n        app(argv, standalone_mode=False)\n    except BaseException:\n        pass\n"
        "bad = [m for m in sys.modules if m.split('.')[0] in ('pydantic', 'mcp_types', 'mcp', 'httpx')]\n"
        "print(bad)\n"
    )
    import subprocess

    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.stdout.strip().splitlines()[-1] == "[]"


def test_verdicts_rest_on_raw_bytes_even_when_a_secret_appears_in_them(tmp_path: Path) -> None:
    # A secret-named --env value that also occurs in the protocol ("taskId") must not alter the
    # bytes the checks judge; it is hidden only on the way out.
    ex = run(**stdio(REFERENCE, process=True), tool_name="slow_compute", env=["DUMMY_KEY=taskId"])
    assert ex.result.outcome == "passed", {c.id: c.message for c in ex.result.checks if c.bucket == "failed"}
    from tasks_conformance.reporters import write_wire_log

    out = io.StringIO()
    write_wire_log(ex.wire, out)
    exported = out.getvalue()
    assert '"taskId"' not in exported and "[REDACTED]" in exported


def test_secrets_are_hidden_in_their_json_escaped_and_cookie_forms() -> None:
    from tasks_conformance.core.redact import Redactor
    from tasks_conformance.settings.config import RunOptions, build_run_config

    config = build_run_config(RunOptions(url="http://bob:hunter2hunter2@127.0.0.1:9/mcp",
                                         access_token="tok/abc-123456",
                                         headers=("Cookie: sid=s3cr3tvalue; theme=darkmode1",)))
    red = Redactor(config.secrets())
    echoed = 'a "tok\\/abc-123456" b s3cr3tvalue c hunter2hunter2 d'
    assert "tok" not in red.text(echoed) and "s3cr3t" not in red.text(echoed) and "hunter2" not in red.text(echoed)


@pytest.mark.slow  # the server waits out the era probe's deadline on purpose: 6 to 11 s a case
@pytest.mark.parametrize("era,wire", [("both", "extension"), ("legacy", "legacy")])
def test_a_server_slower_to_start_than_the_era_probe_is_judged_right(tmp_path: Path, era: str, wire: str) -> None:
    # The 5 s era probe times out while the server starts; its late answer must neither hide
    # the extension era nor count as a stray response.
    script = tmp_path / "slow.sh"
    script.write_text(
        f"#!/bin/sh\nsleep 5.5\nexec {sys.executable} -m tasks_conformance.server.reference --era {era} \"$@\"\n"
    )
    script.chmod(0o755)
    ex = run(command=str(script), args=["--transport", "stdio"], tool_name="slow_compute", timeout_ms=10_000)
    assert ex.result.discovery.wire == wire
    assert ex.result.outcome == "passed", {c.id: c.message for c in ex.result.checks if c.bucket == "failed"}
    assert ex.result.discovery.toolCount == len(TOOLS)
