"""--tcp and --unix: newline-delimited JSON-RPC as on stdio, against `serve-reference`."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from helpers.paths import DEMO_INPUT
from helpers.processes import HttpServer
from helpers.runs import run

SERVE = [sys.executable, "-m", "tasks_conformance", "serve-reference"]


@pytest.mark.parametrize("pin", [None, "2025-11-25"])
def test_whole_suite_over_tcp(pin: str | None) -> None:
    server = HttpServer([*SERVE, "--transport", "tcp", "--port", "0"])
    try:
        assert server.url.startswith("tcp://127.0.0.1:")
        hostport = server.url.removeprefix("tcp://")
        ex = run(tcp=hostport, tool_name="confirm_action", input_responses=DEMO_INPUT, protocol_version=pin)
    finally:
        server.stop()
    assert ex.result.outcome == "passed", {c.id: c.message for c in ex.result.checks if c.bucket == "failed"}
    assert ex.result.target == f"tcp://{hostport}"
    assert {f.channel for f in ex.wire if f.direction == "out"} == {"tcp"}


@pytest.mark.parametrize("pin", [None, "2025-11-25"])
def test_whole_suite_over_a_unix_socket(tmp_path: Path, pin: str | None) -> None:
    path = tmp_path / "ref.sock"
    server = HttpServer([*SERVE, "--transport", "unix", "--unix-path", str(path)])
    try:
        ex = run(unix=str(path), tool_name="confirm_action", input_responses=DEMO_INPUT, protocol_version=pin)
    finally:
        server.stop()
    assert ex.result.outcome == "passed", {c.id: c.message for c in ex.result.checks if c.bucket == "failed"}
    assert {f.channel for f in ex.wire if f.direction == "out"} == {"unix"}


def test_connection_refused_is_incomplete_not_a_server_failure() -> None:
    ex = run(tcp="127.0.0.1:1", check_ids=["tasks-wire-resolvable"])
    assert ex.result.outcome == "incomplete"
    assert "could not connect" in ex.result.checks[0].message


def test_message_cap_applies_to_sockets_too() -> None:
    import socket
    import threading

    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]

    def serve_one() -> None:
        conn, _ = listener.accept()
        with conn:
            conn.settimeout(5)
            conn.recv(65536)
            conn.sendall(b'{"jsonrpc":"2.0","id":1,"result":{"x":"' + b"y" * 100_000 + b'"}}\n')

    t = threading.Thread(target=serve_one, daemon=True)
    t.start()
    try:
        ex = run(tcp=f"127.0.0.1:{port}", check_ids=["tasks-wire-resolvable"], max_message_bytes=4096,
                 protocol_version="2026-07-28", timeout_ms=2_000)
    finally:
        listener.close()
        t.join(timeout=5)
    notes = [f.note or "" for f in ex.wire if f.direction == "in"]
    assert any("larger than --max-message-bytes" in n for n in notes)
    assert max(len(f.data) for f in ex.wire) < 4096
    assert ex.result.outcome in ("failed", "incomplete")
