"""The scripted servers keep the server rules: the server mode (tasks_conformance.server.runner),
run in this process against each scenario's scripted server, both eras, over HTTP (and over
stdio for one scenario of each era, spawned as a client spawns it), fails no check. A scripted
server that broke a server rule would have a client judged for what the server did (the 2026-07-28
one asked a client that declared no elicitation for one, and warned the client for not answering).

What a scenario's server does on purpose is a server's freedom, not a broken rule: the expiry
scenarios delete a working task once its ttl has run out (S-EXT-MAY-04, S-LEG-MAY-03, policy P-45),
which two server checks judge only for an ended task (they read a working task's "not found" as a
broken read); and tasks-client-legacy-undeclared's server declares no task-augmented tools/call,
which is no tasks wire for the server mode to test (tasks-wire-resolvable fails any such server,
no rule being broken). Those verdicts on those scenarios are left out here, named below."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from helpers.client_fast import QUICK_WAITS

from tasks_conformance.client.scenarios import BY_NAME, SCENARIOS, Scenario
from tasks_conformance.client.scripted import stdio as scripted_stdio
from tasks_conformance.client.scripted.http import serving
from tasks_conformance.client.scripted.play import scripted_server
from tasks_conformance.client.scripted.waits import DEFAULT_WAITS, FLAGS, ScriptedWaits
from tasks_conformance.client.stdio_relay import relaying, server_argv
from tasks_conformance.core.wirelog import WireLog
from tasks_conformance.server.checks import CATEGORIES, CHECKS
from tasks_conformance.server.runner import Execution, execute
from tasks_conformance.settings.config import build_config

# The expiry scenarios' task is deleted, while still working, when its ttl has run out: these
# checks read the "not found" a poll or a cancel then gets as a broken answer (they honour the
# deletion only for an ended task).
DELETED_WHILE_WORKING = frozenset({"tasks-status-payload-shape", "tasks-cancel-ack-shape"})
EXEMPT: dict[str, frozenset[str]] = {"tasks-client-ttl-expiry": DELETED_WHILE_WORKING,
                                     "tasks-client-legacy-ttl-expiry": DELETED_WHILE_WORKING,
                                     "tasks-client-legacy-undeclared": frozenset({"tasks-wire-resolvable"})}
# Short waits: a task that waits for a cancel or an answer gives up quickly, polls stop soon. The
# request timeout is only how long a late answer is waited for: every request here is answered, so
# no case waits it out (the module takes as long with 3 s as with 10 s), and under a loaded CI 3 s
# was once too short for a tasks/cancel answer (CI#27).
SETTINGS: dict[str, Any] = {"timeout_ms": 10_000, "poll_timeout_ms": 2_000}


def _config(scenario: Scenario, **target: Any) -> Any:
    return build_config(known_check_ids=tuple(CHECKS), known_categories=CATEGORIES, era=scenario.eras[0],
                        tool_name=scenario.tool, **SETTINGS, **target)


async def _over_http(scenario: Scenario) -> Execution:
    app = scripted_server(scenario, WireLog(), QUICK_WAITS)
    async with serving(app) as url:
        return await execute(_config(scenario, url=url))


async def _over_stdio(scenario: Scenario) -> Execution:
    async with relaying(scenario, WireLog(), timeout_s=30, waits=QUICK_WAITS) as relay:
        command, *args = relay.argv
        return await execute(_config(scenario, command=command, args=list(args)))


def _broken(execution: Execution, scenario: Scenario) -> list[tuple[str, str]]:
    exempt = EXEMPT.get(scenario.name, frozenset())
    return [(c.id, c.message) for c in execution.result.checks if c.bucket == "failed" and c.id not in exempt]


@pytest.mark.matrix
@pytest.mark.parametrize("name", [s.name for s in SCENARIOS if "http" in s.transports])
def test_the_scripted_server_of_each_scenario_breaks_no_server_rule_over_http(name: str) -> None:
    scenario = BY_NAME[name]
    execution = anyio.run(_over_http, scenario)
    assert _broken(execution, scenario) == []
    # Judged, not skipped (but where the server offers no tasks wire to judge).
    no_wire = "tasks-wire-resolvable" in EXEMPT.get(name, frozenset())
    assert no_wire or any(c.bucket == "passed" for c in execution.result.checks)


@pytest.mark.parametrize("name", ["tasks-client-lifecycle", "tasks-client-legacy-lifecycle"])
def test_the_scripted_server_spawned_over_stdio_breaks_no_server_rule(name: str) -> None:
    scenario = BY_NAME[name]
    execution = anyio.run(_over_stdio, scenario)
    assert _broken(execution, scenario) == []
    assert any(c.bucket == "passed" for c in execution.result.checks)


def test_a_task_asks_for_input_only_of_a_client_that_declared_elicitation() -> None:
    """tasks-client-input: with elicitation declared on the tools/call the task reads input_required
    with its elicitation; without it, the task never asks (S-EXT-MUST-34) and goes on to its end."""
    from tasks_conformance.client.scripted.extension import ScriptedServer
    from tasks_conformance.core.protocol import EXT_TASKS, META_CLIENT_CAPS, META_PROTOCOL_VERSION

    def meta(**caps: Any) -> dict[str, Any]:
        return {META_PROTOCOL_VERSION: "2026-07-28", META_CLIENT_CAPS: {"extensions": {EXT_TASKS: {}}, **caps}}

    def statuses(caps: dict[str, Any]) -> list[tuple[str, bool]]:
        app = ScriptedServer(BY_NAME["tasks-client-input"].script, WireLog())
        _s, created = app.answer({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                                  "params": {"name": "scripted_task", "_meta": meta(**caps)}})
        assert created is not None
        task_id = created["result"]["taskId"]
        out = []
        for n in range(3):
            _s, got = app.answer({"jsonrpc": "2.0", "id": 2 + n, "method": "tasks/get",
                                  "params": {"taskId": task_id, "_meta": meta(**caps)}})
            assert got is not None
            out.append((got["result"]["status"], "inputRequests" in got["result"]))
        return out

    assert statuses({"elicitation": {}})[0] == ("input_required", True)
    assert statuses({}) == [("working", False), ("completed", False), ("completed", False)]


def test_a_runs_waits_reach_the_scripted_stdio_servers_it_starts() -> None:
    """The waits are a run's parameter (tests shorten them): over stdio the run starts each scripted
    server with them on its command line, and one out of bounds is refused, not used."""
    waits = ScriptedWaits(give_up_s=0.7, slow_answer_s=0.2, listen_s=0.9)
    argv = server_argv(BY_NAME["tasks-client-legacy-cancel"], 1, "token-file", 5.0, waits)
    assert argv[1:3] == ("-m", scripted_stdio.__name__)
    assert scripted_stdio.waits_of(scripted_stdio.build_parser().parse_args(list(argv[3:]))) == waits
    defaults = server_argv(BY_NAME["tasks-client-legacy-cancel"], 1, "token-file", 5.0)
    assert not set(FLAGS.values()) & set(defaults)  # a user's run: the command line it always had
    assert scripted_stdio.waits_of(scripted_stdio.build_parser().parse_args(list(defaults[3:]))) == DEFAULT_WAITS
    with pytest.raises(ValueError, match="give_up_s must be in"):
        ScriptedWaits(give_up_s=0)


def test_the_stdio_server_imports_nothing_of_the_script_before_its_hello() -> None:
    """A client may stop its server soon after writing its request (the Python SDK sends SIGTERM
    2 s after closing stdin): the process says hello, and takes SIGTERM, before it imports the
    scripted servers, which are most of its start-up."""
    import subprocess
    import sys

    probe = ("import sys, tasks_conformance.client.scripted.stdio; "
             "print(' '.join(sorted(m for m in sys.modules if m.startswith('tasks_conformance'))))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.split() == ["tasks_conformance", "tasks_conformance.client", "tasks_conformance.client.scripted",
                                  "tasks_conformance.client.scripted.stdio", "tasks_conformance.client.scripted.waits"]


async def _stopped_at_once(scenario: Scenario) -> tuple[WireLog, int | None]:
    """A client that writes its request, closes stdin and sends SIGTERM as soon as the server has
    said hello: the frames the run got, and the server's exit code."""
    import json
    import signal
    import subprocess

    wire = WireLog()
    async with relaying(scenario, wire, timeout_s=30, waits=QUICK_WAITS) as relay:
        process = await anyio.open_process(list(relay.argv), stdin=subprocess.PIPE, stdout=subprocess.DEVNULL)
        try:
            assert process.stdin is not None
            call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": scenario.tool}}
            await process.stdin.send(json.dumps(call).encode() + b"\n")
            await process.stdin.aclose()
            with anyio.fail_after(20):
                while not any(c.number is not None for c in relay.connections):
                    await anyio.sleep(0.005)
            process.send_signal(signal.SIGTERM)
            with anyio.fail_after(20):
                code = await process.wait()
        finally:
            if process.returncode is None:
                process.kill()
            await process.aclose()
    return wire, code


def test_a_stdio_server_stopped_right_after_its_hello_still_reports_what_its_client_wrote() -> None:
    scenario = BY_NAME["tasks-client-request-cancel"]
    wire, code = anyio.run(_stopped_at_once, scenario)
    assert [f.direction for f in wire.frames()][:1] == ["in"], wire.frames()
    assert b'"tools/call"' in wire.frames()[0].data
    assert code == 0  # it ended with its stdin, not killed by the signal
