"""The client scenarios: what the scripted server does in each, what it tells the client's harness
(the context), and which client rules the scenario lets the checks judge.

A scenario is data. The scripted server of its era plays its script (scripted/extension.py a `Script`,
scripted/legacy.py a `LegacyScript`); the harness receives its
name, the protocol version of its era and its context (the official conformance suite's client
harness convention: `MCP_CONFORMANCE_SCENARIO`, `MCP_CONFORMANCE_PROTOCOL_VERSION`,
`MCP_CONFORMANCE_CONTEXT`, the server URL as the last argument; over stdio the server's command
instead, and in `MCP_CONFORMANCE_SERVER_COMMAND`). The same script is played over either transport.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Final, Literal

from tasks_conformance.core.eras import Era
from tasks_conformance.core.wires import DIALECTS, Wire

Transport = Literal["http", "stdio"]
TRANSPORTS: Final[tuple[Transport, ...]] = ("http", "stdio")
# The protocol version a harness is told for each era (pinned: harnesses depend on it).
PROTOCOL_VERSION: Final[dict[str, str]] = {str(wire): d.protocol_version for wire, d in DIALECTS.items()}

TOOL = "scripted_task"
TTL_MS = 600_000
UNSERVED_VERSION = "2099-01-01"  # a protocol version no scripted server serves (tasks-client-version-negotiation)
EXPIRY_TTL_MS = 1_000  # the expiry scenarios' task: gone a second after its creation, while working
# The tools the 2025-11-25 scripted server lists, by their execution.taskSupport (None: absent,
# which 2025-11-25 reads as forbidden). A scenario that needs a task names the required tool, which
# every client calls as a task: one that calls an optional tool plainly (C-LEG-MAY-01) enters it too.
REQUIRED_TOOL, FORBIDDEN_TOOL = "required_task", "plain_tool"
LEGACY_TOOLS: Final[dict[str, str | None]] = {TOOL: "optional", REQUIRED_TOOL: "required", FORBIDDEN_TOOL: "forbidden",
                                             "unmarked_tool": None}
# What the 2025-11-25 scripted server declares under capabilities.tasks unless a scenario says otherwise.
LEGACY_TASKS: Final[dict[str, Any]] = {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}


@dataclass(frozen=True)
class Snapshot:
    """What one tasks/get reads. The last snapshot of a script repeats."""

    status: str
    poll_interval_ms: int | None = 200
    input_key: str | None = None  # input_required: the one outstanding elicitation's key


@dataclass(frozen=True)
class Script:
    """The scripted server's side of one scenario (extension era)."""

    # "task": tools/call gets a CreateTaskResult; "complete": a plain CallToolResult; "error": the
    # script's `error`, as the tools/call's own JSON-RPC error (no task); "slow": the plain
    # CallToolResult, but only after a while (scripted/waits.py slow_answer_s), unless the call is cancelled.
    answer: Literal["task", "complete", "error", "slow"] = "task"
    # The task's reads, in order; `create` is what the CreateTaskResult says.
    create: Snapshot = Snapshot("working")
    reads: tuple[Snapshot, ...] = (Snapshot("working"), Snapshot("completed"))
    # A completed task's inlined CallToolResult, or a failed task's JSON-RPC error.
    result: dict[str, Any] = field(default_factory=lambda: {"content": [{"type": "text", "text": "done"}],
                                                            "isError": False})
    error: dict[str, Any] | None = None
    # After the answer to an input key, the next read repeats the stale input_required once.
    stale_input_after_update: bool = False
    # The task never ends by itself (a cancel scenario): working until tasks/cancel.
    until_cancelled: bool = False
    # prompts/get is answered with a CreateTaskResult (not a task-capable method in 2026-07-28).
    task_on_prompt: bool = False
    # The prefix of the task's id; the rest is random (a server's ids cannot be guessed).
    task_id: str = "task-"
    # The task's ttlMs (ttl on 2025-11-25): once that long has passed since its creation the task
    # is deleted, and every request naming it gets "task not found" (-32602), as a server may do.
    # Ten minutes, far beyond any scenario, unless a scenario is about the task expiring.
    ttl_ms: int = TTL_MS
    # The InputRequiredResults (MRTR) a declared tools/call gets before its CreateTaskResult, each
    # asking one elicitation (key mrtr-1, mrtr-2, …) with a requestState; only of a client whose
    # tools/call declared elicitation (a server asks for no undeclared input).
    mrtr_rounds: int = 0
    # prompts/get is answered with a resultType no protocol value or negotiated extension defines.
    odd_result_on_prompt: bool = False
    # subscriptions/listen is served (else -32601): acknowledged with none of the taskIds asked for,
    # then nothing is sent on it (tasks-client-subscription-ack, C-EXT-SHOULD-11).
    serves_listen: bool = False


