"""Task progress (2025-11-25): progress notifications keep the creating request's progressToken
and stop once the task has ended."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tasks_conformance.core.protocol import (
    TERMINAL_STATUSES,
    get_path,
)
from tasks_conformance.core.verdict import Verdict, could_not_run, failed, not_applicable, passed
from tasks_conformance.core.wires import Wire
from tasks_conformance.server.checks.engine.common import got, unrun
from tasks_conformance.server.checks.engine.registry import check
from tasks_conformance.server.checks.engine.shapes import reply_seqs
from tasks_conformance.server.evidence import (
    DeclaredCall,
    Evidence,
    TaskProgress,
)

if TYPE_CHECKING:
    pass


PROGRESS_TOKEN = check(
    id="tasks-legacy-progress-token",
    area="progress",
    category="lifecycle",
    title="Task progress keeps the creating request's progressToken and stops once the task has ended",
    description=(
        "A second task is created with a progressToken and waited for with tasks/result, then read twice, a "
        "poll interval apart. Every notifications/progress must carry that token (no request carried another), "
        "and none may arrive after a tasks/get, sent once tasks/result answered, showed the task ended. Not "
        "applicable when the server sends no progress (progress is optional)."
    ),
    probes=(DeclaredCall, TaskProgress),
    needs="task",
)


@PROGRESS_TOKEN.judge(Wire.LEGACY, requires=("S-LEG-MUST-23",))
def progress_token(ev: Evidence) -> Verdict:
    rec = ev.get(TaskProgress)
    if not rec.ran:
        return could_not_run(unrun(rec, "no task was created with a progressToken"))
    seqs = reply_seqs(rec.create, rec.result, *rec.polls[-3:], rec.ended, rec.later)
    ended = rec.ended
    if ended is None or not ended.ok or get_path(ended.result, "status") not in TERMINAL_STATUSES:
        # tasks/result and then tasks/get followed the task for --poll-timeout: it did not end.
        read = ended if ended is not None and not ended.ok else rec.result
        return could_not_run(got("the task with a progressToken was not seen to end within --poll-timeout "
                                 f"(tasks/result: {rec.result.describe() if rec.result else 'not sent'}; "
                                 f"{len(rec.polls)} tasks/get read(s) showed it running)", read,
                                 fix="raise --poll-timeout or pick a quicker tool"), evidence=seqs)
    tokens = [(seq, get_path(ev.frame_json(seq), "params", "progressToken")) for seq in rec.frames]
    ours = [seq for seq, token in tokens if token == rec.token]
    foreign = [(seq, token) for seq, token in tokens if token != rec.token]
    seqs = [*seqs, *rec.frames][:20]
    if not tokens:
        return not_applicable("the server sent no notifications/progress for the task created with a progressToken "
                              "(progress is optional)", evidence=seqs)
    problems: list[str] = []
    if foreign:
        problems.append(f"{len(foreign)} notifications/progress carry progressToken {foreign[0][1]!r} (frame "
                        f"{foreign[0][0]}), which no request carried; the task's progress keeps the token of the "
                        "request that created it")
    ended_at = ended.response_seq or 0
    late = [seq for seq in ours if seq > ended_at]
    if late:
        status = get_path(ended.result, "status")
        problems.append(f"{len(late)} notifications/progress with the task's token arrived after tasks/get showed it "
                        f"{status} (frame {ended_at}), the first at frame {late[0]}; progress stops once the task "
                        "is terminal")
    if problems:
        return failed("; ".join(problems) + " (S-LEG-MUST-23)", broken=("S-LEG-MUST-23",), evidence=seqs,
                      details={"expected": "progress with the original token, none after the end", "actual": problems})
    return passed(f"{len(ours)} notifications/progress carried the creating request's progressToken, none after the "
                  "task ended", evidence=seqs)
