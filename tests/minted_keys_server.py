"""The reference server with one change no rule forbids: on 2026-07-28 a task names its input
requests with keys of its own, `<taskId>:<hex>`, as fastmcp does. No answer written before the
run can name such a key, so `call --input-responses` must find the answer by "*" or by its shape
(tests/test_call.py). Flags are the reference server's.

    python tests/minted_keys_server.py [--transport http --port 0 ...]
"""

from __future__ import annotations

import secrets
import sys
from typing import Any

from tasks_conformance.server.reference import ReferenceServer, serve
from tasks_conformance.server.reference.core import TaskInput

JSON = dict[str, Any]


class MintedKeys(TaskInput):
    """A task's input, asked under a key the server mints for each request."""

    async def ask_input(self, key: str, request: JSON) -> JSON:
        return await super().ask_input(f"{self.record.task_id}:{secrets.token_hex(4)}", request)


class MintsInputKeys(ReferenceServer):
    async def execute_tool(self, spec: Any, arguments: JSON, io: Any) -> JSON:
        if isinstance(io, TaskInput) and io.era == "extension":
            io = MintedKeys(io.server, io.record)
        return await super().execute_tool(spec, arguments, io)


if __name__ == "__main__":
    raise SystemExit(serve(sys.argv[1:], server_class=MintsInputKeys))
