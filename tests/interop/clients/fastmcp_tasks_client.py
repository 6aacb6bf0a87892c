"""Harness: fastmcp 4.1.4 `Client` with fastmcp-tasks 4.1.4 (the 2026-07-28 extension), following
the client-harness convention of `tasks-conformance client` (URL last, context in the env).

`Client.call_tool` follows a task transparently and returns the tool's result, so what the user
sees is a finished call: the outcome line says `completed` with the result's isError (the API does
not say how the task ended). To cancel, the task handle of `fastmcp_tasks.call_tool_task` is used.
"""

import asyncio
import json
import os
import sys

import fastmcp_tasks
from fastmcp import Client
from fastmcp.client.elicitation import ElicitResult


def report(status: str, is_error: bool = False, error: dict | None = None) -> None:
    print("TASKS-CONFORMANCE-OUTCOME " + json.dumps({"status": status, "isError": is_error, "error": error}))


async def answer(message, response_type, params, context):
    return ElicitResult(action="accept", content={"colour": "blue"})


async def main(url: str, ctx: dict) -> None:
    async with Client(url, elicitation_handler=answer) as client:
        request = ctx.get("request")
        if request:  # a request other than tools/call: prompts/get
            try:
                await client.get_prompt(request["params"]["name"], request["params"].get("arguments"))
                report("completed")
            except Exception as exc:  # what the user would be shown
                report("unknown", error={"code": getattr(exc, "code", None), "message": str(exc)[:200]})
            return
        if ctx.get("cancel"):
            task = await fastmcp_tasks.call_tool_task(client, ctx["toolName"], ctx["arguments"])
            if task.create_result.status == "working":
                await task.cancel()
            final = await task.wait(timeout=10)
            report(final.status)
            return
        result = await client.call_tool(ctx["toolName"], ctx["arguments"], raise_on_error=False)
        report("completed", bool(result.is_error))


asyncio.run(main(sys.argv[-1], json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT", "{}"))))
