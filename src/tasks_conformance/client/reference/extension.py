"""The reference client on the 2026-07-28 tasks extension (io.modelcontextprotocol/tasks):
every request declares the extension and elicitation in its own `_meta`, carries Mcp-Method and
Mcp-Name, and a `resultType: "task"` reply to tools/call is followed with tasks/get, its input
answered with tasks/update, its outcome read from the inlined result or error.

https://modelcontextprotocol.github.io/ext-tasks/specification/2026-07-28/tasks.html
"""

from __future__ import annotations

import contextlib

import anyio

from tasks_conformance.client.reference.http import HttpLink
from tasks_conformance.client.reference.wire import (
    ACCEPT,
    CLIENT_INFO,
    JSON,
    MAX_INPUT_KEYS,
    MAX_INPUT_ROUNDS,
    MAX_POLLS,
    ClientFailure,
    Flow,
    Headers,
    Outcome,
    Reply,
    beside,
    encode_name,
    plain_outcome,
    rpc_error,
)
from tasks_conformance.core.protocol import (
    ERR_INVALID_REQUEST,
    ERR_METHOD_NOT_FOUND,
    ERR_UNSUPPORTED_VERSION,
    EXT_TASKS,
    HEADER_METHOD,
    HEADER_NAME,
    HEADER_PROTOCOL_VERSION,
    META_CLIENT_CAPS,
    META_CLIENT_INFO,
    META_PROTOCOL_VERSION,
    METHOD_LISTEN,
    TERMINAL_STATUSES,
    get_path,
    mcp_name_for,
)
from tasks_conformance.core.wires import DIALECTS, Wire

VERSION = DIALECTS[Wire.EXTENSION].protocol_version
TASK_CAPABLE = "tools/call"  # the one task-capable method of this revision (C-EXT-MUST-03)
MAX_VERSION_ROUNDS = 3  # -32022 answers one request may get before its error is the outcome

# How long a call asked to be cancelled in flight (cancel_request) runs before it is cancelled.
CANCEL_REQUEST_S = 0.3