@dataclass(frozen=True)
class LegacyScript(Script):
    """The 2025-11-25 scripted server's side of one scenario. Of `Script` it plays `create`,
    `reads` (each tasks/get is the next read; a client blocked in tasks/result sees the reads go by
    at their pollInterval), `result` and `error` (what tasks/result answers once the task ended) and
    `until_cancelled`; task ids are random, as a server without an authorization context makes them."""

    # capabilities.tasks of the initialize result.
    tasks: dict[str, Any] = field(default_factory=lambda: dict(LEGACY_TASKS))
    # The pages tasks/list serves: each but the last ends with an opaque nextCursor (one of its own
    # for each listing), and the last page is empty where the session has fewer tasks than pages.
    list_pages: int = 1
    # While the tools/call runs, ask the client for what its initialize declared it hosts: tasks/list
    # where it declared tasks.list, tasks/cancel of a task it never had where tasks.cancel (C-LEG-MUST-12).
    asks_hosted: bool = False
    # Over HTTP, serve the GET SSE stream of each session (else GET is answered 405) and send a
    # task's elicitation/create there, rather than on a tasks/result stream, where the client opened
    # one before its task needed input (C-LEG-SHOULD-06).
    input_on_get_stream: bool = False


@dataclass(frozen=True)
class Scenario:
    name: str
    description: str
    eras: tuple[Era, ...]
    script: Script
    # Extra context keys beyond toolName and arguments (cancel, request, listTasks, hostsTasks).
    context: dict[str, Any] = field(default_factory=dict)
    # The client rules the scenario lets the checks judge (documentation; checks declare their own).
    rules: tuple[str, ...] = ()
    tool: str = TOOL  # the tool the harness is asked to call
    # The transports it runs on: a scenario about HTTP headers only (tasks-client-unsafe-task-id) has
    # nothing to show on stdio.
    transports: tuple[Transport, ...] = TRANSPORTS

    @property
    def request_method(self) -> str:
        """The request the scenario is about: tools/call of the context's tool, or the context's
        own `request` (tasks-client-task-on-prompt's prompts/get). A client that never sends it did
        not take part in the scenario (client/runner.py: "the client never called the tool")."""
        request = self.context.get("request")
        method = request.get("method") if isinstance(request, dict) else None
        return method if isinstance(method, str) else "tools/call"

    def context_for(self, era: Era) -> dict[str, Any]:
        """MCP_CONFORMANCE_CONTEXT: toolName and arguments always, then the scenario's keys."""
        return {"toolName": self.tool, "arguments": {"seconds": 1}, **self.context}


_WORKING_TWICE = (Snapshot("working"), Snapshot("working"), Snapshot("completed"))

