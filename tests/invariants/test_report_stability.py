"""A refactor changes no verdict: the JSON report of the reference server and of every breaking
fixture, on both wires and every transport the tests use, is the same as the one recorded before
the change (tests/data/reports-before/), except for what varies between two identical runs.

Each case is one `python -m tasks_conformance ... --format json` run, as a user runs it, with the
target invocation and flags tests/e2e/server/test_breaking_fixtures.py (and the demo, for the reference
server) uses for it. Its report is normalised (`normalise`) and compared with the recorded file.
`scripts/record_reports.py --src OLD_TREE/src` records the files with the same cases, runner and
normaliser (this module), so a recording and a comparison differ only in the code under test.

What the normaliser masks, and why (each varies between two runs of the same code):
- `durationMs`, `startedAt`, and ms figures inside texts ("(212 ms)", "after 312 ms", "within
  1502 ms"): times. A bound stated with its flag ("--poll-timeout 3000 ms") is kept.
- task ids, subscription ids, session ids (read from the run's wire log and replaced wherever they
  appear, base64-wrapped too), UUIDs and RFC 3339 timestamps: the server makes them up per run;
  "about 143 bits vary" between random task ids.
- frame sequence numbers and poll numbers (`evidence`, `evidenceFrames`, "frames 12, 15", "#12",
  "tasks/get 3"): probes run concurrently, so frames interleave differently. The frame lists are
  dropped (they are what was seen, not a verdict, and the bulk of a report).
- how much traffic a run saw ("all 36 inbound frames", "31 outbound requests", "2 tasks/get
  results", "1 tagged notifications/tasks"), and a finding repeated once per poll or frame ("X; X"
  in a text, ["X", "X"] in details, said once): how many polls a task takes is timing.
- three timing-dependent phrases (_PHRASES): whether the end's status notification came before
  the later reads, which of two observations proves a legacy tasks/result was sent early, and
  which intermediate statuses a poll caught ("statuses seen: ...").
- 127.0.0.1 ports, the source tree's path, the interpreter's path, temp paths: per machine/run.
- `toolVersion` (changes by design with a release); a requirement's wording and URL (from
  requirements.toml: "ID (LEVEL)" is kept, with `requirementIds`).
Everything else a verdict is made of is kept: each check's id, category, status, skipReason,
message, warnings, requirements, requirementIds, policies, details; the run's outcome,
incompleteReason, incompleteCauses, counts, score, summary, categorySummary and discovery.

Cases whose report still differs between identical runs of the same code (measured while
recording: every case ran 3 times, then twice more against the recording) are listed in FLAKY
with what varies and why; only those parts are left out of their comparison, never silently.
"""

from __future__ import annotations

import difflib
import json
import os
import queue
import re
import shlex
import subprocess
import sys
import tempfile
import threading
import time
import warnings
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from helpers.groups import starts_all_cases
from helpers.paths import ROOT

RECORDED = ROOT / "tests" / "data" / "reports-before"
# Every run is bounded by the tool's own deadlines (--timeout 5 s per request, --poll-timeout 3 s
# here, a handful of requests in turn); a run still going after RUN_TIMEOUT_S has hung.
RUN_TIMEOUT_S = 180
WORKERS = 4  # most of a run is waiting on a server's task and poll interval: 4 keep 2 cores busy
# A case whose report differs in the pool runs again on its own, up to this many times, and fails
# only if it differs every time. The pool's runs share two cores with each other and with the rest
# of a --full run, and on a loaded machine a 150 ms task can end before its first progress
# notification or before a cancel reaches it (both seen in fresh-clone CIs on 2026-12-07): the
# tool's verdict on that run is right, the recorded one was of a run where timing went the other
# way. A change of verdict the code makes differs on every rerun; one that passes on a rerun is
# reported as a warning, so that what load can change stays in sight.
QUIET_RERUNS = 2
pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]

# ---------------------------------------------------------------------------------------------
# The cases: run settings as tests/e2e/server/test_breaking_fixtures.py writes them, with its defaults.

DEMO_INPUT = '{"confirm-1": {"action": "accept", "content": {"confirm": true}}}'
ROLE_PROBES = ["required=long_job", "tool-error=tool_error", "fault=rpc_error", "sync=echo"]  # the demo's

