"""Client checks of the 2026-07-28 base protocol's request rules that every scenario shows: the
clientInfo `_meta`, the client capabilities each request of a task declares, how a client finds the
server's era, what it does with an UnsupportedProtocolVersionError (-32022), and how it cancels a
request in flight."""

from __future__ import annotations

from collections.abc import Iterator

from tasks_conformance.client.checks.cadence import task_runs
from tasks_conformance.client.checks.registry import client_check
from tasks_conformance.client.evidence import Exchange, ScenarioRun
from tasks_conformance.client.jsonrpc import id_key
from tasks_conformance.client.scenarios import scenario_names
from tasks_conformance.core.protocol import (
    ERR_UNSUPPORTED_VERSION,
    META_CLIENT_CAPS,
    META_CLIENT_INFO,
    META_PROTOCOL_VERSION,
    get_path,
)
from tasks_conformance.core.text import shown
from tasks_conformance.core.verdict import Verdict, failed, not_applicable, passed, warn
from tasks_conformance.core.wires import Wire

EXTENSION = scenario_names(Wire.EXTENSION)  # these checks judge the 2026-07-28 runs only
VERSION_NEGOTIATION = "tasks-client-version-negotiation"
REQUEST_CANCEL = "tasks-client-request-cancel"
LEGACY_HANDSHAKE = "initialize"  # the 2025-11-25 handshake: no 2026-07-28 request (judged by era detection)
TASK_FOLLOW_UPS = ("tasks/get", "tasks/update", "tasks/cancel")
# A 2026-07-28 answer that says the server speaks that era (a result, or one of its own errors):
# a client that falls back to initialize after one of these did not need to.
EXTENSION_ERRORS = (-32020, -32021, -32022, -32602, -32600)
SHOWN = 3
MAX_EVIDENCE = 40


def _where(run: ScenarioRun, e: Exchange) -> str:
    return f"{shown(e.method)} (frame #{e.seq}, {run.label})"


def extension_requests(run: ScenarioRun) -> Iterator[Exchange]:
    """The run's 2026-07-28 requests: every request but the 2025-11-25 handshake."""
    return (e for e in run.exchanges if e.is_request and e.method != LEGACY_HANDSHAKE)


@client_check(
    id="tasks-client-client-info",
    area="core_rules",
    title="Every request carries io.modelcontextprotocol/clientInfo in its _meta",
    description="Each 2026-07-28 request's params._meta names the client (io.modelcontextprotocol/clientInfo, an "
                "object with its name and version); a request without it warns.",
    requirements=("C-CORE-SHOULD-01",),
    scenarios=EXTENSION,
    needs=(),
)
def client_info(runs: list[ScenarioRun]) -> Verdict:
    requests = [(run, e) for run in runs for e in extension_requests(run)]
    if not requests:
        return not_applicable("the client sent no request, so no _meta to judge")
    missing = [(run, e) for run, e in requests if not isinstance(get_path(e.params, "_meta", META_CLIENT_INFO), dict)]
    if missing:
        return passed(f"{len(missing)} of {len(requests)} request(s) carried no clientInfo", warnings=[
            f"{len(missing)} request(s) carried no io.modelcontextprotocol/clientInfo in _meta (C-CORE-SHOULD-01): "
            + "; ".join(_where(r, e) for r, e in missing[:SHOWN])],
            evidence=[e.seq for _r, e in missing][:MAX_EVIDENCE])
    return passed(f"all {len(requests)} requests carried io.modelcontextprotocol/clientInfo", judged=len(requests))


def _capabilities(e: Exchange) -> set[str]:
    """The client capabilities a request declares, but the extensions (C-EXT-MUST-01 judges those)."""
    caps = get_path(e.params, "_meta", META_CLIENT_CAPS)
    return {k for k in caps if k != "extensions"} if isinstance(caps, dict) else set()


