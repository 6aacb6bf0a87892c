"""`tasks-conformance client` against seven real tasks clients, each driven by a small harness in
``clients/`` that follows the client-harness convention (URL last, context in the environment).

Each client's right verdict, check by check, is the one ``EXPECTED.md`` ("Real clients")
establishes from the client's packaged source and its captured traffic; ``warns`` names, for a
check that passes with a warning (a SHOULD, or a derived rule under a policy), the rule ids its
warnings must cite, and a check not listed there must pass without one. Every client runs once
(``python -m tasks_conformance client --era … --format json``); the runs go in parallel and each
is bounded. ``scripts/interop_table.py`` reuses ``CLIENTS`` and ``run_client`` for the clients
table of ``docs/interop-results.md``.

The legacy Python clients (mcp 1.30, fastmcp 3.4.11, strands-agents on mcp 1.30) conflict with the
interop extra (mcp 2.3, fastmcp 4.1.4), so they run from their own virtualenv,
``.venv-legacy-clients`` (``.ci/run`` creates it from ``legacy-clients-requirements.txt``); so does
strands-agents on 2026-07-28, which needs an mcp 2.x below 2.2 (``.venv-extension-clients``, from
``extension-clients-requirements.txt``). Without its virtualenv a client's tests skip, saying how to
make it.
"""

from __future__ import annotations

import concurrent.futures
import json
import os
import shlex
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from helpers.processes import stop_tool

from tasks_conformance.client.checks import CLIENT_CHECKS
from tasks_conformance.client.runner import ClientConfig

pytestmark = [pytest.mark.interop, pytest.mark.timeout(300)]

HERE = Path(__file__).resolve().parent
HARNESSES = HERE / "clients"
NODE_MODULES = HERE / "node_modules"
#: A client run is its scenarios (at most ~10 s each, two at a time) plus our own bounds.
RUN_TIMEOUT_S = 240.0
P, F, NA, CNR = "passed", "failed", "not-applicable", "could-not-run"
EXIT_FOR = {"passed": 0, "failed": 1, "incomplete": 3}


def era_checks(era: str) -> tuple[str, ...]:
    """The checks a run of one era reports, in report order (from the registry, not a copy)."""
    config = ClientConfig(command=("true",), eras=(era,))  # type: ignore[arg-type]
    return tuple(c.id for c in CLIENT_CHECKS.values() if config.judges(c))


@dataclass(frozen=True)
class OwnVenv:
    """A git-ignored virtualenv of clients that cannot share the interop extra (.ci/run makes it)."""

    what: str
    path: Path
    requirements: Path

    @property
    def python(self) -> Path:
        return self.path / "bin" / "python"

    def pins(self) -> dict[str, str]:
        """name -> version of its requirements file's `name==version` lines (extras dropped)."""
        lines = (line.split("#")[0].strip() for line in self.requirements.read_text(encoding="utf-8").splitlines())
        return {name.split("[")[0]: version for name, _, version in (line.partition("==") for line in lines if
                                                                      "==" in line)}


#: By RealClient.kind: the legacy (2025-11-25) Python runtimes, and the 2026-07-28 clients whose mcp pin
#: the interop extra's mcp 2.3.0 rules out.
VENVS = {
    "legacy-python": OwnVenv("the legacy clients' virtualenv", HERE / ".venv-legacy-clients",
                             HERE / "legacy-clients-requirements.txt"),
    "extension-python": OwnVenv("the extension clients' virtualenv", HERE / ".venv-extension-clients",
                                HERE / "extension-clients-requirements.txt"),
}


def _npm_version(package: str) -> str | None:
    try:
        return str(json.loads((NODE_MODULES / package / "package.json").read_text(encoding="utf-8"))["version"])
    except (OSError, ValueError, KeyError):
        return None


def _python_versions(python: Path | str, *dists: str) -> dict[str, str | None]:
    code = ("import importlib.metadata as m, json, sys\n"
            "def v(d):\n try: return m.version(d)\n except m.PackageNotFoundError: return None\n"
            "print(json.dumps({d: v(d) for d in sys.argv[1:]}))")
    try:
        out = subprocess.run([str(python), "-c", code, *dists], capture_output=True, text=True, timeout=30, check=True)
        return dict(json.loads(out.stdout))
    except (OSError, subprocess.SubprocessError, ValueError):
        return dict.fromkeys(dists)


