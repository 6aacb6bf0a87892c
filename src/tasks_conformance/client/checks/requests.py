"""Client checks of what every request carries: the extension's declaration, the core `_meta` and
headers, the routing headers of `tasks/*`, and no leftovers of the 2025-11-25 task wire."""

from __future__ import annotations

from collections.abc import Iterator

from tasks_conformance.client.checks.registry import client_check
from tasks_conformance.client.evidence import Exchange, ScenarioRun
from tasks_conformance.client.scenarios import scenario_names
from tasks_conformance.core.protocol import (
    HEADER_METHOD,
    HEADER_NAME,
    HEADER_PROTOCOL_VERSION,
    META_CLIENT_CAPS,
    META_PROTOCOL_VERSION,
    encode_header_value,
    get_path,
)
from tasks_conformance.core.text import shown
from tasks_conformance.core.verdict import Verdict, failed, not_applicable, passed, warn
from tasks_conformance.core.wires import Wire
from tasks_conformance.core.wires.base import lists_extension

TASK_METHODS = ("tasks/get", "tasks/update", "tasks/cancel")
EXTENSION = scenario_names(Wire.EXTENSION)  # these checks judge the 2026-07-28 runs only
SHOWN = 3  # offending requests a message names; the evidence lists them all (bounded)
MAX_EVIDENCE = 40


def _where(run: ScenarioRun, e: Exchange) -> str:
    return f"{shown(e.method)} (frame #{e.seq}, {run.name})"


def _declaring(run: ScenarioRun) -> Iterator[Exchange]:
    """The requests that must declare the extension: tools/call, tasks/*, and a listen asking for taskIds."""
    for e in run.exchanges:
        if not e.is_request:
            continue
        listens_for_tasks = e.method == "subscriptions/listen" and get_path(e.params, "notifications", "taskIds")
        if e.method in ("tools/call", *TASK_METHODS) or listens_for_tasks:
            yield e


def _declares(e: Exchange) -> bool:
    return lists_extension(e.params, "_meta", META_CLIENT_CAPS)


@client_check(
    id="tasks-client-declares-extension",
    area="requests",
    title="Every tools/call and tasks/* request declares the tasks extension in its own _meta",
    description="Each tools/call, tasks/get, tasks/update, tasks/cancel (and a subscriptions/listen for taskIds) "
                "carries extensions[\"io.modelcontextprotocol/tasks\"] in its _meta clientCapabilities; a "
                "declaration on an earlier request does not count, and the legacy capabilities.tasks is none.",
    requirements=("C-EXT-MUST-01",),
    scenarios=EXTENSION,
    needs=(),
)
def declares_extension(runs: list[ScenarioRun]) -> Verdict:
    missing = [(run, e) for run in runs for e in _declaring(run) if not _declares(e)]
    if missing:
        legacy = [e for _r, e in missing if get_path(e.params, "_meta", META_CLIENT_CAPS, "tasks") is not None]
        also = " (the legacy clientCapabilities.tasks is no declaration)" if legacy else ""
        return failed(
            f"{len(missing)} request(s) do not declare the extension{also}: "
            + "; ".join(_where(r, e) for r, e in missing[:SHOWN]),
            evidence=[e.seq for _r, e in missing][:MAX_EVIDENCE],
            details={"expected": "the extension in every tools/call and tasks/* request's _meta clientCapabilities",
                     "actual": f"{len(missing)} request(s) without it, first {_where(*missing[0])}"})
    count = sum(1 for run in runs for _e in _declaring(run))
    if not count:
        return not_applicable("the client sent no tools/call or tasks/* request, so no declaration to judge")
    return passed(f"all {count} tools/call and tasks/* requests declared the extension", judged=count)