@client_check(
    id="tasks-client-capabilities-per-request",
    area="core_rules",
    title="A task's tasks/* requests declare the client capabilities its tools/call declared",
    description="Capabilities are per request: a capability the creating tools/call declared (elicitation, for "
                "a task that may ask for input) that a later tasks/get, tasks/update or tasks/cancel of the task "
                "leaves out warns, since the server may not infer it from the earlier request (policy P-50).",
    requirements=("C-CORE-MUST-02",),
    scenarios=EXTENSION,
    needs=(),
)
def capabilities_per_request(runs: list[ScenarioRun]) -> Verdict:
    judged, dropped = 0, []
    for view, task_id in task_runs(runs):
        create = next((e for e in view.sent("tools/call") if get_path(e.result, "taskId") == task_id), None)
        if create is None:
            continue
        declared = _capabilities(create)
        for e in view.sent(*TASK_FOLLOW_UPS):
            if e.is_request and e.task_id == task_id:
                judged += 1
                left = sorted(declared - _capabilities(e))
                if left:
                    dropped.append((view, e, left))
    if dropped:
        view, e, left = dropped[0]
        return passed(f"{len(dropped)} of {judged} tasks/* request(s) left out a capability their task's tools/call "
                      "declared", warnings=[warn(
                          f"{len(dropped)} tasks/* request(s) did not declare what the task's tools/call declared "
                          f"(C-CORE-MUST-02; policy P-50): {_where(view, e)} left out {', '.join(map(shown, left))}",
                          "P-50")], evidence=[d[1].seq for d in dropped][:MAX_EVIDENCE])
    if not judged:
        return not_applicable("no task was followed with tasks/*, so no later request to compare")
    return passed(f"all {judged} tasks/* requests declared the capabilities of their task's tools/call", judged=judged)


def _extension_answer(e: Exchange) -> bool:
    """The server answered this request as a 2026-07-28 server does: a result, or its own error."""
    code = get_path(e.reply, "error", "code")
    return e.result is not None or code in EXTENSION_ERRORS


@client_check(
    id="tasks-client-era-detection",
    area="core_rules",
    title="A client of both eras tries 2026-07-28 first, and falls back to initialize only when it must",
    description="On a 2026-07-28 server a client that also speaks 2025-11-25 opens with a 2026-07-28 request, not "
                "initialize, and does not send initialize after the server answered as a 2026-07-28 server (a "
                "result, or one of that era's errors). Runs of a client that sent no initialize pass.",
    requirements=("C-CORE-SHOULD-02",),
    scenarios=EXTENSION,
    needs=(),
)
def era_detection(runs: list[ScenarioRun]) -> Verdict:
    judged, found = 0, []
    for run in runs:
        for view in run.by_connection():
            requests = [e for e in view.exchanges if e.is_request]
            extension = [e for e in requests if e.method != LEGACY_HANDSHAKE]
            if not extension:
                continue  # a 2025-11-25 client only: no era to detect
            judged += 1
            for init in (e for e in requests if e.method == LEGACY_HANDSHAKE):
                before = [e for e in extension if e.time < init.time]
                if not before:
                    found.append((view, init, "opened with initialize before any 2026-07-28 request"))
                elif any(_extension_answer(e) for e in before):
                    found.append((view, init, "sent initialize after the server had answered as a 2026-07-28 "
                                              "server"))
    if found:
        view, init, why = found[0]
        return passed(f"{len(found)} initialize request(s) on a 2026-07-28 server", warnings=[
            f"the client {why}: {_where(view, init)} (C-CORE-SHOULD-02)"],
            evidence=[i.seq for _v, i, _w in found][:MAX_EVIDENCE])
    if not judged:
        return not_applicable("the client sent no 2026-07-28 request, so no era detection to judge")
    return passed("the client found the 2026-07-28 era without an initialize it did not need", judged=judged)


def _version(e: Exchange) -> object:
    return get_path(e.params, "_meta", META_PROTOCOL_VERSION)


