"""dispatch: is there a tasks wire, and were the declarations on it right?"""

from __future__ import annotations

import json
from typing import Any

from tasks_conformance.checks.registry import Verdict, check, could_not_run, failed, passed
from tasks_conformance.evidence import Evidence
from tasks_conformance.protocol import EXT_TASKS, META_CLIENT_CAPS, META_SUBSCRIPTION_ID, get_path


@check(
    id="tasks-wire-resolvable",
    category="dispatch",
    title="The server speaks a tasks wire (legacy 2025-11-25 or the 2026-07-28 extension)",
    description=(
        "Negotiates the era, then looks for capabilities.tasks.requests.tools.call after a 2025-11-25 "
        f'initialize or extensions["{EXT_TASKS}"] in a 2026-07-28 server/discover. A server with '
        "neither fails: a tasks checker must not pass a server without tasks."
    ),
    requirements={"legacy": ("S-LEG-MUST-01",), "extension": ("S-CORE-MUST-08",), "none": ("S-LEG-MUST-01",)},
    wires=("legacy", "extension", "none"),
)
def wire_resolvable(ev: Evidence) -> Verdict:
    d = ev.discovered
    seqs = [r.response_seq or r.request_seq for r in (d.discover_reply, d.initialize_reply) if r is not None]
    details: dict[str, Any] = {"lookedFor": d.looked_for, "negotiation": d.negotiation_notes}
    if d.connection_problem is not None:
        return could_not_run(f"could not talk to the server: {d.connection_problem}", evidence=seqs,
                             details=details)
    if d.wire == "none":
        looked = "; ".join(d.looked_for) or "no era answered"
        return failed(f"no tasks wire found — {looked}", evidence=seqs, details=details)
    if ev.expect_wire != "any" and d.wire != ev.expect_wire:
        return failed(
            f"--expect-wire {ev.expect_wire}, but the server speaks the {d.wire} wire (protocol {d.era})",
            evidence=seqs, details=details,
        )
    if d.legacy_placement == "capabilities.experimental.tasks":
        return failed(
            "the tasks capability is declared under capabilities.experimental.tasks (a pre-2026 placement); "
            "S-LEG-MUST-01 requires capabilities.tasks",
            evidence=seqs, details=details,
        )
    where = "capabilities.tasks.requests.tools.call" if d.wire == "legacy" else f'extensions["{EXT_TASKS}"]'
    return passed(f"{d.wire} wire on protocol {d.era} ({where})", evidence=seqs, details=details)


def _declares_extension(params: Any) -> bool:
    return get_path(params, "_meta", META_CLIENT_CAPS, "extensions", EXT_TASKS) is not None


@check(
    id="tasks-declaration-hygiene",
    category="dispatch",
    title="Declarations belong to their wire: params.task only on legacy, the extension only on 2026-07-28",
    description=(
        "Judged on the captured outbound bytes: every request carries the tasks declaration exactly where "
        "the probe meant it and only in its own era's form; and the server declares tasks in its era's form "
        "(no legacy capabilities.tasks in a 2026-07-28 server/discover, an extension value of {})."
    ),
    requirements={"extension": ("S-EXT-MUST-26", "S-EXT-MUST-25"), "legacy": ("S-LEG-MUST-03",)},
    probes=("declared-call",),
    needs="wire",
)
def declaration_hygiene(ev: Evidence) -> Verdict:
    own: list[str] = []
    seqs: list[int] = []
    for intent in ev.intents:
        frame = ev.frame(intent.seq)
        if frame is None or frame.direction != "out":
            continue
        msg = frame.json()
        params = msg.get("params") if isinstance(msg, dict) else None
        has_ext = _declares_extension(params)
        has_task = isinstance(params, dict) and "task" in params
        seqs.append(frame.seq)
        if ev.wire == "extension":
            if has_task:
                own.append(f"frame {frame.seq} ({intent.method}) carries a legacy params.task on the extension wire")
            if has_ext != intent.declared:
                own.append(
                    f"frame {frame.seq} ({intent.method}) {'lacks' if intent.declared else 'carries'} the "
                    f"extension declaration the probe {'meant' if intent.declared else 'did not mean'} to send"
                )
        else:
            if has_ext:
                own.append(f"frame {frame.seq} ({intent.method}) carries the extension declaration on 2025-11-25")
            if intent.method == "tools/call" and has_task != intent.declared:
                own.append(f"frame {frame.seq} tools/call params.task does not match the probe's intent")
    if own:
        # Our own bytes were wrong: a harness fault, never the server's.
        return could_not_run("tasks-conformance sent a wrong declaration (harness bug): " + "; ".join(own[:3]),
                             evidence=seqs)
    d = ev.discovered
    warnings: list[str] = []
    caps = d.server_capabilities or {}
    if ev.wire == "extension":
        disc = d.discover_reply
        ev_seqs = [disc.response_seq] if disc is not None and disc.response_seq else []
        if "tasks" in caps:
            return failed(
                "server/discover on 2026-07-28 advertises the legacy capabilities.tasks (S-EXT-MUST-26): "
                f'declare only extensions["{EXT_TASKS}"]',
                evidence=ev_seqs,
            )
        value = get_path(caps, "extensions", EXT_TASKS)
        if value != {}:
            warnings.append(
                f"the extension capability value is {str(value)[:80]}, not {{}}: strict clients treat tasks as "
                "unsupported (spec-digest §6 Q15)"
            )
        return passed(
            f"{len(seqs)} outbound requests carried the extension declaration exactly where intended and no "
            "params.task; the server declares only the extension",
            evidence=seqs + ev_seqs, warnings=warnings,
        )
    requests = get_path(caps, "tasks", "requests") or get_path(caps, "experimental", "tasks", "requests")
    if isinstance(requests, dict):
        extra = sorted(k for k in requests if k != "tools")
        if extra:
            warnings.append(f"non-standard task-augmentable request types declared: {', '.join(extra)} (§6 Q18)")
    bad = [
        f"{str(t.get('name'))[:60]}: {get_path(t, 'execution', 'taskSupport')!r}"
        for t in d.tools
        if get_path(t, "execution", "taskSupport") not in (None, "forbidden", "optional", "required")
    ]
    tools_seqs = [r.response_seq for r in d.tools_replies if r.response_seq]
    if bad:
        return failed(
            "tools/list has execution.taskSupport values outside forbidden|optional|required: " + "; ".join(bad[:5]),
            evidence=tools_seqs,
        )
    return passed(
        f"{len(seqs)} outbound requests used params.task only on the declared tools/call and no extension "
        "declaration; the server's tool taskSupport values are valid",
        evidence=seqs + tools_seqs, warnings=warnings,
    )


