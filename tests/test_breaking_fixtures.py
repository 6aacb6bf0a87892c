"""Every check FAILS against a fixture server that breaks exactly its rule, and that one defect
gives one failure: the other checks pass, are not applicable, or could not run pointing at it."""

from __future__ import annotations

import sys
from typing import Any

import pytest
from conftest import BROKEN, DEMO_INPUT, FIXTURES, REFERENCE, cli, http_server, run, stdio

from tasks_conformance.checks import CHECKS

EXT = {"tool_name": "slow_compute"}
EXT_INPUT = {"tool_name": "confirm_action", "input_responses": DEMO_INPUT}
EXT_REQUIRED = {"tool_name": "long_job"}
LEGACY = {"protocol_version": "2025-11-25"}
LEGACY_INPUT = {"protocol_version": "2025-11-25", "tool_name": "confirm_action", "input_responses": DEMO_INPUT}
# Probe roles: a task tool that is not itself required, and the role's tool named (extension) or
# inferred (legacy: required and sync come from execution.taskSupport).
EXT_ROLES = {"tool_name": "slow_compute", "probes": ["required=long_job", "tool-error=tool_error", "fault=rpc_error"]}
EXT_CANCEL_RUNNING = {"tool_name": "slow_compute", "tool_args": '{"durationMs": 8000}', "poll_timeout_ms": 1_000}
LEGACY_ROLES = {**LEGACY, "tool_name": "slow_compute", "probes": ["tool-error=tool_error", "fault=rpc_error"]}

