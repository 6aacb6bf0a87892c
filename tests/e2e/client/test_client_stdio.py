"""`tasks-conformance client --transport stdio`: the client spawns the scripted server, which plays
the same scenario scripts as over HTTP and reports every frame to the run. The reference client
passes every scenario of both eras on stdio; a break that does not depend on the transport fails
the same single check as over HTTP; the header rules are not applicable; the harness convention
(MCP_CONFORMANCE_SERVER_COMMAND, the shell-quoted command as the one last argument) holds; and a
server the client leaks does not outlive the scenario."""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import signal
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import anyio
import pytest
from helpers.client_fast import QUICK_WAITS, judged_over
from helpers.paths import ROOT, load_module
from helpers.zygote import forked, server_launch

from tasks_conformance.client.checks import CLIENT_CHECKS
from tasks_conformance.client.runner import ClientConfig, execute_client
from tasks_conformance.client.scenarios import BY_NAME, SCENARIOS
from tasks_conformance.client.stdio_relay import relaying
from tasks_conformance.core.wirelog import WireLog

BROKEN = ROOT / "fixtures" / "broken_client.py"
REFERENCE = (sys.executable, "-m", "tasks_conformance.client.reference_client")
HEADER_CHECKS = {"tasks-client-routing-headers", "tasks-client-request-headers"}
GET_STREAM_CHECK = "tasks-client-legacy-get-stream"  # its scenario runs over HTTP only
# Breaks of a Streamable HTTP header: nothing of them reaches a stdio server.
HEADER_RULES = frozenset({"C-EXT-MUST-04", "C-EXT-MUST-05", "C-CORE-MUST-06", "C-CORE-MUST-04", "C-CORE-MUST-03",
                          "C-CORE-MUST-05"})
# Rules whose break warns rather than fails (derived rules and server duties; policies P-32, P-38, P-40).
WARN_ONLY = frozenset({"C-EXT-MUST-13", "C-EXT-MUST-14", "C-LEG-MUST-05", "C-LEG-MUST-08",
                       "C-LEG-MUST-06"})  # P-51: the wire cannot tell waiting for a notification from giving up


def _load_broken() -> ModuleType:
    return load_module(BROKEN, "broken_client")


BREAKS: dict[str, Any] = _load_broken().BREAKS
STDIO_BREAKS = sorted(name for name, b in BREAKS.items() if b.rule not in HEADER_RULES and "stdio" in b.transports)


def _owner(name: str) -> str:
    b = BREAKS[name]
    if getattr(b, "check", ""):
        return str(b.check)
    (owner,) = [c.id for c in CLIENT_CHECKS.values() if b.rule in c.requirements]
    return owner


def _run(command: tuple[str, ...], *scenarios: str, eras: tuple[Any, ...] = ("extension", "legacy"),
         timeout_s: float = 20) -> Any:
    config = ClientConfig(command=forked(command), eras=eras, scenarios=scenarios, timeout_s=timeout_s, jobs=4,
                          transport="stdio", waits=QUICK_WAITS, server_launch=server_launch(command))
    return anyio.run(execute_client, config)


def test_the_reference_client_passes_every_scenario_of_both_eras_on_stdio() -> None:
    # 60 s, not 20: the reference client exits by itself in every scenario, so the bound costs
    # nothing, and on a loaded CI machine one scenario's client had sent nothing within 20 s.
    execution = _run(REFERENCE, timeout_s=60)
    result = execution.result
    assert result.outcome == "passed", [(c.id, c.bucket, c.message) for c in result.checks if c.bucket != "passed"]
    assert [c.id for c in result.checks if c.warnings] == []
    by_bucket = {c.id: c.bucket for c in result.checks}
    assert {i for i, b in by_bucket.items() if b != "passed"} == {*HEADER_CHECKS, GET_STREAM_CHECK}
    assert "over stdio there is no GET stream" in next(c.message for c in result.checks if c.id == GET_STREAM_CHECK)
    # Each says why in its own words (stdio carries no headers), never "its scenario was not
    # selected" about a scenario that runs over HTTP only.
    assert all("HTTP headers" in c.message and "not selected" not in c.message
               for c in result.checks if c.id in HEADER_CHECKS), [c.message for c in result.checks]
    assert set(by_bucket) == set(CLIENT_CHECKS)
    runs = execution.runs
    assert {r.name for r in runs} == {s.name for s in SCENARIOS if "stdio" in s.transports}
    assert all(r.transport == "stdio" and r.reached for r in runs), [
        (r.name, r.era, r.transport, r.reached, r.client.timed_out) for r in runs if not r.reached]
    # Every frame came from a stdio server's report, and each answer names the request it answers.
    frames = execution.wire.frames()
    assert frames and {f.channel for f in frames} == {"stdio"} and all(f.http is None for f in frames)
    # (but the call tasks-client-request-cancel asks the client to cancel in flight, which it did, and
    # the subscription of tasks-client-subscription-ack, which it cancelled at its end)
    assert all(e.reply is not None for r in runs for e in r.exchanges if e.is_request and "method" in e.message
               and r.name != "tasks-client-request-cancel" and e.method != "subscriptions/listen")


