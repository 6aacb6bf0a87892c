"""`tasks-conformance call`: the reference client calls a tool as a task on either wire, follows it
to its end and says how it ended; exit 0 only when the task completed."""

from __future__ import annotations

import json
import re
import shlex
import socket
import subprocess
import sys
from typing import Any

import pytest
from helpers.paths import REFERENCE, ROOT
from helpers.processes import HttpServer
from helpers.runs import tool
from helpers.zygote import forked

# A matrix parameter naming the reference server: its command is made when the case runs (the
# zygote is this worker's), not at collection.
REF = "reference"


def _reference(*extra: str) -> str:
    """The reference server's command, forked from the tests' zygote: the `call` command's subject
    here is what the server answers, not its process."""
    return shlex.join(forked([*REFERENCE, *extra]))


def _call_process(*args: str) -> subprocess.CompletedProcess[str]:
    """`tasks-conformance call` as its own process: for the tests of the command line itself."""
    return subprocess.run([sys.executable, "-m", "tasks_conformance", "call", *args], capture_output=True, text=True,
                          timeout=60, cwd=ROOT)


@pytest.mark.parametrize("era", ["extension", "legacy"])
def test_a_task_is_followed_to_its_end_on_either_wire(reference_http: HttpServer, era: str) -> None:
    proc = tool("call", "--url", reference_http.url, "--tool-name", "slow_compute", "--era", era, "--format", "json")
    assert proc.returncode == 0, proc.stderr
    outcome = json.loads(proc.stdout)
    assert outcome["status"] == "completed" and outcome["isError"] is False and outcome["error"] is None
    assert "finished" in json.dumps(outcome["result"])
    human = tool("call", "--url", reference_http.url, "--tool-name", "slow_compute", "--era", era)
    assert human.returncode == 0 and human.stdout.startswith("completed: slow_compute")


@pytest.mark.parametrize("era", ["extension", "legacy"])
def test_a_stdio_server_is_spawned_and_its_task_followed_to_its_end(era: str) -> None:
    command = shlex.join(REFERENCE)  # the tool's own spawning of the server is this test's subject
    proc = _call_process("--command", command, "--tool-name", "slow_compute", "--era", era, "--format", "json")
    assert proc.returncode == 0, proc.stderr
    outcome = json.loads(proc.stdout)
    assert outcome["status"] == "completed" and outcome["error"] is None and "finished" in json.dumps(outcome["result"])


def test_a_stdio_server_that_cannot_start_is_a_transport_failure_and_exit_1() -> None:
    proc = tool("call", "--command", "/nonexistent/server", "--tool-name", "x")
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert proc.stdout.startswith("unknown: cannot start the server") and "-32603" not in proc.stdout


def test_a_cancelled_task_exits_1_and_says_why_it_was_cancelled(reference_http: HttpServer) -> None:
    proc = tool("call", "--url", reference_http.url, "--tool-name", "slow_compute", "--cancel-after", "0")
    assert proc.returncode == 1 and proc.stdout.splitlines()[0] == "cancelled", proc.stdout + proc.stderr
    assert "tasks/cancel sent (--cancel-after 0 ms)" in proc.stdout


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_no_server_listening_is_named_a_connection_failure_never_a_json_rpc_code() -> None:
    url = f"http://127.0.0.1:{_closed_port()}/mcp"
    proc = tool("call", "--url", url, "--tool-name", "x", "--timeout", "2000")
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert proc.stdout.startswith(f"unknown: could not connect to {url}") and "-32603" not in proc.stdout
    out = json.loads(tool("call", "--url", url, "--tool-name", "x", "--timeout", "2000", "--format", "json").stdout)
    assert out["error"] is None and out["failure"].startswith(f"could not connect to {url}")
    assert out["stopReason"] == "transport" and out["taskCreated"] is False


def test_a_secret_in_the_url_is_not_printed_back() -> None:
    proc = tool("call", "--url", f"http://127.0.0.1:{_closed_port()}/mcp?api_key=SECRET4a9c1e", "--tool-name", "x",
                 "--timeout", "2000")
    assert proc.returncode == 1 and "SECRET4a9c1e" not in proc.stdout + proc.stderr
    assert "api_key=[REDACTED]" in proc.stdout


@pytest.mark.parametrize(("args", "says"), [
    (("--tool-name", "x"), "--url (a Streamable HTTP server) or --command (a stdio server to spawn) is required"),
    (("--command", "", "--tool-name", "x"), "--command is empty"),
    (("--command", "   ", "--tool-name", "x"), "--command is empty"),
    (("--url", "http://127.0.0.1:9/mcp", "--command", "x", "--tool-name", "x"), "not both"),
    (("--url", "http://127.0.0.1:9/mcp"), "--tool-name is required"),
    (("--url", "http://127.0.0.1:9/mcp", "--tool-name", "x", "--era", "modern"), "--era must be"),
    (("--url", "http://127.0.0.1:9/mcp", "--tool-name", "x", "--tool-args", "{bad"), "--tool-args: not valid JSON"),
])
def test_usage_errors_are_one_line_and_exit_2(args: tuple[str, ...], says: str) -> None:
    proc = tool("call", *args)
    assert proc.returncode == 2 and says in proc.stderr and len(proc.stderr.strip().splitlines()) == 1


# -- what call did: task or plain call, era, task id, statuses, inputs, cancel, why it stopped --


def _json(*args: str) -> dict[str, Any]:
    proc = tool("call", *args, "--format", "json")
    out: dict[str, Any] = json.loads(proc.stdout)
    return out


