"""`tasks-conformance client` against hostile and broken clients (fixtures/hostile/client.py), as a
user runs it: one `python -m tasks_conformance client` per case and transport, with every
reporter, the wire log and a secret-looking flag on the client's command line (`--token`; the cases
about secrets add an -e secret), over both eras where the case is about either. For every case:

- the exit code is the case's (never 0 where the client is broken; 0 for the compliant clients that
  only leave a process behind, which warns), with no traceback, no internal error and no client
  process left behind (found by a unique marker on its command line, which a forked grandchild
  shares, in a session of its own too);
- no check passes where the client gave it nothing to judge;
- none of the test secrets (the flag's, the -e value, and the Authorization, Cookie and X-Api-Key
  values the `secrets` client sends) appears in stdout, stderr, any report or the wire log.

The fast tests at the end hold the same rules at the unit level (no `hostile` mark).
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import time
import uuid
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import anyio
import psutil
import pytest
from helpers.groups import starts_all_cases
from helpers.paths import ROOT
from helpers.runs import invoke

from tasks_conformance.client.checks import CLIENT_CHECKS
from tasks_conformance.client.launch import TOO_LONG
from tasks_conformance.client.limits import LIMIT_VALUES
from tasks_conformance.client.lines import split_lines
from tasks_conformance.client.scenarios import BY_NAME
from tasks_conformance.client.scripted.http import ScriptedHttp
from tasks_conformance.core.scenario_record import Limit, LimitHit, ScenarioRecord
from tasks_conformance.core.wirelog import Frame, WireLog

FIXTURE = ROOT / "fixtures" / "hostile" / "client.py"
HANG_AFTER_S = 240  # the harness's hang detector only: every run is bounded by --timeout per scenario
TOKEN = "hostileCmdTok3n6b2d"  # the client's own --token flag
ENV_TOKEN = "hostileEnvTok3n9e4f"  # -e HOSTILE_ENV_TOKEN=…
sys.path.insert(0, str(FIXTURE.parent))
import client as hostile  # noqa: E402  (fixtures/hostile/client.py: the header secrets it sends)

SECRETS = (TOKEN, ENV_TOKEN, *hostile.HEADER_SECRETS)
UNCALLED = "the client never called the tool"
FRAMING = ("tasks-client-wire-framing", "tasks-client-legacy-wire-framing")  # every message, whatever the scenario
HUNG = "did not exit by itself within --timeout"
NOTHING_SENT = "sent nothing to the scripted server"
LIFECYCLE = ("tasks-client-lifecycle", "tasks-client-legacy-lifecycle")
CANCEL = ("tasks-client-cancel", "tasks-client-legacy-cancel")
# The limit cases' exit codes: each client is broken in other ways too (it never follows its task).
EXIT_OVERSIZE = 1
EXIT_MANY_SERVERS = 1
# many-servers starts ten Python servers one after another before it calls the tool: 2.3 s idle, past
# 5 s under CI's load (the project's CI on f526273). It exits by itself once it has called, so a
# longer --timeout costs nothing.
MANY_SERVERS_TIMEOUT_MS = 30_000


@dataclass(frozen=True)
class Case:
    name: str
    transport: str
    scenarios: tuple[str, ...] = ()  # none: every scenario of both eras
    timeout_ms: int = 5_000
    exit: int = 3
    env: bool = False  # -e HOSTILE_ENV_TOKEN=…: the cases about secrets
    args: tuple[str, ...] = ()  # more flags of the run
    victim: bool = False  # --victim PID: a process the test started outside the client's tree

    @property
    def id(self) -> str:
        return f"{self.transport}-{self.name}"


CASES = [c for t in ("http", "stdio") for c in (
    Case("no-call", t),
    Case("secrets", t, LIFECYCLE, env=True),
    Case("stderr-secrets", t, LIFECYCLE, env=True),
    Case("odd-ids", t, CANCEL, exit=1),
    Case("half-body", t, ("tasks-client-lifecycle",), timeout_ms=2_000),
    Case("then-hang", t, ("tasks-client-lifecycle", "tasks-client-sync-result"), timeout_ms=10_000),
    Case("huge-method", t, ("tasks-client-lifecycle",), exit=1),
    Case("garbage", t, ("tasks-client-lifecycle", "tasks-client-legacy-lifecycle"), exit=1),
    Case("oversize", t, ("tasks-client-lifecycle",), exit=EXIT_OVERSIZE),
    Case("long-outcome", t, ("tasks-client-tool-error", "tasks-client-failed"), exit=3, args=("--profile", "full")),
    Case("escape", t, LIFECYCLE, timeout_ms=15_000, exit=0),
)] + [Case("many-servers", "stdio", ("tasks-client-lifecycle",), timeout_ms=MANY_SERVERS_TIMEOUT_MS,
           exit=EXIT_MANY_SERVERS),
      Case("forge", "stdio", LIFECYCLE, timeout_ms=15_000, exit=0, victim=True)]
BY_ID = {c.id: c for c in CASES}


@dataclass
class Run:
    case: Case
    dir: Path
    returncode: int | None = None
    stdout: str = ""
    stderr: str = ""
    hung: bool = False
    survivors: list[str] = field(default_factory=list)
    victim: int | None = None  # the pid of the process outside the client's tree (`victim` cases)
    victim_alive: bool = False  # it still ran after the run

    def file(self, name: str) -> str:
        path = self.dir / name
        return path.read_text(encoding="utf-8") if path.exists() else ""

    @property
    def report(self) -> dict[str, Any]:
        return json.loads(self.file("report.json"))  # type: ignore[no-any-return]

    def checks(self) -> dict[str, dict[str, Any]]:
        return {c["id"]: c for c in self.report["checks"]}


def _survivors(marker: str) -> list[str]:
    """Processes whose command line holds `marker`, still alive a moment after the run (killed)."""
    deadline = time.monotonic() + 1.0
    while True:
        alive = []
        for p in psutil.process_iter(["cmdline"]):
            try:
                if p.pid != os.getpid() and any(marker in part for part in p.info["cmdline"] or []) \
                        and p.status() != psutil.STATUS_ZOMBIE:
                    alive.append(p)
            except psutil.Error:
                continue
        if not alive or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    described = []
    for p in alive:
        try:
            described.append(f"pid {p.pid}: {shlex.join(p.cmdline())[:200]}")
            p.kill()
        except psutil.Error:
            pass
    return described


def run_case(case: Case, base: Path) -> Run:
    d = base / case.id
    d.mkdir()
    marker = f"hostile-client-{uuid.uuid4().hex}"
    client = [sys.executable, str(FIXTURE), "--case", case.name, "--token", TOKEN, "--marker", marker,
              "--dump", str(d / "dump.json")]
    victim = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"]) if case.victim else None
    if victim is not None:
        client += ["--victim", str(victim.pid)]
    scenarios = [a for s in case.scenarios for a in ("--scenario", s)]
    argv = [sys.executable, "-m", "tasks_conformance", "client", "--command", shlex.join(client), "--era", "both",
            "--transport", case.transport, "--timeout", str(case.timeout_ms), *scenarios,
            *(("-e", f"HOSTILE_ENV_TOKEN={ENV_TOKEN}") if case.env else ()), *case.args, "--format", "human",
            "--reporter", f"json={d / 'report.json'}", "--reporter", f"junit-xml={d / 'report.xml'}",
            "--reporter", f"json-summary={d / 'summary.json'}", "--reporter", f"markdown={d / 'report.md'}",
            "--reporter", f"html={d / 'report.html'}", "--wire-log", str(d / "wire.ndjson")]
    run = Run(case, d)
    env = {**os.environ, "NO_COLOR": "1"}
    env.pop("HOSTILE_ENV_TOKEN", None)
    proc = subprocess.Popen(argv, cwd=ROOT, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, encoding="utf-8", errors="backslashreplace")
    try:
        run.stdout, run.stderr = proc.communicate(timeout=HANG_AFTER_S)
    except subprocess.TimeoutExpired:
        run.hung = True
        proc.kill()
        run.stdout, run.stderr = proc.communicate()
    run.returncode = proc.returncode
    run.survivors = _survivors(marker)
    if victim is not None:
        run.victim, run.victim_alive = victim.pid, victim.poll() is None
        victim.kill()
        victim.wait()
    return run


class _Runs:
    """Every case started at once on a small pool (under xdist, each case on demand)."""

    def __init__(self, base: Path, whole: bool) -> None:
        self.base = base
        self.pool = ThreadPoolExecutor(max_workers=3, thread_name_prefix="hostile-client")
        self.futures: dict[str, Future[Run]] = {}
        if whole:
            for c in CASES:
                self.futures[c.id] = self.pool.submit(run_case, c, base)

    def get(self, case_id: str) -> Run:
        if case_id not in self.futures:
            self.futures[case_id] = self.pool.submit(run_case, BY_ID[case_id], self.base)
        return self.futures[case_id].result()


@pytest.fixture(scope="module")
def runs(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[_Runs]:
    r = _Runs(tmp_path_factory.mktemp("hostile-clients"), starts_all_cases(request.module))
    yield r
    r.pool.shutdown(wait=True, cancel_futures=True)


def _assert_common(run: Run) -> None:
    where = f"{run.case.id} (exit {run.returncode})\nstderr: {run.stderr[-1500:]}\nstdout: {run.stdout[-3000:]}"
    assert not run.hung, where
    assert run.returncode == run.case.exit, where
    assert "Traceback" not in run.stdout + run.stderr and "internal error" not in run.stdout + run.stderr, where
    assert not run.survivors, run.survivors
    ET.fromstring(run.file("report.xml"))
    json.loads(run.file("summary.json"))
    for line in run.file("wire.ndjson").splitlines():
        json.loads(line)
    outputs = {"stdout": run.stdout, "stderr": run.stderr,
               **{name: run.file(name) for name in ("report.json", "report.xml", "summary.json", "report.md",
                                                     "report.html", "wire.ndjson")}}
    leaks = [(name, s) for name, text in outputs.items() for s in SECRETS if s in text]
    assert leaks == [], leaks
    assert f"--token {TOKEN}" not in run.report["target"] and "--token [REDACTED]" in run.report["target"]


@pytest.mark.hostile
@pytest.mark.timeout(HANG_AFTER_S + 120)
@pytest.mark.parametrize("case_id", list(BY_ID))
def test_a_hostile_client(runs: _Runs, case_id: str) -> None:
    run = runs.get(case_id)
    _assert_common(run)
    checks = run.checks()
    name = run.case.name
    if name in ("no-call", "secrets", "half-body", "stderr-secrets"):
        # Nothing to judge: no check passes (but the framing of what it did send), and why is said once.
        assert [i for i, c in checks.items() if c["status"] == "passed" and i not in FRAMING] == []
        causes = run.report["incompleteCauses"]
        assert len(causes) == 1, causes
        said = {"no-call": UNCALLED, "secrets": UNCALLED, "half-body": NOTHING_SENT,
                "stderr-secrets": "its stderr ends: the secrets: [REDACTED] [REDACTED]"}[name]
        assert said in causes[0]["cause"], causes
        assert set(causes[0]["checks"]) == {i for i, c in checks.items() if c.get("skipReason") == "could-not-run"}
        if name == "no-call":
            # (but a check whose scenarios cannot run over the transport: not applicable, whatever the client did)
            elsewhere = {i for i, c in CLIENT_CHECKS.items() if c.scenarios and not any(
                run.case.transport in BY_NAME[n].transports for n in c.scenarios)}
            assert set(checks) == set(CLIENT_CHECKS)
            assert set(causes[0]["checks"]) == set(CLIENT_CHECKS) - set(FRAMING) - elsewhere
            assert {checks[i]["status"] for i in FRAMING} == {"passed"}  # what it sent was well framed
    elif name in ("odd-ids", "garbage"):
        # Ids that are an array, an object or true, NaN, bytes that are not JSON: framing fails on
        # either era, no check crashes, and the strict scripted servers never answer with NaN.
        phrases = {"odd-ids": ("the request id is an array",),
                   "garbage": ("not valid UTF-8", "NaN is no JSON value", "the request id is a boolean")}[name]
        for check in FRAMING:
            framing = checks[check]
            assert framing["status"] == "failed", framing
            assert all(words in framing["message"] for words in phrases), framing["message"]
        frames = [json.loads(line) for line in run.file("wire.ndjson").splitlines()]
        sent = [f.get("text", "") for f in frames if f["direction"] == "out"]
        assert sent and not [t for t in sent if "NaN" in t or "Infinity" in t]
        for text in sent:
            json.loads(text, parse_constant=lambda c: pytest.fail(f"the scripted server sent {c}"))
    elif name == "then-hang":
        # Compliant until its end, then it hangs: what needs the end could not run, the rest warns.
        follows = checks["tasks-client-follows-task"]
        assert follows["skipReason"] == "could-not-run" and HUNG in follows["message"], follows
        passed = [c for c in checks.values() if c["status"] == "passed"]
        assert passed and all(any(HUNG in str(w) for w in c["warnings"]) for c in passed), passed
        causes = run.report["incompleteCauses"]
        assert len(causes) == 1 and HUNG in causes[0]["cause"], causes
    elif name in ("oversize", "long-outcome", "many-servers"):
        _assert_limit_stated(run)
    elif name in ("escape", "forge"):
        # A compliant client that leaves a grandchild in a session of its own: it is stopped (no
        # survivor, above), named in each scenario's record with its command redacted, and every
        # check that passed warns (policy P-49); nothing fails.
        assert {c["status"] for c in checks.values()} <= {"passed", "skipped"}, checks
        assert {c["skipReason"] for c in checks.values() if c["status"] == "skipped"} <= {"not-applicable"}
        for rec in run.report["scenarios"]:
            assert rec["descendantsTracked"] is True, rec
            left = [line for line in rec["leftBehind"] if f"--case {name}" in line]
            assert left and all(line.startswith("pid ") and "--token [REDACTED]" in line for line in left), rec
        passed = [c for c in checks.values() if c["status"] == "passed"]
        assert passed and all(any("(policy P-49)" in w for w in c["warnings"]) for c in passed), passed
        if name == "forge":
            # The hello named a process outside the client's tree: never signalled, and said so;
            # the relay's token was in neither the argv nor the environment the client was given.
            assert run.victim_alive, run.victim
            for rec in run.report["scenarios"]:
                assert any(note.startswith(f"pid {run.victim}, named in the hello") and "not a descendant of the "
                           "client" in note for note in rec["notSignalled"]), rec
            dump = json.loads(run.file("dump.json"))
            assert len(dump["token"]) >= 32
            assert dump["token"] not in json.dumps(dump["argv"]) + json.dumps(dump["env"])
            assert not Path(dump["tokenFile"]).exists()  # removed after the scenario
    elif name == "huge-method":
        meta = checks["tasks-client-core-meta"]
        assert meta["status"] == "failed" and "(1000000 characters)" in meta["message"], meta["message"][:300]
        texts = [c["message"] for c in checks.values()] + [str(w) for c in checks.values() for w in c["warnings"]]
        assert max(map(len, texts)) <= 2_000
        assert len(run.file("report.json")) < 200_000


def _assert_limit_stated(run: Run) -> None:
    """The limit the case reaches is in each scenario's record (JSON, and markdown / JUnit for
    people), and what it cut was not read as something else."""
    limit = {"oversize": "stdio-line" if run.case.transport == "stdio" else "http-body",
             "long-outcome": "outcome-line", "many-servers": "servers"}[run.case.name]
    hits = {"oversize": 1, "long-outcome": 1, "many-servers": hostile.SERVERS - 8}[run.case.name]
    records = run.report["scenarios"]
    assert records and all([h for h in r["limits"] if h["limit"] == limit] == [
        {"limit": limit, "max": LIMIT_VALUES[Limit(limit)], "hits": hits}] for r in records), records
    assert f"limit {limit}: {hits} " in run.file("report.xml")
    frames = [json.loads(line) for line in run.file("wire.ndjson").splitlines()]
    if run.case.name == "oversize":
        # Not a frame: neither its bytes nor, over stdio, the whole ping at the tail of the long line.
        assert not [f for f in frames if f["direction"] == "in" and '"id":99' in f.get("text", "")]
        assert all(r["messages"] >= 2 for r in records), records  # what came after it was read
    elif run.case.name == "long-outcome":
        for r in records:
            assert r["outcomeProblem"] == TOO_LONG and "forged" not in (r["outcomeLine"] or ""), r
        # --profile full: the outcome check could not run, and says the line was too long.
        outcome = run.checks()["tasks-client-surfaces-outcome"]
        assert outcome["skipReason"] == "could-not-run" and TOO_LONG in outcome["message"], outcome
    else:
        assert [r["connections"] for r in records] == [8], records


@pytest.mark.hostile
@pytest.mark.parametrize("transport", ["http", "stdio"])
def test_a_flood_past_the_wire_logs_cap_is_stated_and_not_judged(transport: str) -> None:
    """With the cap on kept frame bytes lowered, a flooding client's frames past it keep no bytes,
    its scenario's record says how many, and no check judges those empty frames (the framing
    check, which reads every message, does not fail on them)."""
    from tasks_conformance.client.runner import ClientConfig, execute_client

    cap = 3 * 1024 * 1024
    command = (sys.executable, str(FIXTURE), "--case", "flood", "--seconds", "1.5")
    config = ClientConfig(command=command, scenarios=("tasks-client-lifecycle",), timeout_s=20.0,
                          transport=transport, max_frame_bytes=cap, jobs=1)
    execution = anyio.run(execute_client, config)
    (record,) = execution.result.scenarios
    (hit,) = [h for h in record.limits if h.limit is Limit.FRAME_BYTES]
    assert hit.max == cap and hit.hits > 0
    assert sum(len(f.data) for f in execution.wire) <= cap
    assert {c.id: c for c in execution.result.checks}["tasks-client-wire-framing"].status == "passed"


# -- the same rules, without a process per case --------------------------------------------------


def test_a_line_over_the_limit_is_dropped_up_to_its_newline() -> None:
    pending, skipping = bytearray(), [False]
    got = split_lines(b"ab\n" + b"x" * 10, pending, skipping, 8)
    got += split_lines(b"y" * 5 + b'{"id":99}\nok\n', pending, skipping, 8)
    assert got == [(b"ab", False), (b"x" * 10, True), (b"ok", False)]
    assert split_lines(b"rest", pending, skipping, 8) == [] and pending == b"rest" and skipping == [False]


def test_a_large_message_is_judged_on_a_bounded_copy_that_says_how_long_its_strings_were() -> None:
    from tasks_conformance.client import judged
    from tasks_conformance.core.text import shown

    data = json.dumps({"jsonrpc": "2.0", "method": "m" * 100_000, "params": {"a": [{}] * 50_000}}).encode()
    message = judged.message_of(Frame(1, 0.0, "in", "http", data))
    assert isinstance(message["method"], judged.Cut) and len(message["method"]) == judged.KEPT_CHARS
    assert shown(message["method"]).endswith("(100000 characters)")
    assert len(message["params"]["a"]) < judged.MAX_NODES
    small = Frame(2, 0.0, "in", "http", b'{"jsonrpc":"2.0","method":"ping"}')
    assert judged.message_of(small) == {"jsonrpc": "2.0", "method": "ping"}


def test_a_limit_reached_is_a_typed_field_of_the_scenario_record() -> None:
    record = ScenarioRecord("tasks-client-lifecycle", "extension", "stdio", True, 0, False, 10, 1000, True, 3, 1,
                            limits=(LimitHit(Limit.STDIO_LINE, 4194304, 2),))
    assert record.to_json()["limits"] == [{"limit": "stdio-line", "max": 4194304, "hits": 2}]
    assert "  limit stdio-line: 2 line(s) over 4194304 bytes discarded up to their newline, unread" in record.lines()


def test_the_readme_states_every_limit_with_its_value() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("### Limits", 1)[1].split("\n#", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| `")]
    for limit, value in LIMIT_VALUES.items():
        row = next((r for r in rows if r.startswith(f"| `{limit.value}`")), None)
        assert row is not None, limit
        assert f"{value:,}" in row, (row, value)




def test_client_env_reaches_the_client_and_is_redacted_unless_shown(tmp_path: Path) -> None:
    said = tmp_path / "said.py"
    said.write_text("import os, sys\nsys.stderr.write('value=' + os.environ['MY_SETTING'] + '\\n')\nsys.exit(4)\n")
    command = shlex.join([sys.executable, str(said)])
    args = ("client", "--command", command, "--scenario", "tasks-client-lifecycle", "--format", "json")
    hidden = invoke(*args, "-e", "MY_SETTING=notShownValue42")
    assert hidden.code == 3 and "notShownValue42" not in hidden.stdout + hidden.stderr
    assert "value=[REDACTED]" in json.loads(hidden.stdout)["incompleteCauses"][0]["cause"]
    shown = invoke(*args, "-e", "MY_SETTING=shownValue42", "--show-env", "MY_SETTING")
    assert shown.code == 3 and "value=shownValue42" in json.loads(shown.stdout)["incompleteCauses"][0]["cause"]
    unknown = invoke(*args, "--show-env", "OTHER")
    assert unknown.code == 2 and "--show-env OTHER" in unknown.stderr


def test_an_internal_error_in_a_client_check_shows_its_traceback_under_debug(monkeypatch: pytest.MonkeyPatch) -> None:
    def boom(_runs: Any) -> Any:
        raise RuntimeError("a bug of ours")

    check = "tasks-client-declares-extension"
    monkeypatch.setitem(CLIENT_CHECKS, check, replace(CLIENT_CHECKS[check], judge=boom))
    reference = shlex.join([sys.executable, "-m", "tasks_conformance.client.reference_client"])
    args = ("client", "--command", reference, "--scenario", "tasks-client-sync-result", "--format", "json")
    quiet = invoke(*args)
    assert quiet.code == 3 and "Traceback" not in quiet.stderr
    assert "internal error" in {c["id"]: c for c in json.loads(quiet.stdout)["checks"]}[check]["message"]
    loud = invoke(*args, "--debug")
    assert loud.code == 3 and "Traceback" in loud.stderr and "RuntimeError: a bug of ours" in loud.stderr


def test_a_partial_http_body_is_no_request() -> None:
    """A client stopped (or gone) halfway through its body sent no request: nothing is answered,
    and the scenario's frames do not hold it."""
    app = ScriptedHttp(WireLog())
    events = iter([{"type": "http.request", "body": b'{"jsonrpc": "2.0", "id": 1, "meth', "more_body": True},
                   {"type": "http.disconnect"}])
    sent: list[Any] = []

    async def receive() -> Any:
        return next(events)

    async def send(message: Any) -> None:
        sent.append(message)

    scope = {"type": "http", "method": "POST", "path": "/mcp", "headers": [(b"authorization", b"Bearer abcdef123")]}
    anyio.run(app, scope, receive, send)
    assert app.requests == 0 and app.seqs == [] and sent == []
    (frame,) = list(app.wire)
    assert frame.note and "not a request" in frame.note
    assert dict(frame.http.request_headers if frame.http else ())["authorization"] == "[REDACTED]"