class ExtensionFlow(Flow):
    dialect = DIALECTS[Wire.EXTENSION]
    version = VERSION  # the protocol version its requests carry (renegotiated on -32022)
    offered = False  # the call's offer_version was offered (on its first request only)

    # -- one request: its _meta and headers --------------------------------------------------

    def meta(self, method: str) -> JSON:
        """The per-request `_meta` (C-CORE-MUST-01/02, C-CORE-SHOULD-01): the extension and
        elicitation are declared on every request, never only on an earlier one (C-EXT-MUST-01)."""
        caps: JSON = {"elicitation": {}, "extensions": {EXT_TASKS: {}}}
        return {META_PROTOCOL_VERSION: self.version, META_CLIENT_CAPS: caps, META_CLIENT_INFO: dict(CLIENT_INFO)}

    def headers(self, method: str, params: JSON) -> Headers:
        """Accept, the protocol version, Mcp-Method and Mcp-Name (C-CORE-MUST-03..06,
        C-EXT-MUST-04/05)."""
        out: Headers = {"Accept": ACCEPT, "Content-Type": "application/json", HEADER_PROTOCOL_VERSION: self.version,
                        HEADER_METHOD: method}
        name = mcp_name_for(method, params)
        if name is not None:
            out[HEADER_NAME] = encode_name(name)
        return out

    def with_meta(self, method: str, params: JSON) -> JSON:
        given = params.get("_meta")
        return {**params, "_meta": {**(given if isinstance(given, dict) else {}), **self.meta(method)}}

    async def rpc(self, method: str, params: JSON) -> Reply:
        if self.opt.offer_version is not None and not self.offered:
            self.offered, self.version = True, self.opt.offer_version  # the first request only
        for _ in range(MAX_VERSION_ROUNDS):
            full = self.with_meta(method, params)
            reply = await self.link.request(method, full, self.headers(method, full))
            if not self.renegotiate(reply):
                break
        return reply

    def renegotiate(self, reply: Reply) -> bool:
        """On -32022, take a version of data.supported this client speaks and say to retry
        (C-CORE-SHOULD-03); with none, the error is the call's outcome: the user is told."""
        if reply.error is None or reply.error.get("code") != ERR_UNSUPPORTED_VERSION:
            return False
        supported = get_path(reply.error_data, "supported")
        if isinstance(supported, list) and VERSION in supported and self.version != VERSION:
            self.version = VERSION
            return True
        return False

    # -- the call --------------------------------------------------------------------------

    def first_request(self) -> tuple[str, JSON]:
        request = self.opt.request
        if request is not None:
            given = request.get("params")
            return str(request["method"]), dict(given) if isinstance(given, dict) else {}
        return TASK_CAPABLE, {"name": self.opt.tool_name, "arguments": self.opt.arguments}

    async def before_call(self) -> None:
        """What goes before the first request: nothing (no handshake on this revision, C-CORE-SHOULD-02)."""

    async def run(self) -> Outcome:
        method, params = self.first_request()
        await self.before_call()
        if self.opt.cancel_request:
            cancelled = await self.cancel_in_flight(method, params)
            if cancelled is not None:
                return cancelled
        reply = self.answered if self.answered is not None else await self.call_with_input(method, params)
        if isinstance(reply, Outcome):
            return reply
        if reply.error is not None:
            older = reply.error.get("code") in (ERR_INVALID_REQUEST, ERR_METHOD_NOT_FOUND, ERR_UNSUPPORTED_VERSION)
            self.trace.plain_reason = f"the server answered {method} with a JSON-RPC error" + (
                f" (as a server that does not speak {VERSION} would: try --era legacy)" if older else "")
            return Outcome("failed", error=reply.error)
        return await self.outcome_of(method, reply.result or {})

    async def outcome_of(self, method: str, result: JSON) -> Outcome:
        """The call's result by its resultType (C-EXT-MUST-02): a task is followed, tools/call's
        only (C-EXT-MUST-03); a complete result is the outcome; any other kind is not one this client
        can take as an outcome (C-CORE-MUST-07)."""
        kind = result.get("resultType", "complete")
        if kind == "task":
            if method != TASK_CAPABLE:
                return self.invalid(f"resultType task on {method}")  # and no tasks/* for it
            return await self.follow(result)
        if kind == "complete":
            return self.plain(method, result)
        return self.invalid(f"resultType {kind} on {method}")

    def plain(self, method: str, result: JSON) -> Outcome:
        """A result taken as the call's own (no task), with why it came without one."""
        self.trace.plain_reason = self.why_plain(method, result)
        return plain_outcome(result)

    def why_plain(self, method: str, result: JSON) -> str:
        if method != TASK_CAPABLE:
            return f"{method} was sent, not tools/call (only tools/call creates a task)"
        if "resultType" not in result:
            return (f"the reply carries no resultType, which every {VERSION} result has: the server may not "
                    f"speak {VERSION} (try --era legacy)")
        return 'the server answered the call itself (resultType "complete"): the tool ran without a task'

    answered: Reply | None = None  # the call cancel_in_flight sent, answered before it was cancelled
    listen_ended = False  # the subscription's request is over (answered or failed): not cancelled at the end

    async def cancel_in_flight(self, method: str, params: JSON) -> Outcome | None:
        """The call, cancelled CANCEL_REQUEST_S after it was sent (C-CORE-MUST-09): on stdio with
        notifications/cancelled naming its id; over HTTP by closing its response stream (abandoning
        the exchange closes it), with no notification, which that wire does not define. None: it
        was answered first (self.answered has the reply, the outcome is read from it as usual)."""
        with anyio.move_on_after(CANCEL_REQUEST_S):
            self.answered = await self.rpc(method, params)
            self.call_id = self.answered.id
            return None
        await self.cancelled_in_flight(self.link.last_id)
        self.trace.stopped("cancelled")
        return Outcome("cancelled")

    async def cancelled_in_flight(self, rid: int) -> None:
        """The request `rid` was abandoned: on stdio the server is told with notifications/cancelled;
        over HTTP its closed stream says it, and that wire defines no notification."""
        if not isinstance(self.link, HttpLink):
            await self.cancel_notification(rid)

    async def cancel_notification(self, rid: int) -> None:
        params = self.with_meta("notifications/cancelled", {"requestId": rid, "reason": "cancelled by the user"})
        await self.link.notify("notifications/cancelled", params, self.headers("notifications/cancelled", params))

    async def call_with_input(self, method: str, params: JSON) -> Reply | Outcome:
        """The request, retried while it answers InputRequiredResult (MRTR, C-CORE-MUST-08): a
        new id, the same params plus inputResponses for every key and requestState as given."""
        for _ in range(MAX_INPUT_ROUNDS):
            reply = await self.rpc(method, params)
            self.call_id = reply.id
            if reply.result is None or not self.asks_input(reply):
                return reply
            retry = {k: v for k, v in params.items() if k not in ("inputResponses", "requestState")}
            requests = reply.result.get("inputRequests")
            if isinstance(requests, dict) and requests:
                if len(requests) > MAX_INPUT_KEYS:
                    return self.invalid(f"more than {MAX_INPUT_KEYS} inputRequests")
                answers: JSON = {}
                for key, request in requests.items():
                    answer = self.answer_for(key, request)
                    if answer is None:
                        self.trace.stopped("unanswerable")
                        return Outcome("unknown", failure=f"no answer given fits input request {key!r} "
                                       f"({get_path(request, 'method')}): give one with --input-responses")
                    answers[key] = answer
                retry["inputResponses"] = answers
            params = {**retry, **self.kept_state(reply.result)}
        return self.invalid(f"more than {MAX_INPUT_ROUNDS} input_required rounds")

    def asks_input(self, reply: Reply) -> bool:
        """An InputRequiredResult, which the request is retried for (C-EXT-MUST-10)."""
        return bool(get_path(reply.result, "resultType") == "input_required")

    def kept_state(self, result: JSON) -> JSON:
        """What a retry carries back of an InputRequiredResult: its requestState, as given (C-CORE-MUST-08)."""
        return {"requestState": result["requestState"]} if "requestState" in result else {}

    # -- the task --------------------------------------------------------------------------

    async def follow(self, created: JSON) -> Outcome:
        """Follow the task, subscribed to it meanwhile where asked (`subscribe`): the subscription
        is opened beside the polls, which go on whatever its acknowledgement covers (a task it
        leaves out is the client's to poll, C-EXT-SHOULD-11; this client polls every task), and it
        is closed at the end (over stdio with notifications/cancelled, C-CORE-MUST-09)."""
        task_id = created.get("taskId")
        if not self.opt.subscribe or not isinstance(task_id, str):
            return await self.poll(created)
        listen_id = self.link.reserve_id()
        try:
            outcome = await beside(lambda: self.listen(listen_id, task_id), lambda: self.subscribed(created))
        except ClientFailure:
            await self.unsubscribe(listen_id)
            raise
        await self.unsubscribe(listen_id)
        return outcome

    async def subscribed(self, created: JSON) -> Outcome:
        """The task followed while subscribed: by polling, whatever the acknowledgement covers
        (C-EXT-SHOULD-11)."""
        return await self.poll(created)

    async def unsubscribe(self, listen_id: int) -> None:
        """End the subscription still open: over stdio with notifications/cancelled (C-CORE-MUST-09);
        over HTTP its closed stream ended it."""
        if not isinstance(self.link, HttpLink) and not self.listen_ended:
            with contextlib.suppress(ClientFailure):
                await self.cancel_notification(listen_id)

    async def listen(self, listen_id: int, task_id: str) -> None:
        """subscriptions/listen for the task's notifications, held open until the call ends (what
        comes on it is not needed: the polls read the task)."""
        params = self.with_meta(METHOD_LISTEN, {"notifications": {"taskIds": [task_id]}})
        message = {"jsonrpc": "2.0", "id": listen_id, "method": METHOD_LISTEN, "params": params}
        with contextlib.suppress(ClientFailure):
            await self.link.exchange(message, self.headers(METHOD_LISTEN, params), listen_id)
        self.listen_ended = True  # answered (the server ended it) or failed: nothing left to cancel

    async def poll(self, created: JSON) -> Outcome:
        """Poll tasks/get, waiting the latest pollIntervalMs between a reply and the next poll,
        until a snapshot is terminal; answer new input keys once; cancel when asked."""
        task_id = created.get("taskId")
        if not isinstance(task_id, str):
            return self.invalid("a CreateTaskResult without a taskId")
        self.begin(task_id, created)
        answered: set[str] = set()
        snapshot: JSON | None = None  # the created task carries no result: read one snapshot at least
        for _ in range(MAX_POLLS):
            if snapshot is not None and self.status in TERMINAL_STATUSES:
                break
            await self.maybe_cancel()
            if self.left:
                return Outcome("cancelled")
            await self.wait(self.poll_wait_s())
            if self.timed_out():
                await self.leave()
                return Outcome(self.status)
            self.trace.polls += 1
            reply = await self.rpc("tasks/get", {"taskId": task_id})
            if reply.error is not None:
                gone = self.poll_failed(reply.error)
                if gone is not None:
                    return gone
                continue
            self.errors, snapshot = 0, reply.result or {}
            self.observe(snapshot)
            left = await self.after_poll(snapshot, answered)
            if left is not None:
                return left
        else:
            await self.leave()
            return Outcome(self.status)
        outcome = self.final(snapshot or {})
        await self.after_terminal(task_id)
        return outcome

    async def after_poll(self, snapshot: JSON, answered: set[str]) -> Outcome | None:
        """After each snapshot: its new input requests answered (None: polling goes on; an Outcome:
        the call ends with it, the task left as it is)."""
        if self.status == "input_required" and not self.cancel_sent:
            await self.answer(snapshot, answered)
        return None

    async def answer(self, snapshot: JSON, answered: set[str]) -> None:
        """One tasks/update for the keys not answered yet (C-EXT-SHOULD-06/08); a request this
        client cannot answer is cancelled rather than left waiting (C-EXT-SHOULD-03)."""
        requests = snapshot.get("inputRequests")
        if not isinstance(requests, dict):
            return
        new = self.unanswered(requests, answered)
        if not new:
            return
        answers: JSON = {}
        for key, request in new.items():
            answer = self.answer_for(key, request)
            if answer is None or len(answered) + len(answers) >= MAX_INPUT_KEYS:
                await self.send_cancel(f"no answer this client can send fits input request {key!r}")
                return
            answers[key] = answer
        answered.update(answers)
        await self.rpc("tasks/update", {"taskId": self.task_id, "inputResponses": answers})

    def unanswered(self, requests: JSON, answered: set[str]) -> JSON:
        """The input requests of a snapshot not answered yet: a stale snapshot may still list a key
        already answered (C-EXT-SHOULD-08)."""
        return {k: v for k, v in requests.items() if k not in answered}

    def final(self, snapshot: JSON) -> Outcome:
        """The terminal snapshot as the call's outcome: a completed task's result as it is, isError
        included (C-EXT-MUST-15); a failed task's error, code and message exactly (C-EXT-MUST-16)."""
        if self.status == "completed":
            result = snapshot.get("result")
            result = result if isinstance(result, dict) else None
            return Outcome("completed", is_error=result is not None and result.get("isError") is True, result=result)
        if self.status == "failed":
            return Outcome("failed", error=rpc_error(snapshot.get("error")))
        return Outcome(self.status)

    async def after_terminal(self, task_id: str) -> None:
        """Nothing: a terminal status never changes (C-EXT-SHOULD-04) and tasks/result is gone
        (C-EXT-MUST-11)."""

    async def cancel(self) -> None:
        """tasks/cancel, never notifications/cancelled (C-EXT-MUST-06)."""
        self.cancel_answered(await self.rpc("tasks/cancel", {"taskId": self.task_id}))
