"""The command line that runs the whole suite against this server, printed beside READY.

Its confirm_action tool asks for input under the key confirm-1, so the full suite needs that
answer as well as the tool's name; without them a run against the server is incomplete. The
probe roles name the tools that end with isError, fail with a JSON-RPC error and run only as a
task: on the extension wire nothing in tools/list says which those are, and without them the
checks of those roles are not applicable (incomplete under --profile full).
"""

from __future__ import annotations

import shlex

INPUT_ANSWER = '{"confirm-1": {"action": "accept", "content": {"confirm": true}}}'
ROLE_PROBES = ("required=long_job", "tool-error=tool_error", "fault=rpc_error")


def full_suite_command(target: list[str]) -> str:
    """`tasks-conformance` with the target flags given (e.g. ["--url", URL])."""
    probes = [arg for role in ROLE_PROBES for arg in ("--probe", role)]
    return shlex.join(["tasks-conformance", *target, "--tool-name", "confirm_action",
                       "--input-responses", INPUT_ANSWER, *probes])
