"""lifecycle: the task after creation — its fields, polling, results, cancel, input, and the
requests that must be refused without the declaration."""

from __future__ import annotations

from typing import Any

from tasks_conformance.checks.registry import (
    Verdict,
    check,
    could_not_run,
    failed,
    not_applicable,
    passed,
)
from tasks_conformance.checks.shapes import (
    describe_value,
    draft_code_hint,
    is_int,
    reply_seqs,
    status_problem,
    task_frames,
    timestamp_problem,
)
from tasks_conformance.evidence import Evidence
from tasks_conformance.protocol import (
    ERR_HEADER_MISMATCH,
    ERR_INVALID_PARAMS,
    ERR_METHOD_NOT_FOUND,
    ERR_MISSING_CAPABILITY,
    EXT_TASKS,
    HEADER_METHOD,
    HEADER_NAME,
    META_RELATED_TASK,
    META_SUBSCRIPTION_ID,
    decode_header_value,
    get_path,
)
from tasks_conformance.rpc.peer import Reply

EXT_NAMES = ("ttlMs", "pollIntervalMs")
LEGACY_NAMES = ("ttl", "pollInterval")


def _names(wire: str) -> tuple[tuple[str, str], tuple[str, str]]:
    return (EXT_NAMES, LEGACY_NAMES) if wire == "extension" else (LEGACY_NAMES, EXT_NAMES)


@check(
    id="tasks-ttl-shape",
    category="lifecycle",
    title="Every task frame names its TTL fields in its own era's form",
    description=(
        "Every task object seen (creation, each tasks/get, cancel, notifications), not only the last: "
        "ttlMs (required) and pollIntervalMs on the extension; ttl (required) and pollInterval on legacy. "
        "The other era's names fail."
    ),
    requirements={"extension": ("S-EXT-MUST-06",), "legacy": ("S-LEG-MUST-09",)},
    probes=("declared-call", "poll"),
    needs="task",
)
def ttl_shape(ev: Evidence) -> Verdict:
    (ttl, poll), (other_ttl, other_poll) = _names(ev.wire)
    frames = task_frames(ev)
    problems: list[str] = []
    seqs: list[int] = []
    for where, seq, task in frames:
        seqs.append(seq)
        wrong = [k for k in (other_ttl, other_poll) if k in task]
        if wrong:
            problems.append(f"{where} (frame {seq}) uses {', '.join(wrong)}, the {_era_of(wrong[0])} name")
        if ttl not in task:
            problems.append(f"{where} (frame {seq}) has no {ttl}")
    if problems:
        return failed(
            f"{len(problems)} task frame problem(s): " + "; ".join(problems[:4])
            + f" — the {ev.wire} wire uses {ttl}/{poll}",
            evidence=seqs, details={"problems": problems[:20]},
        )
    return passed(f"all {len(frames)} task frames carry {ttl} and none uses {other_ttl}/{other_poll}",
                  evidence=seqs)


def _era_of(name: str) -> str:
    return "2026-07-28 extension" if name in EXT_NAMES else "2025-11-25 legacy"


@check(
    id="tasks-ttl-integer-shape",
    category="lifecycle",
    title="TTL and poll interval are integers (TTL may be null for unlimited)",
    description=(
        "Every task frame: the TTL is an integer number of milliseconds or null; the poll interval, when "
        "present, an integer. Zero or negative values warn (spec-digest §6 Q6)."
    ),
    requirements={"extension": ("S-EXT-MUST-06",), "legacy": ("S-LEG-MUST-09",)},
    probes=("declared-call", "poll"),
    scored=False,
    needs="task",
)
def ttl_integer_shape(ev: Evidence) -> Verdict:
    (ttl, poll), _ = _names(ev.wire)
    problems: list[str] = []
    warnings: list[str] = []
    seqs: list[int] = []
    judged = 0
    for where, seq, task in task_frames(ev):
        if ttl not in task and poll not in task:
            continue
        judged += 1
        seqs.append(seq)
        if ttl in task:
            v = task[ttl]
            if v is not None and not is_int(v):
                problems.append(f"{where} (frame {seq}) {ttl} is {describe_value(v)}")
            elif is_int(v) and v <= 0:
                warnings.append(f"{where} (frame {seq}) {ttl} is {v}: a task that expires at once")
        if poll in task:
            v = task[poll]
            if not is_int(v):
                problems.append(f"{where} (frame {seq}) {poll} is {describe_value(v)}")
            elif v <= 0:
                warnings.append(f"{where} (frame {seq}) {poll} is {v}, not a positive interval")
    if judged == 0:
        return could_not_run(f"no task frame carried {ttl} or {poll} to judge", blocked_by="tasks-ttl-shape")
    if problems:
        return failed("; ".join(problems[:4]) + " — they must be integers (or null for an unlimited TTL)",
                      evidence=seqs, warnings=sorted(set(warnings))[:5], details={"problems": problems[:20]})
    return passed(f"{ttl}/{poll} are integers in all {judged} task frames", evidence=seqs,
                  warnings=sorted(set(warnings))[:5])


