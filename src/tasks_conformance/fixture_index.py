"""Which fixture server breaks each check's rule, for `explain` to name.

Every check has a server in the source repository that breaks exactly its rule, and nothing else:
a variant of the reference server (`fixtures/broken_server.py --break VARIANT`) or a case of the
hostile server (`fixtures/hostile/server.py --case CASE`, written `hostile:CASE` here). The tests
that run them (tests/test_breaking_fixtures.py) assert that this index names exactly their cases,
so it cannot drift from them. Stdlib only: `explain` stays cheap.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Final

BREAKING: Final[Mapping[str, tuple[str, ...]]] = MappingProxyType({
    "tasks-base-capabilities-required": ("capabilities-defaulted",),
    "tasks-base-foreign-origin-forbidden": ("origin-not-checked",),
    "tasks-base-input-required-where-allowed": ("tools-list-input-required",),
    "tasks-base-mcp-name-base64": ("mcp-name-base64-not-decoded",),
    "tasks-base-notification-accepted": ("notification-200",),
    "tasks-base-result-type-present": ("result-type-missing",),
    "tasks-base-unknown-method-not-found": ("unknown-method-http-200",),
    "tasks-base-unsupported-version": ("unsupported-version-without-data",),
    "tasks-cancel-ack-shape": ("cancel-returns-task", "legacy-cancel-terminal-ok", "cancel-rewrites-terminal",
                               "cancelled-reads-canceled"),
    "tasks-created-task-durable": ("not-durable", "task-bound-to-cookie"),
    "tasks-declaration-hygiene": ("legacy-caps-in-discover",),
    "tasks-extension-in-initialize-ignored": ("extension-on-legacy-session",),
    "tasks-fault-outcome": ("failed-without-error", "legacy-fault-result"),
    "tasks-forbidden-tool-task-refused": ("forbidden-with-task-runs",),
    "tasks-inline-result": ("no-inline-result",),
    "tasks-input-request-keys-unique": ("reuses-input-key",),
    "tasks-input-requests-declared-only": ("elicits-undeclared",),
    "tasks-input-required-update-completes": ("update-never-completes", "update-ack-echoes-task"),
    "tasks-input-stale-responses-ignored": ("stale-input-rejected",),
    "tasks-invalid-task-id-rejected": ("unknown-id-wrong-code",),
    "tasks-legacy-get-plain-json": ("legacy-get-as-sse",),
    "tasks-legacy-list-includes-task": ("legacy-list-omits-task",),
    "tasks-legacy-list-invalid-cursor": ("legacy-list-any-cursor",),
    "tasks-legacy-progress-token": ("legacy-progress-after-end",),
    "tasks-legacy-related-meta-absent": ("legacy-related-meta-on-get",),
    "tasks-legacy-result-blocks": ("legacy-result-early",),
    "tasks-legacy-status-transitions": ("legacy-cancel-not-sticky",),
    "tasks-legacy-task-id-wins": ("legacy-meta-wins",),
    "tasks-mcp-name-routing": ("ignore-mcp-name", "ignore-mcp-method"),
    "tasks-removed-methods-not-found": ("removed-methods-served",),
    "tasks-required-tool-needs-task": ("required-without-task-ok", "required-undeclared-sync"),
    "tasks-result-type-discipline": ("nested-create", "create-result-type-complete", "legacy-flat-create"),
    "tasks-status-payload-shape": ("get-result-type-task", "bad-timestamps", "status-not-a-string",
                                   "working-reads-running"),
    "tasks-subscription-no-progress-or-message": ("listen-forwards-logs",),
    "tasks-subscription-notifications": ("listen-missing-subscription-id",),
    "tasks-task-bound-to-principal": ("tasks-not-bound-to-caller",),
    "tasks-task-id-entropy": ("sequential-task-ids",),
    "tasks-terminal-status-immutable": ("terminal-status-flips",),
    "tasks-tool-error-outcome": ("isError-failed", "legacy-isError-result-error"),
    "tasks-ttl-integer-shape": ("ttl-not-integer",),
    "tasks-ttl-shape": ("legacy-ttl-names",),
    "tasks-undeclared-capability-names-requirements": ("32021-without-data",),
    "tasks-undeclared-capability-rejected": ("draft-32003", "undeclared-get-allowed", "legacy-caps-count-as-declared"),
    "tasks-undeclared-creation-refused": ("create-without-declaration", "draft-32003", "required-without-task-ok"),
    "tasks-wire-framing": ("hostile:noise", "hostile:double", "hostile:unknown-ids", "hostile:mislabelled-json"),
    "tasks-wire-resolvable": ("no-tasks", "experimental-placement"),
})


def fixture_commands(check_id: str) -> list[str]:
    """How to start each server that breaks `check_id`'s rule, from a source checkout."""
    out = []
    for name in BREAKING.get(check_id, ()):
        if name.startswith("hostile:"):
            out.append(f"python fixtures/hostile/server.py --case {name.removeprefix('hostile:')}")
        else:
            out.append(f"python fixtures/broken_server.py --break {name}")
    return out