@dataclass(frozen=True)
class RealClient:
    id: str
    title: str
    era: str
    #: The packages the harness drives, and the versions EXPECTED.md was established with.
    packages: Mapping[str, str]
    kind: str  # "npm", "python" (this interpreter), or a key of VENVS (a virtualenv of its own)
    harness: str
    #: The right verdict of every check of the era.
    expected: Mapping[str, str] = field(default_factory=dict)
    #: The rule ids the warnings of a check must cite; a check not named here has no warning.
    warns: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    @property
    def command(self) -> str:
        script = str(HARNESSES / self.harness)
        interpreter = {"npm": shutil.which("node") or "node", "python": sys.executable}.get(self.kind)
        return shlex.join([interpreter or str(VENVS[self.kind].python), script])

    def installed(self) -> dict[str, str | None]:
        if self.kind == "npm":
            return {name: _npm_version(name) for name in self.packages}
        return _python_versions(VENVS[self.kind].python if self.kind in VENVS else sys.executable, *self.packages)

    def availability(self) -> str | None:
        """Why this client cannot run here, or None."""
        if self.kind == "npm" and shutil.which("node") is None:
            return "node is not installed"
        own = VENVS.get(self.kind)
        if own is not None and not own.python.exists():
            venv, pins = (p.relative_to(HERE.parent.parent) for p in (own.path, own.requirements))
            return (f"{own.what} is absent: python3 -m venv {venv} && {venv}/bin/pip install "
                    f"-r {pins} (.ci/run does this)")
        wrong = {name: got for name, got in self.installed().items() if got != self.packages[name]}
        if wrong:
            return "not installed at the versions EXPECTED.md was established with: " + ", ".join(
                f"{name} {got or 'absent'} (want {self.packages[name]})" for name, got in wrong.items())
        return None

    def exit_code(self) -> int:
        verdicts = set(self.expected.values())
        return 1 if F in verdicts else 3 if CNR in verdicts else 0


def _verdicts(era: str, **overrides: str) -> dict[str, str]:
    """Every check of the era passed unless overridden (keyword names: the id without
    `tasks-client-`, with _ for -)."""
    table = dict.fromkeys(era_checks(era), P)
    for key, value in overrides.items():
        check_id = "tasks-client-" + key.replace("_", "-")
        assert check_id in table, check_id
        table[check_id] = value
    return table


def _warns(**rules: tuple[str, ...]) -> dict[str, tuple[str, ...]]:
    return {"tasks-client-" + k.replace("_", "-"): v for k, v in rules.items()}


