#!/usr/bin/env python3
"""The official MCP conformance suite as a second oracle: run it and tasks-conformance against
every HTTP extension-wire server of the interop suite and write ``docs/oracle-agreement.md``.

For each rule that both tools judge (a requirement id of ``src/tasks_conformance/core/requirements.toml``
that one of our checks cites, and that one or more checks of ``@modelcontextprotocol/conformance``
test), the table says what each tool concluded and whether they agree. Every disagreement must
be explained in ``EXPLAINED`` below (whose bug, and why, with the spec text); ``--check``
recomputes the table and exits 1 when a disagreement is unexplained or a server's verdict rows
differ from the committed file. ``tests/interop/test_official_suite.py`` runs that check.

    python scripts/oracle_table.py [--output docs/oracle-agreement.md] [--check] [--workers 3]

Needs node, ``npm ci`` in tests/interop (the suite is pinned in its package.json and lock), and
on Node 20 the loader shim ``<repo>/../shared/tools/conformance-node20/node20-compat.mjs``; the
fastmcp-tasks row needs ``pip install -e '.[interop]'``. A server that cannot run is reported,
not failed.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import contextlib
import json
import os
import queue
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
INTEROP_DIR = ROOT / "tests" / "interop"
sys.path.insert(0, str(INTEROP_DIR))

import servers  # noqa: E402  (needs the path above)

DEFAULT_OUTPUT = ROOT / "docs" / "oracle-agreement.md"

SUITE_PACKAGE = "@modelcontextprotocol/conformance"
SUITE_VERSION = "0.2.0-alpha.12"
SUITE_ENTRY = INTEROP_DIR / "node_modules" / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"
#: The suite imports fs.globSync (Node >= 22); on Node 20 this loader hook supplies it.
NODE20_SHIM = ROOT.parent / "shared" / "tools" / "conformance-node20" / "node20-compat.mjs"

#: The suite's SEP-2663 task scenarios that it runs by default ("active").
TASK_SCENARIOS = (
    "tasks-lifecycle",
    "tasks-capability-negotiation",
    "tasks-wire-fields",
    "tasks-request-state-removal",
    "tasks-mrtr-input",
    "tasks-request-headers",
    "tasks-dispatch-and-envelope",
    "tasks-required-task-error",
)
#: Scenarios about the 2026-07-28 HTTP envelope that the tasks wire rides on.
RELATED_SCENARIOS = ("server-stateless", "http-header-validation", "dns-rebinding-protection")
#: Pending (tasks-status-notifications) and draft (tasks-mrtr-composition): run with --force,
#: reported, never required.
FORCED_SCENARIOS = ("tasks-status-notifications", "tasks-mrtr-composition")
REQUIRED_SCENARIOS = TASK_SCENARIOS + RELATED_SCENARIOS
ALL_SCENARIOS = REQUIRED_SCENARIOS + FORCED_SCENARIOS

SCENARIO_TIMEOUT_S = 120.0
OUR_RUN_TIMEOUT_S = 120.0
START_TIMEOUT_S = 30.0


# ====================================================================== the official suite
def node_major() -> int | None:
    node = shutil.which("node")
    if node is None:
        return None
    try:
        out = subprocess.run([node, "--version"], capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    match = re.match(r"v(\d+)\.", out.strip())
    return int(match.group(1)) if match else None


def suite_unavailable() -> str | None:
    """None when the official suite can run here, otherwise why it cannot."""
    major = node_major()
    if major is None:
        return "node is not on PATH (or `node --version` failed)"
    manifest = SUITE_ENTRY.parent.parent / "package.json"
    try:
        installed = json.loads(manifest.read_text(encoding="utf-8")).get("version")
    except (OSError, ValueError):
        return f"{SUITE_PACKAGE} is not installed (run `npm ci` in {INTEROP_DIR})"
    if installed != SUITE_VERSION:
        return f"{SUITE_PACKAGE} is {installed}, expected {SUITE_VERSION} (run `npm ci` in {INTEROP_DIR})"
    if major < 22 and not NODE20_SHIM.is_file():
        return f"Node {major} needs the loader shim {NODE20_SHIM}, which is absent"
    return None


def suite_command(url: str, scenario: str, outdir: Path) -> list[str]:
    cmd = ["node"]
    major = node_major()
    if major is not None and major < 22:
        cmd += ["--import", NODE20_SHIM.as_uri()]
    cmd += [str(SUITE_ENTRY), "server", "--url", url, "--scenario", scenario, "-o", str(outdir)]
    if scenario in FORCED_SCENARIOS:
        cmd.append("--force")
    return cmd


@dataclass(frozen=True)
class SuiteCheck:
    scenario: str
    id: str
    status: str  # SUCCESS, FAILURE, WARNING, SKIPPED, INFO
    message: str
    #: The suite says it could not exercise the check ("Not testable: ...", details.untestable).
    untestable: bool


@dataclass
class ScenarioRun:
    scenario: str
    checks: list[SuiteCheck] = field(default_factory=list)
    problem: str | None = None
    seconds: float = 0.0


def _run_bounded(cmd: list[str], timeout: float, cwd: Path) -> tuple[int | None, str, str]:
    """Run ``cmd`` in its own process group; on timeout kill the group. Always reaped."""
    proc = subprocess.Popen(
        cmd, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "NO_COLOR": "1", "FORCE_COLOR": "0"}, start_new_session=True,
    )
    try:
        out, err = proc.communicate(timeout=timeout)
        return proc.returncode, out, err
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate(timeout=10)
        return None, out, err


def parse_checks(scenario: str, outdir: Path) -> list[SuiteCheck]:
    """The suite's ``checks.json`` (an array of check results) under ``outdir``."""
    found = sorted(outdir.glob("*/checks.json"))
    if not found:
        raise ValueError(f"no checks.json under {outdir}")
    raw = json.loads(found[-1].read_text(encoding="utf-8"))
    if not isinstance(raw, list):
        raise ValueError(f"{found[-1]} is not a JSON array")
    checks = []
    for item in raw:
        if not isinstance(item, dict) or not isinstance(item.get("id"), str):
            raise ValueError(f"unexpected entry in {found[-1]}: {item!r}"[:300])
        message = str(item.get("errorMessage") or "")
        details = item.get("details")
        untestable = message.startswith("Not testable") or (
            isinstance(details, dict) and details.get("untestable") is True
        )
        checks.append(SuiteCheck(scenario, item["id"], str(item.get("status")), message, untestable))
    return checks


