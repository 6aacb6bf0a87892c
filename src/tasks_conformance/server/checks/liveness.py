"""Liveness: the server stays up for the whole run. A server that exits or drops its connection
mid-run fails this one check, named with how it ended; every check that could not read its
answers because of it is could-not-run pointing here, not failed on a missing answer."""

from __future__ import annotations

from tasks_conformance.core.causes import Cause, CauseKind
from tasks_conformance.core.verdict import Verdict, could_not_run, failed, passed
from tasks_conformance.core.wires import Wire
from tasks_conformance.server.checks.engine.registry import CheckSpec, check
from tasks_conformance.server.evidence import Evidence

SERVER_STAYS_UP = check(
    id="tasks-server-stays-up",
    area="liveness",
    category="dispatch",
    title="The server stays up and answers every request it accepted",
    description=(
        "Fails when the server, having answered requests, exits or drops its connection mid-run and leaves "
        "requests unanswered (stdio: its process exits or closes stdout; HTTP: connections are refused or "
        "dropped and nothing is answered again). The message says how it ended, after which request, with its "
        "exit code (stdio, or HTTP with --server-command) and the end of its stderr or output. The checks whose "
        "requests went unanswered are could-not-run, pointing here. It reads every reply of the run, so it "
        "watches whatever the selected checks sent. A server that exits once every request was answered passes "
        "(policy P-43)."
    ),
    needs="wire",
)


@SERVER_STAYS_UP.judge(Wire.EXTENSION, requires=("S-WIRE-04",))
@SERVER_STAYS_UP.judge(Wire.LEGACY, requires=("S-WIRE-04",))
def server_stays_up(ev: Evidence) -> Verdict:
    gone = ev.server_gone
    if gone is None:
        return passed("the server answered every request until the run ended", judged=len(ev.intents))
    seqs = sorted({*gone.lost_seqs, *((gone.after_seq,) if gone.after_seq is not None else ())})
    return failed(f"{gone.statement()} (S-WIRE-04; policy P-43)", broken=("S-WIRE-04",), evidence=seqs,
                  policies=("P-43",),
                  details={"expected": "an answer to every request", "actual": gone.statement(),
                           "exitCode": gone.exit_code, "lostRequests": list(gone.lost_seqs[:10])})


GONE_TEXT = "the server stopped answering before this check's requests were answered"


def after_server_gone(spec: CheckSpec, ev: Evidence, verdict: Verdict) -> Verdict:
    """A check whose own requests went unanswered because the server went away defers to
    tasks-server-stays-up: could-not-run pointing at it, unless it passed, does not apply, or
    failed on frames that all came before the end."""
    gone = ev.server_gone
    if gone is None or spec.id == SERVER_STAYS_UP.id or verdict.status == "passed":
        return verdict
    if verdict.skip_reason == "not-applicable":
        return verdict
    lost = set(gone.lost_seqs)
    mine = {r.request_seq for name in spec.probes if (rec := ev.records.get(name)) is not None
            for r in rec.all_replies()}
    if not mine & lost:
        return verdict
    before = gone.after_seq or 0
    if verdict.status == "failed" and verdict.evidence and not lost & set(verdict.evidence) \
            and max(verdict.evidence) <= before:
        return verdict  # judged on what the server said while it still answered
    return could_not_run(Cause(GONE_TEXT, CauseKind.SERVER_GONE), blocked_by=SERVER_STAYS_UP.id,
                         evidence=sorted(mine & lost)[:10])
