"""Harness: fastmcp 3.4.11 `Client.call_tool(..., task=True)` on 2025-11-25 (runs in the legacy
clients' own virtualenv). Follows the client-harness convention of `tasks-conformance client` (URL
last, context in the env).

`task=True` returns a task handle (a plain result becomes an "immediate" one); `result()` follows
the task to its end, `cancel()` sends tasks/cancel, and `Client.list_tasks(cursor)` pages through
the task list where the context asks for a listing.
"""

import asyncio
import json
import os
import sys

from fastmcp import Client
from fastmcp.client.elicitation import ElicitResult
from mcp import McpError


def report(status: str, is_error: bool = False, error: dict | None = None) -> None:
    print("TASKS-CONFORMANCE-OUTCOME " + json.dumps({"status": status, "isError": is_error, "error": error}))


async def answer(message, response_type, params, context):
    return ElicitResult(action="accept", content={"colour": "blue"})


async def main(url: str, ctx: dict) -> None:
    async with Client(url, elicitation_handler=answer) as client:
        try:
            task = await client.call_tool(ctx["toolName"], ctx["arguments"], task=True, raise_on_error=False)
        except McpError as exc:
            return report("unknown", error={"code": exc.error.code, "message": exc.error.message})
        if ctx.get("listTasks"):
            cursor = None
            for _ in range(10):  # page by page, each nextCursor handed back as list_tasks returned it
                cursor = (await client.list_tasks(cursor)).get("nextCursor")
                if cursor is None:
                    break
        if ctx.get("cancel") and not task.returned_immediately:
            try:
                await task.cancel()
            except McpError as exc:  # what a user would see of a refused cancel; the task is followed on
                print(f"cancel: {exc}", file=sys.stderr)
        try:
            result = await task.result()
        except McpError as exc:
            return report((await task.status()).status, error={"code": exc.error.code, "message": exc.error.message})
        status = "completed" if task.returned_immediately else (await task.status()).status
        report(status, bool(result.is_error))


asyncio.run(main(sys.argv[-1], json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT", "{}"))))