def test_the_scenario_a_client_never_called_is_its_request_method() -> None:
    assert BY_NAME["tasks-client-lifecycle"].request_method == "tools/call"
    assert BY_NAME["tasks-client-task-on-prompt"].request_method == "prompts/get"


def test_the_cancel_checks_read_ids_of_any_json_shape() -> None:
    """A lenient server may create a task for a tools/call whose id is an array: the notification
    naming that id is a cancel by notification (it crashed both eras' checks: unhashable id)."""
    from tasks_conformance.client.checks.cancel import judge_cancel
    from tasks_conformance.client.evidence import Exchange, ScenarioRun
    from tasks_conformance.client.launch import ClientRun

    call = Exchange(1, 0.0, {"jsonrpc": "2.0", "id": [7, 7], "method": "tools/call", "params": {}}, None, 2, 0.1,
                    {"jsonrpc": "2.0", "id": [7, 7], "result": {"resultType": "task", "taskId": "t"}})
    note = Exchange(3, 0.2, {"jsonrpc": "2.0", "method": "notifications/cancelled",
                             "params": {"requestId": [7, 7]}}, None)
    other = Exchange(4, 0.3, {"jsonrpc": "2.0", "method": "notifications/cancelled",
                              "params": {"requestId": {"o": 1}}}, None)
    client = ClientRun(("c",), True, 0, False, 1.0, "", "", None)
    run = ScenarioRun(BY_NAME["tasks-client-cancel"], "extension", client, (call, note, other), reached=True)
    verdict = judge_cancel([run], rule="C-EXT-MUST-06", scenario="tasks-client-cancel",
                           creates=lambda r: [e for e in r.exchanges if e.method == "tools/call"],
                           unstarted=lambda r: None)
    assert verdict.status == "failed" and verdict.broken == ("C-EXT-MUST-06",)