@client_check(
    id="tasks-client-core-meta",
    area="requests",
    title="Every request carries the 2026-07-28 _meta, and every POST the matching MCP-Protocol-Version",
    description="Each request's params._meta has io.modelcontextprotocol/protocolVersion and "
                "io.modelcontextprotocol/clientCapabilities; over HTTP each POST carries MCP-Protocol-Version "
                "equal to that protocolVersion (on stdio there is no header to judge).",
    requirements=("C-CORE-MUST-01", "C-CORE-MUST-04"),
    # A server/discover first is one more request, held to the same _meta and header as any other.
    permits=("C-CORE-MAY-01",),
    scenarios=EXTENSION,
    needs=(),
)
def core_meta(runs: list[ScenarioRun]) -> Verdict:
    if not any(e.is_request for run in runs for e in run.exchanges):
        return not_applicable("the client sent no request, so no _meta to judge")
    no_meta: list[tuple[ScenarioRun, Exchange]] = []
    bad_header: list[tuple[ScenarioRun, Exchange]] = []
    for run in runs:
        for e in run.exchanges:
            if e.method == "initialize":
                continue  # the 2025-11-25 handshake is no 2026-07-28 request: tasks-client-era-detection's
            version = get_path(e.params, "_meta", META_PROTOCOL_VERSION)
            caps = get_path(e.params, "_meta", META_CLIENT_CAPS)
            if e.is_request and (not isinstance(version, str) or not isinstance(caps, dict)):
                no_meta.append((run, e))
            if e.http is None:
                continue  # stdio: no POST, no header (C-CORE-MUST-04 is about Streamable HTTP)
            header = e.header(HEADER_PROTOCOL_VERSION)
            if header is None or (isinstance(version, str) and header != version):
                bad_header.append((run, e))
    broken = tuple(r for r, found in (("C-CORE-MUST-01", no_meta), ("C-CORE-MUST-04", bad_header)) if found)
    if broken:
        parts = []
        if no_meta:
            parts.append(f"{len(no_meta)} request(s) lack the protocolVersion or clientCapabilities _meta: "
                         + "; ".join(_where(r, e) for r, e in no_meta[:SHOWN]))
        if bad_header:
            parts.append(f"{len(bad_header)} POST(s) lack MCP-Protocol-Version or disagree with the _meta: "
                         + "; ".join(_where(r, e) for r, e in bad_header[:SHOWN]))
        seqs = sorted({e.seq for _r, e in [*no_meta, *bad_header]})
        return failed("; ".join(parts), broken=broken, evidence=seqs[:MAX_EVIDENCE],
                      details={"expected": "protocolVersion and clientCapabilities in _meta, and a matching "
                                           "MCP-Protocol-Version header", "actual": parts[0]})
    requests = sum(e.is_request for run in runs for e in run.exchanges)
    if not any(e.http is not None for run in runs for e in run.exchanges):
        return passed("every request carried the protocolVersion and clientCapabilities _meta (stdio: no "
                      "MCP-Protocol-Version header to judge)", judged=requests)
    return passed("every request carried the protocolVersion and clientCapabilities _meta and a matching "
                  "MCP-Protocol-Version header", judged=requests)


def _header_problem(e: Exchange) -> tuple[str, str] | None:
    """(the rule, what is wrong) with one tasks/* request's routing headers, or None."""
    method_header = e.header(HEADER_METHOD)
    if method_header != e.method:
        return "C-EXT-MUST-05", f"Mcp-Method is {shown(method_header)}, not {shown(e.method)}"
    task_id = e.task_id
    name = e.header(HEADER_NAME)
    if task_id is None:
        return None  # a request without a taskId is another check's business
    if name is None:
        return "C-EXT-MUST-04", "no Mcp-Name"
    wanted = encode_header_value(task_id)
    if wanted != task_id and not name.startswith("=?base64?"):
        return "C-CORE-MUST-06", f"the task id {shown(task_id)} is not header-safe but Mcp-Name carries it unencoded"
    if e.decoded_header(HEADER_NAME) != task_id:
        return "C-EXT-MUST-04", f"Mcp-Name {shown(name)} is not the taskId {shown(task_id)}"
    return None


@client_check(
    id="tasks-client-routing-headers",
    area="requests",
    title="tasks/* requests carry Mcp-Method and an Mcp-Name equal to the taskId (base64 when unsafe)",
    description="Over Streamable HTTP every tasks/get, tasks/update and tasks/cancel carries Mcp-Method equal to "
                "its method and Mcp-Name equal to params.taskId, sent as =?base64?…?= when the id is not "
                "header-safe. Not applicable on stdio, which has no headers (policy P-23).",
    requirements=("C-EXT-MUST-04", "C-EXT-MUST-05", "C-CORE-MUST-06"),
    scenarios=EXTENSION,
    # The one scenario whose task id is not header-safe: C-CORE-MUST-06 is judged there only.
    needs=("tasks-client-unsafe-task-id",),
)
def routing_headers(runs: list[ScenarioRun]) -> Verdict:
    runs = [run for run in runs if run.transport == "http"]
    if not runs:
        return not_applicable("Mcp-Method and Mcp-Name are Streamable HTTP headers: a stdio run has none to judge "
                              "(policy P-23)", policies=("P-23",))
    problems = [(run, e, found) for run in runs for e in run.sent(*TASK_METHODS) if e.is_request
                and (found := _header_problem(e)) is not None]
    if problems:
        broken = tuple(dict.fromkeys(rule for _r, _e, (rule, _what) in problems))
        return failed(f"{len(problems)} tasks/* request(s) with wrong routing headers: "
                      + "; ".join(f"{_where(r, e)}: {what}" for r, e, (_rule, what) in problems[:SHOWN]),
                      broken=broken, evidence=[e.seq for _r, e, _p in problems][:MAX_EVIDENCE],
                      details={"expected": "Mcp-Method the method, Mcp-Name the taskId (base64 when not header-safe)",
                               "actual": problems[0][2][1]})
    count = sum(1 for run in runs for e in run.sent(*TASK_METHODS) if e.is_request)
    if count == 0:
        return not_applicable("the client sent no tasks/* request, so no routing header to judge")
    return passed(f"all {count} tasks/* requests carried Mcp-Method and the task's Mcp-Name", judged=count)