CLIENTS: tuple[RealClient, ...] = (
    # EXPECTED.md "Real clients" §C1.
    RealClient(
        id="ext-tasks", title="TypeScript ext-tasks session over the SDK 2.x client", era="extension",
        packages={"@modelcontextprotocol/ext-tasks": "0.2.2", "@modelcontextprotocol/client": "2.4.0"},
        kind="npm", harness="ext_tasks_client.mjs",
        # Mcp-Name is the raw task id, never base64 (port.js:110-116): C-CORE-MUST-06.
        # Offers only the version it speaks, so no -32022 comes and version-retry has nothing to judge.
        # None of the three extension harnesses acts on cancelRequest yet: the call runs to its answer.
        # None subscribes to a task (polling alone), so there is no acknowledgement to compare.
        expected=_verdicts("extension", routing_headers=F, version_retry=NA, request_cancellation=NA,
                           subscription_ack=NA),
    ),
    # §C2.
    RealClient(
        id="fastmcp-tasks", title="fastmcp Client with fastmcp-tasks", era="extension",
        packages={"fastmcp": "4.1.4", "fastmcp-tasks": "4.1.4"}, kind="python", harness="fastmcp_tasks_client.py",
        # No Mcp-Name on tasks/* (client_models.py:108-130): C-EXT-MUST-04. A failed task surfaces as
        # an isError result without its code (client.py:352-377): C-EXT-MUST-16.
        # ResultType is an open union, `_CoreResultType | str` (mcp_types/_types.py:162, mcp 2.3.0), so a
        # prompts/get answered with resultType "deferred" is a GetPromptResult like any: C-CORE-MUST-07.
        expected=_verdicts("extension", routing_headers=F, surfaces_outcome=F, version_retry=NA,
                           unknown_result_type=F, request_cancellation=NA, subscription_ack=NA),
        # A 20 ms backoff ramp under pollIntervalMs (client.py:139-170); k1 answered again on the
        # stale snapshot (client.py:173-245, no ledger).
        warns=_warns(poll_interval=("C-EXT-SHOULD-01",), input_answered=("C-EXT-SHOULD-08",)),
    ),
    # §C3.
    RealClient(
        id="sdk-tasks", title="TypeScript SDK 1.x client, experimental task API", era="legacy",
        packages={"@modelcontextprotocol/sdk": "1.32.2"}, kind="npm", harness="sdk_tasks_client.mjs",
        expected=_verdicts("legacy"),
        # params.task:{} echoed on tasks/get and tasks/result (protocol.js:591, 681-686); a failed
        # task yields a generic -32603 with no tasks/result (protocol.js:600-604); tasks/cancel sent
        # without tasks.cancel declared; the elicitation answer carries no related-task _meta.
        # The first tasks/get comes 26-126 ms after a CreateTaskResult that said pollInterval 200 (P-48).
        warns=_warns(legacy_task_augmentation=("C-LEG-SHOULD-01",), legacy_fetches_result=("C-LEG-MUST-05",),
                     legacy_declared_methods=("C-LEG-SHOULD-07",), legacy_input_answered=("C-LEG-MUST-08",),
                     legacy_poll_interval=("C-LEG-SHOULD-02",)),
    ),
    # §C4.
    RealClient(
        id="mcp-1.30", title="Python mcp ClientSession, experimental task API", era="legacy",
        packages={"mcp": "1.30.0"}, kind="legacy-python", harness="mcp_legacy_client.py",
        # call_tool_as_task always sends params.task (experimental/tasks.py:96-108): C-LEG-MUST-01/02.
        expected=_verdicts("legacy", legacy_task_augmentation=F),
        # The first tasks/get comes 14-35 ms after a CreateTaskResult that said pollInterval 200 (P-48).
        # call_tool_as_task validates the answer as a CreateTaskResult (experimental/tasks.py:107): a
        # plain CallToolResult to the augmented call raises, the harness reports status unknown (P-53).
        warns=_warns(legacy_declared_methods=("C-LEG-SHOULD-07",), legacy_input_answered=("C-LEG-MUST-08",),
                     legacy_poll_interval=("C-LEG-SHOULD-02",), legacy_reads_create_result=("C-LEG-MUST-04",)),
    ),
    # §C5.
    RealClient(
        id="fastmcp-3", title="fastmcp 3 Client, call_tool(task=True)", era="legacy",
        packages={"fastmcp": "3.4.11", "mcp": "1.30.0"}, kind="legacy-python", harness="fastmcp3_client.py",
        # task=True always sends params.task (mixins/tools.py:346-354): C-LEG-MUST-01/02.
        # Its ClientSession kwargs have no task handlers (client/transports/base.py:23-33): it cannot
        # host a task, declares no capabilities.tasks, and the hosted-tasks check has nothing to judge.
        expected=_verdicts("legacy", legacy_task_augmentation=F, legacy_hosted_capabilities=NA),
        # result() polls through input_required and calls tasks/result only at the end (tasks.py:273-286).
        warns=_warns(legacy_declared_methods=("C-LEG-SHOULD-07",), legacy_input_answered=("C-LEG-SHOULD-04",)),
    ),
    # §C6: one harness, the era chosen by the mcp line installed beside strands.
    RealClient(
        id="strands-mcp-2.1", title="strands-agents MCPClient with tasks_config, on mcp 2.x", era="extension",
        packages={"strands-agents": "1.62.0", "mcp": "2.1.1"}, kind="extension-python", harness="strands_client.py",
        # A failed task becomes a CallToolResult with isError true and the error's message, its code dropped
        # (_resolve_v2_terminal_state, mcp_client.py:2160-2167): C-EXT-MUST-16.
        # The same open ResultType in mcp 2.1.1 (mcp_types/_types.py:162): C-CORE-MUST-07.
        expected=_verdicts("extension", surfaces_outcome=F, version_retry=NA, unknown_result_type=F,
                           request_cancellation=NA, subscription_ack=NA),
    ),
    # §C7.
    RealClient(
        id="strands-mcp-1.30", title="strands-agents MCPClient with tasks_config, on mcp 1.x", era="legacy",
        packages={"strands-agents": "1.62.0", "mcp": "1.30.0"}, kind="legacy-python", harness="strands_client.py",
        # MCPClient lists no tasks (no tasks/list in strands/tools/mcp/), and its ClientSession gets no
        # task handlers (mcp_client.py:1483-1495), so it declares no capabilities.tasks.
        expected=_verdicts("legacy", legacy_list_cursor=NA, legacy_hosted_capabilities=NA),
        # A failed task's outcome is built from tasks/get alone (mcp_client.py:2458-2461); the poll runs
        # through input_required to the end (2430); tasks/cancel is sent with no look at tasks.cancel (1808).
        # poll_task reads the task at once after the CreateTaskResult: 3-6 ms against pollInterval 200 (P-48).
        warns=_warns(legacy_fetches_result=("C-LEG-MUST-05",), legacy_declared_methods=("C-LEG-SHOULD-07",),
                     legacy_input_answered=("C-LEG-SHOULD-04",), legacy_poll_interval=("C-LEG-SHOULD-02",)),
    ),
)

