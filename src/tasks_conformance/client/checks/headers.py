"""Client checks of the Streamable HTTP request headers beyond tasks/* (whose routing headers
requests.py judges): the Accept header of every POST, Mcp-Method on every request, and the Mcp-Name
of tools/call, prompts/get and resources/read."""

from __future__ import annotations

from tasks_conformance.client.checks.core_rules import LEGACY_HANDSHAKE
from tasks_conformance.client.checks.registry import client_check
from tasks_conformance.client.evidence import Exchange, ScenarioRun
from tasks_conformance.client.scenarios import scenario_names
from tasks_conformance.core.protocol import HEADER_METHOD, HEADER_NAME, mcp_name_for
from tasks_conformance.core.text import shown
from tasks_conformance.core.verdict import Verdict, failed, not_applicable, passed
from tasks_conformance.core.wires import Wire

EXTENSION = scenario_names(Wire.EXTENSION)
ROUTED_ELSEWHERE = ("tasks/get", "tasks/update", "tasks/cancel")  # tasks-client-routing-headers' (C-EXT-MUST-04/05)
ACCEPTED = ("application/json", "text/event-stream")
SHOWN = 3
MAX_EVIDENCE = 40


def _accepts(value: str | None) -> bool:
    """Accept lists both media types (a range such as */* lists neither by name)."""
    listed = {part.split(";", 1)[0].strip().lower() for part in (value or "").split(",")}
    return all(kind in listed for kind in ACCEPTED)


def _problem(e: Exchange) -> tuple[str, str] | None:
    """(the rule, what is wrong) with one POST's headers, or None."""
    if not _accepts(e.header("Accept")):
        return "C-CORE-MUST-03", f"Accept is {shown(e.header('Accept'))}, not both {' and '.join(ACCEPTED)}"
    if not e.is_request or e.method in ROUTED_ELSEWHERE:
        return None
    if e.header(HEADER_METHOD) != e.method:
        return "C-CORE-MUST-05", f"Mcp-Method is {shown(e.header(HEADER_METHOD))}, not {shown(e.method)}"
    wanted = mcp_name_for(e.method, e.params)
    if wanted is not None and e.decoded_header(HEADER_NAME) != wanted:
        return "C-CORE-MUST-05", f"Mcp-Name is {shown(e.header(HEADER_NAME))}, not {shown(wanted)}"
    return None


@client_check(
    id="tasks-client-request-headers",
    area="headers",
    title="Every POST accepts JSON and SSE, every request names its method, tools/call its tool",
    description="Over Streamable HTTP each message's POST lists application/json and text/event-stream in Accept; "
                "each request carries Mcp-Method equal to its method, and tools/call, prompts/get and "
                "resources/read an Mcp-Name equal to params.name or params.uri (base64 when not header-safe). "
                "tasks/* are tasks-client-routing-headers'; the 2025-11-25 initialize is no 2026-07-28 request. "
                "Not applicable on stdio, which has no headers (policy P-23).",
    requirements=("C-CORE-MUST-03", "C-CORE-MUST-05"),
    scenarios=EXTENSION,
    needs=(),
)
def request_headers(runs: list[ScenarioRun]) -> Verdict:
    runs = [run for run in runs if run.transport == "http"]
    if not runs:
        return not_applicable("Accept, Mcp-Method and Mcp-Name are Streamable HTTP headers: a stdio run has none to "
                              "judge (policy P-23)", policies=("P-23",))
    posts = [(run, e) for run in runs for e in run.exchanges if e.http is not None and e.method != LEGACY_HANDSHAKE]
    problems = [(run, e, found) for run, e in posts if (found := _problem(e)) is not None]
    if problems:
        broken = tuple(dict.fromkeys(rule for _r, _e, (rule, _what) in problems))
        return failed(f"{len(problems)} POST(s) with wrong headers: "
                      + "; ".join(f"{shown(e.method)} (frame #{e.seq}, {r.label}): {what}"
                                  for r, e, (_rule, what) in problems[:SHOWN]),
                      broken=broken, evidence=[e.seq for _r, e, _p in problems][:MAX_EVIDENCE],
                      details={"expected": "Accept listing application/json and text/event-stream; Mcp-Method the "
                                           "method; Mcp-Name the tool, prompt or resource",
                               "actual": problems[0][2][1]})
    if not posts:
        return not_applicable("the client sent no POST, so no header to judge")
    return passed(f"all {len(posts)} POSTs accepted JSON and SSE, their requests named method and tool",
                  judged=len(posts))
