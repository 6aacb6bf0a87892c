"""The breaking fixture servers' runs: the settings each declared run names (RUNS), the cases
from fixtures/broken_server.py's declarations, and one run of a fixture with the invariants every
fixture run holds (each could-not-run names its fix, each policy is cited as data)."""

from __future__ import annotations

import atexit
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

from helpers.broken_variants import BROKEN_SERVER
from helpers.paths import BROKEN, DEMO_INPUT, FIXTURES
from helpers.policy_citations import POLICY_WORDS
from helpers.processes import http_server
from helpers.runs import run, stdio
from helpers.zygote import forked

EXT = {"tool_name": "slow_compute"}
EXT_INPUT = {"tool_name": "confirm_action", "input_responses": DEMO_INPUT}
EXT_REQUIRED = {"tool_name": "long_job"}
LEGACY = {"protocol_version": "2025-11-25"}
LEGACY_INPUT = {"protocol_version": "2025-11-25", "tool_name": "confirm_action", "input_responses": DEMO_INPUT}
# Probe roles: a task tool that is not itself required, and the role's tool named (extension) or
# inferred (legacy: required and sync come from execution.taskSupport).
EXT_ROLES = {"tool_name": "slow_compute", "probes": ["required=long_job", "tool-error=tool_error", "fault=rpc_error"]}
# Polling gives up after 1 s and the cancel follows at once; the task works 4 s, so the cancel meets
# it running with 2.8 s to spare (the run waits out the task's duration in its plain calls).
EXT_CANCEL_RUNNING = {"tool_name": "slow_compute", "tool_args": '{"durationMs": 4000}', "poll_timeout_ms": 1_000}
# The input role's tool beside a task tool whose undeclared call is refused at once: no synchronous
# call of ours is outstanding while the input task asks, so over stdio its questions are its own.
LEGACY_INPUT_ROLE = {**LEGACY, "tool_name": "long_job", "probes": ["input=confirm_action"],
                     "input_responses": DEMO_INPUT}
LEGACY_ROLES = {**LEGACY, "tool_name": "slow_compute", "probes": ["tool-error=tool_error", "fault=rpc_error"]}
# Profile durable restarts the server: a task store of its own for this worker's runs (a stdio server reads
# the path from the environment), removed when the tests end; the task tool waits for input, so a second
# task is still working when the server stops.
DURABLE_STORE = Path(tempfile.mkdtemp(prefix="tc-durable-")) / "tasks.jsonl"
atexit.register(shutil.rmtree, DURABLE_STORE.parent, True)


DURABLE = {"profile": "durable", "env": [f"TASKS_CONFORMANCE_TASK_STORE={DURABLE_STORE}"]}
# The run settings a fixture's declared runs name (Fails/Warns/Permits in fixtures/broken_server.py).
RUNS: dict[str, dict[str, Any]] = {
    "extension": EXT, "extension-input": EXT_INPUT, "extension-required": EXT_REQUIRED, "extension-roles": EXT_ROLES,
    # polling gives up while the task works: a cancel reaches it running
    "extension-cancel-running": EXT_CANCEL_RUNNING,
    "extension-two-tokens": {**EXT, "access_token": "fixture-main-token", "other_access_token": "fixture-other-token"},
    "legacy": LEGACY, "legacy-input": LEGACY_INPUT, "legacy-roles": LEGACY_ROLES,
    "legacy-input-role": LEGACY_INPUT_ROLE,
    "extension-durable": {**EXT_INPUT, **DURABLE}, "legacy-durable": {**LEGACY_INPUT, **DURABLE},
    "any-tool": {},  # the tool is the one the run picks
    "hostile": {"tool_name": "work"},  # the hostile server's one tool
    "tool-error": {"tool_name": "tool_error"},
}
# Every run each fixture server declares, computed from the declarations (the one list): a variant
# of fixtures/broken_server.py by name, a hostile case as hostile:CASE.
DECLARED = [(name, run) for name, runs in BROKEN_SERVER.servers().items() for run in runs]
CASES = [(name, run) for name, run in DECLARED if isinstance(run, BROKEN_SERVER.Fails)]
WARN_CASES = [(name, run) for name, run in DECLARED if isinstance(run, BROKEN_SERVER.Warns)]
PERMITTED = [(name, run) for name, run in DECLARED if isinstance(run, BROKEN_SERVER.Permits)]


def case_id(name: str, run: Any) -> str:
    return f"{name}->{getattr(run, 'check', getattr(run, 'may', ''))}-{run.run}-{run.transport}"


HOSTILE = [sys.executable, str(FIXTURES / "hostile" / "server.py")]
# The reference's task durations and poll interval in these runs: short, as time is a parameter
# (its defaults, 150 ms and 100 ms, are a user's; a variant that needs longer sets its own).
QUICK_SERVER = ("--task-duration-ms", "60", "--poll-interval-ms", "40")


def fixture_server(name: str) -> list[str]:
    """A --break variant of the reference server, or hostile:CASE for fixtures/hostile."""
    if name.startswith("hostile:"):
        return [*HOSTILE, "--case", name.split(":", 1)[1]]
    return [*BROKEN, "--break", name, *QUICK_SERVER]


def execute_run(argv: list[str], settings: dict[str, Any], transport: str) -> Any:
    """One run of the checks against a fixture server started from the tests' zygote (the run
    judges what the server says, not its process)."""
    argv = list(forked(argv))
    kwargs = dict(settings)
    kwargs.setdefault("poll_timeout_ms", 3_000)
    if transport == "http":
        server = http_server(argv)
        try:
            ex = run(url=server.url, **kwargs)
        finally:
            server.stop()
    else:
        ex = run(**stdio(argv), **kwargs)
    assert not cited_in_prose_only(ex), cited_in_prose_only(ex)
    assert not without_fix(ex), without_fix(ex)
    return ex


def without_fix(ex: Any) -> list[str]:
    """Every could-not-run that does not say what to change (only `explain`'s general pointer): each
    fixture run holds every reason the checks give to naming its fix."""
    return [f"{c.id}: {c.message}" for c in ex.result.checks if c.bucket == "could-not-run"
            and (c.cause is None or "says what this check needs" in c.cause.fix_for(c.id, ""))]


def cited_in_prose_only(ex: Any) -> list[str]:
    """Every policy a message or warning names in words but not as data (its typed ids), which no
    report would link: every fixture run holds the checks to citing policies as data."""
    out = []
    for c in ex.result.checks:
        for text, typed in [(c.message, c.message_policies), *((w.text, w.policies) for w in c.warnings)]:
            out += [f"{c.id}: {pid} in {text[:80]!r}" for pid in POLICY_WORDS.findall(text) if pid not in typed]
    return out


def failures_of(ex: Any) -> dict[str, str]:
    return {c.id: c.message for c in ex.result.checks if c.bucket == "failed"}