EXTENSION_SCENARIOS: Final[tuple[Scenario, ...]] = (
    Scenario(
        "tasks-client-lifecycle",
        "a task that completes after two polls; pollIntervalMs 200",
        ("extension",), Script(reads=_WORKING_TWICE),
        rules=("C-EXT-MUST-01", "C-EXT-MUST-02", "C-EXT-MUST-04", "C-EXT-MUST-05", "C-EXT-MUST-11",
               "C-EXT-MUST-12", "C-EXT-SHOULD-01", "C-EXT-SHOULD-03", "C-EXT-SHOULD-04", "C-CORE-MUST-01",
               "C-CORE-MUST-04", "C-CORE-MUST-11", "C-CORE-MUST-12"),
    ),
    Scenario(
        "tasks-client-sync-result",
        "a plain CallToolResult although the client declared tasks: nothing to poll",
        ("extension",), Script(answer="complete"),
        rules=("C-EXT-MUST-02",),
    ),
    Scenario(
        "tasks-client-interval-change",
        "pollIntervalMs 150 at creation, 400 from the first read on",
        ("extension",),
        Script(create=Snapshot("working", 150),
               reads=(Snapshot("working", 400), Snapshot("working", 400), Snapshot("completed", 400))),
        rules=("C-EXT-SHOULD-01", "C-EXT-SHOULD-02"),
    ),
    Scenario(
        "tasks-client-input",
        "input_required with one elicitation (key k1), a stale snapshot after the answer, then completed (a client "
        "whose tools/call declared no elicitation is asked nothing)",
        ("extension",),
        Script(reads=(Snapshot("input_required", input_key="k1"), Snapshot("working"), Snapshot("completed")),
               stale_input_after_update=True),
        rules=("C-EXT-MUST-09", "C-EXT-SHOULD-06", "C-EXT-SHOULD-07", "C-EXT-SHOULD-08"),
    ),
    Scenario(
        "tasks-client-cancel",
        "a task that runs until cancelled; the harness is asked to cancel it once it is seen working",
        ("extension",), Script(reads=(Snapshot("working"),), until_cancelled=True),
        context={"cancel": True},
        rules=("C-EXT-MUST-06",),
    ),
    Scenario(
        "tasks-client-tool-error",
        "a task that completes with a CallToolResult whose isError is true",
        ("extension",),
        Script(result={"content": [{"type": "text", "text": "the tool reported an error"}], "isError": True}),
        rules=("C-EXT-MUST-15",),
    ),
    Scenario(
        "tasks-client-failed",
        "a task that fails with a JSON-RPC error (-32000) and a statusMessage",
        ("extension",),
        Script(reads=(Snapshot("working"), Snapshot("failed")),
               error={"code": -32000, "message": "the scripted tool failed"}),
        rules=("C-EXT-MUST-16",),
    ),
    Scenario(
        "tasks-client-direct-error",
        "the same JSON-RPC error (-32000) as tasks-client-failed's task, answered to the tools/call itself: how "
        "the client shows that error is the measure of how it shows the failed task's",
        ("extension",),
        Script(answer="error", error={"code": -32000, "message": "the scripted tool failed"}),
        rules=("C-EXT-MUST-16",),
    ),
    Scenario(
        "tasks-client-task-on-prompt",
        "prompts/get answered with a CreateTaskResult, which no 2026-07-28 method but tools/call may get",
        ("extension",), Script(task_on_prompt=True),
        context={"request": {"method": "prompts/get", "params": {"name": "scripted_prompt"}}},
        rules=("C-EXT-MUST-03",),
    ),
    Scenario(
        "tasks-client-ttl-expiry",
        f"a task with ttlMs {EXPIRY_TTL_MS} that is still working when it runs out: from then on tasks/get "
        "answers -32602 task not found",
        ("extension",), Script(reads=(Snapshot("working"),), ttl_ms=EXPIRY_TTL_MS),
        rules=("C-EXT-MAY-01",),
    ),
    Scenario(
        "tasks-client-unsafe-task-id",
        "a task id that is not header-safe, so Mcp-Name must carry it base64-encoded",
        ("extension",), Script(task_id="tâche-"),
        rules=("C-EXT-MUST-04", "C-CORE-MUST-06"), transports=("http",),
    ),
    Scenario(
        "tasks-client-mrtr",
        "a tools/call answered with two InputRequiredResults (one elicitation and a requestState each) before its "
        "CreateTaskResult; the task then completes (a client whose tools/call declared no elicitation gets the "
        "task at once)",
        ("extension",), Script(mrtr_rounds=2),
        rules=("C-EXT-MUST-10", "C-CORE-MUST-08"),
    ),
    Scenario(
        "tasks-client-version-negotiation",
        f"the harness is asked to offer protocol version {UNSERVED_VERSION} first, which the server does not serve: "
        "it answers -32022 with data.supported, and a retry with a supported version gets a task that completes",
        ("extension",), Script(), context={"offerVersion": UNSERVED_VERSION},
        rules=("C-CORE-SHOULD-03",),
    ),
    Scenario(
        "tasks-client-request-cancel",
        "the harness is asked to cancel the call itself while it is in flight (cancelRequest); the server answers "
        "it with a plain result only after 3 s, unless the client cancels it first: on stdio with "
        "notifications/cancelled naming its id, over HTTP by closing its response stream",
        ("extension",), Script(answer="slow"), context={"cancelRequest": True},
        rules=("C-CORE-MUST-09",),
    ),
    Scenario(
        "tasks-client-subscription-ack",
        "the harness is asked to subscribe to its task's notifications (subscribe); subscriptions/listen is "
        "acknowledged with none of the taskIds asked for, so the task is left to polling: it completes after three "
        "polls, and no notifications/tasks ever comes",
        ("extension",), Script(reads=(Snapshot("working"), Snapshot("working"), Snapshot("working"),
                                      Snapshot("completed")), serves_listen=True),
        context={"subscribe": True},
        rules=("C-EXT-SHOULD-11", "C-EXT-MAY-02"),
    ),
    Scenario(
        "tasks-client-unknown-result-type",
        "prompts/get answered with a resultType no protocol value or negotiated extension defines",
        ("extension",), Script(odd_result_on_prompt=True),
        context={"request": {"method": "prompts/get", "params": {"name": "scripted_prompt"}}},
        rules=("C-CORE-MUST-07",),
    ),
)

