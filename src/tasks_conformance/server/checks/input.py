"""Input: a task that asks for input completes once it is answered — by tasks/update on the
extension, on the tasks/result stream on legacy. Judged on the `input` probe role's tool
(`--probe input=TOOL`, or the task tool when --input-responses is given)."""

from __future__ import annotations

from tasks_conformance.core.causes import by_flag
from tasks_conformance.core.protocol import META_RELATED_TASK, TERMINAL_STATUSES, get_path
from tasks_conformance.core.verdict import Verdict, could_not_run, failed, not_applicable, passed
from tasks_conformance.core.wires import Wire
from tasks_conformance.server.checks.engine.common import unrun
from tasks_conformance.server.checks.engine.registry import check
from tasks_conformance.server.checks.engine.role_tasks import role_task
from tasks_conformance.server.checks.engine.shapes import reply_seqs, result_of
from tasks_conformance.server.evidence import Evidence, InputTask, InputTie, Poll, StopReason

ACK_MEMBERS = ("resultType", "_meta")

INPUT_REQUIRED_UPDATE_COMPLETES = check(
    id="tasks-input-required-update-completes",
    area="input",
    category="lifecycle",
    title="A task that asks for input completes once it is answered",
    description=(
        "On the input role's tool, with --input-responses: on the extension, tasks/update is acked with an "
        "empty {resultType: \"complete\"} and "
        "the task then reaches a terminal status; on legacy, every elicitation or sampling request made for the "
        "task (its _meta names it, it came on a tasks/result stream of the task, or over stdio it came while no "
        "tools/call of ours that may ask for itself was outstanding: policy P-42) carries the related-task _meta, "
        "and the task completes. Not applicable when the task never asks."
    ),
    probes=(InputTask,),
    needs="wire",
    role="input",
    # The update ack may precede the change it causes, and a partial answer may leave the task input_required.
    permits=('S-EXT-MAY-05', 'S-EXT-MAY-06'),
)


def _asked_for_input(ev: Evidence) -> tuple[Poll, Verdict | None]:
    rec, early = role_task(ev, InputTask, "input")
    poll = rec.poll
    if early is not None:
        return poll, early
    if not poll.ran:
        return poll, could_not_run(unrun(poll, "the task was not polled"))
    # Legacy: the question may be asked and answered on a tasks/result stream between two polls,
    # so no poll shows input_required; the request itself shows the task asked.
    if poll.saw_input_required or poll.elicitations or poll.input_requests:
        return poll, None
    if poll.stop is StopReason.TERMINAL:
        went = " → ".join(dict.fromkeys(poll.statuses))
        return poll, not_applicable(f"the task never asked for input (it went {went})")
    return poll, could_not_run(by_flag(f"the task did not finish ({poll.stop}) and never asked for input",
                                           "raise --poll-timeout, or name a tool that asks for input with --tool-name"))


TIE_WORDS = {
    InputTie.STREAM: "on the task's tasks/result stream",
    InputTie.LIVE: "while the task was live, when no tools/call of ours could have asked it",
}


def _without_meta(ev: Evidence, poll: Poll, task_id: str | None) -> Verdict | None:
    """S-LEG-MUST-13: every input request tied to the task names it in the related-task _meta."""
    bare = [r for r in poll.input_requests if not r.names_task and r.tie is not InputTie.UNTOLD]
    if not bare:
        return None
    first = bare[0]
    meta = get_path(ev.frame_json(first.seq), "params", "_meta")
    return failed(f"{len(bare)} {first.method} request(s) made for the task lack _meta[\"{META_RELATED_TASK}\"] "
                  f"naming it (first: frame #{first.seq}, {TIE_WORDS.get(first.tie, first.tie)}); a request the "
                  "server sends on a task's behalf carries it (S-LEG-MUST-13; policy P-42)",
                  broken=("S-LEG-MUST-13",), evidence=[r.seq for r in bare], policies=("P-42",),
                  details={"expected": {META_RELATED_TASK: {"taskId": task_id}}, "actual": str(meta)[:80]})