@client_check(
    id="tasks-client-version-retry",
    area="core_rules",
    title="After an UnsupportedProtocolVersionError the client retries with a supported version or says so",
    description="When the scripted server answers -32022 (the request's protocol version is not served; "
                "data.supported lists those it is), the client's next request on that connection carries a "
                "version of data.supported, or it sends nothing more and its outcome line reports an error. "
                "Another unsupported version, or a success reported without one, warns. Not applicable where "
                "no request got -32022.",
    requirements=("C-CORE-SHOULD-03",),
    scenarios=EXTENSION,
    # Its own scenario is where a -32022 is sure to come: a run of it that shows nothing of the
    # client leaves the check unjudged, not passed on the others.
    needs=(VERSION_NEGOTIATION,),
)
def version_retry(runs: list[ScenarioRun]) -> Verdict:
    judged, found = 0, []
    for run in runs:
        for view in run.by_connection():
            for e in view.exchanges:
                supported = get_path(e.reply, "error", "data", "supported")
                if get_path(e.reply, "error", "code") != ERR_UNSUPPORTED_VERSION or not isinstance(supported, list):
                    continue
                after = [n for n in view.exchanges if n.is_request and n.time > (e.reply_time or e.time)]
                if after:
                    judged += 1
                    if _version(after[0]) not in supported:
                        found.append((view, after[0], f"retried with {shown(_version(after[0]))}, not one of "
                                                      f"{shown(supported)}"))
                elif view.client.outcome is not None:  # without the outcome line, what it told is unseen
                    judged += 1
                    if not view.client.outcome.get("error"):
                        found.append((view, e, "stopped without a supported version and reported no error"))
    if found:
        view, e, why = found[0]
        return passed(f"{len(found)} -32022 answer(s) not acted on", warnings=[
            f"after an UnsupportedProtocolVersionError the client {why}: {_where(view, e)} (C-CORE-SHOULD-03)"],
            evidence=[x.seq for _v, x, _w in found][:MAX_EVIDENCE])
    if not judged:
        return not_applicable("no request got an UnsupportedProtocolVersionError (-32022) whose sequel shows")
    return passed(f"after each of {judged} -32022 answer(s) the client retried with a supported version or reported "
                  "the error", judged=judged)

CANCELLED = "notifications/cancelled"
# A notifications/cancelled sent within this long of its request's answer may have crossed it on the
# wire (the spec allows for that race): only one sent later names a request that had ended (P-56).
CROSSED_S = 1.0


def _created_task(e: Exchange) -> bool:
    return bool(get_path(e.result, "resultType") == "task")


def _cancels(view: ScenarioRun) -> tuple[int, list[tuple[Exchange, str]], list[str]]:
    """(cancels judged, those naming a request the client never sent with why, warnings) of the
    notifications/cancelled on one connection. One naming the tools/call that created a task is
    the cancel check's (tasks-client-cancels-with-tasks-cancel, policy P-35), not judged here."""
    requests = [e for e in view.exchanges if e.is_request]
    judged = 0
    bad: list[tuple[Exchange, str]] = []
    odd: list[str] = []
    for n in view.sent(CANCELLED):
        rid = n.params.get("requestId")
        where = f"{CANCELLED} (frame #{n.seq}, {view.label})"
        if "requestId" not in n.params:
            bad.append((n, f"{where} carries no requestId"))
            continue
        # The latest request of that id sent before it: an id may be used again once answered.
        key = id_key(rid)
        target = max((e for e in requests if e.seq < n.seq and id_key(e.message.get("id")) == key),
                     key=lambda e: e.seq, default=None)
        if target is None:
            bad.append((n, f"{where} names request id {shown(rid)}, which the client had not sent on this "
                           f"{view.connection_kind}"))
            continue
        if _created_task(target) and target.reply_time is not None and n.time >= target.reply_time:
            continue  # the task's, once created
        if target.reply_time is not None and n.time - target.reply_time > CROSSED_S:
            odd.append(f"{where} names {shown(target.method)} #{target.seq}, answered {n.time - target.reply_time:.1f} "
                       "s before: a request no longer in progress (C-CORE-MUST-09; policy P-56)")
        elif view.transport == "http":  # its stream, closed or not, is what cancels it (judged below)
            odd.append(f"{where}: over Streamable HTTP a request is cancelled by closing its response stream, and no "
                       "notifications/cancelled is expected (policy P-56)")
        else:
            judged += 1
    return judged, bad, odd


