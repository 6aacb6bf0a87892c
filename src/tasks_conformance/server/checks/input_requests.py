"""Input requests, more closely: a key names one request for the task's whole life, a task asks
only for what the client declared, and answers the task is not waiting for are ignored and acked."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from tasks_conformance.core.protocol import ERR_INVALID_PARAMS, META_CLIENT_CAPS, get_path
from tasks_conformance.core.result import CheckWarning
from tasks_conformance.core.verdict import Verdict, could_not_run, failed, not_applicable, passed, warn
from tasks_conformance.core.wires import Wire
from tasks_conformance.server.checks.engine.common import got, unrun
from tasks_conformance.server.checks.engine.registry import check
from tasks_conformance.server.evidence import DeclaredCall, Evidence, Poll, StaleInput, UndeclaredInput

if TYPE_CHECKING:
    # Annotations only: listing the checks must not import the JSON-RPC layer.
    from tasks_conformance.core.rpc.peer import Reply

ERR_INTERNAL = -32603

INPUT_KEYS_UNIQUE = check(
    id="tasks-input-request-keys-unique",
    area="input_requests",
    category="lifecycle",
    title="An inputRequests key names one request for the task's whole life",
    description=(
        "Across every read of the probe task (the CreateTaskResult and each tasks/get while polling), a key of "
        "inputRequests always carries the same request: never a different one while outstanding, and never "
        "reused for another request after its answer. Not applicable when the task never asks for input."
    ),
    probes=(DeclaredCall, Poll),
    needs="task",
)

def _reads(ev: Evidence, creation: Reply | None, gets: list[Reply]) -> Iterator[tuple[Reply, Any]]:
    """Each successful read of a task, the creation first: the reply and the task it carries."""
    for reply in ([creation] if creation is not None else []) + gets:
        if reply.ok and isinstance(reply.result, dict):
            yield reply, reply.result


def _requests(task: Any) -> dict[str, Any]:
    found = get_path(task, "inputRequests")
    return found if isinstance(found, dict) else {}


def _same(a: Any, b: Any) -> bool:
    return json.dumps(a, sort_keys=True, default=str) == json.dumps(b, sort_keys=True, default=str)


@INPUT_KEYS_UNIQUE.judge(Wire.EXTENSION, requires=("S-EXT-MUST-14",))
def input_keys_unique(ev: Evidence) -> Verdict:
    poll = ev.get(Poll)
    if not poll.ran:
        return could_not_run(unrun(poll, "the task was not polled"))
    first: dict[str, tuple[Any, int]] = {}
    problems: list[str] = []
    seqs: list[int] = []
    for reply, task in _reads(ev, ev.get(DeclaredCall).call, poll.gets):
        for key, request in _requests(task).items():
            seq = reply.response_seq or reply.request_seq
            if key not in first:
                first[key] = (request, seq)
                seqs.append(seq)
            elif not _same(first[key][0], request):
                problems.append(f"key {key[:60]!r} asked {get_path(first[key][0], 'method')!r} in frame "
                                f"{first[key][1]} and something else in frame {seq}")
                seqs.append(seq)
    if not first:
        return not_applicable("the task never asked for input")
    if problems:
        return failed("; ".join(problems[:3]) + ": an inputRequests key is unique for the task's lifetime and "
                      "never names two different requests (S-EXT-MUST-14)", broken=("S-EXT-MUST-14",), evidence=seqs,
                      details={"expected": "one request per key", "actual": problems[:5]})
    return passed(f"{len(first)} inputRequests key(s), each naming one request throughout", evidence=seqs)


INPUT_DECLARED_ONLY = check(
    id="tasks-input-requests-declared-only",
    area="input_requests",
    category="lifecycle",
    title="A task asks only for input the client declared it can give",
    description=(
        "A second task is created with the probe task's own call, but its requests declare no client capability "
        "besides the extension (no elicitation, sampling or roots); its inputRequests must stay empty (or the "
        "task may fail, or the call be refused). The probe task's own inputRequests are judged against the "
        "capabilities its requests declared: a type declared by neither the creating request nor any polling "
        "request fails, one declared by only one of them warns (policy P-08)."
    ),
    probes=(DeclaredCall, Poll, UndeclaredInput),
    needs="task",
)

# The client capability an input request needs, by its method.
CAPABILITY_FOR = {"elicitation/create": "elicitation", "sampling/createMessage": "sampling", "roots/list": "roots"}


def _declared(ev: Evidence, reply: Reply) -> dict[str, Any]:
    caps = get_path(ev.frame_json(reply.request_seq), "params", "_meta", META_CLIENT_CAPS)
    return caps if isinstance(caps, dict) else {}


def _covers(caps: dict[str, Any], request: Any) -> bool | None:
    """Whether the capabilities allow the request (None: a method we cannot judge)."""
    method = get_path(request, "method")
    cap = CAPABILITY_FOR.get(method) if isinstance(method, str) else None
    if cap is None:
        return None
    declared = caps.get(cap)
    if not isinstance(declared, dict):
        return False
    if cap == "elicitation":
        mode = get_path(request, "params", "mode") or "form"
        # {} means form mode (the 2025-11-25 form of the capability).
        return mode in declared or (mode == "form" and not declared)
    return True


def _judge_task(ev: Evidence, creation: Reply | None, gets: list[Reply], label: str,
                fails: list[str], warns: list[CheckWarning], seqs: list[int]) -> int:
    """Judge one task's inputRequests; returns how many it asked."""
    create_caps = _declared(ev, creation) if creation is not None else {}
    polled: list[dict[str, Any]] = []
    asked = 0
    for reply, task in _reads(ev, creation, gets):
        if reply is not creation:
            polled.append(_declared(ev, reply))
        for key, request in _requests(task).items():
            in_create = _covers(create_caps, request)
            if in_create is None:
                continue
            asked += 1
            in_polls = any(_covers(c, request) for c in polled)
            seq = reply.response_seq or reply.request_seq
            method = get_path(request, "method")
            if not in_create and not in_polls:
                fails.append(f"{label}: key {key[:60]!r} asks {method} (frame {seq}), which neither the creating "
                             "request nor any polling request declared")
                seqs.append(seq)
            elif not (in_create and all(_covers(c, request) for c in polled)):
                warns.append(warn(f"{label}: key {key[:60]!r} asks {method} (frame {seq}), which only some of "
                                  "the task's requests declared (S-EXT-MUST-34, policy P-08)", "P-08"))
                seqs.append(seq)
    return asked