@check(
    id="tasks-status-payload-shape",
    category="lifecycle",
    title="Every tasks/get result is a well-formed task for its status",
    description=(
        "Each tasks/get frame: the requested taskId, a status from the enum, RFC 3339 createdAt and "
        'lastUpdatedAt; on the extension also resultType "complete", inputRequests when input_required and '
        "error when failed."
    ),
    requirements={"extension": ("S-EXT-MUST-05", "S-EXT-MUST-07", "S-EXT-MUST-09", "S-EXT-MUST-12",
                                "S-EXT-MUST-33"),
                  "legacy": ("S-LEG-MUST-08",)},
    probes=("declared-call", "poll"),
    scored=False,
    needs="task",
)
def status_payload_shape(ev: Evidence) -> Verdict:
    poll = ev.probe("poll")
    tid = ev.created_task_id
    problems: list[str] = []
    warnings: list[str] = []
    seqs: list[int] = []
    gets = [(label, r) for label, r in poll.replies.items() if label.startswith("get#")]
    if not gets:
        return could_not_run(poll.not_run or "no tasks/get was sent")
    _first_label, first = gets[0]
    if not first.ok:
        what = first.describe()
        rule = "S-EXT-MUST-05: a CreateTaskResult must be durable" if ev.wire == "extension" else "S-LEG-MUST-15"
        return failed(f"the first tasks/get right after creation got {what} ({rule})", evidence=first.seqs())
    for label, reply in gets:
        seqs.extend(reply.seqs())
        n = label[4:]
        if not reply.ok:
            problems.append(f"tasks/get #{n} got {reply.describe()}")
            continue
        frame = ev.frame(reply.response_seq)
        raw = frame.json() if frame is not None else None
        task = raw.get("result") if isinstance(raw, dict) else None
        if not isinstance(task, dict):
            problems.append(f"tasks/get #{n} result is not an object")
            continue
        if task.get("taskId") != tid:
            problems.append(f"tasks/get #{n} taskId is {str(task.get('taskId'))[:40]!r}, not the requested id")
        sp = status_problem(task)
        if sp:
            problems.append(f"tasks/get #{n} {sp}")
        for key in ("createdAt", "lastUpdatedAt"):
            if key not in task:
                problems.append(f"tasks/get #{n} lacks {key}")
                continue
            tp = timestamp_problem(task[key])
            if tp is not None:
                (warnings if tp[0] == "warn" else problems).append(f"tasks/get #{n} {key} {tp[1]}")
        if ev.wire == "extension":
            rtype = task.get("resultType")
            if rtype != "complete":
                extra = (
                    ' (the Final SEP-2663 examples showed "task" here; the normative text requires "complete")'
                    if rtype == "task" else ""
                )
                problems.append(f'tasks/get #{n} resultType is {rtype!r}, not "complete"{extra}')
            status = task.get("status")
            if status == "input_required":
                ir = task.get("inputRequests")
                if not isinstance(ir, dict) or not ir:
                    problems.append(f"tasks/get #{n} is input_required without a non-empty inputRequests")
            if status == "failed" and not isinstance(task.get("error"), dict):
                problems.append(f"tasks/get #{n} is failed without an error object")
        elif "resultType" in task and task.get("resultType") != "complete":
            warnings.append(f"tasks/get #{n} carries resultType {task.get('resultType')!r} on 2025-11-25")
    if problems:
        return failed("; ".join(problems[:4]), evidence=seqs, warnings=sorted(set(warnings))[:5],
                      details={"problems": problems[:20]})
    statuses = poll.data.get("statuses", [])
    return passed(
        f"all {len(gets)} tasks/get results are well-formed (statuses seen: {', '.join(dict.fromkeys(statuses))})",
        evidence=seqs, warnings=sorted(set(warnings))[:5],
    )


