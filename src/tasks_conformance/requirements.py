"""The server requirements the checks cite (ids from spec-digest §4; paraphrased in our words)."""

from __future__ import annotations

REQUIREMENTS: dict[str, str] = {
    "S-CORE-MUST-04": "A missing required client capability gets -32021 with data.requiredCapabilities (HTTP 400)",
    "S-CORE-MUST-05": "Capabilities are never inferred from earlier requests",
    "S-CORE-MUST-06": "A routing header that disagrees with the body gets HTTP 400 with -32020",
    "S-CORE-MUST-08": "The server implements server/discover",
    "S-CORE-MUST-12": "A subscription's first message is its acknowledgement; every notification on it is tagged",
    "S-CORE-MUST-13": "No undefined error codes from the reserved range -32020…-32099",
    "S-EXT-MUST-01": "No CreateTaskResult for a request that did not declare the extension",
    "S-EXT-MUST-02": "A request that cannot be served without a task gets -32021 naming the extension (HTTP 400)",
    "S-EXT-MUST-03": 'Every CreateTaskResult has resultType "task"',
    "S-EXT-MUST-04": 'No other result has resultType "task"',
    "S-EXT-MUST-05": "A CreateTaskResult is durable: tasks/get on the new id succeeds at once",
    "S-EXT-MUST-06": "A task object is flat with taskId, status, createdAt, lastUpdatedAt and ttlMs",
    "S-EXT-MUST-07": 'tasks/get results have resultType "complete"',
    "S-EXT-MUST-09": "An input_required task lists all outstanding inputRequests",
    "S-EXT-MUST-10": "A completed task inlines the original request's result",
    "S-EXT-MUST-12": "A failed task carries a JSON-RPC error object",
    "S-EXT-MUST-13": "A tool isError result makes the task completed, never failed",
    "S-EXT-MUST-15": 'A successful tasks/update answers an empty ack with resultType "complete"',
    "S-EXT-MUST-16": 'A successful tasks/cancel answers an empty ack with resultType "complete"',
    "S-EXT-MUST-17": "tasks/get on an unknown taskId gets -32602",
    "S-EXT-MUST-18": "tasks/get, tasks/update and tasks/cancel without the declaration get -32021",
    "S-EXT-MUST-19": "subscriptions/listen for taskIds without the declaration gets -32021",
    "S-EXT-MUST-25": "A legacy params.task on tools/call is ignored on the extension wire",
    "S-EXT-MUST-26": "server/discover never advertises the legacy capabilities.tasks",
    "S-EXT-MUST-31": "notifications/tasks params are a complete task object, like tasks/get's",
    "S-EXT-MUST-32": "Terminal statuses never change afterwards (derived from the state diagram)",
    "S-EXT-MUST-30": "Task notifications arrive only on a subscription that asked for those task ids",
    "S-EXT-MUST-33": 'tasks/* never answer resultType "input_required"',
    "S-EXT-MUST-35": "Over HTTP, a tasks/* Mcp-Name or Mcp-Method that disagrees with the body gets 400 / -32020",
    "S-EXT-SHOULD-01": "tasks/update on an unknown taskId gets -32602",
    "S-EXT-SHOULD-02": "tasks/cancel on an unknown taskId gets -32602",
    "S-LEG-MUST-01": "A tasks server declares capabilities.tasks at initialize (not under experimental)",
    "S-LEG-MUST-02": "A task-required tool called without params.task gets -32601",
    "S-LEG-MUST-03": "Undeclared task augmentation is processed normally, the task field ignored",
    "S-LEG-MUST-04": "An accepted augmented request returns CreateTaskResult {task: {...}}",
    "S-LEG-MUST-05": "Task ids are receiver-generated unique strings",
    "S-LEG-MUST-06": "A task starts in working",
    "S-LEG-MUST-08": "Every task response has createdAt and lastUpdatedAt",
    "S-LEG-MUST-09": "tasks/get includes the actual ttl (integer or null)",
    "S-LEG-MUST-10": "tasks/result on a terminal task returns the underlying result or the same error",
    "S-LEG-MUST-12": "The tasks/result response carries the related-task _meta",
    "S-LEG-MUST-13": "Server-to-client requests made for a task carry the related-task _meta",
    "S-LEG-MUST-15": "An unknown taskId in tasks/get, tasks/result or tasks/cancel gets -32602",
    "S-LEG-MUST-18": "Cancelling a task that already ended gets -32602",
    "S-LEG-MUST-19": "A valid cancel moves the task to cancelled before the response shows it",
    # Base JSON-RPC and transport rules the task checks rest on (JSON-RPC 2.0; the stdio and
    # Streamable HTTP transport pages of both eras). Ids of ours, not the digest's.
    "S-WIRE-01": "Over stdio the server writes nothing to stdout that is not an MCP message",
    "S-WIRE-02": "Every response answers a request the client sent, exactly once",
    "S-WIRE-03": "HTTP bodies carry JSON-RPC as application/json or text/event-stream",
}


def load() -> dict[str, str]:  # TEMPORARY until the requirements file lands
    return REQUIREMENTS