@INPUT_DECLARED_ONLY.judge(Wire.EXTENSION, requires=("S-EXT-MUST-34",))
def input_declared_only(ev: Evidence) -> Verdict:
    rec, poll = ev.get(UndeclaredInput), ev.get(Poll)
    if rec.create is None:
        return could_not_run(unrun(rec, "the task without input capabilities was not created"))
    fails: list[str] = []
    warns: list[CheckWarning] = []
    seqs: list[int] = list(rec.create.seqs())
    bare = _judge_task(ev, rec.create, rec.gets, "the task created without input capabilities", fails, warns, seqs)
    mine = _judge_task(ev, ev.get(DeclaredCall).call, poll.gets, "the probe task", fails, warns, seqs)
    if fails:
        return failed("; ".join(fails[:3]) + ": a server asks only for input the client declared (S-EXT-MUST-34)",
                      broken=("S-EXT-MUST-34",),
                      evidence=seqs, warnings=warns,
                      details={"expected": "no undeclared request types", "actual": fails[:5]})
    if not bare and not mine:
        return not_applicable("neither task asked for input, so there is no request type to judge", evidence=seqs)
    if rec.task_id is None:
        how = f"was refused ({rec.create.describe()})"
    else:
        last = rec.gets[-1].result if rec.gets and rec.gets[-1].ok else None
        how = f"asked for nothing (last seen {get_path(last, 'status') or 'at creation'})" if not bare else "asked"
    return passed(f"the task created without input capabilities {how}; the probe task asked only for what its "
                  "requests declared", evidence=seqs, warnings=warns)


STALE_INPUT_IGNORED = check(
    id="tasks-input-stale-responses-ignored",
    area="input_requests",
    category="lifecycle",
    title="Answers the task is not waiting for are ignored, and tasks/update is still acked",
    description=(
        "After polling, tasks/update on the probe task with an inputResponses key it already answered and one it "
        "never asked: the server should ignore both and ack {resultType: \"complete\"} (S-EXT-SHOULD-03). "
        "-32602 passes with a warning; -32603 fails (policy P-21). Not applicable when the task never asked."
    ),
    probes=(DeclaredCall, Poll, StaleInput),
    needs="task",
)


@STALE_INPUT_IGNORED.judge(Wire.EXTENSION, requires=("S-EXT-SHOULD-03",))
def stale_input_ignored(ev: Evidence) -> Verdict:
    rec, poll = ev.get(StaleInput), ev.get(Poll)
    upd = rec.update
    if upd is None:
        if poll.ran and not poll.updates:
            return not_applicable("the task was never answered any input, so no answer can be stale")
        return could_not_run(unrun(rec, "the stale tasks/update was not sent"))
    keys = ", ".join(repr(k) for k in rec.keys)
    if not upd.answered:
        return could_not_run(got(f"tasks/update with stale keys got {upd.describe()}", upd,
                                 fix="answer tasks/update (an ack or an error)"), evidence=upd.seqs())
    if upd.error_code == ERR_INTERNAL:
        return failed(f"tasks/update with keys the task was not waiting for ({keys}) got {upd.describe()}; "
                      "they should be ignored and the update acked (S-EXT-SHOULD-03), and an internal error is "
                      "no answer to a well-formed request (policy P-21)",
                      broken=("S-EXT-SHOULD-03",), evidence=upd.seqs(), policies=("P-21",),
                      details={"expected": {"resultType": "complete"}, "actual": upd.describe()})
    if upd.error is not None:
        code = "-32602" if upd.error_code == ERR_INVALID_PARAMS else "an error"
        return passed(f"tasks/update with stale keys was refused with {code}", evidence=upd.seqs(),
                      warnings=[warn(f"tasks/update with keys the task was not waiting for ({keys}) got "
                                     f"{upd.describe()}; they should be ignored and the update acked "
                                     "(S-EXT-SHOULD-03, policy P-21)", "P-21")])
    if get_path(upd.result, "resultType") != "complete":
        return failed(f"tasks/update with stale keys ({keys}) answered resultType "
                      f"{get_path(upd.result, 'resultType')!r}, not \"complete\" (S-EXT-SHOULD-03)",
                      broken=("S-EXT-SHOULD-03",),
                      evidence=upd.seqs(), details={"expected": {"resultType": "complete"},
                                                   "actual": get_path(upd.result, "resultType")})
    return passed(f"tasks/update with keys the task was not waiting for ({keys}) was acked", evidence=upd.seqs())