def run_scenario(url: str, scenario: str, workdir: Path) -> ScenarioRun:
    outdir = workdir / scenario
    started = time.monotonic()
    code, out, err = _run_bounded(suite_command(url, scenario, outdir), SCENARIO_TIMEOUT_S, INTEROP_DIR)
    run = ScenarioRun(scenario, seconds=time.monotonic() - started)
    try:
        run.checks = parse_checks(scenario, outdir)
    except (OSError, ValueError) as exc:
        run.problem = f"{exc} (exit {code}); stderr: {err[-400:]!r}; stdout: {out[-400:]!r}"
    if code is None:
        run.problem = f"the suite did not finish within {SCENARIO_TIMEOUT_S:.0f}s; killed"
    return run


def run_suite(url: str, scenarios: tuple[str, ...], workdir: Path, workers: int = 3) -> dict[str, ScenarioRun]:
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        futures = {s: pool.submit(run_scenario, url, s, workdir) for s in scenarios}
        return {s: f.result() for s, f in futures.items()}


# ====================================================================== the servers
@contextlib.contextmanager
def reference_http(timeout: float = START_TIMEOUT_S) -> Iterator[str]:
    """``tasks-conformance serve-reference --transport http`` on an ephemeral port; yields its URL."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "tasks_conformance", "serve-reference", "--transport", "http", "--port", "0"],
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
        start_new_session=True,
    )
    lines: queue.Queue[str | None] = queue.Queue()

    def pump() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.put(line)
        lines.put(None)

    threading.Thread(target=pump, daemon=True).start()
    try:
        try:
            line = lines.get(timeout=timeout)
        except queue.Empty:
            line = None
        if not line or not line.startswith("READY "):
            raise RuntimeError(f"serve-reference printed no READY line within {timeout}s: {line!r}")
        yield line.split(None, 1)[1].strip()
    finally:
        servers.stop(proc)


@contextlib.contextmanager
def interop_http(server: servers.InteropServer) -> Iterator[str]:
    proc, url = servers.spawn_http(server, timeout=START_TIMEOUT_S)
    try:
        yield url
    finally:
        servers.stop(proc)


@dataclass(frozen=True)
class OurRun:
    """One tasks-conformance run: the tool it probes and the checks it selects (None: all)."""

    id: str
    tool: str
    args: Mapping[str, Any] = field(default_factory=dict)
    input_responses: Mapping[str, Any] | None = None
    checks: tuple[str, ...] | None = None


ELICIT_ACCEPT = {"action": "accept", "content": {"confirm": True}}


def our_runs(task: tuple[str, Mapping[str, Any]], required: tuple[str, Mapping[str, Any]],
             input_key: str) -> tuple[OurRun, ...]:
    return (
        OurRun("main", task[0], task[1]),
        OurRun("required", required[0], required[1],
               checks=("tasks-undeclared-creation-refused", "tasks-undeclared-capability-names-requirements")),
        OurRun("tool-error", "failing_job", {}, checks=("tasks-status-payload-shape", "tasks-inline-result")),
        OurRun("protocol-error", "protocol_error_job", {},
               checks=("tasks-status-payload-shape", "tasks-inline-result")),
        OurRun("input", "confirm_delete", {"filename": "oracle.txt"}, {input_key: ELICIT_ACCEPT},
               checks=("tasks-status-payload-shape", "tasks-input-required-update-completes")),
    )


@dataclass(frozen=True)
class Target:
    """An HTTP extension-wire server both oracles judge."""

    name: str
    title: str
    start: Callable[[], contextlib.AbstractContextManager[str]]
    runs: tuple[OurRun, ...]
    unavailable: Callable[[], str | None] = lambda: None


TARGETS: tuple[Target, ...] = (
    Target(
        "reference",
        "tasks-conformance serve-reference --transport http",
        reference_http,
        our_runs(("slow_compute", {"seconds": 0.5}), ("long_job", {"durationMs": 200}), "confirm-1"),
    ),
    Target(
        "fastmcp-tasks",
        "tests/interop/servers/fastmcp_tasks_server.py http (fastmcp-tasks 4.1.4)",
        lambda: interop_http(servers.FASTMCP_TASKS),
        # fastmcp-tasks mints its own inputRequests keys; tasks-conformance matches "confirm".
        our_runs(("slow_compute", {"seconds": 0.5}), ("required_compute", {"seconds": 0.2}), "confirm"),
        servers.FASTMCP_TASKS.available,
    ),
)
BY_NAME = {t.name: t for t in TARGETS}


def run_ours(url: str, run: OurRun) -> dict[str, Any]:
    """Our verdicts of one run: check id -> the check's JSON (status, skipReason, message)."""
    cmd = [sys.executable, "-m", "tasks_conformance", "--url", url, "--format", "json", "--expect-wire", "extension",
           "--timeout", "8000", "--poll-timeout", "20000",
           "--tool-name", run.tool, "--tool-args", json.dumps(dict(run.args))]
    if run.input_responses is not None:
        cmd += ["--input-responses", json.dumps(dict(run.input_responses))]
    for check_id in run.checks or ():
        cmd += ["--check-id", check_id]
    code, out, err = _run_bounded(cmd, OUR_RUN_TIMEOUT_S, ROOT)
    try:
        report = json.loads(out)
    except ValueError:
        raise RuntimeError(f"tasks-conformance ({run.id}) gave no JSON report (exit {code}): {err[-400:]!r}") from None
    return {c["id"]: c for c in report.get("checks", [])}


