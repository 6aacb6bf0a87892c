"""Polling the probe task to its end: tasks/get at the server's pace within --poll-timeout,
answering input when the task asks for it and the run was given answers."""

from __future__ import annotations

import json
import time
from typing import Any

import anyio

from tasks_conformance.core.input_answers import answers_for
from tasks_conformance.core.protocol import ERR_INVALID_PARAMS, ERR_MISSING_CAPABILITY, TERMINAL_STATUSES
from tasks_conformance.core.rpc.peer import Reply
from tasks_conformance.core.wirelog import FrameTag
from tasks_conformance.server.evidence import DeclaredCall, Durability, Poll, StopReason, Update
from tasks_conformance.server.evidence.records import POLL_BYTE_BUDGET_MIB
from tasks_conformance.server.probes import probe
from tasks_conformance.server.probes.engine.context import ProbeContext
from tasks_conformance.server.probes.input_ties import tied_input_requests

DEFAULT_POLL_INTERVAL_S = 0.25
MIN_POLL_INTERVAL_S = 0.05
STUCK_INPUT_POLLS = 3
MAX_POLLS = 2_000
# Errors a poll may retry as a rate limit (S-EXT-MAY-02), in one polling run: a server that keeps
# refusing is judged on its refusal.
MAX_RATE_LIMIT_RETRIES = 3
POLL_BYTE_BUDGET = POLL_BYTE_BUDGET_MIB * 1024 * 1024


def request_fingerprint(request: Any) -> str:
    """One input request as comparable text (key order does not matter)."""
    return json.dumps(request, sort_keys=True, default=str)


