"""Declaration: the tasks declaration in its era's form, on our outbound bytes and in what the
server declares."""

from __future__ import annotations

from tasks_conformance.core.causes import harness
from tasks_conformance.core.protocol import EXT_TASKS, get_path
from tasks_conformance.core.result import CheckWarning
from tasks_conformance.core.verdict import Verdict, could_not_run, failed, passed, warn
from tasks_conformance.core.wires import TASK_SUPPORT_VALUES, Wire, listed_task_support
from tasks_conformance.core.wires.legacy import declared_tasks
from tasks_conformance.server.checks.engine.registry import check
from tasks_conformance.server.evidence import DeclaredCall, Evidence

DECLARATION_HYGIENE = check(
    id="tasks-declaration-hygiene",
    area="declaration",
    category="dispatch",
    title="Declarations belong to their wire: params.task only on legacy, the extension only on 2026-07-28",
    description=(
        "Judged on the captured outbound bytes: every request carries the tasks declaration exactly where "
        "the probe meant it and only in its own era's form; and the server declares tasks in its era's form "
        "(no legacy capabilities.tasks in a 2026-07-28 server/discover, an extension value of {})."
    ),
    probes=(DeclaredCall,),
    needs="wire",
)


def _outbound(ev: Evidence) -> tuple[list[int], Verdict | None]:
    """Our own requests, checked first: a wrong declaration of ours is a harness fault, never the
    server's. Returns the frames looked at and, when we were wrong, the verdict saying so."""
    own: list[str] = []
    seqs: list[int] = []
    for intent in ev.intents:
        frame = ev.frame(intent.seq)
        if frame is None or frame.direction != "out":
            continue
        msg = frame.json()
        params = msg.get("params") if isinstance(msg, dict) else None
        seqs.append(frame.seq)
        own += [f"frame {frame.seq} ({intent.method}) {m}"
                for m in ev.dialect.declaration_mistakes(intent.method, params, intent.declared)]
    if own:
        return seqs, could_not_run(
            harness("tasks-conformance sent a wrong declaration (harness bug): " + "; ".join(own[:3])), evidence=seqs
        )
    return seqs, None


@DECLARATION_HYGIENE.judge(Wire.EXTENSION, requires=("S-EXT-MUST-26", "S-EXT-MUST-25"))
def extension_declarations(ev: Evidence) -> Verdict:
    seqs, harness = _outbound(ev)
    if harness is not None:
        return harness
    caps = ev.discovery.server_capabilities or {}
    disc = ev.discovery.discover_reply
    disc_seqs = [disc.response_seq] if disc is not None and disc.response_seq else []
    if "tasks" in caps:
        return failed(
            "server/discover on 2026-07-28 advertises the legacy capabilities.tasks (S-EXT-MUST-26): "
            f'declare only extensions["{EXT_TASKS}"]', broken=("S-EXT-MUST-26",),
            evidence=disc_seqs, details={"expected": f'only extensions["{EXT_TASKS}"]', "actual": "capabilities.tasks"},
        )
    warnings: list[CheckWarning] = []
    value = get_path(caps, "extensions", EXT_TASKS)
    if value != {}:
        warnings.append(warn(
            f"the extension capability value is {str(value)[:80]}, not {{}}: strict clients treat tasks as "
            "unsupported (policy P-15)", "P-15",
        ))
    return passed(
        f"{len(seqs)} outbound requests carried the extension declaration exactly where intended and no "
        "params.task; the server declares only the extension",
        evidence=seqs + disc_seqs, warnings=warnings,
    )


@DECLARATION_HYGIENE.judge(Wire.LEGACY, requires=("S-LEG-MUST-03",))
def legacy_declarations(ev: Evidence) -> Verdict:
    seqs, harness = _outbound(ev)
    if harness is not None:
        return harness
    d = ev.discovery
    warnings: list[CheckWarning] = []
    requests = get_path(declared_tasks(d.server_capabilities), "requests")
    if isinstance(requests, dict):
        extra = sorted(k for k in requests if k != "tools")
        if extra:
            warnings.append(warn(f"non-standard task-augmentable request types declared: {', '.join(extra)} "
                                 "(policy P-18)", "P-18"))
    bad = [
        f"{str(t.get('name'))[:60]}: {listed_task_support(t)!r}"
        for t in d.tools if listed_task_support(t) not in (None, *TASK_SUPPORT_VALUES)
    ]
    tools_seqs = [r.response_seq for r in d.tools_replies if r.response_seq]
    if bad:
        return failed(
            "tools/list has execution.taskSupport values outside forbidden|optional|required: " + "; ".join(bad[:5]),
            broken=("S-LEG-MUST-03",),
            evidence=tools_seqs, details={"expected": "forbidden|optional|required", "actual": bad[:5]},
        )
    return passed(
        f"{len(seqs)} outbound requests used params.task only on the declared tools/call and no extension "
        "declaration; the server's tool taskSupport values are valid",
        evidence=seqs + tools_seqs, warnings=warnings,
    )
