"""A stdio server that prints something other than JSON on stdout (issue 14, defect 5): the
"could not talk to the server" cause names the first line of that output, bounded, escaped and
redacted, and says what to change; every report and the wire log keep -e secrets hidden."""

from __future__ import annotations

import json
import sys
import uuid
from pathlib import Path

from helpers.runs import cli, tool

from tasks_conformance.core.transports.stdio import NOISE_HEAD_CHARS

HELLO = ["--command", sys.executable, "--args", "-c", "--args", 'print("hello")', "--timeout", "5000"]
RESOLVABLE = ["--check-id", "tasks-wire-resolvable"]
NAMED = 'stdout carried output that is not JSON, first line: "hello"'


def test_the_full_run_names_the_non_json_line_in_the_human_report() -> None:
    proc = tool(*HELLO, "--format", "human")
    # tasks-wire-framing fails on the captured line; the connection cause names it.
    assert proc.returncode == 1, proc.stdout[-2000:]
    flat = " ".join(proc.stdout.split())
    assert NAMED in flat, proc.stdout[-3000:]


def test_the_full_run_names_the_non_json_line_in_the_json_report() -> None:
    proc = tool(*HELLO, "--format", "json")
    assert proc.returncode == 1
    checks = {c["id"]: c for c in json.loads(proc.stdout)["checks"]}
    assert NAMED in checks["tasks-wire-resolvable"]["message"]
    assert checks["tasks-wire-framing"]["status"] == "failed"


def test_the_incomplete_cause_names_the_line_and_the_fix() -> None:
    proc = tool(*HELLO, *RESOLVABLE, "--format", "json")
    assert proc.returncode == 3, proc.stdout[-2000:]
    doc = json.loads(proc.stdout)
    [cause] = doc["incompleteCauses"]
    assert NAMED in cause["cause"] and cause["checks"] == ["tasks-wire-resolvable"]
    assert "stderr" in cause["fix"]  # the one thing to change: log to stderr, not stdout
    assert NAMED in doc["incompleteReason"]


def test_the_human_report_states_the_cause_once_with_its_fix() -> None:
    proc = tool(*HELLO, *RESOLVABLE, "--format", "human")
    assert proc.returncode == 3
    flat = " ".join(proc.stdout.split())
    assert flat.count(NAMED) == 1, proc.stdout
    assert "fix: the server printed something other than JSON-RPC on stdout" in flat


def test_the_named_line_is_bounded_and_escaped() -> None:
    script = 'print("\\x1b[31mred" + "x" * 500)'
    proc = tool("--command", sys.executable, "--args", "-c", "--args", script, *RESOLVABLE, "--format", "json",
               "--timeout", "5000")
    assert proc.returncode == 3
    cause = json.loads(proc.stdout)["incompleteCauses"][0]["cause"]
    head = cause.split('first line: "', 1)[1].rsplit('"', 1)[0]
    assert head.startswith("\\u001b[31mred")  # the terminal escape printed as text, never sent raw
    assert "\x1b" not in proc.stdout
    assert head.endswith("…") and len(head) <= NOISE_HEAD_CHARS + 1
    assert "x" * 500 not in proc.stdout


def test_a_secret_the_server_prints_on_stdout_stays_redacted(tmp_path: Path) -> None:
    secret = "pw" + uuid.uuid4().hex
    script = 'import os; print("connecting with " + os.environ["MY_PASS"])'
    reports = [a for name in ("json", "json-summary", "junit-xml", "markdown")
               for a in ("--reporter", f"{name}={tmp_path / name}")]
    # As its own process: a secret written to any of its descriptors, not only sys.stdout, is caught.
    proc = cli("--command", sys.executable, "--args", "-c", "--args", script, "-e", f"MY_PASS={secret}",
               *RESOLVABLE, "--timeout", "5000", "--format", "human", *reports,
               "--wire-log", str(tmp_path / "wire.ndjson"))
    assert proc.returncode == 3
    written = [(tmp_path / n).read_text() for n in ("json", "json-summary", "junit-xml", "markdown", "wire.ndjson")]
    text = "\n".join([proc.stdout, proc.stderr, *written])
    assert 'first line: "connecting with [REDACTED]"' in " ".join(proc.stdout.split())
    assert secret not in text
