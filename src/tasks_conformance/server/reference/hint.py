"""The command line that runs the whole suite against this server, printed beside READY.

Its confirm_action tool asks for input under the key confirm-1, so the full suite needs that
answer as well as the tool's name; without them a run against the server is incomplete. Its
other tools cover every probe role, so the command names them too and no role check is skipped.
"""

from __future__ import annotations

import shlex

INPUT_ANSWER = '{"confirm-1": {"action": "accept", "content": {"confirm": true}}}'
# The reference server's tool for each probe role (task and input: confirm_action).
ROLE_PROBES = ("required=long_job", "tool-error=tool_error", "fault=rpc_error", "sync=echo")


def full_suite_command(target: list[str]) -> str:
    """`tasks-conformance` with the target flags given (e.g. ["--url", URL])."""
    roles = [arg for probe in ROLE_PROBES for arg in ("--probe", probe)]
    return shlex.join(["tasks-conformance", *target, "--tool-name", "confirm_action",
                       "--input-responses", INPUT_ANSWER, *roles])