@pytest.mark.matrix
@pytest.mark.parametrize("name", ["no-extension-on-get", "cancel-notification", "legacy-task-on-forbidden",
                                  "cancels-elsewhere", "legacy-cancels-elsewhere"])
def test_a_transport_independent_break_fails_the_same_single_check_on_stdio(name: str) -> None:
    b = BREAKS[name]
    _judge(name, judged_over(_owner(name), b.rule, b.era, "stdio"))


@pytest.mark.slow
@pytest.mark.parametrize("name", STDIO_BREAKS)
def test_every_transport_independent_break_breaks_its_owner_alone_on_stdio(name: str) -> None:
    _judge(name, CLIENT_CHECKS[_owner(name)].scenarios)


def _judge(name: str, scenarios: tuple[str, ...]) -> None:
    """The break fails its owner alone over `scenarios` (a MUST), or warns there (a SHOULD)."""
    b = BREAKS[name]
    owner = _owner(name)
    result = _run((sys.executable, str(BROKEN), "--break", name), *scenarios, eras=(b.era,)).result
    by_id = {c.id: c for c in result.checks}
    failed = sorted(c.id for c in result.checks if c.bucket == "failed")
    if "-MUST-" in b.rule and b.rule not in WARN_ONLY:
        assert failed == [owner], (name, [(c.id, c.message) for c in result.checks if c.bucket == "failed"])
        assert b.rule in by_id[owner].broken or not by_id[owner].broken
    else:
        assert failed == [], (name, failed)
        assert any(b.rule in str(w) for w in by_id[owner].warnings), (name, by_id[owner].warnings)
    assert [c.id for c in result.checks if c.bucket == "could-not-run"] == [], name


@pytest.mark.matrix
@pytest.mark.parametrize("name", sorted(n for n, b in BREAKS.items() if b.rule in HEADER_RULES))
def test_a_header_break_shows_nothing_on_stdio(name: str) -> None:
    result = _run((sys.executable, str(BROKEN), "--break", name), "tasks-client-lifecycle",
                  eras=("extension",)).result
    assert [c.id for c in result.checks if c.bucket == "failed"] == []
    assert {c.id: c.skipReason for c in result.checks}["tasks-client-routing-headers"] == "not-applicable"


HARNESS = """
import json, os, shlex, sys
json.dump({"argv": sys.argv[1:], "env": os.environ.get("MCP_CONFORMANCE_SERVER_COMMAND"),
           "version": os.environ.get("MCP_CONFORMANCE_PROTOCOL_VERSION")}, open(sys.argv[1], "w"))
"""


def test_the_server_command_is_one_last_argument_and_a_json_array(tmp_path: Path) -> None:
    out = tmp_path / "seen.json"
    _run((sys.executable, "-c", HARNESS, str(out)), "tasks-client-lifecycle", eras=("extension",))
    seen = json.loads(out.read_text())
    assert len(seen["argv"]) == 2  # our own argument, then the server command as one argument
    argv = json.loads(seen["env"])
    assert isinstance(argv, list) and shlex.split(seen["argv"][-1]) == argv and argv[0] == sys.executable
    assert seen["version"] == "2026-07-28"