@check(
    id="tasks-inline-result",
    category="lifecycle",
    title="The task's outcome is retrievable: inlined on the extension, tasks/result on legacy",
    description=(
        "Extension: a completed task's tasks/get carries result (the CallToolResult), a failed one error "
        "{code, message}. Legacy: tasks/result returns the underlying result, or the same JSON-RPC error, "
        f'with _meta["{META_RELATED_TASK}"].'
    ),
    requirements={"extension": ("S-EXT-MUST-10", "S-EXT-MUST-12", "S-EXT-MUST-13"),
                  "legacy": ("S-LEG-MUST-10", "S-LEG-MUST-12")},
    # When the undeclared call ran too (it does in a full run), it shows what the same request
    # returns without a task: the outcome the task must report (S-EXT-MUST-13). It is not a
    # declared need, so selecting this check alone calls the tool only once.
    probes=("declared-call", "poll"),
    needs="terminal",
)
def inline_result(ev: Evidence) -> Verdict:
    poll = ev.probe("poll")
    last_label = [k for k in poll.replies if k.startswith("get#")][-1]
    last = poll.replies[last_label]
    task = last.result
    status = task.get("status")
    seqs = last.seqs()
    if ev.wire == "extension":
        if status == "completed":
            result = task.get("result")
            if not isinstance(result, dict):
                return failed("the completed task's tasks/get has no result object (S-EXT-MUST-10)", evidence=seqs)
            inner = result.get("resultType")
            if inner in ("task", "input_required"):
                return failed(f'the inlined result says resultType {inner!r}; a final result cannot', evidence=seqs)
            warnings = []
            if inner is None:
                warnings.append(
                    'the inlined result has no resultType; accepted, but some clients expect "complete" '
                    "(spec-digest §6 Q4)"
                )
            if not isinstance(result.get("content"), list):
                return failed("the inlined result has no content array, so it is not a CallToolResult",
                              evidence=seqs)
            if META_RELATED_TASK in (get_path(result, "_meta") or {}):
                warnings.append("the inlined result carries the legacy related-task _meta")
            note = " (a tool isError result, correctly kept completed)" if result.get("isError") else ""
            return passed(f"the completed task inlines its CallToolResult{note}", evidence=seqs, warnings=warnings)
        if status == "failed":
            err = task.get("error")
            if not (isinstance(err, dict) and is_int(err.get("code")) and isinstance(err.get("message"), str)):
                return failed(
                    f"the failed task's error is {str(err)[:80]}, not a JSON-RPC error object {{code, message}} "
                    "(S-EXT-MUST-12)",
                    evidence=seqs,
                )
            warnings = []
            sync = ev.probe("undeclared-call").reply("call")
            if (sync is not None and sync.ok and sync.result.get("isError") is True
                    and ev.probe("undeclared-call").data.get("task_id") is None):
                # Ambiguous from outside: either the server turned a tool isError result into a
                # failure (S-EXT-MUST-13 forbids that), or the tool raised a protocol error that the
                # synchronous path reports as isError (allowed). Say so; do not fail.
                warnings.append(
                    "the task ended failed, but the same tools/call without the extension returned a "
                    "CallToolResult with isError: true; if the tool reported isError (rather than raising a "
                    "protocol error) the task MUST be completed with that result (S-EXT-MUST-13)"
                )
                seqs += sync.seqs()
            return passed(f"the failed task carries error {err.get('code')}", evidence=seqs, warnings=warnings)
        return not_applicable("the task ended cancelled, so there is no result to inline", evidence=seqs)
    reply = poll.reply("result")
    if reply is None:
        return could_not_run("tasks/result was not called")
    seqs = reply.seqs()
    if not reply.answered:
        return failed(f"tasks/result on the {status} task got {reply.describe()}", evidence=seqs)
    if reply.error is not None:
        if status == "failed":
            return passed(f"tasks/result returned the task's JSON-RPC error {reply.error_code}", evidence=seqs)
        return failed(
            f"tasks/result on a {status} task answered {reply.describe()} instead of the underlying result "
            "(S-LEG-MUST-10)",
            evidence=seqs,
        )
    related = get_path(reply.result, "_meta", META_RELATED_TASK)
    if not isinstance(related, dict) or related.get("taskId") != ev.created_task_id:
        return failed(
            f'the tasks/result response lacks _meta["{META_RELATED_TASK}"] = {{taskId}} (S-LEG-MUST-12); '
            f"found {str(related)[:60]}",
            evidence=seqs,
        )
    if not isinstance(reply.result.get("content"), list):
        return failed("tasks/result returned no CallToolResult (no content array)", evidence=seqs)
    warnings = []
    if reply.result.get("isError") is True and status == "completed":
        warnings.append(
            "the tool result has isError: true but the task ended completed; on 2025-11-25 it should be "
            "failed (a SHOULD; the extension later reversed this rule — spec-digest §6 Q17)"
        )
    return passed(f"tasks/result returned the CallToolResult with the related-task _meta ({status})",
                  evidence=seqs, warnings=warnings)


