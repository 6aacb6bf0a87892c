"""Client checks of the answers a 2026-07-28 request may get besides its result: the
InputRequiredResults (multi round-trip requests, MRTR) a tools/call gets before its task is created,
and a resultType the client never negotiated."""

from __future__ import annotations

from tasks_conformance.client.checks.registry import client_check
from tasks_conformance.client.evidence import Exchange, ScenarioRun
from tasks_conformance.client.jsonrpc import id_key
from tasks_conformance.core.protocol import get_path
from tasks_conformance.core.text import shown
from tasks_conformance.core.verdict import Verdict, failed, not_applicable, passed

MRTR = "tasks-client-mrtr"
UNKNOWN_RESULT = "tasks-client-unknown-result-type"
MAX_EVIDENCE = 40


def _input_required(e: Exchange) -> bool:
    return bool(get_path(e.result, "resultType") == "input_required")


def _retry_problem(asked: Exchange, retry: Exchange) -> str | None:
    """What the retry of a request answered InputRequiredResult got wrong (C-CORE-MUST-08), or None."""
    if id_key(retry.message.get("id")) == id_key(asked.message.get("id")):
        return f"the retry (frame #{retry.seq}) reused the JSON-RPC id {shown(asked.message.get('id'))}"
    requests = get_path(asked.result, "inputRequests")
    answers = retry.params.get("inputResponses")
    missing = [k for k in (requests if isinstance(requests, dict) else {})
               if not isinstance(answers, dict) or k not in answers]
    if missing:
        return f"the retry (frame #{retry.seq}) answered no {', '.join(map(shown, missing[:3]))} in inputResponses"
    state = asked.result.get("requestState") if isinstance(asked.result, dict) else None
    if state is not None and retry.params.get("requestState") != state:
        return (f"the retry (frame #{retry.seq}) carried requestState {shown(retry.params.get('requestState'))}, "
                f"not the {shown(state)} it was given")
    if state is None and "requestState" in retry.params:
        return f"the retry (frame #{retry.seq}) carried a requestState it was never given"
    return None


@client_check(
    id="tasks-client-mrtr-retry",
    area="mrtr",
    title="A tools/call answered InputRequiredResult is retried as MRTR says",
    description="Before creating the task the scripted server answers the tools/call with InputRequiredResults "
                "(an elicitation and a requestState each): the client retries the call with a new JSON-RPC id, "
                "inputResponses for every key and the requestState exactly as given (following the task the "
                "last retry creates is tasks-client-follows-task's). Not applicable for a client whose "
                "tools/call declared no elicitation (it is asked nothing).",
    requirements=("C-EXT-MUST-10", "C-CORE-MUST-08"),
    scenarios=(MRTR,),
    ends=True,
)
def mrtr_retry(runs: list[ScenarioRun]) -> Verdict:
    judged = 0
    for run in runs:
        for view in run.by_connection():
            calls = [e for e in view.sent("tools/call") if e.is_request]
            for i, asked in enumerate(calls):
                if not _input_required(asked):
                    continue
                judged += 1
                retry = calls[i + 1] if i + 1 < len(calls) else None
                if retry is None:
                    if view.client.timed_out:
                        continue  # stopped at --timeout: the runner says it hung
                    return failed(f"the tools/call answered InputRequiredResult (frame #{asked.reply_seq}, "
                                  f"{view.label}) was never retried: the task it would create was never reached",
                                  broken=("C-EXT-MUST-10",), evidence=asked.seqs,
                                  details={"expected": "the tools/call retried with inputResponses",
                                           "actual": "no retry"})
                problem = _retry_problem(asked, retry)
                if problem is not None:
                    return failed(f"{problem} ({view.label})", broken=("C-CORE-MUST-08",),
                                  evidence=[*asked.seqs, retry.seq],
                                  details={"expected": "a new id, inputResponses for every key, the requestState "
                                                       "echoed exactly", "actual": problem})
            # Following the task the last round created is tasks-client-follows-task's to judge, in
            # this scenario too (one defect, one failure): a client that follows no task fails there.
    if not judged:
        return not_applicable("no tools/call got an InputRequiredResult (a client whose tools/call declared no "
                              "elicitation is asked nothing)")
    return passed(f"all {judged} InputRequiredResult(s) were retried as MRTR says",
                  judged=judged)


@client_check(
    id="tasks-client-unknown-result-type",
    area="mrtr",
    title="A resultType the client did not negotiate is an invalid response",
    description="prompts/get is answered with a resultType that no protocol value and no negotiated extension "
                "defines: the client reports an error for it (its outcome line) and does not take it as a "
                "result. Judged from the outcome line, when the prompts/get was the client's last request.",
    requirements=("C-CORE-MUST-07",),
    scenarios=(UNKNOWN_RESULT,),
    outcome_line=True,
    ends=True,
)
def unknown_result_type(runs: list[ScenarioRun]) -> Verdict:
    judged = 0
    for run in runs:
        asked = [e for e in run.sent("prompts/get") if e.is_request and e.result is not None]
        said = run.client.outcome
        if not asked or said is None:
            continue
        # The outcome line is about the request the client made last (policy of the prompt scenarios).
        last = max((e for e in run.exchanges if e.is_request and e.method in ("prompts/get", "tools/call")),
                   key=lambda e: e.time)
        if last.method != "prompts/get":
            continue
        judged += 1
        if not said.get("error"):
            kind = shown(get_path(asked[-1].result, "resultType"))
            return failed(f"the client reported the prompts/get as a success although its reply's resultType {kind} "
                          f"is none it negotiated ({run.label})", evidence=asked[-1].seqs,
                          details={"expected": "an error for the invalid reply",
                                   "actual": f"status {shown(said.get('status'))}, no error"})
    if not judged:
        return not_applicable("no outcome line reported a prompts/get answered with an unknown resultType")
    return passed("the unknown resultType was reported as an invalid response", judged=judged)
