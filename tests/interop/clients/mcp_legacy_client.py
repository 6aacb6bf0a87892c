"""Harness: PyPI `mcp` 1.30 `ClientSession` and its experimental task API, on 2025-11-25 (runs in
the legacy clients' own virtualenv). Follows the client-harness convention of `tasks-conformance
client` (URL last, context in the env).

The API is the one its docstrings show: `call_tool_as_task` (which always sends params.task: the
API leaves gating to the caller, and this harness adds none of its own), `poll_task`, `tasks/result`
through `get_task_result` once the task ended or asks for input, `cancel_task`, and `list_tasks`
(page by page) where the context asks for a listing. Asked to host tasks (hostsTasks), the session
gets the `ExperimentalTaskHandlers` a user whose client hosts tasks writes: a list of the tasks it
hosts (none) and a cancel that finds no such task; the session declares tasks.list and tasks.cancel
from them.
"""

import asyncio
import json
import os
import sys

from mcp import ClientSession, McpError
from mcp.client.experimental.task_handlers import ExperimentalTaskHandlers
from mcp.client.streamable_http import streamable_http_client
from mcp.types import INVALID_PARAMS, CallToolResult, ElicitResult, ErrorData, ListTasksResult


def report(status: str, is_error: bool = False, error: dict | None = None) -> None:
    print("TASKS-CONFORMANCE-OUTCOME " + json.dumps({"status": status, "isError": is_error, "error": error}))


def rpc_error(exc: Exception) -> dict:
    error = getattr(exc, "error", None)  # McpError's ErrorData; a local validation error has none
    return {"code": getattr(error, "code", None), "message": str(exc)[:200]}


async def answer(context, params):
    return ElicitResult(action="accept", content={"colour": "blue"})


async def list_hosted(context, params):
    return ListTasksResult(tasks=[])  # this client hosts no task of its own


async def cancel_hosted(context, params):
    return ErrorData(code=INVALID_PARAMS, message=f"task not found: {params.taskId}")


async def follow(session: ClientSession, ctx: dict) -> None:
    tasks = session.experimental
    try:
        created = await tasks.call_tool_as_task(ctx["toolName"], ctx["arguments"])
    except Exception as exc:  # an error answer, or a plain result where a CreateTaskResult was expected
        return report("unknown", error=rpc_error(exc))
    task_id, status = created.task.taskId, created.task.status
    if ctx.get("listTasks"):
        cursor = None
        for _ in range(10):  # page by page, each nextCursor handed back as list_tasks returned it
            cursor = (await tasks.list_tasks(cursor)).nextCursor
            if cursor is None:
                break
    if ctx.get("cancel") and status == "working":
        try:
            await tasks.cancel_task(task_id)
        except McpError as exc:  # what a user would see of a refused cancel; the task is followed on
            print(f"cancel: {exc}", file=sys.stderr)
    async for snapshot in tasks.poll_task(task_id):
        status = snapshot.status
        if status == "input_required":
            break  # the input comes on the tasks/result stream, which also ends with the payload
    if status == "cancelled":
        return report("cancelled")
    try:
        result = await tasks.get_task_result(task_id, CallToolResult)
    except McpError as exc:
        return report("failed", error=rpc_error(exc))
    report(status if status in ("completed", "failed") else "completed", bool(result.isError))


async def main(url: str, ctx: dict) -> None:
    hosting = (ExperimentalTaskHandlers(list_tasks=list_hosted, cancel_task=cancel_hosted)
               if ctx.get("hostsTasks") else None)
    async with (streamable_http_client(url) as (read, write, _),
                ClientSession(read, write, elicitation_callback=answer, experimental_task_handlers=hosting) as session):
        await session.initialize()
        await follow(session, ctx)


asyncio.run(main(sys.argv[-1], json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT", "{}"))))