@check(
    id="tasks-mcp-name-routing",
    category="lifecycle",
    title="Over HTTP, a tasks/* request whose routing headers disagree with its body is rejected (400, -32020)",
    description=(
        "Judges the server: a tasks/get whose Mcp-Name header is not the taskId, and one whose Mcp-Method is "
        "not tasks/get, each get HTTP 400 with -32020. "
        "Our own Mcp-Name/Mcp-Method on every tasks/* request are confirmed from the wire log first. "
        "Not applicable on stdio and on the legacy wire."
    ),
    requirements={"extension": ("S-EXT-MUST-35", "S-CORE-MUST-06")},
    wires=("extension",),
    probes=("declared-call", "name-routing"),
    transports=("http",),
    needs="task",
)
def mcp_name_routing(ev: Evidence) -> Verdict:
    own = _own_routing_header_problems(ev)
    if own:
        return could_not_run("tasks-conformance sent wrong routing headers (harness bug): " + "; ".join(own[:3]))
    rec = ev.probe("name-routing")
    reply = rec.reply("mismatch")
    if reply is None:
        return could_not_run(rec.harness_problem or rec.not_run or "the Mcp-Name probe did not run")
    sent = rec.data.get("sent_name")
    for r in (reply, rec.reply("method-mismatch")):
        if r is not None and not r.answered and r.transport_problem and not r.timed_out:
            # The connection failed under our probe: that judges nothing about the server's routing.
            return could_not_run(f"the header probe got no answer: {r.transport_problem}", evidence=r.seqs())
    problems: list[str] = []
    seqs = reply.seqs()
    verdict_name = _header_mismatch_problem(reply, f"Mcp-Name {sent!r} ≠ taskId")
    if verdict_name:
        problems.append(verdict_name)
    method_reply = rec.reply("method-mismatch")
    if method_reply is not None:
        seqs += method_reply.seqs()
        verdict_method = _header_mismatch_problem(method_reply, "Mcp-Method ≠ the body's method")
        if verdict_method:
            problems.append(verdict_method)
    if problems:
        return failed("; ".join(problems) + " — S-EXT-MUST-35 requires HTTP 400 with -32020", evidence=seqs)
    return passed(
        "tasks/get with an Mcp-Name that differs from the taskId, and one with a wrong Mcp-Method, were "
        "rejected with HTTP 400 and -32020",
        evidence=seqs,
    )


def _header_mismatch_problem(reply: Reply, what: str) -> str | None:
    if reply.error is not None:
        code = reply.error_code
        if code == ERR_HEADER_MISMATCH and reply.status == 400:
            return None
        if code == ERR_HEADER_MISMATCH:
            return f"{what}: -32020 came with HTTP {reply.status}, not 400"
        hint = draft_code_hint(code)
        return f"{what}: got {reply.describe()}" + (f" ({hint})" if hint else "")
    if reply.ok:
        return f"{what}: the request was served (HTTP {reply.status})"
    return f"{what}: got {reply.describe()}"


def _own_routing_header_problems(ev: Evidence) -> list[str]:
    problems: list[str] = []
    for intent in ev.intents:
        # The negative header probes change a header on purpose; every other tasks/* must be right.
        if not intent.method.startswith("tasks/") or intent.purpose.endswith("mismatch"):
            continue
        frame = ev.frame(intent.seq)
        if frame is None or frame.http is None:
            continue
        msg = frame.json()
        tid = get_path(msg, "params", "taskId")
        name = frame.http.header(HEADER_NAME)
        method = frame.http.header(HEADER_METHOD)
        if method != intent.method:
            problems.append(f"frame {frame.seq} Mcp-Method {method!r} ≠ {intent.method}")
        if isinstance(tid, str) and (name is None or decode_header_value(name) != tid):
            problems.append(f"frame {frame.seq} Mcp-Name {name!r} ≠ taskId")
    return problems


