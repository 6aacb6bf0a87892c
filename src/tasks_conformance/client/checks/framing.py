"""The client checks of JSON-RPC framing: every message the client sent is a JSON-RPC 2.0 message
as MCP frames it (client/jsonrpc.py, the reading the scripted servers answer by), and no two of its
requests in flight share an id. The judge is both eras' (the 2025-11-25 check, in legacy.py, cites
that era's rules); the client-side counterpart of the server mode's tasks-wire-framing.
"""

from __future__ import annotations

from tasks_conformance.client.checks.registry import client_check
from tasks_conformance.client.evidence import ScenarioRun
from tasks_conformance.client.jsonrpc import FRAMING, id_key, problems, valid_id
from tasks_conformance.client.scenarios import scenario_names
from tasks_conformance.core.verdict import Verdict, failed, not_applicable, passed
from tasks_conformance.core.wires import Wire

SHOWN = 3
MAX_EVIDENCE = 40
EXTENSION = scenario_names(Wire.EXTENSION)


def _problems(run: ScenarioRun, framing: str, id_rule: str) -> list[tuple[int, str, str]]:
    """(frame, rule, what is wrong) for each message of the run that breaks framing or an id rule."""
    out = [(seq, framing, why) for seq, why in run.malformed]
    unreadable = {seq for seq, _why in run.malformed}  # NaN is read by json, but it is not JSON
    open_ids: dict[str, float | None] = {}  # a request id -> when its answer came (None: not yet)
    for e in run.exchanges:
        if e.seq in unreadable:
            continue
        out += [(e.seq, framing if what == FRAMING else id_rule, why) for what, why in problems(e.message)]
        if not (e.is_request and isinstance(e.message.get("method"), str) and valid_id(e.message["id"])):
            continue
        key = id_key(e.message["id"])
        if key in open_ids:
            answered = open_ids[key]
            if answered is None or answered > e.time:
                out.append((e.seq, id_rule, "its request id is the id of a request still in flight"))
        open_ids[key] = e.reply_time
    return out


DESCRIPTION = ("Every message the client sent the scripted server is one JSON object (valid UTF-8 JSON: no NaN or "
               "Infinity, no batch) with jsonrpc \"2.0\" and a string method, or a response; every request id is a "
               "string or an integer, never null, and no two requests still in flight share one.")


def judge_framing(runs: list[ScenarioRun], *, framing: str, id_rule: str) -> Verdict:
    """`framing`, `id_rule`: the rules of the runs' era a problem breaks."""
    found = [(run, seq, rule, why) for run in runs for seq, rule, why in _problems(run, framing, id_rule)]
    if found:
        broken = tuple(dict.fromkeys(rule for _run, _seq, rule, _why in found))
        shown = "; ".join(f"frame #{seq} ({run.name}): {why}" for run, seq, _rule, why in found[:SHOWN])
        return failed(f"{len(found)} message(s) the client sent are not JSON-RPC 2.0 as MCP frames it: {shown}",
                      broken=broken, evidence=sorted({seq for _r, seq, _x, _y in found})[:MAX_EVIDENCE],
                      details={"expected": "JSON-RPC 2.0 messages, request ids strings or integers unique in flight",
                               "actual": f"frame #{found[0][1]}: {found[0][3]}"})
    count = sum(len(run.exchanges) for run in runs)
    if not count:
        return not_applicable("the client sent no message to judge")
    return passed(f"all {count} messages the client sent were JSON-RPC 2.0, their request ids strings or integers "
                  "unique in flight", judged=count)


@client_check(
    id="tasks-client-wire-framing",
    area="framing",
    title="Every message the client sent is JSON-RPC 2.0, and no two requests in flight share an id",
    description=DESCRIPTION,
    requirements=("C-CORE-MUST-12", "C-CORE-MUST-11"),
    scenarios=EXTENSION,
    needs=(),
    every_run=True,
)
def wire_framing(runs: list[ScenarioRun]) -> Verdict:
    return judge_framing(runs, framing="C-CORE-MUST-12", id_rule="C-CORE-MUST-11")