# The settings of the recorded runs, frozen with the recording (tests/e2e/server/test_breaking_fixtures.py's
# may change; a recorded case must be run again exactly as it was recorded).
EXT = {"tool_name": "slow_compute"}
EXT_INPUT = {"tool_name": "confirm_action", "input_responses": DEMO_INPUT}
EXT_REQUIRED = {"tool_name": "long_job"}
LEGACY = {"protocol_version": "2025-11-25"}
LEGACY_INPUT = {"protocol_version": "2025-11-25", "tool_name": "confirm_action", "input_responses": DEMO_INPUT}
EXT_ROLES = {"tool_name": "slow_compute", "probes": ["required=long_job", "tool-error=tool_error", "fault=rpc_error"]}
EXT_CANCEL_RUNNING = {"tool_name": "slow_compute", "tool_args": '{"durationMs": 8000}', "poll_timeout_ms": 1_000}
LEGACY_ROLES = {**LEGACY, "tool_name": "slow_compute", "probes": ["tool-error=tool_error", "fault=rpc_error"]}
HOSTILE_WORK = {"tool_name": "work"}
TOKENS = {**EXT, "access_token": "fixture-main-token", "other_access_token": "fixture-other-token"}
TOOL_ERROR = {"tool_name": "tool_error"}
LEGACY_TOOL_ERROR = {**LEGACY, "tool_name": "tool_error"}
# The demo's flags (cli.demo_options), with the tool's own default deadlines, on each wire pinned.
DEMO = {"tool_name": "confirm_action", "input_responses": DEMO_INPUT, "probes": ROLE_PROBES,
        "timeout_ms": None, "poll_timeout_ms": None}
DEMO_LEGACY = {**DEMO, "protocol_version": "2025-11-25"}
DEMO_EXT = {**DEMO, "protocol_version": "2026-07-28"}
# tests/e2e/server/test_probe_roles.py and test_polling.py (variants test_breaking_fixtures.py does not run)
FAULT_ONLY = {"tool_name": "slow_compute", "probes": ["fault=rpc_error"], "check_ids": ["tasks-fault-outcome"]}
LEGACY_FAULT_ONLY = {**LEGACY, **FAULT_ONLY}
SLOW_POLL = {"tool_name": "slow_compute", "poll_timeout_ms": 1_000}

SETTINGS: dict[str, dict[str, Any]] = {
    "extension": EXT, "extension-input": EXT_INPUT, "extension-required": EXT_REQUIRED, "legacy": LEGACY,
    "legacy-input": LEGACY_INPUT, "extension-roles": EXT_ROLES, "extension-cancel-running": EXT_CANCEL_RUNNING,
    "legacy-roles": LEGACY_ROLES, "hostile-work": HOSTILE_WORK, "tokens": TOKENS, "tool-error": TOOL_ERROR,
    "legacy-tool-error": LEGACY_TOOL_ERROR, "demo-legacy": DEMO_LEGACY, "demo-extension": DEMO_EXT,
    "fault-only": FAULT_ONLY, "legacy-fault-only": LEGACY_FAULT_ONLY, "slow-poll": SLOW_POLL,
}

