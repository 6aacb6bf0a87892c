"""Harness: strands-agents 1.62.0 `MCPClient` (strands.tools.mcp) with `tasks_config`, following the
client-harness convention of `tasks-conformance client` (URL last, context in the env; over stdio the
server's command in MCP_CONFORMANCE_SERVER_COMMAND).

One harness for both eras: the `mcp` line installed beside strands decides which one it speaks. On
mcp 2.x (`.venv-extension-clients`, mcp 2.1.1) `tasks_config` turns on the 2026-07-28 tasks
extension; on mcp 1.x (`.venv-legacy-clients`, mcp 1.30.0) the 2025-11-25 task flow.

The API is the one strands documents for calling a tool directly: `MCPClient(..., tasks_config=...)`
in a `with` block, `list_tools_sync()` (which also records each tool's `taskSupport` on mcp 1.x), and
`call_tool_sync()`, which decides by itself whether to run the call as a task, follows it and returns
the tool's result. To cancel, the call's `cancel_signal` event is set 100 ms after the call began
(a user pressing stop: the API does not show the task's status while it runs); strands then cancels
the task it created. The outcome line is built from the `ToolResult` strands hands back: a result
(`isError` present) is a finished call, `cancelled` a cancelled one, and an exception strands caught
(no `isError`) an error without a code (strands keeps only its text).
"""

import json
import os
import shlex
import sys
import threading
from datetime import timedelta

from mcp import StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.types import ElicitResult
from strands.tools.mcp import MCPClient, TasksConfig

#: When the harness's user presses stop: after strands has begun the call (an event already set when
#: the call begins cancels it before any request), and before the task of
#: tasks-client-legacy-cancel-undeclared ends (two polls 200 ms apart; strands looks at the event every
#: 50 ms). Strands shields the tools/call that creates a task, so a signal set while it is in flight
#: still cancels the task its answer creates.
CANCEL_AFTER_S = 0.1


def report(status: str, is_error: bool = False, error: dict | None = None) -> None:
    print("TASKS-CONFORMANCE-OUTCOME " + json.dumps({"status": status, "isError": is_error, "error": error}),
          flush=True)


async def answer(context, params):
    return ElicitResult(action="accept", content={"colour": "blue"})


def text_of(result: dict) -> str:
    return " ".join(c.get("text", "") for c in result.get("content", []) if isinstance(c, dict))[:200]


def connect(last_arg: str) -> MCPClient:
    config = TasksConfig(poll_timeout=timedelta(seconds=20))
    server = os.environ.get("MCP_CONFORMANCE_SERVER_COMMAND")
    if server:  # stdio: spawn the scripted server ourselves
        argv = json.loads(server) if server.startswith("[") else shlex.split(last_arg)
        params = StdioServerParameters(command=argv[0], args=argv[1:], env=dict(os.environ))
        return MCPClient(lambda: stdio_client(params), elicitation_callback=answer, tasks_config=config)
    return MCPClient(url=last_arg, elicitation_callback=answer, tasks_config=config)


def main(last_arg: str, ctx: dict) -> None:
    with connect(last_arg) as client:
        client.list_tools_sync()
        request = ctx.get("request")
        if request:  # a request other than tools/call: prompts/get
            try:
                client.get_prompt_sync(request["params"]["name"], request["params"].get("arguments") or {})
                report("completed")
            except Exception as exc:  # what the user would be shown
                report("unknown", error={"code": getattr(getattr(exc, "error", None), "code", None),
                                         "message": str(exc)[:200]})
            return
        cancel = threading.Event() if ctx.get("cancel") else None
        timer = threading.Timer(CANCEL_AFTER_S, cancel.set) if cancel is not None else None
        if timer is not None:
            timer.start()
        try:
            result = client.call_tool_sync("harness-call", ctx["toolName"], ctx["arguments"], cancel_signal=cancel)
        finally:
            if timer is not None:
                timer.cancel()
        if result.get("cancelled"):
            report("cancelled")
        elif "isError" in result or result["status"] == "success":
            report("completed", bool(result.get("isError")))
        else:  # an exception strands caught and turned into text ("Tool execution failed: …")
            report("unknown", error={"code": None, "message": text_of(result)})


main(sys.argv[-1], json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT", "{}")))