@check(
    id="tasks-wire-framing",
    category="dispatch",
    title="Every inbound frame is a JSON-RPC message that answers something asked, once",
    description=(
        "Scans every inbound frame of the run: no non-JSON output on a stdio server's stdout, no response "
        "to an id the client never sent and no second response to one, JSON-RPC over HTTP only as "
        "application/json or text/event-stream, and (extension) no notifications/tasks outside a "
        "subscription that asked for them."
    ),
    requirements={"extension": ("S-WIRE-01", "S-WIRE-02", "S-WIRE-03", "S-EXT-MUST-30"),
                  "legacy": ("S-WIRE-01", "S-WIRE-02", "S-WIRE-03")},
    scored=False,
    needs="wire",
)
def wire_framing(ev: Evidence) -> Verdict:
    sent_ids: set[str] = set()
    listen_ids: set[str] = set()
    listened_tasks: set[str] = set()
    for f in ev.wire_log:
        msg = f.json() if f.direction == "out" else None
        if isinstance(msg, dict) and "method" in msg and "id" in msg:
            sent_ids.add(json.dumps(msg["id"]))
            if msg["method"] == "subscriptions/listen":
                listen_ids.add(json.dumps(msg["id"]))
                asked = get_path(msg, "params", "notifications", "taskIds")
                listened_tasks.update(t for t in asked or () if isinstance(t, str))
    problems: dict[str, list[int]] = {}

    def note(kind: str, seq: int) -> None:
        problems.setdefault(kind, []).append(seq)

    for f in ev.unmatched:
        msg = f.json()
        if not f.data and f.note:
            note("oversize messages nobody asked for", f.seq)
        elif msg is None:
            note("lines of output that are not JSON" if ev.transport != "http" else "bodies that are not JSON", f.seq)
        elif isinstance(msg, dict) and msg.get("id") is None and "error" in msg:
            continue  # JSON-RPC's answer when the request's id could not be read: not a stray
        elif isinstance(msg, dict) and "id" in msg and ("result" in msg or "error" in msg):
            rid = json.dumps(msg.get("id"))
            note("duplicate responses to one request" if rid in sent_ids else "responses to ids never sent", f.seq)
        else:
            note("frames that are not JSON-RPC messages", f.seq)
    for f in ev.wire_log:
        mislabelled = f.direction == "in" and f.note and "unexpected Content-Type" in f.note and f.data
        # Only JSON-RPC mislabelled counts; a proxy's plain-text error page is not a message.
        if mislabelled and isinstance(f.json(), dict) and "jsonrpc" in f.json():
            note("JSON-RPC bodies under a wrong Content-Type", f.seq)
    if ev.wire == "extension":
        for f in ev.notifications:
            msg = f.json()
            if get_path(msg, "method") != "notifications/tasks":
                continue
            sub = get_path(msg, "params", "_meta", META_SUBSCRIPTION_ID)
            # About a task we subscribed to: tasks-subscription-notifications judges its tagging.
            if get_path(msg, "params", "taskId") in listened_tasks:
                continue
            if json.dumps(sub) not in listen_ids:
                note("notifications/tasks outside any subscription", f.seq)
    extra = {
        "responses to ids never sent": ev.dropped_unmatched,
        "notifications/tasks outside any subscription": ev.dropped_notifications if ev.wire == "extension" else 0,
    }
    if problems:
        parts = []
        for kind, seqs in problems.items():
            more = extra.get(kind, 0)
            count = len(seqs) + more
            parts.append(f"{count} {kind} (frames {', '.join(map(str, seqs[:5]))}{'…' if count > 5 else ''})")
        return failed(
            "; ".join(parts) + " — every inbound frame must be a JSON-RPC message answering the client",
            evidence=[s for seqs in problems.values() for s in seqs[:10]],
            details={"problems": {k: len(v) for k, v in problems.items()}},
        )
    inbound = sum(1 for f in ev.wire_log if f.direction == "in")
    return passed(f"all {inbound} inbound frames were JSON-RPC messages answering this client")