# ====================================================================== rules both oracles judge
@dataclass(frozen=True)
class Rule:
    id: str  # our requirement id (requirements.toml)
    text: str
    official: tuple[tuple[str, str], ...]  # (scenario, check id)
    ours: tuple[tuple[str, str], ...]  # (our run id, check id)
    note: str = ""


RULES: tuple[Rule, ...] = (
    Rule("S-EXT-MUST-26", "The extension is declared in server/discover, never as capabilities.tasks",
         (("tasks-capability-negotiation", "tasks-extension-advertised"),),
         (("main", "tasks-declaration-hygiene"),)),
    Rule("S-EXT-MUST-01", "A tools/call that did not declare the extension never gets a CreateTaskResult",
         (("tasks-capability-negotiation", "sep-2663-server-rejects-undeclared-client"),),
         (("main", "tasks-undeclared-creation-refused"),)),
    Rule("S-EXT-MUST-02", "A task-only tool called without the extension: -32021 naming the extension",
         (("tasks-required-task-error", "sep-2663-server-returns-missing-capability-when-required"),
          ("tasks-required-task-error", "sep-2663-server-returns-missing-capability-data-shape")),
         (("required", "tasks-undeclared-creation-refused"),
          ("required", "tasks-undeclared-capability-names-requirements")),
         "the suite calls failing_job (its fixture says: registered task-required); we call the target's "
         "task-required tool (long_job / required_compute)"),
    Rule("S-EXT-MUST-03", "A created task is a flat CreateTaskResult with resultType \"task\"",
         (("tasks-lifecycle", "sep-2663-result-type-task-on-create"),),
         (("main", "tasks-result-type-discipline"),)),
    Rule("S-EXT-MUST-04", "No other result says resultType \"task\" (a synchronous tools/call says \"complete\")",
         (("tasks-lifecycle", "tasks-sync-tool-call"),
          ("tasks-capability-negotiation", "sep-2663-server-rejects-undeclared-client")),
         (("main", "tasks-result-type-discipline"), ("main", "tasks-undeclared-creation-refused"))),
    Rule("S-EXT-MUST-05", "A tasks/get straight after the CreateTaskResult finds the task",
         (("tasks-dispatch-and-envelope", "sep-2663-durable-create-strong-consistency"),),
         (("main", "tasks-status-payload-shape"),)),
    Rule("S-EXT-MUST-06", "Task objects carry ttlMs (integer or null) and pollIntervalMs, not ttl / pollInterval",
         (("tasks-wire-fields", "tasks-wire-field-renames"),),
         (("main", "tasks-ttl-shape"), ("main", "tasks-ttl-integer-shape"), ("main", "tasks-result-type-discipline"))),
    Rule("S-EXT-MUST-07", "tasks/get (and the tasks/* acks) answer resultType \"complete\"",
         (("tasks-dispatch-and-envelope", "tasks-result-type-complete-on-non-task-responses"),),
         (("main", "tasks-status-payload-shape"), ("main", "tasks-cancel-ack-shape"))),
    Rule("S-EXT-MUST-09", "An input_required task lists its outstanding requests in inputRequests",
         (("tasks-mrtr-input", "sep-2663-tasks-get-status-input-required"),
          ("tasks-mrtr-input", "tasks-mrtr-partial-fulfillment")),
         (("input", "tasks-status-payload-shape"), ("input", "tasks-input-required-update-completes"))),
    Rule("S-EXT-MUST-10", "A completed task's tasks/get inlines the tool's result",
         (("tasks-lifecycle", "sep-2663-tasks-get-status-completed"),),
         (("main", "tasks-inline-result"),)),
    Rule("S-EXT-MUST-12", "A failed task's tasks/get inlines the JSON-RPC error (and no result)",
         (("tasks-lifecycle", "sep-2663-tasks-get-status-failed"),),
         (("protocol-error", "tasks-inline-result"), ("protocol-error", "tasks-status-payload-shape"))),
    Rule("S-EXT-MUST-13", "A tool's isError result completes the task (status completed, result.isError)",
         (("tasks-lifecycle", "sep-2663-tool-error-uses-completed-status"),),
         (("tool-error", "tasks-inline-result"),)),
    Rule("S-EXT-MUST-15", "tasks/update is acked with an empty {resultType: \"complete\"}; the task goes on",
         (("tasks-mrtr-input", "tasks-mrtr-tasks-update-resumes"),),
         (("input", "tasks-input-required-update-completes"),)),
    Rule("S-EXT-MUST-16", "tasks/cancel is acked with an empty {resultType: \"complete\"}, terminal tasks too",
         (("tasks-lifecycle", "sep-2663-cancel-ack-empty-result"),
          ("tasks-lifecycle", "tasks-cancel-terminal-idempotent-ack")),
         (("main", "tasks-cancel-ack-shape"),)),
    Rule("S-EXT-MUST-17", "tasks/get on an unknown taskId answers -32602",
         (("tasks-dispatch-and-envelope", "sep-2663-tasks-get-invalid-task-id-32602"),),
         (("main", "tasks-invalid-task-id-rejected"),)),
    Rule("S-EXT-MUST-18", "tasks/get, tasks/update and tasks/cancel without the extension answer -32021",
         (("tasks-capability-negotiation", "sep-2663-tasks-methods-non-declaring"),),
         (("main", "tasks-undeclared-capability-rejected"),)),
    Rule("S-EXT-MUST-35", "Over HTTP, a tasks/* request whose Mcp-Name is not its taskId: 400, -32020",
         (("tasks-request-headers", "sep-2663-server-rejects-mismatched-mcp-name-on-tasks-get"),
          ("tasks-request-headers", "sep-2663-routing-headers-accepted-on-tasks-get")),
         (("main", "tasks-mcp-name-routing"),)),
    Rule("S-CORE-MUST-06", "Over HTTP, an Mcp-Method that disagrees with the body: 400, -32020",
         (("tasks-request-headers", "tasks-headers-reject-mismatched-method"),),
         (("main", "tasks-mcp-name-routing"),),
         "the suite sends the wrong Mcp-Method on a tools/call, we on a tasks/get"),
)