def _post(app: Any, data: bytes) -> list[Any]:
    """What an ASGI app sends back for one complete POST /mcp of `data`."""
    events = iter([{"type": "http.request", "body": data, "more_body": False}])
    sent: list[Any] = []

    async def receive() -> Any:
        return next(events)

    async def send(message: Any) -> None:
        sent.append(message)

    anyio.run(app, {"type": "http", "method": "POST", "path": "/mcp", "headers": []}, receive, send)
    return sent


@pytest.mark.parametrize(("data", "code", "rid"), [
    (b"\x00\xffnot json{", -32700, None),
    (b'{"jsonrpc":"2.0","id":NaN,"method":"ping"}', -32700, None),
    (b'{"jsonrpc":"2.0","id":1e400,"method":"ping"}', -32600, None),
    (b'{"jsonrpc":"2.0","id":[1],"method":"ping"}', -32600, None),
    (b'{"jsonrpc":"2.0","id":true,"method":"ping"}', -32600, None),
    (b'{"jsonrpc":"2.0","id":7,"method":42}', -32600, 7),
    (b'[{"jsonrpc":"2.0","id":1,"method":"ping"}]', -32600, None),
])
def test_the_scripted_servers_answer_as_strict_json_rpc_peers(data: bytes, code: int, rid: Any) -> None:
    from tasks_conformance.client.scripted.extension import ScriptedServer
    from tasks_conformance.client.scripted.legacy import LegacyScriptedServer

    for app in (ScriptedServer(BY_NAME["tasks-client-lifecycle"].script, WireLog()),
                LegacyScriptedServer(BY_NAME["tasks-client-legacy-lifecycle"].script, WireLog())):  # type: ignore[arg-type]
        sent = _post(app, data)
        assert sent[0]["status"] == 400
        body = json.loads(sent[1]["body"])
        assert body["error"]["code"] == code and body["id"] == rid and body["jsonrpc"] == "2.0"