BY_ID = {c.id: c for c in CLIENTS}


@dataclass
class ClientRunResult:
    client: RealClient
    returncode: int | None
    report: dict[str, Any] | None
    stderr: str
    seconds: float
    wire_log: Path
    problem: str | None = None

    def checks(self) -> dict[str, dict[str, Any]]:
        return {c["id"]: c for c in (self.report or {}).get("checks", [])}

    def verdict(self, check_id: str) -> str | None:
        check = self.checks().get(check_id)
        if check is None:
            return None
        return str(check["skipReason"] if check["status"] == "skipped" else check["status"])

    def warnings(self, check_id: str) -> list[str]:
        return [w if isinstance(w, str) else json.dumps(w) for w in self.checks().get(check_id, {}).get("warnings", [])]

    def describe(self, check_id: str | None = None) -> str:
        lines = [f"{self.client.id}: exit {self.returncode} in {self.seconds:.1f}s; wire log {self.wire_log}"]
        if self.problem:
            lines.append(f"run problem: {self.problem}")
        if check_id is not None and (check := self.checks().get(check_id)):
            lines.append(f"{check_id}: {self.verdict(check_id)} — {check.get('message')}")
            lines += [f"  warning: {w}" for w in self.warnings(check_id)]
        if self.report is None and self.stderr:
            lines.append("stderr: " + self.stderr[-1500:])
        return "\n".join(lines)


def run_client(client: RealClient, workdir: Path) -> ClientRunResult:
    """One `tasks-conformance client` run of every scenario of the client's era."""
    wire_log = workdir / f"{client.id}.ndjson"
    cmd = [sys.executable, "-m", "tasks_conformance", "client", "--command", client.command, "--era", client.era,
           "--format", "json", "--wire-log", str(wire_log), "--jobs", "2",
           # Twice the default per scenario: a Python client's import alone takes seconds on a busy machine.
           "--timeout", "60000"]
    started = time.monotonic()
    problem = None
    tool = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "NO_COLOR": "1"}, start_new_session=True, cwd=HERE)
    try:
        out, err = tool.communicate(timeout=RUN_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        problem = f"tasks-conformance client did not finish within {RUN_TIMEOUT_S:.0f}s; stopped"
        out, err = stop_tool(tool)
    report = None
    try:
        parsed = json.loads(out)
        report = parsed if isinstance(parsed, dict) else None
    except ValueError:
        problem = problem or f"stdout is not a JSON report (exit {tool.returncode}): {out[-500:]!r}"
    return ClientRunResult(client, tool.returncode, report, err, time.monotonic() - started, wire_log, problem)


class Runs:
    """Runs every client the collected tests need, on a small pool, once."""

    def __init__(self, wanted: list[str], workdir: Path) -> None:
        self.skips = {cid: why for cid in wanted if (why := BY_ID[cid].availability()) is not None}
        self._pool = concurrent.futures.ThreadPoolExecutor(max_workers=2, thread_name_prefix="client-interop")
        self._futures = {cid: self._pool.submit(run_client, BY_ID[cid], workdir)
                         for cid in wanted if cid not in self.skips}

    def get(self, client_id: str) -> ClientRunResult:
        if client_id in self.skips:
            pytest.skip(f"{client_id}: {self.skips[client_id]}")
        return self._futures[client_id].result(timeout=RUN_TIMEOUT_S * len(self._futures))

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)


