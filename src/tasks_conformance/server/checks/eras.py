"""Eras kept apart: listing the tasks extension in a 2025-11-25 initialize switches nothing on."""

from __future__ import annotations

from tasks_conformance.core.protocol import get_path
from tasks_conformance.core.verdict import Verdict, could_not_run, failed, not_applicable, passed
from tasks_conformance.core.wires import Wire
from tasks_conformance.server.checks.engine.common import got, unrun
from tasks_conformance.server.checks.engine.registry import check
from tasks_conformance.server.evidence import Evidence, LegacyDeclaresExtension

EXTENSION_IN_INITIALIZE_IGNORED = check(
    id="tasks-extension-in-initialize-ignored",
    area="eras",
    category="dispatch",
    title="A 2025-11-25 session that lists the tasks extension gets no extension behaviour",
    description=(
        "On a server of both eras, a second connection sends a 2025-11-25 initialize whose capabilities list "
        'extensions["io.modelcontextprotocol/tasks"], then calls the probe tool without params.task: the answer '
        "must not be a flat CreateTaskResult (resultType \"task\", or a taskId at the top level). Not applicable "
        "when the server does not serve 2025-11-25."
    ),
    probes=(LegacyDeclaresExtension,),
    needs="tool",
)


@EXTENSION_IN_INITIALIZE_IGNORED.judge(Wire.EXTENSION, requires=("S-EXT-MUST-28",))
def extension_in_initialize_ignored(ev: Evidence) -> Verdict:
    rec = ev.get(LegacyDeclaresExtension)
    init = rec.initialize
    if init is None:
        if rec.no_second_connection and rec.not_run:
            return not_applicable(rec.not_run)
        return could_not_run(unrun(rec, "the 2025-11-25 initialize was not sent"))
    if not init.ok:
        if init.answered:
            return not_applicable(f"the server does not serve 2025-11-25 (initialize got {init.describe()}), so "
                                  "it has no legacy session to keep apart", evidence=init.seqs())
        # Over stdio the second connection is a second server process: its silence is a cold start.
        return could_not_run(got(f"the 2025-11-25 initialize got {init.describe()}", init,
                                 fix="pin the era the server implements with --protocol-version",
                                 cold_start=rec.fresh_process), evidence=init.seqs())
    call = rec.call
    if call is None or not call.answered:
        answer = call.describe() if call else "no answer"
        return could_not_run(got(f"the tools/call on the 2025-11-25 session got {answer}", call,
                                 fix="check --tool-name and --tool-args"),
                             evidence=init.seqs())
    seqs = [*init.seqs(), *call.seqs()]
    result = call.result if call.ok else None
    if get_path(result, "resultType") == "task" or isinstance(get_path(result, "taskId"), str):
        return failed(
            'a 2025-11-25 session whose initialize listed extensions["io.modelcontextprotocol/tasks"] got a flat '
            "CreateTaskResult for a tools/call without params.task: the extension exists only on 2026-07-28 and "
            "listing it at initialize enables nothing (S-EXT-MUST-28)", broken=("S-EXT-MUST-28",), evidence=seqs,
            details={"expected": "a 2025-11-25 answer (CallToolResult or error)",
                     "actual": f"resultType {get_path(result, 'resultType')!r}, taskId "
                               f"{str(get_path(result, 'taskId'))[:40]!r}"},
        )
    what = "a result" if call.ok else call.describe()
    return passed(f"the 2025-11-25 session that listed the extension got {what} for the plain tools/call, no "
                  "CreateTaskResult", evidence=seqs)