#: Rules the official suite judges that none of our checks does (for the record; not compared).
OFFICIAL_ONLY: tuple[tuple[str, str], ...] = (
    ("S-EXT-MUST-24", "tasks/result answers -32601 (tasks-dispatch-and-envelope)"),
    ("S-EXT-MUST-29", "tasks/list answers -32601 (tasks-dispatch-and-envelope)"),
    ("S-EXT-MUST-25", "a legacy params.task on a synchronous tool is ignored (tasks-dispatch-and-envelope)"),
    ("S-CORE-MUST-02/03/09", "the per-request _meta, version negotiation and 404 rules (server-stateless)"),
    ("S-CORE-MUST-14", "a foreign Origin/Host is refused (dns-rebinding-protection)"),
    ("—", "requestState absent from task shapes (tasks-request-state-removal); ttl not expired early "
          "(tasks-wire-fields); MRTR before a task (tasks-mrtr-composition, draft)"),
)
#: Our checks that the official suite does not judge (its status-notifications scenario is pending).
OURS_ONLY = ("tasks-wire-framing", "tasks-subscription-notifications (S-EXT-MUST-30/31, S-CORE-MUST-12)")

#: Whose a disagreement is: "fixture" (the server under test lacks the suite's fixture tool, or
#: defines it differently, so the suite's check exercised something else), "suite" (the suite
#: judges against the spec), "ours" (a tasks-conformance bug, to be fixed in the checks).
Whose = str
_FIXTURE_LABEL = (
    "The suite calls slow_compute with {seconds, label} (tasks-lifecycle, tasks-wire-fields, "
    "tasks-request-headers, tasks-dispatch-and-envelope); the interop server's slow_compute(seconds) has no "
    "`label` parameter, so fastmcp answers a synchronous CallToolResult with isError: true ('label: Unexpected "
    "keyword argument') and the suite never sees a task. With {seconds} alone it returns a flat "
    "CreateTaskResult (ttlMs 900000, pollIntervalMs 200), which is what tasks-conformance judged. "
    "Fix: give the interop server's slow_compute a `label: str = \"\"` parameter."
)