# (fixture --break name, the check it must fail, run settings, transport)
CASES: list[tuple[str, str, dict[str, Any], str]] = [
    ("no-tasks", "tasks-wire-resolvable", EXT, "stdio"),
    ("experimental-placement", "tasks-wire-resolvable", {}, "stdio"),
    ("legacy-caps-in-discover", "tasks-declaration-hygiene", EXT, "stdio"),
    ("nested-create", "tasks-result-type-discipline", EXT, "stdio"),
    ("create-result-type-complete", "tasks-result-type-discipline", EXT, "stdio"),
    ("legacy-flat-create", "tasks-result-type-discipline", LEGACY, "stdio"),
    ("create-without-declaration", "tasks-undeclared-creation-refused", EXT, "stdio"),
    ("draft-32003", "tasks-undeclared-creation-refused", EXT_REQUIRED, "stdio"),
    ("draft-32003", "tasks-undeclared-capability-rejected", EXT, "stdio"),
    ("required-without-task-ok", "tasks-undeclared-creation-refused", LEGACY, "stdio"),
    ("legacy-ttl-names", "tasks-ttl-shape", EXT, "stdio"),
    ("ttl-not-integer", "tasks-ttl-integer-shape", EXT, "stdio"),
    ("get-result-type-task", "tasks-status-payload-shape", EXT, "stdio"),
    ("bad-timestamps", "tasks-status-payload-shape", EXT, "stdio"),
    ("status-not-a-string", "tasks-status-payload-shape", EXT, "stdio"),
    ("terminal-status-flips", "tasks-terminal-status-immutable", EXT, "stdio"),
    ("terminal-status-flips", "tasks-terminal-status-immutable", LEGACY, "stdio"),
    ("removed-methods-served", "tasks-removed-methods-not-found", EXT, "stdio"),
    ("result-type-missing", "tasks-base-result-type-present", EXT, "stdio"),
    ("capabilities-defaulted", "tasks-base-capabilities-required", EXT, "stdio"),
    ("capabilities-defaulted", "tasks-base-capabilities-required", EXT, "http"),
    ("unsupported-version-without-data", "tasks-base-unsupported-version", EXT, "stdio"),
    ("unsupported-version-without-data", "tasks-base-unsupported-version", EXT, "http"),
    ("removed-methods-served", "tasks-removed-methods-not-found", EXT, "http"),
    ("no-inline-result", "tasks-inline-result", EXT, "stdio"),
    ("no-inline-result", "tasks-inline-result", LEGACY, "stdio"),
    ("ignore-mcp-name", "tasks-mcp-name-routing", EXT, "http"),
    ("ignore-mcp-method", "tasks-mcp-name-routing", EXT, "http"),
    ("unknown-id-wrong-code", "tasks-invalid-task-id-rejected", EXT, "stdio"),
    ("unknown-id-wrong-code", "tasks-invalid-task-id-rejected", LEGACY, "stdio"),
    ("cancel-returns-task", "tasks-cancel-ack-shape", EXT, "stdio"),
    ("cancel-returns-task", "tasks-cancel-ack-shape", LEGACY, "stdio"),
    ("legacy-cancel-terminal-ok", "tasks-cancel-ack-shape", LEGACY, "stdio"),
    ("cancel-rewrites-terminal", "tasks-cancel-ack-shape", EXT, "stdio"),
    ("update-never-completes", "tasks-input-required-update-completes", EXT_INPUT, "stdio"),
    ("update-ack-echoes-task", "tasks-input-required-update-completes", EXT_INPUT, "stdio"),
    ("undeclared-get-allowed", "tasks-undeclared-capability-rejected", EXT, "stdio"),
    ("legacy-caps-count-as-declared", "tasks-undeclared-capability-rejected", EXT, "stdio"),
    ("32021-without-data", "tasks-undeclared-capability-names-requirements", EXT, "stdio"),
    ("listen-missing-subscription-id", "tasks-subscription-notifications", EXT, "stdio"),
    ("not-durable", "tasks-created-task-durable", EXT, "stdio"),
    ("not-durable", "tasks-created-task-durable", EXT, "http"),
    ("task-bound-to-cookie", "tasks-created-task-durable", EXT, "http"),
    ("listen-forwards-logs", "tasks-subscription-no-progress-or-message", EXT, "stdio"),
    ("listen-forwards-logs", "tasks-subscription-no-progress-or-message", EXT, "http"),
    ("sequential-task-ids", "tasks-task-id-entropy", EXT, "stdio"),
    ("sequential-task-ids", "tasks-task-id-entropy", EXT_INPUT, "http"),
    ("reuses-input-key", "tasks-input-request-keys-unique", EXT_INPUT, "stdio"),
    ("elicits-undeclared", "tasks-input-requests-declared-only", EXT_INPUT, "stdio"),
    ("elicits-undeclared", "tasks-input-requests-declared-only", EXT_INPUT, "http"),
    ("stale-input-rejected", "tasks-input-stale-responses-ignored", EXT_INPUT, "stdio"),
    ("extension-on-legacy-session", "tasks-extension-in-initialize-ignored", EXT, "stdio"),
    ("extension-on-legacy-session", "tasks-extension-in-initialize-ignored", EXT, "http"),
    ("tasks-not-bound-to-caller", "tasks-task-bound-to-principal",
     {**EXT, "access_token": "fixture-main-token", "other_access_token": "fixture-other-token"}, "http"),
    ("unknown-method-http-200", "tasks-base-unknown-method-not-found", EXT, "http"),
    ("notification-200", "tasks-base-notification-accepted", EXT, "http"),
    ("origin-not-checked", "tasks-base-foreign-origin-forbidden", EXT, "http"),
    ("mcp-name-base64-not-decoded", "tasks-base-mcp-name-base64", EXT, "http"),
    ("tools-list-input-required", "tasks-base-input-required-where-allowed", EXT, "stdio"),
    ("hostile:noise", "tasks-wire-framing", {"tool_name": "work"}, "stdio"),
    ("hostile:double", "tasks-wire-framing", {"tool_name": "work"}, "stdio"),
    ("hostile:unknown-ids", "tasks-wire-framing", {"tool_name": "work"}, "http"),
    ("hostile:mislabelled-json", "tasks-wire-framing", {"tool_name": "work"}, "http"),
    ("required-without-task-ok", "tasks-required-tool-needs-task", LEGACY_ROLES, "stdio"),
    ("required-undeclared-sync", "tasks-required-tool-needs-task", EXT_ROLES, "stdio"),
    ("isError-failed", "tasks-tool-error-outcome", EXT_ROLES, "stdio"),
    ("legacy-isError-result-error", "tasks-tool-error-outcome", LEGACY_ROLES, "stdio"),
    ("failed-without-error", "tasks-fault-outcome", EXT_ROLES, "stdio"),
    ("legacy-fault-result", "tasks-fault-outcome", LEGACY_ROLES, "stdio"),
    ("legacy-result-early", "tasks-legacy-result-blocks", LEGACY, "stdio"),
    ("legacy-result-early", "tasks-legacy-result-blocks", LEGACY, "http"),
    ("legacy-list-omits-task", "tasks-legacy-list-includes-task", LEGACY, "stdio"),
    ("legacy-list-any-cursor", "tasks-legacy-list-invalid-cursor", LEGACY, "stdio"),
    ("legacy-meta-wins", "tasks-legacy-task-id-wins", LEGACY, "stdio"),
    ("legacy-cancel-not-sticky", "tasks-legacy-status-transitions", LEGACY, "stdio"),
    ("legacy-progress-after-end", "tasks-legacy-progress-token", LEGACY, "stdio"),
    ("working-reads-running", "tasks-status-payload-shape", EXT, "stdio"),
    # Polling gives up while the task still works, so the cancel reaches a running task.
    ("cancelled-reads-canceled", "tasks-cancel-ack-shape", EXT_CANCEL_RUNNING, "stdio"),
    ("sequential-task-ids", "tasks-task-id-entropy", LEGACY, "stdio"),
]