@check(
    id="tasks-invalid-task-id-rejected",
    category="lifecycle",
    title="An unknown taskId is rejected with -32602",
    description=(
        "Extension: tasks/get on an id the server never issued MUST give -32602; tasks/update and "
        "tasks/cancel SHOULD (another answer warns). Legacy: tasks/get, tasks/result and tasks/cancel MUST."
    ),
    requirements={"extension": ("S-EXT-MUST-17", "S-EXT-SHOULD-01", "S-EXT-SHOULD-02"),
                  "legacy": ("S-LEG-MUST-15",)},
    probes=("invalid-id",),
    scored=False,
    needs="wire",
)
def invalid_task_id_rejected(ev: Evidence) -> Verdict:
    rec = ev.probe("invalid-id")
    if not rec.ran:
        return could_not_run(rec.not_run or "the unknown-id probe did not run")
    must = ["get"] if ev.wire == "extension" else ["get", "result", "cancel"]
    should = ["update", "cancel"] if ev.wire == "extension" else []
    problems: list[str] = []
    warnings: list[str] = []
    for label in must + should:
        reply = rec.reply(label)
        if reply is None:
            continue
        if reply.error_code == ERR_INVALID_PARAMS:
            continue
        text = f"tasks/{label} on an unknown id got {reply.describe()}, not -32602"
        (problems if label in must else warnings).append(text)
    seqs = reply_seqs(*rec.replies.values())
    if problems:
        return failed("; ".join(problems), evidence=seqs, warnings=warnings)
    asked = [m for m in must if rec.reply(m) is not None]
    return passed(f"tasks/{', tasks/'.join(asked)} on an unknown id got -32602", evidence=seqs, warnings=warnings)


@check(
    id="tasks-cancel-ack-shape",
    category="lifecycle",
    title="tasks/cancel answers with its era's shape",
    description=(
        'Extension: an empty ack {resultType: "complete"} (cancelling a terminal task is not an error, and '
        "does not change its status). Legacy: the running task comes back already cancelled, and "
        "cancelling a finished task gets -32602."
    ),
    requirements={"extension": ("S-EXT-MUST-16", "S-EXT-MUST-32"), "legacy": ("S-LEG-MUST-18", "S-LEG-MUST-19")},
    probes=("declared-call", "cancel"),
    scored=False,
    needs="task",
)
def cancel_ack_shape(ev: Evidence) -> Verdict:
    rec = ev.probe("cancel")
    if rec.data.get("no_cancel_capability"):
        return not_applicable("the server does not declare capabilities.tasks.cancel (optional on 2025-11-25)")
    reply = rec.reply("cancel")
    if reply is None:
        return could_not_run(rec.not_run or "tasks/cancel was not sent")
    seqs = reply_seqs(rec.reply("create"), reply, rec.reply("after"))
    if not reply.answered:
        return failed(f"tasks/cancel got {reply.describe()}", evidence=seqs)
    if ev.wire == "extension":
        if reply.error is not None:
            return failed(f"tasks/cancel on a known task got {reply.describe()}; it MUST ack (S-EXT-MUST-16)",
                          evidence=seqs)
        frame = ev.frame(reply.response_seq)
        result = get_path(frame.json() if frame else None, "result")
        extra = sorted(k for k in result if k not in ("resultType", "_meta")) if isinstance(result, dict) else []
        if not isinstance(result, dict) or result.get("resultType") != "complete" or extra:
            return failed(
                f'tasks/cancel must answer an empty ack {{"resultType": "complete"}}; got resultType '
                f"{get_path(result, 'resultType')!r}" + (f" and extra fields {', '.join(extra[:6])}" if extra else ""),
                evidence=seqs,
            )
        before = rec.data.get("status_before")
        after = rec.reply("after")
        now = get_path(after.result, "status") if after is not None and after.ok else None
        if before in ("completed", "failed", "cancelled") and now is not None and now != before:
            return failed(
                f"the task was already {before} when tasks/cancel arrived, and afterwards tasks/get says {now!r}; "
                "a terminal status never changes (S-EXT-MUST-32, derived from the state diagram)",
                evidence=seqs,
            )
        return passed('tasks/cancel answered the empty ack {"resultType": "complete"}', evidence=seqs)
    if reply.error is not None:
        after = rec.reply("after")
        st = get_path(after.result, "status") if after is not None and after.ok else None
        if reply.error_code == ERR_INVALID_PARAMS and st in ("completed", "failed"):
            return not_applicable(
                f"the task was already {st} when tasks/cancel arrived (-32602 is right then); use a longer "
                "running tool to test cancel",
                evidence=seqs,
            )
        return failed(f"tasks/cancel on a running task got {reply.describe()}", evidence=seqs)
    result = reply.result
    if result.get("status") != "cancelled":
        return failed(
            f"tasks/cancel returned status {result.get('status')!r}; the task MUST be cancelled before the "
            "response (S-LEG-MUST-19)",
            evidence=seqs,
        )
    if result.get("taskId") != rec.data.get("task_id"):
        return failed("tasks/cancel returned a different taskId", evidence=seqs)
    terminal = rec.reply("cancel-terminal")
    if terminal is not None:
        seqs += terminal.seqs()
        if terminal.error_code != ERR_INVALID_PARAMS:
            return failed(
                f"tasks/cancel of the task that had already ended got {terminal.describe()}; 2025-11-25 requires "
                "-32602 (S-LEG-MUST-18)",
                evidence=seqs,
            )
        return passed("tasks/cancel returned the running task in status cancelled and refused the finished one "
                      "with -32602", evidence=seqs)
    return passed("tasks/cancel returned the task in status cancelled", evidence=seqs)