# (server: "reference", a broken_server.py --break variant, or hostile:CASE; settings; transport)
_RUNS: list[tuple[str, str, str]] = [
    # The reference server: the demo's flags on both wires and both transports, and every
    # settings test_breaking_fixtures.py runs it with (test_the_reference_passes_with_the_same_settings,
    # the WARN_CASES and warning tests' controls).
    ("reference", "demo-legacy", "stdio"), ("reference", "demo-legacy", "http"),
    ("reference", "demo-extension", "stdio"), ("reference", "demo-extension", "http"),
    ("reference", "extension", "stdio"), ("reference", "extension-input", "stdio"),
    ("reference", "extension-required", "stdio"),
    ("reference", "legacy", "stdio"), ("reference", "legacy-input", "stdio"), ("reference", "extension", "http"),
    ("reference", "tool-error", "stdio"), ("reference", "extension-roles", "stdio"),
    ("reference", "legacy-roles", "stdio"),
    ("reference", "legacy", "http"), ("reference", "legacy-tool-error", "stdio"),
    ("hostile:ok", "hostile-work", "stdio"),
    # The reference runs test_breaking_fixtures.py added while this recording was made (its
    # REFERENCE_RUNS, derived from the fixtures' declared runs); recorded from the same "before".
    ("reference", "extension-auto", "stdio"), ("reference", "extension-cancel-running", "stdio"),
    ("reference", "extension-input", "http"), ("reference", "tokens", "http"), ("hostile:ok", "hostile-work", "http"),
    # CASES
    ("no-tasks", "extension", "stdio"),
    ("experimental-placement", "extension-auto", "stdio"),
    ("legacy-caps-in-discover", "extension", "stdio"),
    ("nested-create", "extension", "stdio"),
    ("create-result-type-complete", "extension", "stdio"),
    ("legacy-flat-create", "legacy", "stdio"),
    ("create-without-declaration", "extension", "stdio"),
    ("draft-32003", "extension-required", "stdio"),
    ("draft-32003", "extension", "stdio"),
    ("required-without-task-ok", "legacy", "stdio"),
    ("legacy-ttl-names", "extension", "stdio"),
    ("ttl-not-integer", "extension", "stdio"),
    ("get-result-type-task", "extension", "stdio"),
    ("bad-timestamps", "extension", "stdio"),
    ("status-not-a-string", "extension", "stdio"),
    ("terminal-status-flips", "extension", "stdio"),
    ("terminal-status-flips", "legacy", "stdio"),
    ("removed-methods-served", "extension", "stdio"),
    ("result-type-missing", "extension", "stdio"),
    ("capabilities-defaulted", "extension", "stdio"),
    ("capabilities-defaulted", "extension", "http"),
    ("unsupported-version-without-data", "extension", "stdio"),
    ("unsupported-version-without-data", "extension", "http"),
    ("removed-methods-served", "extension", "http"),
    ("no-inline-result", "extension", "stdio"),
    ("no-inline-result", "legacy", "stdio"),
    ("ignore-mcp-name", "extension", "http"),
    ("ignore-mcp-method", "extension", "http"),
    ("unknown-id-wrong-code", "extension", "stdio"),
    ("unknown-id-wrong-code", "legacy", "stdio"),
    ("cancel-returns-task", "extension", "stdio"),
    ("cancel-returns-task", "legacy", "stdio"),
    ("legacy-cancel-terminal-ok", "legacy", "stdio"),
    ("cancel-rewrites-terminal", "extension", "stdio"),
    ("update-never-completes", "extension-input", "stdio"),
    ("update-ack-echoes-task", "extension-input", "stdio"),
    ("undeclared-get-allowed", "extension", "stdio"),
    ("legacy-caps-count-as-declared", "extension", "stdio"),
    ("32021-without-data", "extension", "stdio"),
    ("listen-missing-subscription-id", "extension", "stdio"),
    ("not-durable", "extension", "stdio"),
    ("not-durable", "extension", "http"),
    ("task-bound-to-cookie", "extension", "http"),
    ("listen-forwards-logs", "extension", "stdio"),
    ("listen-forwards-logs", "extension", "http"),
    ("sequential-task-ids", "extension", "stdio"),
    ("sequential-task-ids", "extension-input", "http"),
    ("reuses-input-key", "extension-input", "stdio"),
    ("elicits-undeclared", "extension-input", "stdio"),
    ("elicits-undeclared", "extension-input", "http"),
    ("stale-input-rejected", "extension-input", "stdio"),
    ("extension-on-legacy-session", "extension", "stdio"),
    ("extension-on-legacy-session", "extension", "http"),
    ("tasks-not-bound-to-caller", "tokens", "http"),
    ("unknown-method-http-200", "extension", "http"),
    ("notification-200", "extension", "http"),
    ("origin-not-checked", "extension", "http"),
    ("mcp-name-base64-not-decoded", "extension", "http"),
    ("tools-list-input-required", "extension", "stdio"),
    ("hostile:noise", "hostile-work", "stdio"),
    ("hostile:double", "hostile-work", "stdio"),
    ("hostile:unknown-ids", "hostile-work", "http"),
    ("hostile:mislabelled-json", "hostile-work", "http"),
    ("required-without-task-ok", "legacy-roles", "stdio"),
    ("required-undeclared-sync", "extension-roles", "stdio"),
    ("isError-failed", "extension-roles", "stdio"),
    ("legacy-isError-result-error", "legacy-roles", "stdio"),
    ("failed-without-error", "extension-roles", "stdio"),
    ("legacy-fault-result", "legacy-roles", "stdio"),
    ("legacy-result-early", "legacy", "stdio"),
    ("legacy-result-early", "legacy", "http"),
    ("legacy-list-omits-task", "legacy", "stdio"),
    ("legacy-list-any-cursor", "legacy", "stdio"),
    ("legacy-meta-wins", "legacy", "stdio"),
    ("legacy-cancel-not-sticky", "legacy", "stdio"),
    ("legacy-progress-after-end", "legacy", "stdio"),
    ("working-reads-running", "extension", "stdio"),
    ("cancelled-reads-canceled", "extension-cancel-running", "stdio"),
    ("sequential-task-ids", "legacy", "stdio"),
    # WARN_ONLY, WARN_CASES
    ("forbidden-with-task-runs", "legacy-roles", "stdio"),
    ("legacy-related-meta-on-get", "legacy", "stdio"),
    ("legacy-get-as-sse", "legacy", "http"),
    # PERMITTED
    ("permits-revised-intervals", "extension", "stdio"),
    ("permits-rate-limited-polls", "extension", "stdio"),
    ("permits-rate-limited-polls", "extension-input", "http"),
    ("permits-delayed-update", "extension-input", "stdio"),
    ("permits-cancel-runs-on", "extension", "stdio"),
    ("permits-cancel-runs-on", "extension-cancel-running", "stdio"),
    ("permits-no-notifications", "extension", "stdio"),
    ("permits-no-notifications", "extension", "http"),
    ("permits-short-ttl", "extension", "stdio"),
    ("permits-short-ttl", "legacy", "stdio"),
    ("permits-legacy-refuses-untasked", "legacy-roles", "stdio"),
    ("permits-legacy-other-ttl", "legacy", "stdio"),
    ("permits-legacy-immediate-response", "legacy", "stdio"),
    ("permits-legacy-deletes-cancelled", "legacy", "stdio"),
    ("permits-starts-input-required", "extension-input", "stdio"),
    ("permits-starts-input-required", "extension-input", "http"),
    ("permits-legacy-status-on-end", "legacy", "stdio"),
    ("permits-legacy-status-on-end", "legacy", "http"),
    ("permits-sync-answer", "extension", "stdio"),
    # The other tests of test_breaking_fixtures.py
    ("isError-failed", "tool-error", "stdio"),
    ("legacy-isError-completed", "legacy-tool-error", "stdio"),
    ("legacy-without-cancel", "legacy", "stdio"),
    # Variants only other test modules run (test_probe_roles.py, test_polling.py)
    ("failed-without-status-message", "fault-only", "stdio"),
    ("failed-without-status-message", "legacy-fault-only", "stdio"),
    ("legacy-isError-completed", "legacy-roles", "stdio"),
    ("slow-poll-interval", "slow-poll", "stdio"),
]
SETTINGS["extension-auto"] = {}  # experimental-placement runs with no settings: the era negotiated