# Defects that by their nature break a second rule too; listed so that the test stays exact.
ALSO_FAILS: dict[tuple[str, str], set[str]] = {
    # -32003 in place of -32021 on every refusal: the undeclared call and the undeclared tasks/*
    # requests are two rules, each rightly failed with the renumbering hint.
    ("draft-32003", "tasks-undeclared-creation-refused"): {"tasks-undeclared-capability-rejected"},
    # On legacy the auto-picked task tool is long_job, which is also the inferred required role's
    # tool: both checks judge S-LEG-MUST-02 on the same call.
    ("required-without-task-ok", "tasks-undeclared-creation-refused"): {"tasks-required-tool-needs-task"},
}

# Checks that judge only SHOULD rules: they can warn, never fail (the spec decides). Each has the
# fixture that breaks its rule and must warn there, and nowhere else.
WARN_ONLY: dict[str, tuple[str, dict[str, Any], str]] = {
    "tasks-forbidden-tool-task-refused": ("forbidden-with-task-runs", LEGACY_ROLES, "S-LEG-SHOULD-01"),
}


HOSTILE = [sys.executable, str(FIXTURES / "hostile" / "server.py")]


def _server(name: str) -> list[str]:
    """A --break variant of the reference server, or hostile:CASE for fixtures/hostile."""
    if name.startswith("hostile:"):
        return [*HOSTILE, "--case", name.split(":", 1)[1]]
    return [*BROKEN, "--break", name]


def _execute(argv: list[str], settings: dict[str, Any], transport: str) -> Any:
    kwargs = dict(settings)
    kwargs.setdefault("poll_timeout_ms", 3_000)
    if transport == "http":
        server = http_server(argv)
        try:
            return run(url=server.url, **kwargs)
        finally:
            server.stop()
    return run(**stdio(argv), **kwargs)


def _failures(ex: Any) -> dict[str, str]:
    return {c.id: c.message for c in ex.result.checks if c.bucket == "failed"}


@pytest.mark.parametrize("name,check_id,settings,transport", CASES,
                         ids=[f"{c[0]}->{c[1]}" + ("-legacy" if c[2].get("protocol_version") else "") for c in CASES])
def test_check_fails_on_the_fixture_that_breaks_its_rule(
    name: str, check_id: str, settings: dict[str, Any], transport: str
) -> None:
    ex = _execute(_server(name), settings, transport)
    fails = _failures(ex)
    assert check_id in fails, {c.id: (c.bucket, c.message) for c in ex.result.checks}
    assert ex.result.outcome == "failed"
    extra = set(fails) - {check_id} - ALSO_FAILS.get((name, check_id), set())
    assert not extra, f"one defect, one failure: also failed {extra}: {[fails[e] for e in extra]}"


SETTINGS = {
    "hostile-ok": ({"tool_name": "work"}, "stdio"),
    "ext": (EXT, "stdio"), "ext-input": (EXT_INPUT, "stdio"), "ext-required": (EXT_REQUIRED, "stdio"),
    "legacy": (LEGACY, "stdio"), "legacy-input": (LEGACY_INPUT, "stdio"), "ext-http": (EXT, "http"),
    "tool-error": ({"tool_name": "tool_error"}, "stdio"),
    "ext-roles": (EXT_ROLES, "stdio"), "legacy-roles": (LEGACY_ROLES, "stdio"),
}


@pytest.mark.parametrize("key", sorted(SETTINGS))
def test_the_reference_passes_with_the_same_settings(key: str) -> None:
    settings, transport = SETTINGS[key]
    # The hostile corpus has its own well-behaved control case.
    ex = _execute(_server("hostile:ok") if key == "hostile-ok" else list(REFERENCE), settings, transport)
    assert ex.result.outcome == "passed", {c.id: c.message for c in ex.result.checks if c.bucket != "passed"
                                            and c.bucket != "not-applicable"}


# Checks of a SHOULD-level rule only warn: (fixture, the check that must warn, a word of the
# warning, run settings, transport). The check passes with that warning, nothing fails, and the
# reference server, with the same settings, gives no such warning.
WARN_CASES: list[tuple[str, str, str, dict[str, Any], str]] = [
    ("legacy-related-meta-on-get", "tasks-legacy-related-meta-absent", "S-LEG-SHOULD-04", LEGACY, "stdio"),
    ("legacy-get-as-sse", "tasks-legacy-get-plain-json", "S-LEG-SHOULD-08", LEGACY, "http"),
]