@check(
    id="tasks-input-required-update-completes",
    category="lifecycle",
    title="A task that asks for input completes once it is answered",
    description=(
        "With --input-responses: on the extension, tasks/update is acked with {resultType: \"complete\"} and "
        "the task then reaches a terminal status; on legacy, the elicitation arrives on the tasks/result "
        "stream with the related-task _meta and the task completes. Not applicable when the task never asks."
    ),
    requirements={"extension": ("S-EXT-MUST-09", "S-EXT-MUST-15"), "legacy": ("S-LEG-MUST-13",)},
    probes=("declared-call", "poll"),
    scored=False,
    needs="task",
)
def input_required_update_completes(ev: Evidence) -> Verdict:
    poll = ev.probe("poll")
    if not poll.ran:
        return could_not_run(poll.not_run or "the task was not polled")
    if not poll.data.get("saw_input_required"):
        if poll.data.get("stop") == "terminal":
            return not_applicable(
                f"the task never asked for input (it went {' → '.join(dict.fromkeys(poll.data.get('statuses', [])))})"
            )
        return could_not_run(f"the task did not finish ({poll.data.get('stop')}) and never asked for input")
    elapsed = poll.data.get("elapsed_ms", 0)
    if ev.wire == "legacy":
        elicits = poll.data.get("elicitations") or []
        if not elicits:
            return failed("the task was input_required but tasks/result carried no elicitation or sampling request",
                          evidence=poll.data.get("gets", []))
        frame = ev.frame(elicits[0])
        meta = get_path(frame.json() if frame else None, "params", "_meta", META_RELATED_TASK)
        if not isinstance(meta, dict) or meta.get("taskId") != ev.created_task_id:
            return failed(
                f'the elicitation for the task lacks _meta["{META_RELATED_TASK}"] (S-LEG-MUST-13)', evidence=elicits
            )
        if poll.data.get("final_status") not in ("completed", "failed", "cancelled"):
            return failed(f"after the answer the task stayed {poll.data.get('final_status')!r} ({elapsed} ms)",
                          evidence=elicits)
        return passed(f"the elicitation carried the related-task _meta and the task ended "
                      f"{poll.data.get('final_status')} ({elapsed} ms)", evidence=elicits)
    if ev.input_responses is None:
        last = [r for k, r in poll.replies.items() if k.startswith("get#")][-1]
        keys = sorted(get_path(last.result, "inputRequests") or {})
        return could_not_run(
            f"the task asks for input (keys: {', '.join(map(str, keys[:5])) or 'none'}); pass "
            "--input-responses '{\"<key>\": {...}}' to test the tasks/update flow"
        )
    updates = [r for k, r in poll.replies.items() if k.startswith("update#")]
    if not updates:
        keys = poll.data.get("unanswered_keys", [])
        return could_not_run(f"--input-responses has no answer for the requested keys {keys[:5]}")
    seqs = reply_seqs(*updates)
    for upd in updates:
        frame = ev.frame(upd.response_seq)
        result = get_path(frame.json() if frame else None, "result")
        if upd.error is not None or not isinstance(result, dict) or result.get("resultType") != "complete":
            return failed(f'tasks/update got {upd.describe()}; it must ack {{"resultType": "complete"}} '
                          "(S-EXT-MUST-15)", evidence=seqs)
    final = poll.data.get("final_status")
    if final not in ("completed", "failed", "cancelled"):
        return failed(
            f"tasks/update was acked but the task stayed {final!r} for {elapsed} ms of polling", evidence=seqs
        )
    return passed(f"tasks/update was acked and the task ended {final} ({elapsed} ms)", evidence=seqs)