@pytest.fixture(scope="module")
def runs(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Runs]:
    wanted: dict[str, None] = {}
    for item in request.session.items:
        callspec = getattr(item, "callspec", None)
        if callspec is not None and item.module is request.module:  # type: ignore[attr-defined]
            wanted[callspec.params["client_id"]] = None
    runner = Runs(list(wanted), tmp_path_factory.mktemp("client-interop"))
    try:
        yield runner
    finally:
        runner.close()


CHECK_CASES = [pytest.param(c.id, check, id=f"{c.id}-{check}") for c in CLIENTS for check in c.expected]


@pytest.mark.parametrize("client_id,check_id", CHECK_CASES)
def test_client_check_verdict(runs: Runs, client_id: str, check_id: str) -> None:
    client = BY_ID[client_id]
    run = runs.get(client_id)
    assert run.report is not None, run.describe()
    assert run.verdict(check_id) == client.expected[check_id], (
        f"expected {client.expected[check_id]}, got {run.verdict(check_id)}\n{run.describe(check_id)}")
    warnings = run.warnings(check_id)
    wanted = client.warns.get(check_id, ())
    if not wanted:
        assert warnings == [], run.describe(check_id)
    for rule in wanted:
        assert any(rule in w for w in warnings), f"no warning cites {rule}\n{run.describe(check_id)}"


@pytest.mark.parametrize("client_id", [c.id for c in CLIENTS])
def test_client_run_exit_code_and_checks(runs: Runs, client_id: str) -> None:
    client = BY_ID[client_id]
    run = runs.get(client_id)
    assert run.problem is None and run.report is not None, run.describe()
    assert [c["id"] for c in run.report["checks"]] == list(client.expected), run.describe()
    # Every scenario reached the scripted server: nothing is incomplete for want of a client.
    assert run.report["incompleteCauses"] == [], run.describe()
    assert run.returncode == client.exit_code() == EXIT_FOR[run.report["outcome"]], run.describe()


def test_client_matrix_is_consistent() -> None:
    """Each client states a right verdict for every check of its era and warnings only on checks
    that pass; a client of a virtualenv of its own has every package pinned there at its version."""
    for client in CLIENTS:
        assert list(client.expected) == list(era_checks(client.era)), client.id
        assert set(client.expected.values()) <= {P, F, NA, CNR}, client.id
        assert all(client.expected[c] == P for c in client.warns), client.id
        assert (HARNESSES / client.harness).is_file(), client.harness
        assert client.kind in ("npm", "python", *VENVS), client.id
        if client.kind in VENVS:
            pins = VENVS[client.kind].pins()
            assert {name: pins.get(name) for name in client.packages} == dict(client.packages), client.id


def versions_text(client: RealClient) -> str:
    return ", ".join(f"{name} {version}" for name, version in client.packages.items())



@pytest.mark.parametrize("client_id,venv,pins", [
    ("mcp-1.30", ".venv-legacy-clients", "legacy-clients-requirements.txt"),
    ("strands-mcp-2.1", ".venv-extension-clients", "extension-clients-requirements.txt"),
])
def test_a_missing_own_venv_skips_saying_how_to_make_it(monkeypatch: pytest.MonkeyPatch, client_id: str, venv: str,
                                                        pins: str) -> None:
    kind = BY_ID[client_id].kind
    assert VENVS[kind].path == HERE / venv
    absent = OwnVenv(VENVS[kind].what, HERE / "absent-venv-of-the-test", VENVS[kind].requirements)
    monkeypatch.setitem(VENVS, kind, absent)
    why = BY_ID[client_id].availability()
    assert why is not None and why.startswith(f"{absent.what} is absent: python3 -m venv tests/interop/absent-venv")
    assert f"-r tests/interop/{pins}" in why


__all__ = ["CLIENTS", "ClientRunResult", "RealClient", "era_checks", "run_client", "versions_text"]