@INPUT_REQUIRED_UPDATE_COMPLETES.judge(Wire.LEGACY, requires=("S-LEG-MUST-13",))
def legacy_input(ev: Evidence) -> Verdict:
    poll, early = _asked_for_input(ev)
    if early is not None:
        return early
    elapsed, final = poll.elapsed_ms, poll.final_status
    if not poll.elicitations:
        return failed("the task was input_required but tasks/result carried no elicitation or sampling request",
                      broken=("S-LEG-MUST-13",), evidence=[g.request_seq for g in poll.gets],
                      details={"expected": "a server request on the tasks/result stream", "actual": "none"})
    task_id = ev.get(InputTask).task_id
    bare = _without_meta(ev, poll, task_id)
    if bare is not None:
        return bare
    if final not in TERMINAL_STATUSES:
        return failed(f"after the answer the task stayed {final!r} ({elapsed} ms)", broken=("S-LEG-MUST-13",),
                      evidence=poll.elicitations,
                      details={"expected": "a terminal status", "actual": final})
    if poll.input_requests and all(r.tie is InputTie.UNTOLD for r in poll.input_requests):
        # None could be told from a synchronous call's own (P-42): their _meta was not judged.
        return passed(f"the task asked for input and ended {final} after the answer ({elapsed} ms); the _meta of its "
                      f"{len(poll.input_requests)} input request(s) was not judged: they came while a tools/call of "
                      "ours was outstanding (policy P-42)", evidence=poll.elicitations, policies=("P-42",))
    return passed(f"the elicitation carried the related-task _meta and the task ended {final} ({elapsed} ms)",
                  evidence=poll.elicitations)


@INPUT_REQUIRED_UPDATE_COMPLETES.judge(Wire.EXTENSION, requires=("S-EXT-MUST-09", "S-EXT-MUST-15"))
def extension_input(ev: Evidence) -> Verdict:
    poll, early = _asked_for_input(ev)
    if early is not None:
        return early
    if ev.input_responses is None:
        last = poll.last_get
        keys = sorted(get_path(last.result, "inputRequests") or {}) if last is not None else []
        return could_not_run(by_flag(
            f"the task asks for input (keys: {', '.join(map(str, keys[:5])) or 'none'})",
            "pass --input-responses '{\"<key>\": {...}}' to test the tasks/update flow",
        ))
    if not poll.updates:
        keys = poll.unanswered_keys[:5]
        return could_not_run(by_flag(f"--input-responses has no answer for the requested keys {keys}",
                                     "", "--input-responses"))
    seqs = reply_seqs(*(u.reply for u in poll.updates))
    for upd in poll.updates:
        result = result_of(ev, upd.reply)
        if upd.reply.error is not None or not isinstance(result, dict) or result.get("resultType") != "complete":
            return failed(f'tasks/update got {upd.reply.describe()}; it must ack {{"resultType": "complete"}} '
                          "(S-EXT-MUST-15)", broken=("S-EXT-MUST-15",), evidence=seqs,
                          details={"expected": {"resultType": "complete"}, "actual": upd.reply.describe()})
        extra = sorted(k for k in result if k not in ACK_MEMBERS)
        if extra:
            # The schema's Result is open, but the prose says the ack is empty: the rule decides.
            return failed(f"tasks/update acked with extra members {', '.join(extra[:6])}; the ack is an empty "
                          'result, {"resultType": "complete"} and _meta only (S-EXT-MUST-15; the JSON Schema '
                          "allows more, the specification's text does not)", broken=("S-EXT-MUST-15",), evidence=seqs,
                          details={"expected": {"resultType": "complete"}, "actual": sorted(result)[:10]})
    final, elapsed = poll.final_status, poll.elapsed_ms
    if final not in TERMINAL_STATUSES:
        return failed(f"tasks/update was acked but the task stayed {final!r} for {elapsed} ms of polling",
                      broken=("S-EXT-MUST-15",), evidence=seqs,
                      details={"expected": "a terminal status", "actual": final})
    return passed(f"tasks/update was acked and the task ended {final} ({elapsed} ms)", evidence=seqs)