@pytest.mark.parametrize("name,check_id,word,settings,transport", WARN_CASES, ids=[c[0] for c in WARN_CASES])
def test_a_should_level_check_warns_on_its_fixture_and_not_on_the_reference(
    name: str, check_id: str, word: str, settings: dict[str, Any], transport: str
) -> None:
    ex = _execute(_server(name), settings, transport)
    got = next(c for c in ex.result.checks if c.id == check_id)
    assert got.bucket == "passed" and any(word in w for w in got.warnings), (got.bucket, got.message, got.warnings)
    assert not _failures(ex), _failures(ex)
    ex = _execute(list(REFERENCE), settings, transport)
    got = next(c for c in ex.result.checks if c.id == check_id)
    assert got.bucket == "passed" and not got.warnings, got.warnings


def test_every_check_has_a_breaking_fixture_case() -> None:
    covered = {c[1] for c in CASES} | set(WARN_ONLY) | {c[1] for c in WARN_CASES}
    assert covered == set(CHECKS), set(CHECKS) - covered


@pytest.mark.parametrize("check_id", sorted(WARN_ONLY))
def test_should_only_check_warns_on_the_fixture_that_breaks_its_rule(check_id: str) -> None:
    name, settings, rule = WARN_ONLY[check_id]
    ex = _execute(_server(name), settings, "stdio")
    c = next(c for c in ex.result.checks if c.id == check_id)
    assert c.bucket == "passed" and any(rule in w for w in c.warnings), (c.bucket, c.message, c.warnings)
    assert _failures(ex) == {} and ex.result.outcome == "passed"
    ref = next(c for c in _execute(list(REFERENCE), settings, "stdio").result.checks if c.id == check_id)
    assert ref.bucket == "passed" and not ref.warnings


# Variants that use a freedom (a MAY) the specification gives servers: (fixture, the MAYs it uses,
# run settings, transport, the outcome). Each run must fail no check; it passes (exit 0) unless the
# freedom leaves nothing to inspect (a tool answered synchronously, a task deleted once its TTL ran
# out), when it is honestly incomplete (exit 3).
PERMITTED: list[tuple[str, tuple[str, ...], dict[str, Any], str, str]] = [
    ("permits-revised-intervals", ("S-EXT-MAY-03",), EXT, "stdio", "passed"),
    ("permits-rate-limited-polls", ("S-EXT-MAY-02",), EXT, "stdio", "passed"),
    ("permits-rate-limited-polls", ("S-EXT-MAY-02",), EXT_INPUT, "http", "passed"),
    ("permits-delayed-update", ("S-EXT-MAY-05",), EXT_INPUT, "stdio", "passed"),
    ("permits-cancel-runs-on", ("S-EXT-MAY-07",), EXT, "stdio", "passed"),
    ("permits-cancel-runs-on", ("S-EXT-MAY-07",), EXT_CANCEL_RUNNING, "stdio", "incomplete"),
    ("permits-no-notifications", ("S-EXT-MAY-08",), EXT, "stdio", "passed"),
    ("permits-no-notifications", ("S-EXT-MAY-08",), EXT, "http", "passed"),
    # The ended task is gone before its re-reads: what they would judge cannot be seen (incomplete).
    ("permits-short-ttl", ("S-EXT-MAY-04",), EXT, "stdio", "incomplete"),
    ("permits-short-ttl", ("S-LEG-MAY-03",), LEGACY, "stdio", "incomplete"),
    ("permits-legacy-refuses-untasked", ("S-LEG-MAY-01",), LEGACY_ROLES, "stdio", "passed"),
    ("permits-legacy-other-ttl", ("S-LEG-MAY-02",), LEGACY, "stdio", "passed"),
    ("permits-legacy-immediate-response", ("S-LEG-MAY-07",), LEGACY, "stdio", "passed"),
    ("permits-legacy-deletes-cancelled", ("S-LEG-MAY-06",), LEGACY, "stdio", "passed"),
    ("permits-starts-input-required", ("S-EXT-MAY-09",), EXT_INPUT, "stdio", "passed"),
    ("permits-starts-input-required", ("S-EXT-MAY-09",), EXT_INPUT, "http", "passed"),
    ("permits-legacy-status-on-end", ("S-LEG-MAY-05",), LEGACY, "stdio", "passed"),
    ("permits-legacy-status-on-end", ("S-LEG-MAY-05",), LEGACY, "http", "passed"),
    ("permits-sync-answer", ("S-EXT-MAY-01",), EXT, "stdio", "incomplete"),
]