def _asked_to_cancel(run: ScenarioRun) -> tuple[str, Exchange | None, str]:
    """How the client cancelled the call tasks-client-request-cancel asked it to cancel in flight:
    ("cancelled" | "wrong" | "not", the tools/call, what was seen)."""
    call = next((e for e in run.sent("tools/call") if e.is_request), None)
    if call is None:
        return "not", None, "it made no tools/call"
    key = id_key(call.message.get("id"))
    notified = [n for n in run.sent(CANCELLED) if id_key(n.params.get("requestId")) == key
                and (call.reply_time is None or n.time <= call.reply_time)]
    if run.transport == "stdio":
        if notified:
            return "cancelled", call, f"{CANCELLED} #{notified[0].seq} named tools/call #{call.seq} while it ran"
        return "not", call, f"no {CANCELLED} named tools/call #{call.seq}"
    if call.reply is None and not run.client.timed_out and run.client.exit_code == 0:
        return "cancelled", call, f"its response stream was closed before the answer (tools/call #{call.seq})"
    if notified and call.reply is not None:
        return "wrong", call, (f"{CANCELLED} #{notified[0].seq} named tools/call #{call.seq}, whose stream stayed open "
                               f"until its answer (frame #{call.reply_seq})")
    return "not", call, f"tools/call #{call.seq} ran to its answer"


@client_check(
    id="tasks-client-request-cancellation",
    area="core_rules",
    title="A request in flight is cancelled the way its transport says",
    description="Asked to cancel its call while it runs (tasks-client-request-cancel, whose server answers only "
                "after 3 s), the client cancels it on stdio with notifications/cancelled naming its id, and over "
                "Streamable HTTP by closing its response stream: a notifications/cancelled over HTTP with the stream "
                "left open to the answer fails, as does one, in any scenario, naming an id the client never sent. "
                "One naming a request answered over a second before, or sent over HTTP at all, warns (policy P-56); "
                "one naming the tools/call that created a task is the cancel check's. A client that does not cancel "
                "is not judged.",
    requirements=("C-CORE-MUST-09",),
    scenarios=EXTENSION,
    needs=(REQUEST_CANCEL,),  # the scenario that asks for the cancel (a run of it unseen leaves this unjudged)
)
def request_cancellation(runs: list[ScenarioRun]) -> Verdict:
    judged = 0
    bad: list[tuple[ScenarioRun, Exchange, str]] = []
    odd: list[str] = []
    evidence: list[int] = []
    for run in runs:
        for view in run.by_connection():
            n, problems, warned = _cancels(view)
            judged, bad, odd = judged + n, bad + [(view, e, w) for e, w in problems], odd + warned
    for run in (r for r in runs if r.name == REQUEST_CANCEL):
        how, call, said = _asked_to_cancel(run)
        if call is not None:
            evidence += [*call.seqs, *(n.seq for n in run.sent(CANCELLED))]
        if how == "wrong":
            assert call is not None
            bad.append((run, call, f"{run.label}: {said}: over Streamable HTTP closing the stream is the cancel, "
                                   "so the call was never cancelled"))
        elif how == "cancelled" and run.transport == "http":  # on stdio its notification was counted above
            judged += 1
    warnings = [warn(text, "P-56") for text in odd[:SHOWN]]
    if bad:
        text = "; ".join(what for _r, _e, what in bad[:SHOWN])
        return failed(f"{len(bad)} request cancellation(s) against the rule: {text}",
                      broken=("C-CORE-MUST-09",), evidence=[s for _r, e, _w in bad for s in e.seqs][:MAX_EVIDENCE],
                      warnings=warnings,
                      details={"expected": "on stdio notifications/cancelled naming a request the client sent and is "
                                           "still waiting on; over Streamable HTTP the request's stream closed",
                               "actual": text})
    if not judged:
        asked = any(r.name == REQUEST_CANCEL for r in runs)
        return not_applicable("the client cancelled no request in flight" + (
                              " (asked to, in tasks-client-request-cancel, it let the call run to its answer: its "
                              "harness may not act on cancelRequest)" if asked else ""),
                              evidence=evidence[:MAX_EVIDENCE], warnings=warnings, policies=("P-56",))
    return passed(f"the client cancelled {judged} request(s) in flight as its transport says", judged=judged,
                  evidence=evidence[:MAX_EVIDENCE], warnings=warnings)