@dataclass(frozen=True)
class Case:
    server: str
    settings: str
    transport: str

    @property
    def id(self) -> str:
        return f"{self.server.replace(':', '-')}--{self.settings}--{self.transport}"


CASES = [Case(*c) for c in _RUNS]
BY_ID = {c.id: c for c in CASES}
assert len(BY_ID) == len(CASES), "two cases with one id"

# Cases whose report differs between identical runs of the same (before) code, with the per-check
# paths that vary and why (measured by scripts/record_reports.py, which runs every case several
# times and prints what differs): those paths are left out of the comparison, and only those.
_LEGACY_RESULT_ROUTE = ("the early tasks/result is caught one of two ways, whichever the timing gives: a tasks/get "
                        "after it still says working, or a later tasks/result with other content (both fail it)")
FLAKY: dict[str, dict[str, str]] = {
    "cancel-returns-task--legacy--stdio": {
        "tasks-legacy-progress-token/*": "passed or not applicable: the fixture's tasks/cancel ends the task at "
                                         "once, sometimes before any notifications/progress was sent",
    },
    "legacy-result-early--legacy--stdio": {
        "tasks-legacy-result-blocks/message": _LEGACY_RESULT_ROUTE,
        "tasks-legacy-result-blocks/details": _LEGACY_RESULT_ROUTE,
    },
    # A FLAKY VERDICT (before the change too): over HTTP the check sometimes PASSES this fixture
    # (1 run in 3 while recording: "tasks/result sent while the task ran (...) answered only once
    # the task had ended completed"), so test_breaking_fixtures' case for it can fail at random;
    # and the progress-token check is not applicable or could not run, by timing. Both checks are
    # left out of this case's comparison, with the run's totals they count in.
    "legacy-result-early--legacy--http": {
        "tasks-legacy-result-blocks/*": "failed or passed between identical runs: " + _LEGACY_RESULT_ROUTE,
        "tasks-legacy-progress-token/*": "not applicable, or could not run (the task not seen to end), by timing",
    },
    "permits-legacy-status-on-end--legacy--http": {
        "tasks-legacy-progress-token/*": "passed or not applicable: whether a notifications/progress goes out "
                                         "before the task ends is timing",
        "tasks-legacy-list-includes-task/message": "how many tasks of ours exist when the listing runs (the "
                                                   "other probes' tasks) is timing",
    },
    # A FLAKY VERDICT, seen in 1 of 3 fresh-clone runs on 2026-12-04: the fixture flips a task to
    # working on its second read after the end, and which probe sends that read is timing. Most
    # often the re-reads do (tasks-terminal-status-immutable fails, as declared); sometimes the
    # tasks/get after the blocking tasks/result does, and tasks-legacy-result-blocks fails
    # instead. The fixture should flip only on the re-reads' read: until then both checks, the
    # progress check (its task flips too) and the totals are left out of this case.
    "terminal-status-flips--legacy--stdio": {
        "tasks-legacy-result-blocks/*": "failed or passed: which probe's read the fixture flips is timing",
        "tasks-terminal-status-immutable/*": "the same",
        "tasks-legacy-progress-token/*": "passed or not applicable, by timing",
    },
    # Seen on a loaded two-core CI run (2026-12-07): the reference sends a legacy task's progress on
    # the stream of a tasks/result that waits for the task, and under load the probe's tasks/result
    # came after the task had ended, so no progress went out and the check had nothing to judge.
    "reference--legacy--http": {
        "tasks-legacy-progress-token/*": "passed or not applicable: whether the tasks/result that carries the "
                                         "progress comes before the task ends is timing",
    },
    "status-not-a-string--extension--stdio": {
        "tasks-status-payload-shape/message": "the list-valued status names the status at the time of each poll "
                                              "(['working'] and/or ['completed'], timing)",
        "tasks-status-payload-shape/details": "the same, per problem",
    },
    "ttl-not-integer--extension--stdio": {
        "tasks-ttl-integer-shape/message": "which frames carried the fractional ttlMs (tasks/get polls, the "
                                           "tasks/get after cancel, a notification) is timing",
        "tasks-ttl-integer-shape/details": "the same, per frame",
    },
}

# ---------------------------------------------------------------------------------------------
# Running a case


# The reference server's module: where the tree being run keeps it (issue 21 moved it under
# server/). Reports name it in their target; the comparison masks it (_by_id).
REFERENCE_MODULES = ("tasks_conformance.server.reference", "tasks_conformance.reference")