def test_the_scripted_server_echoes_no_unbounded_method() -> None:
    from tasks_conformance.client.scripted.extension import ScriptedServer

    app = ScriptedServer(BY_NAME["tasks-client-lifecycle"].script, WireLog())
    _status, body = app.answer({"jsonrpc": "2.0", "id": 1, "method": "m" * 1_000_000, "params": {}})
    assert body is not None and len(json.dumps(body)) < 400


# -- nothing escapes, and the relay's trust (fast) ------------------------------------------------

ESCAPER = '''import os, sys, time
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        time.sleep(600)
    os._exit(0)
os.wait()
'''


def _sleeper() -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="a child subreaper and /proc are Linux's")
def test_a_grandchild_in_a_session_of_its_own_is_stopped_and_named(tmp_path: Path) -> None:
    from tasks_conformance.client.launch import run_client

    script = tmp_path / "escaper.py"
    script.write_text(ESCAPER)
    marker = f"escaper-{uuid.uuid4().hex}"
    client = anyio.run(run_client, [sys.executable, str(script), marker], "LAST", {}, 10.0)
    assert client.exit_code == 0 and client.tracked
    ((pid, command),) = client.left_behind
    assert f"{script} {marker} LAST" in command
    assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    assert _survivors(marker) == []


def test_the_supervisor_signals_only_its_descendants() -> None:
    import signal

    from tasks_conformance.client.subreaper import descends_from, signal_descendant

    other, victim = _sleeper(), _sleeper()
    try:
        if descends_from(victim.pid, (os.getpid(),)) is None:
            pytest.skip("no /proc on this system: nothing is signalled by pid")
        assert descends_from(victim.pid, (os.getpid(),)) is True
        assert descends_from(victim.pid, (other.pid,)) is False
        assert signal_descendant(victim.pid, signal.SIGKILL, (other.pid,)) is False
        assert victim.poll() is None
        assert signal_descendant(victim.pid, signal.SIGKILL, (os.getpid(),)) is True
        assert victim.wait(timeout=10) == -signal.SIGKILL
    finally:
        for p in (other, victim):
            p.kill()
            p.wait()