@client_check(
    id="tasks-client-no-removed-methods",
    area="requests",
    title="The client never calls tasks/result or tasks/list on 2026-07-28",
    description="tasks/result and tasks/list were removed by the extension; the outcome is read from tasks/get, "
                "and there is no task inventory.",
    requirements=("C-EXT-MUST-11", "C-EXT-MUST-12"),
    scenarios=EXTENSION,
    needs=(),
)
def no_removed_methods(runs: list[ScenarioRun]) -> Verdict:
    sent = [(run, e) for run in runs for e in run.sent("tasks/result", "tasks/list")]
    if sent:
        broken = tuple(dict.fromkeys("C-EXT-MUST-11" if e.method == "tasks/result" else "C-EXT-MUST-12"
                                     for _r, e in sent))
        return failed("the client called a removed method: " + "; ".join(_where(r, e) for r, e in sent[:SHOWN]),
                      broken=broken, evidence=[e.seq for _r, e in sent][:MAX_EVIDENCE],
                      details={"expected": "no tasks/result or tasks/list",
                               "actual": ", ".join(dict.fromkeys(e.method for _r, e in sent))})
    if not any(e.is_request for run in runs for e in run.exchanges):
        return not_applicable("the client sent no request to judge")
    return passed("no tasks/result or tasks/list was sent",
                  judged=sum(e.is_request for run in runs for e in run.exchanges))


@client_check(
    id="tasks-client-no-legacy-leftovers",
    area="requests",
    title="No legacy params.task or legacy clientCapabilities.tasks beside the extension",
    description="On 2026-07-28 the server decides whether to create a task: a tools/call carries no params.task, "
                "and a request declares the extension, not the 2025-11-25 capabilities.tasks. Beside a declared "
                "extension either is harmless to a compliant server, so it warns (policy P-32); without the "
                "extension the request is undeclared, which tasks-client-declares-extension fails.",
    requirements=("C-EXT-MUST-13", "C-EXT-MUST-14"),
    scenarios=EXTENSION,
    needs=(),
)
def no_legacy_leftovers(runs: list[ScenarioRun]) -> Verdict:
    if not any(True for run in runs for _e in _declaring(run)):
        return not_applicable("the client sent no tools/call or tasks/* request to judge")
    task_param = [(r, e) for r in runs for e in r.sent("tools/call") if "task" in e.params and _declares(e)]
    legacy_caps = [(r, e) for r in runs for e in _declaring(r)
                   if get_path(e.params, "_meta", META_CLIENT_CAPS, "tasks") is not None and _declares(e)]
    warnings = []
    if task_param:
        warnings.append(warn(f"{len(task_param)} tools/call sent the legacy params.task beside the extension "
                             f"(C-EXT-MUST-13; policy P-32): " + "; ".join(_where(r, e) for r, e in task_param[:SHOWN]),
                             "P-32"))
    if legacy_caps:
        warnings.append(warn(f"{len(legacy_caps)} request(s) declared the legacy clientCapabilities.tasks beside "
                             f"the extension (C-EXT-MUST-14; policy P-32): "
                             + "; ".join(_where(r, e) for r, e in legacy_caps[:SHOWN]), "P-32"))
    seqs = sorted({e.seq for _r, e in [*task_param, *legacy_caps]})
    return passed("no legacy task wire beside the extension" if not warnings
                  else "the legacy task wire was sent beside the extension (harmless to a compliant server)",
                  warnings=warnings, evidence=seqs[:MAX_EVIDENCE],
                  judged=sum(1 for run in runs for _e in _declaring(run)))