_LEGACY_WORKING_TWICE = (Snapshot("working"), Snapshot("working"), Snapshot("completed"))
_NO_CANCEL: Final[dict[str, Any]] = {"list": {}, "requests": {"tools": {"call": {}}}}

LEGACY_SCENARIOS: Final[tuple[Scenario, ...]] = (
    Scenario(
        "tasks-client-legacy-lifecycle",
        "an optional tool called as a task that completes after two polls; pollInterval 200",
        ("legacy",), LegacyScript(reads=_LEGACY_WORKING_TWICE),
        rules=("C-LEG-MUST-01", "C-LEG-MUST-02", "C-LEG-MUST-05", "C-LEG-MUST-10", "C-LEG-MUST-14", "C-LEG-MUST-15",
               "C-LEG-SHOULD-01", "C-LEG-SHOULD-02", "C-LEG-SHOULD-05", "C-EXT-SHOULD-12",
               "C-LEG-MUST-04", "C-LEG-MUST-06", "C-LEG-SHOULD-03", "C-LEG-MAY-04", "C-LEG-MAY-05"),
    ),
    Scenario(
        "tasks-client-legacy-required",
        "a tool whose taskSupport is required: it must be called with params.task (-32601 without)",
        ("legacy",), LegacyScript(), tool=REQUIRED_TOOL,
        rules=("C-LEG-MUST-03", "C-LEG-MUST-05", "C-LEG-SHOULD-02",
               "C-LEG-MUST-04", "C-LEG-MUST-06", "C-LEG-SHOULD-03"),
    ),
    Scenario(
        "tasks-client-legacy-forbidden",
        "a tool whose taskSupport is forbidden: it must be called plainly (-32601 with params.task)",
        ("legacy",), LegacyScript(), tool=FORBIDDEN_TOOL,
        rules=("C-LEG-MUST-02",),
    ),
    Scenario(
        "tasks-client-legacy-undeclared",
        "a server whose capabilities.tasks has no requests.tools.call: no tool may get params.task",
        ("legacy",), LegacyScript(tasks={"list": {}, "cancel": {}}),
        rules=("C-LEG-MUST-01",),
    ),
    Scenario(
        "tasks-client-legacy-failed",
        "a task of the required tool that fails; tasks/result answers its JSON-RPC error (-32000)",
        ("legacy",),
        LegacyScript(reads=(Snapshot("working"), Snapshot("failed")),
                     error={"code": -32000, "message": "the scripted tool failed"}),
        rules=("C-LEG-MUST-05",), tool=REQUIRED_TOOL,
    ),
    Scenario(
        "tasks-client-legacy-tool-error",
        "a task of the required tool whose CallToolResult has isError true: it ends failed, and tasks/result "
        "answers that result",
        ("legacy",),
        LegacyScript(reads=(Snapshot("working"), Snapshot("failed")),
                     result={"content": [{"type": "text", "text": "the tool reported an error"}], "isError": True}),
        rules=("C-LEG-MUST-05",), tool=REQUIRED_TOOL,
    ),
    Scenario(
        "tasks-client-legacy-input",
        "a task of the required tool that reads input_required; its elicitation comes on the tasks/result stream, "
        "and the client's answer lets it complete",
        ("legacy",),
        LegacyScript(reads=(Snapshot("working"), Snapshot("input_required", input_key="colour"), Snapshot("working"),
                            Snapshot("completed"))),
        rules=("C-LEG-MUST-05", "C-LEG-MUST-08", "C-LEG-MUST-13", "C-LEG-SHOULD-04"), tool=REQUIRED_TOOL,
    ),
    Scenario(
        "tasks-client-legacy-get-stream",
        "over HTTP, a task of the required tool that reads input_required; the server serves the session's GET SSE "
        "stream and sends the task's elicitation there, not on a tasks/result stream, where the client opened one "
        "(a client that opens none gets it on its tasks/result stream, and is not judged)",
        ("legacy",),
        LegacyScript(reads=(Snapshot("working"), Snapshot("input_required", input_key="colour"), Snapshot("working"),
                            Snapshot("completed")), input_on_get_stream=True),
        rules=("C-LEG-SHOULD-06",), tool=REQUIRED_TOOL, transports=("http",),
    ),
    Scenario(
        "tasks-client-legacy-cancel",
        "a task of the required tool that runs until cancelled; the harness is asked to cancel it once it is seen "
        "working",
        ("legacy",), LegacyScript(reads=(Snapshot("working"),), until_cancelled=True),
        context={"cancel": True},
        rules=("C-LEG-MUST-07", "C-LEG-SHOULD-05", "C-LEG-SHOULD-07"), tool=REQUIRED_TOOL,
    ),
    Scenario(
        "tasks-client-legacy-cancel-undeclared",
        "the harness is asked to cancel, but the server declares no tasks.cancel; the required tool's task "
        "completes after two polls",
        ("legacy",), LegacyScript(reads=_LEGACY_WORKING_TWICE, tasks=_NO_CANCEL),
        context={"cancel": True},
        rules=("C-LEG-MUST-07", "C-LEG-SHOULD-07"), tool=REQUIRED_TOOL,
    ),
    Scenario(
        "tasks-client-legacy-list",
        "the harness is asked to list the session's tasks once its task exists; tasks/list answers in two pages, "
        "the first ending with an opaque nextCursor; the required tool's task completes after two polls",
        ("legacy",), LegacyScript(reads=_LEGACY_WORKING_TWICE, list_pages=2),
        context={"listTasks": True},
        rules=("C-LEG-MUST-09", "C-LEG-SHOULD-07"), tool=REQUIRED_TOOL,
    ),
    Scenario(
        "tasks-client-legacy-hosted",
        "the forbidden tool, called plainly; while the call runs the server sends the client tasks/list where its "
        "initialize declared tasks.list, and tasks/cancel of a task it never had where tasks.cancel; the harness is "
        "asked to declare what its client hosts (a pure requestor declares none and is not judged)",
        ("legacy",), LegacyScript(asks_hosted=True),
        context={"hostsTasks": True},
        rules=("C-LEG-MUST-12",), tool=FORBIDDEN_TOOL,
    ),
    Scenario(
        "tasks-client-legacy-ttl-expiry",
        f"a task of the required tool granted ttl {EXPIRY_TTL_MS} (whatever ttl the client asked for) that is "
        "still working when it runs out: from then on tasks/get answers -32602 task not found",
        ("legacy",), LegacyScript(reads=(Snapshot("working"),), ttl_ms=EXPIRY_TTL_MS),
        rules=("C-LEG-MAY-02",), tool=REQUIRED_TOOL,
    ),
)

SCENARIOS: Final[tuple[Scenario, ...]] = (*EXTENSION_SCENARIOS, *LEGACY_SCENARIOS)
BY_NAME: Final[dict[str, Scenario]] = {s.name: s for s in SCENARIOS}


def scenario_names(wire: Wire) -> tuple[str, ...]:
    """The names of the scenarios spoken on one tasks wire (a check's `scenarios`, so that it
    judges that wire's runs only)."""
    return tuple(s.name for s in SCENARIOS if wire in s.eras)