#: Why a disagreement is not (or is) a bug of tasks-conformance: (target, rule id) -> (whose, why).
EXPLAINED: dict[tuple[str, str], tuple[Whose, str]] = {
    ("fastmcp-tasks", "S-EXT-MUST-03"): ("fixture", _FIXTURE_LABEL),
    ("fastmcp-tasks", "S-EXT-MUST-05"): ("fixture", "As S-EXT-MUST-03: no task was created for the suite to get."),
    ("fastmcp-tasks", "S-EXT-MUST-06"): (
        "fixture", "As S-EXT-MUST-03: the suite read ttlMs from the isError validation result, which has none."),
    ("fastmcp-tasks", "S-EXT-MUST-16"): ("fixture", "As S-EXT-MUST-03: 'slow_compute did not create a task'."),
    ("fastmcp-tasks", "S-EXT-MUST-35"): ("fixture", "As S-EXT-MUST-03: 'slow_compute did not create a task'."),
    ("fastmcp-tasks", "S-EXT-MUST-09"): (
        "fixture",
        "tasks-mrtr-partial-fulfillment calls multi_input (two inputRequests at once), which the interop server "
        "does not define ('multi_input did not create a task'); the suite's single-input check on confirm_delete "
        "passes, as ours does.",
    ),
    ("fastmcp-tasks", "S-EXT-MUST-02"): (
        "fixture",
        "The suite's tasks-required-task-error says 'failing_job — registered with task support declared as "
        "required'; the interop server registers failing_job optional, so without the extension it rightly runs "
        "synchronously (SEP-2663: a server returns -32021 only 'if a server is unable to service a request to a "
        "client that does not declare this extension capability without returning CreateTaskResult'). Our run "
        "uses the server's task-required tool (required_compute) and sees -32021 with "
        "data.requiredCapabilities.extensions naming the extension.",
    ),
}


# ====================================================================== verdicts and the table
PASS, FAIL, NONE = "pass", "fail", "—"
WHOSE = {
    "fixture": "fixture mismatch: the suite judged a different call, not the rule",
    "suite": "the official suite's error",
    "ours": "a tasks-conformance bug",
}


def official_verdict(rule: Rule, suite: Mapping[str, ScenarioRun]) -> tuple[str, list[str]]:
    seen: list[str] = []
    for scenario, check_id in rule.official:
        run = suite.get(scenario)
        for check in run.checks if run is not None else ():
            if check.id != check_id:
                continue
            if check.status in ("SUCCESS", "WARNING"):
                seen.append(PASS)
            elif check.status == "FAILURE" and not check.untestable:
                seen.append(FAIL)
    return (FAIL if FAIL in seen else PASS if PASS in seen else NONE), seen


_RULE_IDS = re.compile(r"\b(S-(?:EXT|CORE|LEG)-(?:MUST|SHOULD|MAY)-|S-WIRE-)(\d+)((?:/\d+)*)")


def cited_rules(message: str) -> set[str]:
    """Rule ids a message cites; "S-EXT-MUST-18/19" cites both."""
    cited = set()
    for prefix, first, more in _RULE_IDS.findall(message):
        cited.update(prefix + number for number in [first, *more.split("/")[1:]])
    return cited


def our_verdict(rule: Rule, ours: Mapping[str, Mapping[str, Any]]) -> str:
    """Our verdict on ``rule``. One check judges several rules; a failure whose message cites
    rule ids (our messages name the rule they apply, e.g. "(S-EXT-MUST-16)") counts only
    against the rules it cites, so it says nothing about this one when it cites others."""
    seen: list[str] = []
    for run_id, check_id in rule.ours:
        check = ours.get(run_id, {}).get(check_id)
        if not isinstance(check, dict):
            continue
        if check.get("status") == "passed":
            seen.append(PASS)
        elif check.get("status") == "failed":
            cited = cited_rules(str(check.get("message") or ""))
            if not cited or rule.id in cited:
                seen.append(FAIL)
    return FAIL if FAIL in seen else PASS if PASS in seen else NONE


def agreement(official: str, ours: str) -> str:
    if NONE in (official, ours):
        return "not compared"
    return "agree" if official == ours else "DISAGREE"


@dataclass(frozen=True)
class Row:
    rule: Rule
    official: str
    ours: str

    @property
    def agreement(self) -> str:
        return agreement(self.official, self.ours)