@check(
    id="tasks-subscription-notifications",
    category="lifecycle",
    title="A task subscription acknowledges first and tags every notifications/tasks with its id",
    description=(
        "subscriptions/listen {notifications: {taskIds}} declaring the extension: the first message is "
        "notifications/subscriptions/acknowledged; every notifications/tasks carries the subscriptionId "
        "_meta, is about a requested task and is a complete task object; a graceful close is "
        '{resultType: "complete"}. Servers need not send task notifications at all: -32601 is not applicable.'
    ),
    requirements={"extension": ("S-EXT-MUST-30", "S-EXT-MUST-31", "S-CORE-MUST-12")},
    wires=("extension",),
    probes=("declared-call", "listen"),
    scored=False,
    needs="task",
)
def subscription_notifications(ev: Evidence) -> Verdict:
    rec = ev.probe("listen")
    reply = rec.reply("listen")
    if reply is None:
        return could_not_run(rec.not_run or "subscriptions/listen was not sent")
    if reply.error_code == ERR_METHOD_NOT_FOUND:
        return not_applicable("the server does not implement subscriptions/listen (task notifications are "
                              "optional, S-EXT-MAY-08)", evidence=reply.seqs())
    if reply.error is not None:
        return failed(f"subscriptions/listen for the task, declaring the extension, got {reply.describe()}",
                      evidence=reply.seqs())
    sub = reply.request_id
    mine: list[tuple[int, Any]] = []
    for seq in rec.data.get("frames", []):
        frame = ev.frame(seq)
        msg = frame.json() if frame is not None else None
        if isinstance(msg, dict):
            mine.append((seq, msg))
    tagged = [(seq, m) for seq, m in mine if get_path(m, "params", "_meta", META_SUBSCRIPTION_ID) == sub]
    untagged = [seq for seq, m in mine if m.get("method") == "notifications/tasks"
                and get_path(m, "params", "_meta", META_SUBSCRIPTION_ID) != sub]
    seqs = [*reply.seqs(), *(seq for seq, _ in mine)]
    problems: list[str] = []
    if untagged:
        problems.append(f"{len(untagged)} notifications/tasks lack the subscriptionId _meta "
                        f"{META_SUBSCRIPTION_ID!r} = {sub!r} (frames {', '.join(map(str, untagged[:5]))})")
    if not tagged:
        if reply.answered and not untagged:
            problems.append("the subscription ended without notifications/subscriptions/acknowledged")
        elif not untagged:
            return could_not_run("no acknowledgement arrived within the listening window "
                                 f"({reply.elapsed_ms} ms); the server may be slow to open the stream",
                                 evidence=seqs)
    elif tagged[0][1].get("method") != "notifications/subscriptions/acknowledged":
        problems.append(f"the first message of the subscription is {tagged[0][1].get('method')!r}, not "
                        "notifications/subscriptions/acknowledged")
    wanted = rec.data.get("task_id")
    for seq, m in tagged:
        if m.get("method") != "notifications/tasks":
            continue
        task = m.get("params") or {}
        if task.get("taskId") != wanted:
            problems.append(f"frame {seq} is about task {str(task.get('taskId'))[:40]!r}, which was not requested")
        # TTL field names in notifications are tasks-ttl-shape's to judge (it reads them too).
        missing = [k for k in ("taskId", "status", "createdAt", "lastUpdatedAt") if k not in task]
        if missing or status_problem(task):
            problems.append(f"frame {seq} is not a complete task: " + (f"lacks {', '.join(missing)}" if missing
                                                                        else str(status_problem(task))))
    if reply.answered and get_path(reply.result, "resultType") != "complete":
        problems.append(f"the subscription closed with resultType {get_path(reply.result, 'resultType')!r}, "
                        'not "complete"')
    if problems:
        return failed("; ".join(problems[:4]), evidence=seqs)
    count = sum(1 for _, m in tagged if m.get("method") == "notifications/tasks")
    how = "closed gracefully" if reply.answered else f"was still open after {reply.elapsed_ms} ms"
    return passed(f"the subscription was acknowledged first, carried {count} tagged notifications/tasks and {how}",
                  evidence=seqs)