def reference_module(src: Path) -> str:
    return next(m for m in REFERENCE_MODULES if (src / m.replace(".", "/") / "__init__.py").is_file())


def server_argv(server: str, root: Path, src: Path | None = None) -> list[str]:
    if server == "reference":
        return [sys.executable, "-m", reference_module(src or root / "src")]
    if server.startswith("hostile:"):
        return [sys.executable, str(root / "fixtures" / "hostile" / "server.py"), "--case", server.split(":", 1)[1]]
    return [sys.executable, str(root / "fixtures" / "broken_server.py"), "--break", server]


def settings_flags(settings: dict[str, Any]) -> list[str]:
    """The command line for the keyword settings tests pass to conftest.run (its defaults: 5 s per
    request; test_breaking_fixtures._execute: a 3 s poll timeout)."""
    s = {"timeout_ms": 5_000, "poll_timeout_ms": 3_000, **settings}
    flags: list[str] = []
    scalar = {"tool_name": "--tool-name", "tool_args": "--tool-args", "input_responses": "--input-responses",
              "protocol_version": "--protocol-version", "timeout_ms": "--timeout", "poll_timeout_ms": "--poll-timeout",
              "access_token": "--access-token", "other_access_token": "--other-access-token"}
    many = {"probes": "--probe", "check_ids": "--check-id"}
    for key, value in s.items():
        if value is None:
            continue
        if key in scalar:
            flags += [scalar[key], str(value)]
        elif key in many:
            for item in value:
                flags += [many[key], item]
        else:
            raise KeyError(f"no flag for setting {key!r}")
    return flags


def env_for(src: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TASKS_CONFORMANCE_") and k != "PYTHONPATH"}
    env.update(NO_COLOR="1", PYTHONPATH=str(src), PYTHONHASHSEED="0")
    return env


class _HttpServer:
    """A server process that prints `READY <url>` once it listens on an ephemeral 127.0.0.1 port.

    Not helpers.processes.HttpServer, which takes no environment or working directory: a
    recording runs the servers of another tree (scripts/record_reports.py --src), so it sets both.
    This module imports nothing of the package for the same reason (helpers.paths and
    helpers.groups import only the standard library)."""

    def __init__(self, argv: list[str], env: dict[str, str], cwd: Path) -> None:
        self.proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL,
                                     text=True, env=env, cwd=cwd, start_new_session=True)
        lines: queue.Queue[str] = queue.Queue()

        def pump() -> None:
            assert self.proc.stdout is not None
            for line in self.proc.stdout:
                lines.put(line)

        threading.Thread(target=pump, daemon=True).start()
        try:
            line = lines.get(timeout=30)
        except queue.Empty:
            self.stop()
            raise RuntimeError(f"server did not become ready: {argv}") from None
        if not line.startswith("READY "):
            self.stop()
            raise RuntimeError(f"unexpected first line {line!r} from {argv}")
        self.url = line.split(None, 1)[1].strip()
        assert self.url.startswith("http://127.0.0.1:"), self.url

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=5)
        if self.proc.stdout is not None:
            self.proc.stdout.close()


@dataclass
class Outcome:
    case: Case
    report: dict[str, Any] | None = None  # normalised
    error: str | None = None
    elapsed_s: float = 0.0
    returncode: int | None = None
    raw: dict[str, Any] | None = field(default=None, repr=False)


def run_case(case: Case, src: Path, root: Path | None = None) -> Outcome:
    """One run of `case` with the tool and servers of `src` (fixtures from `root`, its tree)."""
    root = root or src.parent
    started = time.monotonic()
    out = Outcome(case)
    try:
        with tempfile.TemporaryDirectory(prefix="stability-") as tmp:
            d = Path(tmp)
            env = env_for(src)
            argv = server_argv(case.server, root, src)
            server = None
            if case.transport == "http":
                server = _HttpServer([*argv, "--transport", "http", "--port", "0"], env, d)
                target = ["--url", server.url]
            else:
                target = ["--command", shlex.join([*argv, "--transport", "stdio"])]
            wire = d / "wire.ndjson"
            cmd = [sys.executable, "-m", "tasks_conformance", *target, *settings_flags(SETTINGS[case.settings]),
                   "--format", "json", "--wire-log", str(wire)]
            try:
                proc = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=d, stdin=subprocess.DEVNULL,
                                      timeout=RUN_TIMEOUT_S)
            finally:
                if server is not None:
                    server.stop()
            out.returncode = proc.returncode
            try:
                raw = json.loads(proc.stdout)
            except ValueError:
                out.error = (f"exit {proc.returncode}, no JSON report on stdout:\n{proc.stdout[-2000:]}\n"
                             f"{proc.stderr[-3000:]}")
                return out
            out.raw = raw
            context = Context(root=root, src=src, tmp=d, ids=ids_in_wire_log(wire), url=server.url if server else None)
            out.report = normalise(raw, context)
    except subprocess.TimeoutExpired:
        out.error = f"no exit within {RUN_TIMEOUT_S}s (hang)"
    except Exception:  # shown by the case's test, with the harness's traceback
        import traceback

        out.error = "the test harness failed:\n" + traceback.format_exc()
    finally:
        out.elapsed_s = time.monotonic() - started
    return out