@pytest.mark.parametrize("name,mays,settings,transport,outcome", PERMITTED,
                         ids=[f"{c[0]}-{c[3]}-{n}" for n, c in enumerate(PERMITTED)])
def test_a_server_using_a_freedom_fails_no_check(
    name: str, mays: tuple[str, ...], settings: dict[str, Any], transport: str, outcome: str
) -> None:
    ex = _execute(_server(name), settings, transport)
    assert not _failures(ex), _failures(ex)
    assert ex.result.outcome == outcome, {c.id: (c.bucket, c.message) for c in ex.result.checks
                                          if c.bucket not in ("passed", "not-applicable")}
    # Warnings only where a policy or the MAY itself is named: using a freedom is not a deviation.
    stray = [w for c in ex.result.checks for w in c.warnings if "policy P-" not in w and "MAY" not in w]
    assert not stray, stray
    # Each freedom used is declared by a check that saw the traffic.
    honoured = {r for c in CHECKS.values() for r in c.permits}
    assert set(mays) <= honoured, set(mays) - honoured


def test_every_permits_fixture_is_run() -> None:
    import importlib.util

    spec = importlib.util.spec_from_file_location("broken_server", FIXTURES / "broken_server.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    permits = {n for n in module.VARIANTS if n.startswith("permits-")}
    assert permits == {c[0] for c in PERMITTED}, permits ^ {c[0] for c in PERMITTED}


def test_exit_code_is_1_for_a_broken_server() -> None:
    proc = cli("--command", " ".join(BROKEN), "--args", "--break", "--args", "nested-create", "--args",
               "--transport", "--args", "stdio", "--tool-name", "slow_compute", "--format", "json")
    assert proc.returncode == 1, proc.stderr




def test_ambiguous_is_error_to_failed_warns_without_failing() -> None:
    # A failed task whose tool, called without the extension, returns isError: true may be the
    # S-EXT-MUST-13 mistake or a tool that raised a protocol error; only a warning is honest.
    ex = _execute([*BROKEN, "--break", "isError-failed"], {"tool_name": "tool_error"}, "stdio")
    inline = next(c for c in ex.result.checks if c.id == "tasks-inline-result")
    assert inline.bucket == "passed" and any("S-EXT-MUST-13" in w for w in inline.warnings)
    ex = _execute(list(REFERENCE), {"tool_name": "tool_error"}, "stdio")
    inline = next(c for c in ex.result.checks if c.id == "tasks-inline-result")
    assert inline.bucket == "passed" and not inline.warnings


def test_should_level_deviations_warn_without_failing() -> None:
    # Legacy isError -> completed breaks a SHOULD (spec-digest §6 Q17): a warning, never a failure.
    ex = _execute([*BROKEN, "--break", "legacy-isError-completed"], {**LEGACY, "tool_name": "tool_error"}, "stdio")
    inline = next(c for c in ex.result.checks if c.id == "tasks-inline-result")
    assert inline.bucket == "passed" and any("isError" in w for w in inline.warnings)
    ex = _execute(list(REFERENCE), {**LEGACY, "tool_name": "tool_error"}, "stdio")
    inline = next(c for c in ex.result.checks if c.id == "tasks-inline-result")
    assert inline.bucket == "passed" and not inline.warnings


def test_a_legacy_server_without_the_optional_cancel_capability_passes() -> None:
    ex = _execute(_server("legacy-without-cancel"), LEGACY, "stdio")
    v = {c.id: c.bucket for c in ex.result.checks}
    assert ex.result.outcome == "passed", {c.id: c.message for c in ex.result.checks if c.bucket == "failed"}
    assert v["tasks-cancel-ack-shape"] == "not-applicable"
    assert v["tasks-invalid-task-id-rejected"] == "passed"


def test_the_fixture_index_explain_shows_names_exactly_these_cases() -> None:
    """`explain CHECK` names its breaking fixtures from tasks_conformance.fixture_index: it must
    list exactly the cases above, check by check, in their order."""
    from tasks_conformance.fixture_index import BREAKING

    cases: dict[str, list[str]] = {}
    for name, check_id, *_ in CASES:
        cases.setdefault(check_id, []).append(name)
    for check_id, (name, _settings, _rule) in WARN_ONLY.items():
        cases.setdefault(check_id, []).append(name)
    for name, check_id, *_ in WARN_CASES:
        cases.setdefault(check_id, []).append(name)
    assert {k: tuple(dict.fromkeys(v)) for k, v in cases.items()} == dict(BREAKING)