def rows_for(suite: Mapping[str, ScenarioRun], ours: Mapping[str, Mapping[str, Any]]) -> list[Row]:
    return [Row(rule, official_verdict(rule, suite)[0], our_verdict(rule, ours)) for rule in RULES]


def unexplained(target: str, rows: list[Row]) -> list[Row]:
    return [r for r in rows if r.agreement == "DISAGREE" and (target, r.rule.id) not in EXPLAINED]


def scenario_summary(suite: Mapping[str, ScenarioRun]) -> str:
    parts = []
    for scenario in ALL_SCENARIOS:
        run = suite.get(scenario)
        if run is None:
            continue
        if run.problem:
            parts.append(f"{scenario} (did not run)")
            continue
        passed = sum(c.status == "SUCCESS" for c in run.checks)
        judged = sum(c.status != "SKIPPED" for c in run.checks)
        forced = " (forced)" if scenario in FORCED_SCENARIOS else ""
        parts.append(f"{scenario} {passed}/{judged}{forced}")
    return ", ".join(parts)


def render_target(target: Target, rows: list[Row], suite: Mapping[str, ScenarioRun]) -> str:
    lines = [
        f"## {target.name}",
        "",
        f"`{target.title}`. Official suite, checks passed of those it judged (skipped ones left out): "
        f"{scenario_summary(suite)}.",
        "",
        "| Rule | What | Official checks | Official | Our checks | Ours | Agreement |",
        "|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        off = "<br>".join(f"{s}: `{c}`" for s, c in row.rule.official)
        our = "<br>".join(f"{r}: `{c}`" for r, c in row.rule.ours)
        mark = row.agreement
        if mark == "DISAGREE":
            known = EXPLAINED.get((target.name, row.rule.id))
            mark += f": {known[0]} (see below)" if known else " (UNEXPLAINED)"
        lines.append(f"| {row.rule.id} | {row.rule.text} | {off} | {row.official} | {our} | {row.ours} | {mark} |")
    notes = [(row.rule.id, *EXPLAINED[(target.name, row.rule.id)]) for row in rows
             if row.agreement == "DISAGREE" and (target.name, row.rule.id) in EXPLAINED]
    if notes:
        lines += ["", "Disagreements:", ""]
        lines += [f"- **{rule_id}** ({WHOSE[whose]}): {text}" for rule_id, whose, text in notes]
    return "\n".join(lines) + "\n"


def render(sections: Mapping[str, str], skipped: Mapping[str, str]) -> str:
    counts = [line for text in sections.values() for line in text.splitlines() if line.startswith("| S-")]
    agree = sum("| agree |" in line for line in counts)
    disagree = sum("DISAGREE" in line for line in counts)
    out = [
        "# Two oracles: the official MCP conformance suite and tasks-conformance",
        "",
        "Generated by `python scripts/oracle_table.py` (checked by `tests/interop/test_official_suite.py`, "
        "which fails on a disagreement not explained here). Do not edit by hand.",
        "",
        f"The official suite is `{SUITE_PACKAGE}` {SUITE_VERSION} (pinned in `tests/interop/package.json`), "
        "run scenario by scenario (`server --url … --scenario …`; its own results file `checks.json` is "
        "parsed). tasks-conformance runs five times per server: the optional task tool with every check, "
        "then the task-required tool, failing_job, protocol_error_job and confirm_delete with the checks "
        "each one exercises. A rule row compares the verdicts both tools reach on it; `—` means that tool "
        "did not judge it (skipped, not applicable, the suite's own \"Not testable\", or one of our checks "
        "that failed citing only other rules). A suite check passes on SUCCESS or WARNING.",
        "",
        f"Summary: {agree} rule verdicts agree, {disagree} disagree (each explained below its table), over "
        f"{len(sections)} server(s). Disagreements that are a tasks-conformance bug: "
        f"{sum(w == 'ours' for w, _ in EXPLAINED.values()) or 'none'}; that are the official suite's: "
        f"{sum(w == 'suite' for w, _ in EXPLAINED.values()) or 'none'}; the rest are fixture mismatches "
        "(the server lacks or differs from the suite's fixture tool, so the suite's check never reached the rule).",
        "",
    ]
    for text in sections.values():
        out += [text]
    for name, why in skipped.items():
        out += [f"## {name}", "", f"Not run here: {why}", ""]
    out += ["## Judged by one oracle only", "", "Only the official suite:", ""]
    out += [f"- {rule_id}: {text}" for rule_id, text in OFFICIAL_ONLY]
    out += ["", "Only tasks-conformance:", ""]
    out += [f"- {text}" for text in OURS_ONLY]
    return "\n".join(out) + "\n"


@dataclass
class TargetResult:
    target: Target
    suite: dict[str, ScenarioRun]
    ours: dict[str, dict[str, Any]]
    rows: list[Row]
    seconds: float

    @property
    def section(self) -> str:
        return render_target(self.target, self.rows, self.suite)


def judge_target(target: Target, workdir: Path, workers: int = 3,
                 suite: dict[str, ScenarioRun] | None = None) -> TargetResult:
    """Start the target once; run the official suite (unless given) and our runs against it."""
    started = time.monotonic()
    with target.start() as url, concurrent.futures.ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        scenario_f = {} if suite is not None else {
            scenario: pool.submit(run_scenario, url, scenario, workdir / target.name) for scenario in ALL_SCENARIOS
        }
        ours_f = {run.id: pool.submit(run_ours, url, run) for run in target.runs}
        ours = {run_id: f.result() for run_id, f in ours_f.items()}
        if suite is None:
            suite = {scenario: f.result() for scenario, f in scenario_f.items()}
    return TargetResult(target, suite, ours, rows_for(suite, ours), time.monotonic() - started)


# ====================================================================== the broken fixtures (--broken)
#: fixtures/broken_server.py variants that break a rule of the extension wire (each breaks one).
BROKEN_VARIANTS = (
    "32021-without-data", "bad-timestamps", "cancel-returns-task", "cancel-rewrites-terminal",
    "create-result-type-complete", "create-without-declaration", "draft-32003", "get-result-type-task",
    "ignore-mcp-method", "ignore-mcp-name", "isError-failed", "legacy-caps-in-discover", "legacy-ttl-names",
    "listen-missing-subscription-id", "nested-create", "no-inline-result", "required-undeclared-sync",
    "status-not-a-string", "ttl-not-integer", "undeclared-get-allowed", "unknown-id-wrong-code",
    "update-never-completes",
)
BROKEN_START, BROKEN_END = "<!-- broken-fixtures:start -->", "<!-- broken-fixtures:end -->"
#: Checks the suite skips on every server built on the reference (not a verdict).
_SUITE_NOISE = {"sep-2575-server-sends-prompts-list-changed-on-subscription",
                "sep-2575-server-sends-tools-list-changed-on-subscription", "tasks-status-notifications"}

#: Where only one oracle catches a break, and why (variant -> (whose, why)).
BROKEN_EXPLAINED: dict[str, tuple[Whose, str]] = {
    "32021-without-data": (
        "suite",
        "caught by both, but tasks-required-task-error's data-shape check reports a -32021 without data "
        "as INFO ('data is SHOULD'), while the 2026-07-28 schema's MissingRequiredClientCapabilityError "
        "has `\"required\": [\"code\", \"data\"]` and data `\"required\": [\"requiredCapabilities\"]`; "
        "the suite's own wire-schema-valid check (and server-stateless) do fail it, so the data-shape "
        "check should too. Ours fails it (policy P-13).",
    ),
    "cancel-rewrites-terminal": (
        "suite",
        "tasks-cancel-terminal-idempotent-ack checks only the ack's shape, never the status afterwards; "
        "SEP-2663's state diagram makes completed, failed and cancelled terminal (S-EXT-MUST-32), which ours "
        "checks with a tasks/get after the cancel.",
    ),
    "ignore-mcp-method": (
        "suite",
        "the suite sends a mismatched Mcp-Method only on tools/call (tasks-headers-reject-mismatched-method); "
        "SEP-2663 'Streamable HTTP: Routing Headers' and SEP-2243 'servers that process the request body MUST "
        "validate that header values match the body' apply to tasks/* as well, which ours probes.",
    ),
    "listen-missing-subscription-id": (
        "suite",
        "the suite's tasks-status-notifications scenario is pending (it skips itself: 'the harness needs a "
        "rewrite'); ours judges the subscriptions/listen stream (S-EXT-MUST-30).",
    ),
    "isError-failed": (
        "ours (limit)",
        "the suite knows from its fixture contract that failing_job 'always returns a tool execution error'; "
        "from outside, ours cannot tell an isError turned into failed from a raised JSON-RPC error. For an "
        "optional tool it warns (it compares with the same call made synchronously); failing_job is "
        "task-required here, so there is no synchronous call to compare and tasks-inline-result passes "
        "silently. Suggestion for the checks: when the synchronous comparison is impossible, say so "
        "(a warning or could-not-run for S-EXT-MUST-13) instead of a plain pass.",
    ),
    "required-undeclared-sync": (
        "ours (limit)",
        "on the extension wire tools carry no execution.taskSupport, so ours cannot know that long_job is "
        "task-only and accepts a synchronous answer to the undeclared call; the suite knows it from its "
        "fixture contract (failing_job 'registered with task support declared as required').",
    ),
}


def _broken_http(variant: str) -> Callable[[], contextlib.AbstractContextManager[str]]:
    @contextlib.contextmanager
    def start() -> Iterator[str]:
        proc = subprocess.Popen(
            [sys.executable, str(ROOT / "fixtures" / "broken_server.py"), "--break", variant,
             "--transport", "http", "--port", "0"],
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
            start_new_session=True,
        )
        try:
            lines: queue.Queue[str] = queue.Queue()
            threading.Thread(target=lambda: lines.put(proc.stdout.readline() if proc.stdout else ""),
                             daemon=True).start()
            line = lines.get(timeout=START_TIMEOUT_S)
            if not line.startswith("READY "):
                raise RuntimeError(f"broken_server --break {variant}: {line!r}")
            yield line.split(None, 1)[1].strip()
        finally:
            servers.stop(proc)

    return start


def render_broken(workdir: Path, workers: int) -> str:
    """Both oracles on every extension-wire variant of fixtures/broken_server.py: who catches the break."""
    lines = [
        BROKEN_START,
        "## Both oracles on the broken fixtures",
        "",
        "`python scripts/oracle_table.py --broken` (not part of the test; slow): every extension-wire variant of "
        "`fixtures/broken_server.py` over HTTP, the same runs as above. A column lists what failed: the suite's "
        "failing checks (its \"Not testable\" and the checks it skips left out) and ours.",
        "",
        "| Variant | Official suite fails | tasks-conformance fails | Caught by |",
        "|---|---|---|---|",
    ]
    notes: list[str] = []
    for variant in BROKEN_VARIANTS:
        target = Target(variant, variant, _broken_http(variant), TARGETS[0].runs)
        result = judge_target(target, workdir, workers)
        official = sorted({c.id for r in result.suite.values() for c in r.checks
                           if c.status == "FAILURE" and not c.untestable and c.id not in _SUITE_NOISE})
        ours = sorted({c for run in result.ours.values() for c, v in run.items() if v.get("status") == "failed"})
        caught = "both" if official and ours else "official only" if official else "ours only" if ours else "neither"
        known = BROKEN_EXPLAINED.get(variant)
        if known:
            notes.append(f"- **{variant}** ({caught}; {known[0]}): {known[1]}")
        lines.append(f"| `{variant}` | {', '.join(f'`{c}`' for c in official) or '—'} | "
                     f"{', '.join(f'`{c}`' for c in ours) or '—'} | {caught} |")
        print(f"{variant}: {caught} ({result.seconds:.0f}s)", file=sys.stderr)
    if notes:
        lines += ["", "Where the oracles part (only one catches the break, or one judges it wrongly):", "", *notes]
    return "\n".join([*lines, BROKEN_END]) + "\n"


def kept_broken_section(path: Path) -> str:
    text = path.read_text(encoding="utf-8") if path.is_file() else ""
    start, end = text.find(BROKEN_START), text.find(BROKEN_END)
    return text[start:end + len(BROKEN_END)] + "\n" if 0 <= start < end else ""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--output", type=Path, default=DEFAULT_OUTPUT)
    parser.add_argument("--check", action="store_true",
                        help="do not write: exit 1 on an unexplained disagreement or rows that differ from --output")
    parser.add_argument("--workers", type=int, default=3)
    parser.add_argument("--target", action="append", choices=list(BY_NAME),
                        help="only this server (repeatable; writing then leaves the others out)")
    parser.add_argument("--broken", action="store_true",
                        help="also run both oracles on the broken fixtures and rewrite that section (slow)")
    args = parser.parse_args(argv)
    why = suite_unavailable()
    if why is not None:
        print(f"oracle_table: the official suite cannot run: {why}", file=sys.stderr)
        return 2
    sections: dict[str, str] = {}
    skipped: dict[str, str] = {}
    problems: list[str] = []
    broken = kept_broken_section(args.output)
    with tempfile.TemporaryDirectory(prefix="oracle-") as tmp:
        if args.broken and not args.check:
            broken = render_broken(Path(tmp) / "broken", args.workers)
        for target in TARGETS:
            if args.target and target.name not in args.target:
                continue
            reason = target.unavailable()
            if reason is not None:
                skipped[target.name] = reason
                continue
            result = judge_target(target, Path(tmp), args.workers)
            sections[target.name] = result.section
            problems += [f"{target.name}: {s}: {r.problem}" for s, r in result.suite.items() if r.problem]
            problems += [f"{target.name}: {r.rule.id}: official {r.official}, ours {r.ours}, not explained"
                         for r in unexplained(target.name, result.rows)]
            print(f"{target.name}: {result.seconds:.1f}s", file=sys.stderr)
    if args.check:
        committed = args.output.read_text(encoding="utf-8") if args.output.is_file() else ""
        for name, text in sections.items():
            if text not in committed:
                problems.append(f"{name}: the verdict rows differ from {args.output} (regenerate it)")
        for problem in problems:
            print(f"oracle_table --check: {problem}", file=sys.stderr)
        return 1 if problems else 0
    for problem in problems:
        print(f"oracle_table: {problem}", file=sys.stderr)
    args.output.write_text(render(sections, skipped) + ("\n" + broken if broken else ""), encoding="utf-8")
    print(f"wrote {args.output}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