class Poller:
    """One polling run; each method is one step of the loop, the record its only output."""

    def __init__(self, ctx: ProbeContext, rec: Poll, task_id: str, created: Any = None) -> None:
        """`created`: the task as its CreateTaskResult gave it (default: the declared call's)."""
        self.ctx = ctx
        self.rec = rec
        self.task_id = task_id
        self.started = time.monotonic()
        self.deadline = self.started + ctx.config.poll_timeout_s
        self.interval_s = self._interval_s(ctx.record(DeclaredCall).created.fields if created is None else created)
        self.stuck = 0
        self.polled_bytes = 0
        # key -> the request it was answered for: a key that comes back asking something else
        # (which S-EXT-MUST-14 forbids, and a check reports) is answered again, so the run goes on.
        self.answered: dict[str, str] = {}
        self.asked_result = False
        # When the last tasks/get went out, on the wire log's clock (the next is one interval later).
        self.sent_at = ctx.wire_log.elapsed()

    def _interval_s(self, task: Any) -> float:
        ms = self.ctx.dialect.poll_interval_ms(task)
        return ms / 1000.0 if ms is not None else DEFAULT_POLL_INTERVAL_S

    async def run(self) -> StopReason:
        for n in range(MAX_POLLS):
            reply = await self.ctx.session.request("tasks/get", {"taskId": self.task_id}, purpose=f"poll #{n + 1}",
                                                   tag=FrameTag.polling(n + 1))
            sent = self.ctx.wire_log.get(reply.request_seq)
            self.sent_at = sent.time if sent is not None else self.ctx.wire_log.elapsed()
            if self._rate_limited(reply):
                # The server may refuse a poll that came sooner than its pollIntervalMs (another
                # probe may just have read the task): wait one interval and ask again.
                self.rec.rate_limited.append(reply)
                if not await self._wait():
                    self.rec.gets.append(reply)
                    return StopReason.GET_ERROR
                continue
            self.rec.gets.append(reply)
            stop = await self._look(reply)
            if stop is not None:
                return stop
            if not await self._wait():
                return StopReason.POLL_TIMEOUT
        return StopReason.POLL_TIMEOUT

    def _rate_limited(self, reply: Reply) -> bool:
        """An error that may be a rate limit: on a wire that allows one, not an unknown-task (-32602)
        or undeclared (-32021) answer, and within the retry budget."""
        return (self.ctx.dialect.may_rate_limit("tasks/get") and reply.error is not None
                and reply.error_code not in (ERR_INVALID_PARAMS, ERR_MISSING_CAPABILITY)
                and len(self.rec.rate_limited) < MAX_RATE_LIMIT_RETRIES)

    async def _look(self, reply: Reply) -> StopReason | None:
        """Read one tasks/get answer; a reason to stop, or None to poll on."""
        frame = self.ctx.wire_log.get(reply.response_seq) if reply.response_seq else None
        self.polled_bytes += len(frame.data) if frame is not None else 0
        if self.polled_bytes > POLL_BYTE_BUDGET:
            return StopReason.POLL_BUDGET
        if not reply.ok:
            return StopReason.GET_ERROR
        task = reply.result
        status = task.get("status")
        self.rec.statuses.append(status if isinstance(status, str) else repr(status))
        self.interval_s = self._interval_s(task)
        if isinstance(status, str) and status in TERMINAL_STATUSES:
            return StopReason.TERMINAL
        if status != "input_required":
            self.stuck = 0
            return None
        await self._on_input_required(task)
        return StopReason.STUCK_INPUT_REQUIRED if self.stuck >= STUCK_INPUT_POLLS else None

    async def _on_input_required(self, task: dict[str, Any]) -> None:
        outstanding = self.ctx.dialect.input_requests(task)
        if outstanding is None:
            # Input travels on the tasks/result stream as server requests, answered by the peer.
            await self.ask_result()
            self.stuck += 1
            return
        responses = self.ctx.config.input_responses
        if not responses:
            # Named in the could-not-run message, so the user knows which keys to answer.
            self.rec.unanswered_keys = sorted(map(str, outstanding))[:20]
            self.stuck += 1
            return
        pending = {k: v for k, v in outstanding.items() if self.answered.get(k) != request_fingerprint(v)}
        answers = answers_for(pending, responses)
        if answers:
            upd = await self.ctx.session.request(
                "tasks/update", {"taskId": self.task_id, "inputResponses": answers}, purpose="answer input"
            )
            self.rec.updates.append(Update(tuple(sorted(answers)), upd))
            self.answered.update({k: request_fingerprint(pending[k]) for k in answers})
            self.stuck = 0
        elif pending:
            # Requests we have no answer for: the task can only stay parked.
            self.stuck += 1
            self.rec.unanswered_keys = sorted(pending)
        # else: every outstanding key was answered; the ack may precede the change, so keep
        # polling until --poll-timeout.

    async def _wait(self) -> bool:
        """Sleep until one interval after the last poll went out (the interval is between requests,
        so the answer's own time is not added to it); False when the deadline leaves no room."""
        if self.deadline - time.monotonic() <= 0:
            return False
        await anyio.sleep(self._until_due())
        # One last look exactly at the deadline would overrun it; stop here.
        return time.monotonic() < self.deadline

    def _until_due(self) -> float:
        """Seconds until the next poll is due, never past the deadline."""
        due = self.sent_at + max(self.interval_s, MIN_POLL_INTERVAL_S) - self.ctx.wire_log.elapsed()
        return max(min(due, self.deadline - time.monotonic()), 0.0)

    def tie_input_requests(self, created_seq: int | None) -> None:
        """Legacy: keep every input request tied to the task since its creation (input_ties.py);
        those are the task's questions, whether or not they carry the related-task _meta."""
        if not self.ctx.dialect.defines("tasks/result"):
            return
        peer = self.ctx.session.peer
        self.rec.input_requests = tied_input_requests(self.ctx.wire_log, peer.server_requests, self.task_id,
                                                      created_seq or 0)
        self.rec.elicitations = sorted({r.seq for r in self.rec.input_requests}.union(self.rec.elicitations))

    async def ask_result(self) -> None:
        """tasks/result, keeping the server requests that arrive on its stream."""
        peer = self.ctx.session.peer
        before = len(peer.server_requests)
        reply = await self.ctx.session.request("tasks/result", {"taskId": self.task_id},
                                               purpose="legacy tasks/result")
        self.rec.result = reply
        # Only what came on this request's stream: over HTTP a request made meanwhile by another
        # probe's call (a synchronous tool asking for input) arrives on that call's stream. On
        # stdio nothing tells the streams apart, so everything that arrived is kept.
        self.rec.elicitations = [f.seq for f in peer.server_requests[before:]
                                 if f.reply_to is None or f.reply_to == reply.request_seq]
        self.asked_result = True


# When durability is judged, its immediate tasks/get is the first read of the new task.
@probe(Poll, order=20, needs=(DeclaredCall,), needs_task=True, after=(Durability,),
       description="poll tasks/get until the task is terminal (answering input when given)")
async def poll(ctx: ProbeContext) -> None:
    rec = ctx.record(Poll)
    rec.ran = True
    poller = Poller(ctx, rec, ctx.require_task_id())
    rec.stop = await poller.run()
    rec.elapsed_ms = int((time.monotonic() - poller.started) * 1000)
    if ctx.dialect.defines("tasks/result"):
        # tasks/get does not carry the ended task's outcome here: tasks/result does.
        if rec.stop is StopReason.TERMINAL and not poller.asked_result:
            await poller.ask_result()
        # Another tasks/result on the same task (one sent while it ran) may be the stream the
        # server chose for its input requests: keep those too (input_ties.py says which are the task's).
        call = ctx.record(DeclaredCall).call
        poller.tie_input_requests(call.response_seq if call is not None else None)