def test_the_relay_kills_no_pid_a_hello_names_outside_the_client() -> None:
    from tasks_conformance.client.stdio_relay import Connection, Relay
    from tasks_conformance.client.subreaper import start_time

    supervisor, victim, server = _sleeper(), _sleeper(), _sleeper()
    try:
        if start_time(victim.pid) is None:
            pytest.skip("no /proc on this system: nothing is signalled by pid")
        relay = Relay(("server",), "t", connections=[
            Connection(pid=victim.pid, start=start_time(victim.pid), number=1),  # not under `supervisor`
            Connection(pid=server.pid, start=start_time(server.pid), number=2)])  # under this test: a descendant
        anyio.run(relay.stop, (supervisor.pid,))
        assert victim.poll() is None and server.poll() is None  # neither descends from `supervisor`
        assert [n.split(":")[0] for n in relay.not_signalled] == [
            f"pid {victim.pid}, named in the hello of scripted server connection 1",
            f"pid {server.pid}, named in the hello of scripted server connection 2"]
        assert all("not a descendant of the client, so it was not signalled" in n for n in relay.not_signalled)
        reused = Relay(("server",), "t", connections=[Connection(pid=server.pid, start=-1, number=1)])
        anyio.run(reused.stop, (os.getpid(),))  # a descendant, but not the process that said hello
        assert server.poll() is None and "not the process that said hello" in reused.not_signalled[0]
        mine = Relay(("server",), "t", connections=[Connection(pid=server.pid, start=start_time(server.pid), number=1)])
        anyio.run(mine.stop, (os.getpid(),))
        assert server.wait(timeout=10) < 0 and mine.not_signalled == []
    finally:
        for p in (supervisor, victim, server):
            p.kill()
            p.wait()


def test_the_relay_token_is_in_no_command_and_its_file_is_private_and_removed() -> None:
    from tasks_conformance.client.stdio_relay import relaying

    seen: dict[str, Any] = {}

    async def main() -> None:
        async with relaying(BY_NAME["tasks-client-lifecycle"], WireLog(), 5.0) as relay:
            path = Path(relay.argv[relay.argv.index("--token-file") + 1])
            seen.update(token=relay.token, argv=relay.argv, env=relay.server_env(), path=path,
                        mode=path.stat().st_mode & 0o777, dir_mode=path.parent.stat().st_mode & 0o777,
                        text=path.read_text())

    anyio.run(main)
    assert len(seen["token"]) >= 32 and seen["text"] == seen["token"]
    assert seen["token"] not in " ".join(seen["argv"]) and seen["token"] not in json.dumps(seen["env"])
    assert seen["mode"] == 0o600 and seen["dir_mode"] == 0o700
    assert not seen["path"].exists() and not seen["path"].parent.exists()