def run_all(cases: list[Case], src: Path, root: Path | None = None, workers: int = WORKERS,
            done: Callable[[Outcome], None] | None = None) -> dict[str, Outcome]:
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="stability") as pool:
        futures = {c.id: pool.submit(run_case, c, src, root) for c in cases}
        results = {}
        for cid, fut in futures.items():
            results[cid] = fut.result()
            if done is not None:
                done(results[cid])
    return results


# ---------------------------------------------------------------------------------------------
# Normalising a report

# Keys the server or the wire log generates per run: their string values are masked wherever they
# appear in the report.
_ID_KEYS = {"taskId", "subscriptionId", "io.modelcontextprotocol/subscriptionId", "sessionId", "cursor",
            "nextCursor", "requestId"}
_ID_HEADERS = {"mcp-session-id"}


def ids_in_wire_log(path: Path) -> set[str]:
    """Every task id, subscription id, session id and cursor a run's frames carry."""
    found: set[str] = set()

    def walk(value: Any) -> None:
        if isinstance(value, dict):
            for k, v in value.items():
                if isinstance(v, str) and (k in _ID_KEYS or k.lower() in _ID_HEADERS) and len(v) >= 6:
                    found.add(v)
                walk(v)
        elif isinstance(value, list):
            for v in value:
                walk(v)
        elif isinstance(value, str) and value[:1] in "{[":
            try:
                walk(json.loads(value))
            except ValueError:
                pass

    if path.exists():
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            try:
                walk(json.loads(line))
            except ValueError:
                continue
    return found


@dataclass
class Context:
    root: Path
    src: Path
    tmp: Path
    ids: set[str] = field(default_factory=set)
    url: str | None = None