LEAKER = """
import json, os, subprocess, sys, time
argv = json.loads(os.environ["MCP_CONFORMANCE_SERVER_COMMAND"])
# The server in a session of its own (out of reach of the client's process group), its stdin's
# write end also held by a detached holder that outlives the client: when the client exits, only
# the run can stop it.
r, w = os.pipe()
server = subprocess.Popen(argv, stdin=r, stdout=subprocess.PIPE, start_new_session=True)
holder = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"], pass_fds=(w,),
                          start_new_session=True)
open(sys.argv[1], "w").write(f"{server.pid} {holder.pid}")
os.write(w, (json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}) + "\\n").encode())
server.stdout.readline()
"""


def _gone(pid: int) -> bool:
    import psutil

    return not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE


def test_a_server_the_client_leaks_is_stopped_with_the_scenario(tmp_path: Path) -> None:
    marker = tmp_path / "pids"
    try:
        execution = _run((sys.executable, "-c", LEAKER, str(marker)), "tasks-client-lifecycle",
                         eras=("extension",), timeout_s=20)
        server, holder = (int(p) for p in marker.read_text().split())
        run = execution.runs[0]
        assert run.client.exit_code == 0 and run.reached
        assert [e.method for e in run.exchanges] == ["tools/list"]
        assert _gone(server)
        if run.client.tracked:
            # The holder outlived the client (so the server's stdin was still open when the run
            # stopped the server): the supervisor named it, and stopped it too.
            assert [pid for pid, _command in run.client.left_behind] == [holder]
            assert _gone(holder)
        else:
            assert not _gone(holder)  # no subreaper: the server's stdin was still open when the run stopped it
    finally:
        if marker.exists():
            for pid in marker.read_text().split():
                with contextlib.suppress(ProcessLookupError):
                    os.kill(int(pid), signal.SIGKILL)


def test_the_relay_stops_a_server_whose_stdin_stays_open() -> None:
    async def go() -> tuple[int, int]:
        wire = WireLog()
        async with relaying(BY_NAME["tasks-client-lifecycle"], wire, timeout_s=5) as relay:
            proc = subprocess.Popen(list(relay.argv), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                    start_new_session=True)
            assert proc.stdin is not None and proc.stdout is not None
            proc.stdin.write(b'{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{}}\n')
            proc.stdin.flush()
            await anyio.to_thread.run_sync(proc.stdout.readline)
            with anyio.fail_after(5):
                while relay.requests == 0 or len(relay.seqs) < 2:
                    await anyio.sleep(0.01)
        # The block has ended: the server is told to stop although its stdin is still open.
        try:
            code = await anyio.to_thread.run_sync(lambda: proc.wait(timeout=10))
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        inbound, reply = (wire.get(s) for s in relay.seqs[:2])
        assert inbound is not None and reply is not None
        assert inbound.direction == "in" and reply.direction == "out" and reply.reply_to == inbound.seq
        assert json.loads(reply.data)["id"] == 7 and reply.time >= inbound.time
        return code, len(relay.seqs)

    code, frames = anyio.run(go)
    assert code is not None and frames == 2


@pytest.mark.parametrize(("name", "era", "scenario"), [
    ("cancels-elsewhere", "extension", "tasks-client-cancel"),
    ("legacy-cancels-elsewhere", "legacy", "tasks-client-legacy-cancel"),
])
def test_a_cancel_sent_to_a_second_server_process_is_no_cancel_of_the_task(name: str, era: str,
                                                                           scenario: str) -> None:
    """The client spawns the server again and cancels there: that process never created the task
    (its tasks/cancel got -32602), so the task of the first was never cancelled. Merged by task id
    the two processes' frames made the cancel check pass."""
    execution = _run((sys.executable, str(BROKEN), "--break", name), scenario, eras=(era,))
    by_id = {c.id: c for c in execution.result.checks}
    cancel = by_id["tasks-client-cancels-with-tasks-cancel" if era == "extension"
                   else "tasks-client-legacy-cancels-with-tasks-cancel"]
    assert cancel.bucket == "failed" and "server process 2" in cancel.message, cancel.message
    if era == "extension":
        (said,) = by_id["tasks-client-keeps-observing"].warnings
        assert "C-EXT-SHOULD-03" in said.text and "server process 2" in said.text and said.policies == ("P-47",)
    # Every frame carries its scenario (its lane) and the server process it crossed.
    frames = [f.to_json() for f in execution.wire.frames()]
    assert {f["connection"] for f in frames} == {1, 2}
    assert {f["lane"] for f in frames} == {f"{scenario} ({era}, stdio)"}
