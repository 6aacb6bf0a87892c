"""A run imports only what it uses (issue 12's lean start): no pydantic, no importlib.metadata
for built-in reporters, no httpx off HTTP, no httpx command-line client on HTTP, and no CA
bundle for an http:// target. Asserted on the modules a real run leaves loaded, not on time."""

from __future__ import annotations

import json
import ssl
import subprocess
import sys
from typing import Any

import pytest
from helpers.paths import REFERENCE
from helpers.processes import HttpServer, http_server

from tasks_conformance.core.transports.http_tuning import http_transport, tls_context

# The reference server itself (server.py and what it imports): the command line reads only its flags
# (reference/config.py, for serve-reference's options), about 2 ms of a --help.
WATCHED = ("pydantic", "httpx", "httpx._main", "importlib.metadata", "rich",
           "tasks_conformance.server.reference.server")

_PROBE = (
    "import json, sys\n"
    "from tasks_conformance.entry.cli import run_cli\n"
    "rc = run_cli(sys.argv[1:])\n"
    f"print(json.dumps([rc, sorted(m for m in {WATCHED!r} if m in sys.modules)]))\n"
)


def loaded_after_run(*target: str) -> tuple[int, list[str]]:
    proc = subprocess.run(
        [sys.executable, "-c", _PROBE, *target, "--check-id", "tasks-wire-resolvable", "--format", "json",
         "--timeout", "20000"],
        capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL,
    )
    rc, loaded = json.loads(proc.stdout.splitlines()[-1])
    return rc, loaded


@pytest.fixture
def reference_tcp() -> Any:
    server = HttpServer([*REFERENCE, "--transport", "tcp", "--port", "0"])
    try:
        yield server
    finally:
        server.stop()


def test_a_stdio_run_loads_neither_httpx_nor_pydantic_nor_entry_points() -> None:
    server = f"{sys.executable} -m tasks_conformance.server.reference --transport stdio"
    rc, loaded = loaded_after_run("--command", server)
    assert (rc, loaded) == (0, [])


def test_a_tcp_run_does_not_import_httpx(reference_tcp: HttpServer) -> None:
    rc, loaded = loaded_after_run("--tcp", reference_tcp.url.removeprefix("tcp://"))
    assert (rc, loaded) == (0, [])


def test_an_http_run_imports_httpx_without_its_command_line_client() -> None:
    server = http_server(REFERENCE)
    try:
        rc, loaded = loaded_after_run("--url", server.url)
    finally:
        server.stop()
    assert (rc, loaded) == (0, ["httpx"])


def test_httpx_command_line_client_stays_importable_afterwards() -> None:
    code = (
        "from tasks_conformance.core.transports.lean_httpx import import_httpx\n"
        "import_httpx()\n"
        "import sys, httpx\n"
        "assert 'httpx._main' not in sys.modules\n"
        "import httpx._main\n"
        "print(callable(httpx._main.main))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.stdout.strip() == "True", proc.stderr


def test_an_http_target_gets_a_context_that_still_verifies_but_trusts_no_ca() -> None:
    plain = tls_context(False)
    assert plain.verify_mode is ssl.CERT_REQUIRED and plain.check_hostname
    assert plain.cert_store_stats()["x509_ca"] == 0
    assert tls_context(True).cert_store_stats()["x509_ca"] > 0


def test_the_transport_and_its_tuned_pool_share_one_context() -> None:
    transport = http_transport(tls=False)
    pool: Any = getattr(transport, "_pool", None)
    assert pool is not None and pool._ssl_context.cert_store_stats()["x509_ca"] == 0