_UUID = re.compile(r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b")
_TIMESTAMP = re.compile(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:?\d{2})?")
_PORT = re.compile(r"(127\.0\.0\.1|localhost|\[::1\]):\d+")
# A task id the server generated, base64-wrapped in an Mcp-Name header ("=?base64?...?=").
_BASE64_WORD = re.compile(r"=\?base64\?[A-Za-z0-9+/=_-]+\?=")
# Milliseconds: measured ("(212 ms)", "after 312 ms", "within 1502 ms") unless a flag the user
# gave states it ("--poll-timeout 3000 ms"): that bound is kept.
_MS = re.compile(r"(--[\w-]+[ =])?(?<![\w.-])\d+(?:\.\d+)? ?ms\b")
_MEASURED_S = re.compile(r"\b(within|after|took|in|for|waited) ~?\d+(?:\.\d+)? ?s\b")
# Frame sequence numbers and poll numbers: concurrent probes interleave their frames.
_FRAMES = re.compile(r"\b(frames?) #?\d+(?:(?:, | and |-|–)#?\d+)*")
_HASH_SEQ = re.compile(r"#\d+\b")
_POLL_NO = re.compile(r"\b(tasks/get|poll) \d+\b")
# How much traffic a run saw ("all 36 inbound frames", "31 outbound requests", "3 tasks/get
# results", "2 later reads", "1 tagged notifications/tasks"): how many polls a task takes, and
# whether a notification arrives before the task ends, is timing.
_TRAFFIC = re.compile(r"(?<![\w.-])\d+ (?=(?:[\w/'-]+ ){0,3}?(?:frames?|requests?|results?|responses?|polls?|reads?"
                      r"|task ids|notifications(?:/[\w/]+)?|messages?)\b)")
# How many tasks existed when the listing ran ("6 of 10 task(s) on 1 page(s)"): the other probes'
# tasks are created beside it, so the total is timing.
_LISTED = re.compile(r"\b\d+ of \d+ task\(s\)")
# Estimated entropy of random task ids ("about 143 bits vary between them").
_BITS = re.compile(r"\babout \d+ bits\b")
# Timing-dependent phrases, replaced by one mask each:
_PHRASES = [
    # whether the status notification of the task's end arrived before its later reads
    (re.compile(r" after notification frame <N> showed it end"), ""),
    # the two ways a legacy tasks/result is known to have been sent while the task ran
    (re.compile(r"\((?:a tasks/get sent after it still showed the task running|the task was last seen running "
                r"when it was sent)\)"), "(<seen running>)"),
    # which intermediate statuses a poll happened to catch ("working, completed" or "completed")
    (re.compile(r"\(statuses seen: [^)]*\)"), "(statuses seen: <...>)"),
]


# A finding repeated (one part, or a run of parts, "X; Y; X; Y"), followed by the end, "; ", " —"
# or " (" (the explanation after the last finding).
_REPEATED = re.compile(r"(?:(?<=^)|(?<=; )|(?<=— ))([^;]+?(?:; [^;]+?)*?)(?:; \1)+(?=; |$| —| \()")
# `area` (the registry's) and `brokenRequirementIds` (the verdict's `broken`, held by test_one_defect.py)
# came after the recording (issue 33: `merge` rebuilds every report from the json one).
_DROP_CHECK_KEYS = {"durationMs", "startedAt", "evidence", "evidenceFrames", "title", "description", "area",
                    "brokenRequirementIds"}
_DROP_TOP_KEYS = {"durationMs", "startedAt", "toolVersion", "finishedAt"}


def mask_text(text: str, ctx: Context) -> str:
    for value in sorted(ctx.ids, key=len, reverse=True):
        text = text.replace(value, "<ID>")
    if ctx.url:
        text = text.replace(ctx.url, "<URL>")
    paths = {str(ctx.tmp): "<TMP>", str(ctx.src): "<SRC>", str(ctx.root): "<ROOT>", sys.executable: "<PYTHON>",
             tempfile.gettempdir(): "<TMPDIR>"}
    for path in sorted(paths, key=len, reverse=True):  # the longest first: the venv's python may be in the tree
        text = text.replace(path, paths[path])
    text = _UUID.sub("<UUID>", text)
    text = _TIMESTAMP.sub("<TIME>", text)
    text = _PORT.sub(r"\1:<PORT>", text)
    text = _BASE64_WORD.sub("=?base64?<ID>?=", text)
    text = _MS.sub(lambda m: m.group(0) if m.group(1) else "<N> ms", text)
    text = _MEASURED_S.sub(r"\1 <N> s", text)
    text = _FRAMES.sub(r"\1 <N>", text)
    text = _HASH_SEQ.sub("#<N>", text)
    text = _POLL_NO.sub(r"\1 <N>", text)
    text = _LISTED.sub("<N> of <N> task(s)", text)
    text = _TRAFFIC.sub("<N> ", text)
    text = _BITS.sub("about <N> bits", text)
    for pattern, mask in _PHRASES:
        text = pattern.sub(mask, text)
    # One finding per poll or frame reads the same once masked: as many as the polls (timing)
    # say it once ("X; X; X" in a message, ["X", "X"] in details).
    while True:
        said_once = _REPEATED.sub(r"\1", text)
        if said_once == text:
            return text
        text = said_once


def _mask(value: Any, ctx: Context) -> Any:
    if isinstance(value, dict):
        return {k: _mask(v, ctx) for k, v in value.items() if k not in ("durationMs", "startedAt", "elapsedMs")}
    if isinstance(value, list):
        items = [_mask(v, ctx) for v in value]
        if items and all(isinstance(v, str) for v in items):
            return list(dict.fromkeys(items))  # see mask_text: repeated per poll, said once
        return items
    if isinstance(value, str):
        return mask_text(value, ctx)
    return value


def normalise(report: dict[str, Any], ctx: Context) -> dict[str, Any]:
    out = {k: _mask(v, ctx) for k, v in report.items() if k not in _DROP_TOP_KEYS and k != "checks"}
    out["checks"] = [{k: _mask(v, ctx) for k, v in check.items() if k not in _DROP_CHECK_KEYS}
                     for check in report.get("checks", [])]
    for check in out["checks"]:
        # The rule's wording and link are requirements.toml's, the same in every report (and most
        # of its bulk): "ID (LEVEL)" says which rule a verdict cites.
        if isinstance(check.get("requirements"), list):
            check["requirements"] = [f"{r.get('id')} ({r.get('level')})" if isinstance(r, dict) else r
                                     for r in check["requirements"]]
    return out


# What a check's verdict sums up into: left out with a check FLAKY names whole.
_DERIVED = ("counts", "summary", "score", "categorySummary", "passed", "outcome", "incompleteReason",
            "incompleteCauses")


def without_flaky(case_id: str, report: dict[str, Any]) -> dict[str, Any]:
    """`report` without the parts FLAKY names for this case: CHECK-ID/KEY (one key of a check),
    CHECK-ID/* (the whole check, and the run's totals it counts in) or KEY (a top-level key)."""
    paths = FLAKY.get(case_id, {})
    if not paths:
        return report
    report = json.loads(json.dumps(report))
    checks = {c["id"]: c for c in report.get("checks", [])}
    for path in paths:
        head, _, tail = path.partition("/")
        if tail == "*":
            report["checks"] = [c for c in report["checks"] if c["id"] != head]
            for key in _DERIVED:
                report.pop(key, None)
        elif tail and head in checks:
            checks[head].pop(tail, None)
        elif not tail:
            report.pop(head, None)
    return report


def _by_id(report: dict[str, Any]) -> dict[str, Any]:
    """The report with its check lists in id order (the checks, and the checks of each incomplete
    cause) and the reference server's module path masked (issue 21 moved it; targets name it)."""
    text = json.dumps(report)
    for module in REFERENCE_MODULES:
        text = text.replace(f"-m {module} ", "-m <REFERENCE> ")
    report = json.loads(text)
    causes = [{**c, "checks": sorted(c["checks"])} if isinstance(c, dict) and isinstance(c.get("checks"), list) else c
              for c in report.get("incompleteCauses") or []]
    out = {**report, "checks": sorted(report.get("checks", []), key=lambda c: str(c.get("id")))}
    if "incompleteCauses" in report:
        out["incompleteCauses"] = causes
    return out


def dumps(report: dict[str, Any]) -> str:
    return json.dumps(report, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def diff(before: dict[str, Any], after: dict[str, Any], names: tuple[str, str] = ("before", "after")) -> str:
    return "".join(difflib.unified_diff(dumps(before).splitlines(True), dumps(after).splitlines(True),
                                        fromfile=names[0], tofile=names[1], n=2))


def recorded_path(case: Case) -> Path:
    return RECORDED / f"{case.id}.json"


# ---------------------------------------------------------------------------------------------
# The tests


class _Runs:
    """Every case started at once on a small pool; each test waits for its own."""

    def __init__(self, whole: bool) -> None:
        self.whole = whole
        self.pool: ThreadPoolExecutor | None = None
        self.futures: dict[str, Future[Outcome]] = {}

    def get(self, case_id: str) -> Outcome:
        src = ROOT / "src"
        if self.pool is None:
            self.pool = ThreadPoolExecutor(max_workers=WORKERS, thread_name_prefix="stability")
            # Every case at once, unless this is a worker that holds some of the module's tests only.
            wanted = CASES if self.whole else [BY_ID[case_id]]
            for c in wanted:
                self.futures[c.id] = self.pool.submit(run_case, c, src, ROOT)
        if case_id not in self.futures:
            self.futures[case_id] = self.pool.submit(run_case, BY_ID[case_id], src, ROOT)
        return self.futures[case_id].result()

    def quiet_rerun(self, case_id: str) -> Outcome:
        """The case run once more on its own, once the pool's runs are done: a report that differed
        in the pool must differ in a quieter run too to fail (see QUIET_RERUNS)."""
        for future in list(self.futures.values()):
            future.result()
        return run_case(BY_ID[case_id], ROOT / "src", ROOT)

    def close(self) -> None:
        if self.pool is not None:
            self.pool.shutdown(wait=True, cancel_futures=True)


@pytest.fixture(scope="module")
def runs(request: pytest.FixtureRequest) -> Iterator[_Runs]:
    r = _Runs(starts_all_cases(request.module))
    yield r
    r.close()


def test_every_case_is_recorded_and_nothing_else() -> None:
    recorded = {p.stem for p in RECORDED.glob("*.json")}
    assert recorded == set(BY_ID), {"not recorded": sorted(set(BY_ID) - recorded),
                                    "recorded, no case": sorted(recorded - set(BY_ID))}


def test_every_flaky_mask_names_a_case_and_a_check_of_its_report() -> None:
    """A mask under a name no case has masks nothing: the `--ext--` keys outlived the cases' rename
    to `--extension--`, and the two cases they were written for failed one CI in four."""
    for case_id, paths in FLAKY.items():
        assert case_id in BY_ID, f"FLAKY names {case_id!r}, which is no case"
        checks = {c["id"] for c in json.loads(recorded_path(BY_ID[case_id]).read_text(encoding="utf-8"))["checks"]}
        for path in paths:
            check = path.split("/", 1)[0]
            assert "/" not in path or check in checks, f"FLAKY[{case_id!r}] names {check!r}, not in its report"


@pytest.mark.parametrize("case_id", list(BY_ID))
def test_the_report_is_the_one_recorded_before(case_id: str, runs: _Runs) -> None:
    case = BY_ID[case_id]
    path = recorded_path(case)
    assert path.exists(), f"{path} is not recorded: run scripts/record_reports.py --src OLD_TREE/src"
    # The order of the checks within a category follows the spec-area modules that define them
    # (checks/__init__.AREAS); issue 21 moved the eight 2025-11-25 checks of one module into the
    # areas they belong to, which moved them in the list and changed nothing else. So the list is
    # compared as a set of checks by id; what each check says must be the same.
    before = _by_id(without_flaky(case_id, json.loads(path.read_text(encoding="utf-8"))))
    got = runs.get(case_id)
    first = _compared(case_id, got, before, path)
    if first is None:
        return
    for attempt in range(1, QUIET_RERUNS + 1):
        again = runs.quiet_rerun(case_id)
        if _compared(case_id, again, before, path) is None:
            warnings.warn(f"{case_id}: the report differed from the recorded one in the pool's run and matched it "
                          f"on quiet rerun {attempt}; what differed is timing to mask in FLAKY, or a verdict "
                          f"load can change:\n{first}", stacklevel=1)
            return
    pytest.fail(first, pytrace=False)


def _compared(case_id: str, got: Outcome, before: dict[str, Any], path: Path) -> str | None:
    """None where the run's report is the recorded one, else why not (with the diff)."""
    if got.error is not None or got.report is None:
        return f"{case_id}: {got.error or 'no report'}"
    after = _by_id(without_flaky(case_id, got.report))
    if after == before:
        return None
    return (f"{case_id}: the report differs from the one recorded before "
            f"(exit {got.returncode}, {got.elapsed_s:.1f}s):\n"
            + diff(before, after, (f"recorded {path.name}", "now")))