UNDECLARED = ("tasks/get", "tasks/update", "subscriptions/listen", "tasks/cancel")


@check(
    id="tasks-undeclared-capability-rejected",
    category="lifecycle",
    title="tasks/* and task subscriptions without the extension declaration get -32021",
    description=(
        "Run last on the live task: tasks/get, tasks/update, subscriptions/listen {notifications: {taskIds}} "
        "and tasks/cancel without the extension in _meta each get -32021 (HTTP 400); -32601 on "
        "subscriptions/listen warns."
    ),
    requirements={"extension": ("S-EXT-MUST-18", "S-EXT-MUST-19", "S-CORE-MUST-05")},
    wires=("extension",),
    probes=("declared-call", "undeclared-tasks"),
    needs="task",
)
def undeclared_capability_rejected(ev: Evidence) -> Verdict:
    rec = ev.probe("undeclared-tasks")
    if not rec.ran:
        return could_not_run(rec.not_run or "the undeclared probes did not run")
    problems: list[str] = []
    warnings: list[str] = []
    for method in UNDECLARED:
        reply = rec.reply(method)
        if reply is None:
            continue
        code = reply.error_code
        if code == ERR_MISSING_CAPABILITY:
            if reply.status is not None and reply.status != 400:
                problems.append(f"{method}: -32021 came with HTTP {reply.status}, not 400")
            continue
        if method == "subscriptions/listen" and code == ERR_METHOD_NOT_FOUND:
            warnings.append("subscriptions/listen is not implemented (-32601); the -32021 rule could not be seen")
            continue
        hint = draft_code_hint(code)
        if hint:
            problems.append(f"{method}: {hint}")
        elif method == "subscriptions/listen" and rec.data.get("listen_acks"):
            problems.append(f"{method}: the server opened the subscription without the declaration")
        else:
            problems.append(f"{method} without the declaration got {reply.describe()}")
    seqs = reply_seqs(*rec.replies.values())
    if problems:
        return failed("; ".join(problems) + " — each must get -32021 (S-EXT-MUST-18/19)", evidence=seqs,
                      warnings=warnings)
    return passed("each undeclared tasks/* request was refused with -32021", evidence=seqs, warnings=warnings)


@check(
    id="tasks-undeclared-capability-names-requirements",
    category="lifecycle",
    title="Every -32021 names the missing extension in data.requiredCapabilities",
    description=(
        f'Each -32021 seen carries data.requiredCapabilities.extensions["{EXT_TASKS}"]. A missing data fails '
        "(spec-digest §6 Q13); requiredCapabilities that do not mention the extension warn."
    ),
    requirements={"extension": ("S-EXT-MUST-02", "S-CORE-MUST-04")},
    wires=("extension",),
    probes=("declared-call", "undeclared-call", "undeclared-tasks"),
    scored=False,
    needs="wire",
)
def undeclared_capability_names_requirements(ev: Evidence) -> Verdict:
    replies = [*ev.probe("undeclared-call").replies.values(), *ev.probe("undeclared-tasks").replies.values()]
    errors = [r for r in replies if r.error_code == ERR_MISSING_CAPABILITY]
    if not errors:
        return could_not_run("no -32021 error was seen to inspect",
                             blocked_by="tasks-undeclared-capability-rejected")
    problems: list[str] = []
    warnings: list[str] = []
    for r in errors:
        assert r.error is not None
        if not r.error.has_data or not isinstance(r.error.data, dict):
            problems.append(f"{r.method}: the -32021 error has no data object")
            continue
        req = r.error.data.get("requiredCapabilities")
        if not isinstance(req, dict):
            problems.append(f"{r.method}: data.requiredCapabilities is missing")
        elif get_path(req, "extensions", EXT_TASKS) is None:
            warnings.append(f"{r.method}: data.requiredCapabilities does not mention {EXT_TASKS}")
    seqs = reply_seqs(*errors)
    if problems:
        return failed("; ".join(problems) + " (S-EXT-MUST-02)", evidence=seqs, warnings=warnings)
    return passed(f"all {len(errors)} -32021 errors name the extension in data.requiredCapabilities",
                  evidence=seqs, warnings=warnings)