@pytest.mark.parametrize("era", ["extension", "legacy"])
def test_a_task_names_its_era_its_id_every_status_and_why_it_stopped(era: str) -> None:
    args = ("--command", _reference(), "--tool-name", "slow_compute", "--era", era)
    out = _json(*args)
    assert out["status"] == "completed" and out["era"] == era and out["taskCreated"] is True
    assert isinstance(out["taskId"], str) and out["taskId"] and out["plainCallReason"] is None
    assert out["statuses"][0] == "working" and out["polls"] >= 1 and out["cancel"] is None
    assert out["stopReason"] == ("terminal" if era == "extension" else "result")
    human = tool("call", *args).stdout
    assert re.search(r"^  task: \S+ created$", human, re.M) and f"era: {era} (" in human
    assert "  statuses: working" in human and "  stopped: " in human


@pytest.mark.parametrize("era", ["extension", "legacy"])
def test_a_tool_that_runs_without_a_task_is_said_to_be_a_plain_call(era: str) -> None:
    out = _json("--command", _reference(), "--tool-name", "echo", "--tool-args", '{"text": "hi"}',
                "--era", era)
    assert out["status"] == "completed" and out["era"] == era
    assert out["taskCreated"] is False and out["taskId"] is None and out["statuses"] == []
    assert out["stopReason"] == "plain" and out["plainCallReason"]
    assert ("resultType" if era == "extension" else "taskSupport") in out["plainCallReason"]


def test_a_server_that_does_not_speak_the_era_is_named_with_the_other_era_to_try() -> None:
    server = _reference("--era", "legacy")
    out = _json("--command", server, "--tool-name", "slow_compute", "--era", "extension")
    assert out["era"] == "extension" and out["taskCreated"] is False and out["status"] == "failed"
    assert "try --era legacy" in out["plainCallReason"]
    out = _json("--command", _reference("--era", "extension"), "--tool-name", "slow_compute",
                "--era", "legacy")
    assert out["era"] == "legacy" and out["taskCreated"] is False and "try --era extension" in out["plainCallReason"]


def _task_status(url: str, task_id: str) -> Any:
    """The task's status on the server, read with a tasks/get of the reference client's own."""
    import anyio

    from tasks_conformance.client.reference.client import call

    async def read() -> Any:
        outcome = await call(url, era="extension", tool_name="", arguments={}, timeout_s=10,
                             request={"method": "tasks/get", "params": {"taskId": task_id}})
        return (outcome.result or {}).get("status")
    return anyio.run(read)


def test_timeout_on_a_live_task_cancels_it_and_says_so(reference_http: HttpServer) -> None:
    args = ("--url", reference_http.url, "--tool-name", "slow_compute", "--tool-args", '{"durationMs": 600000}',
            "--timeout", "1500")
    out = _json(*args)
    assert out["status"] == "working" and out["taskCreated"] is True and out["stopReason"] == "timeout"
    assert out["cancel"]["sent"] is True and "timeout" in out["cancel"]["reason"] and out["cancel"]["reply"] == "an ack"
    assert _task_status(reference_http.url, out["taskId"]) == "cancelled"
    human = tool("call", *args).stdout
    assert human.startswith("working (--timeout ran out)") and "cancel: tasks/cancel sent" in human


# -- input requests: answered only with what the user gave, else declined ----------------------

MINTS = shlex.join([sys.executable, str(ROOT / "fixtures" / "minted_keys_server.py")])
KEEP = {"action": "accept", "content": {"confirm": False}}  # accepted, but "do not delete"


def _confirm(server: str, *extra: str, era: str = "extension") -> dict[str, Any]:
    server = _reference() if server == REF else server
    return _json("--command", server, "--tool-name", "confirm_delete", "--tool-args", '{"filename": "file.txt"}',
                 "--era", era, *extra)


@pytest.mark.parametrize(("given", "by"), [({"*": KEEP}, "*"), ({"confirm": KEEP}, "shape")])
def test_a_key_the_server_minted_takes_the_star_answer_or_the_first_shaped_for_the_method(
        given: dict[str, Any], by: str) -> None:
    out = _confirm(MINTS, "--input-responses", json.dumps(given))
    assert out["status"] == "completed" and "not confirmed (action='accept')" in json.dumps(out["result"])
    (asked,) = out["inputs"]
    assert asked["key"].startswith(out["taskId"] + ":") and asked["method"] == "elicitation/create"
    assert asked["answeredBy"] == by and asked["answer"] == KEEP and "file.txt" in asked["message"]
    assert "input_required" in out["statuses"]


@pytest.mark.matrix
# Ids without the commands' paths: the fast run samples this matrix by its cases' ids, which must
# be the same wherever the tree is checked out.
@pytest.mark.parametrize(("server", "era"), [pytest.param(MINTS, "extension", id="minted-keys-extension"),
                                             pytest.param(REF, "extension", id="reference-extension"),
                                             pytest.param(REF, "legacy", id="reference-legacy")])
@pytest.mark.parametrize("given", [None, {"no-such-key": {"role": "assistant", "content": {"type": "text"}}}],
                         ids=["no-answers", "no-answer-fits"])
def test_an_input_request_no_answer_fits_is_declined_never_accepted(
        server: str, era: str, given: dict[str, Any] | None) -> None:
    server = _reference() if server == REF else server
    extra = ("--input-responses", json.dumps(given)) if given is not None else ()
    out = _confirm(server, *extra, era=era)
    assert "not confirmed (action='decline')" in json.dumps(out["result"]), out
    (asked,) = out["inputs"]
    assert asked["answeredBy"] == "declined" and asked["answer"] == {"action": "decline"}
    human = tool("call", "--command", server, "--tool-name", "confirm_delete", "--era", era, *extra).stdout
    assert "input: elicitation/create" in human and "declined" in human and "accept" not in human
