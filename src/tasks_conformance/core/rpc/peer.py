"""The JSON-RPC peer.

A reply is a value, never an exception: an error answer, a bad shape, a timeout or a dead
connection all come back as a `Reply` that says what happened, with the seq numbers of the
frames it rests on. Server->client requests are answered from a handler table; notifications
and responses nobody asked for are kept as evidence.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import anyio
from anyio.abc import TaskGroup

from tasks_conformance.core.rpc.codec import NO_ID, SNIFF_BYTES, encode, hashable_id, parse_message, sniff_id
from tasks_conformance.core.transports.base import Closed, ExchangeEnded, Message, Transport
from tasks_conformance.core.wirelog import Frame, FrameFlag, FrameTag, HttpMeta, tagging

# Bounds on what the peer keeps from a hostile or chatty server. Past them a frame is counted,
# and the WireLog lets go of it too, so that a flood costs neither memory nor later frames.
MAX_KEPT_NOTIFICATIONS = 10_000
MAX_KEPT_UNMATCHED = 1_000
MAX_KEPT_BYTES = 16 * 1024 * 1024  # per kind: notifications, unmatched frames, server requests
MAX_CONCURRENT_SERVER_REQUESTS = 16
MAX_KEPT_SERVER_REQUESTS = 1_000
# Server->client requests waiting for an answer; past this a flood of them is left unanswered
# (and counted) instead of queueing one task per request.
MAX_QUEUED_SERVER_REQUESTS = 256
# Ids of requests sent, remembered so that a second answer is told from a stray one; past this
# many a further answer to an old id is flagged a stray.
MAX_REMEMBERED_IDS = 100_000


@dataclass(frozen=True)
class RpcError:
    code: Any
    message: Any
    data: Any = None
    has_data: bool = False

    @property
    def int_code(self) -> int | None:
        return self.code if isinstance(self.code, int) and not isinstance(self.code, bool) else None


@dataclass
class Reply:
    method: str
    request_id: Any
    request_seq: int
    response_seq: int | None = None
    result: Any = None
    error: RpcError | None = None
    timed_out: bool = False
    transport_problem: str | None = None
    decode_problem: str | None = None
    http: HttpMeta | None = None
    elapsed_ms: int = 0
    # The flags a user may change to get an answer (an answer over --max-message-bytes, refused
    # credentials): typed, for a could-not-run's fix; the problem texts say it for people.
    flags: tuple[str, ...] = ()
    # No answer because the server went away: its process exited, or its connection closed, was
    # refused or dropped (not a timeout). The crash check reads it; the text is for people.
    lost: bool = False

    @property
    def ok(self) -> bool:
        return self.response_seq is not None and self.error is None and isinstance(self.result, dict)

    @property
    def answered(self) -> bool:
        return self.response_seq is not None and (self.error is not None or self.result is not None)

    @property
    def status(self) -> int | None:
        return self.http.status if self.http is not None else None

    @property
    def error_code(self) -> int | None:
        return self.error.int_code if self.error is not None else None

    def seqs(self) -> list[int]:
        return [s for s in (self.request_seq, self.response_seq) if s is not None]

    def describe(self) -> str:
        """One phrase saying what came back, for messages."""
        if self.response_seq is not None and self.error is not None:
            status = f" (HTTP {self.status})" if self.status is not None else ""
            return f"error {self.error.code!r} {str(self.error.message)[:120]!r}{status}"
        if self.response_seq is not None and self.result is not None:
            return "a result" + (f" (HTTP {self.status})" if self.status not in (None, 200) else "")
        if self.decode_problem:
            return f"an unreadable response ({self.decode_problem})"
        if self.timed_out:
            return f"no answer within {self.elapsed_ms} ms"
        if self.transport_problem:
            return f"no answer ({self.transport_problem})"
        return "no answer"


ServerRequestHandler = Callable[[str, Any], Awaitable[tuple[Any, dict[str, Any] | None]]]
"""(method, params) -> (result, error): exactly one of the two is not None."""


@dataclass
class _Pending:
    method: str
    request_id: Any
    seq: int
    started: float
    done: anyio.Event = field(default_factory=anyio.Event)
    reply: Reply | None = None


class Peer:
    def __init__(
        self,
        transport: Transport,
        *,
        timeout_s: float,
        handlers: Mapping[str, ServerRequestHandler] | None = None,
        response_headers: Callable[[], Mapping[str, str]] | None = None,
        first_id: int = 1,
    ) -> None:
        self.transport = transport
        self.timeout_s = timeout_s
        self.handlers = dict(handlers or {})
        self._response_headers = response_headers
        # A second connection in the same run starts elsewhere, so that an id names one request
        # in the run's wire log (checks match answers to requests by id).
        self._next_id = first_id
        self._pending: dict[Any, _Pending] = {}
        self._by_seq: dict[int, _Pending] = {}
        self.notifications: list[Frame] = []
        self.unmatched: list[Frame] = []  # responses with unknown ids, invalid JSON, stray lines
        # Requests whose reply timed out (id -> method), and replies that came after that.
        self._gave_up: dict[Any, str] = {}
        self._sent_ids: set[Any] = set()
        self.late: list[tuple[str, Frame]] = []
        self.server_requests: list[Frame] = []
        self.dropped_notifications = 0
        self.dropped_unmatched = 0
        self.dropped_server_requests = 0
        self._kept_bytes = {"notifications": 0, "unmatched": 0, "server_requests": 0}
        self._queued_server_requests = 0
        self.closed: str | None = None
        self._tg: TaskGroup | None = None
        self._server_request_slots = anyio.Semaphore(MAX_CONCURRENT_SERVER_REQUESTS)
        self.on_notification: Callable[[Frame], None] | None = None

    async def __aenter__(self) -> Peer:
        self._tg = anyio.create_task_group()
        await self._tg.__aenter__()
        self._tg.start_soon(self._reader)
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._tg is not None
        self._tg.cancel_scope.cancel()
        await self._tg.__aexit__(None, None, None)

    def new_id(self) -> int:
        rid = self._next_id
        self._next_id += 1
        return rid

    async def request(
        self,
        method: str,
        params: Any = None,
        *,
        headers: Mapping[str, str] | None = None,
        timeout_s: float | None = None,
        request_id: Any = None,
        note: str | None = None,
        tag: FrameTag | None = None,
    ) -> Reply:
        """Send a request and wait for its reply (bounded); its frame carries `tag`."""
        rid = self.new_id() if request_id is None else request_id
        timeout = self.timeout_s if timeout_s is None else timeout_s
        msg: dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method}
        if params is not None:
            msg["params"] = params
        raw = encode(msg)
        started = time.monotonic()
        if self.closed is not None:
            with tagging(tag):
                seq = await self.transport.send(raw, headers=headers, deadline_s=1.0, note=note)
            return Reply(method, rid, seq, transport_problem=self.closed, lost=True)
        pending = _Pending(method=method, request_id=rid, seq=-1, started=started)
        self._pending[rid] = pending
        if hashable_id(rid) and len(self._sent_ids) < MAX_REMEMBERED_IDS:
            self._sent_ids.add(rid)
        try:
            with tagging(tag):
                seq = await self.transport.send(raw, headers=headers, deadline_s=timeout + 1.0, note=note)
            pending.seq = seq
            self._by_seq[seq] = pending
            with anyio.move_on_after(max(timeout - (time.monotonic() - started), 0.0)):
                await pending.done.wait()
        finally:
            self._pending.pop(rid, None)
            self._by_seq.pop(pending.seq, None)
        elapsed = int((time.monotonic() - started) * 1000)
        if pending.reply is not None:
            pending.reply.elapsed_ms = elapsed
            if pending.reply.request_seq < 0:
                # Settled (the connection closed) while the request was still being written: the
                # reply names the frame the request became.
                pending.reply.request_seq = pending.seq
            return pending.reply
        if hashable_id(rid) and len(self._gave_up) < MAX_KEPT_UNMATCHED:
            self._gave_up[rid] = method
        return Reply(method, rid, pending.seq, timed_out=True, elapsed_ms=elapsed)

    async def notify(
        self, method: str, params: Any = None, *, headers: Mapping[str, str] | None = None
    ) -> int:
        """Send a notification, returning once the server has taken it in (over HTTP, its 202):
        whatever the caller sends next may depend on it (the initialized notification comes
        before every request), and separate HTTP requests carry no order of their own."""
        msg: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            msg["params"] = params
        return await self.transport.send(encode(msg), headers=headers, deadline_s=self.timeout_s, settle=True)

    # -- inbound ---------------------------------------------------------------------------

    async def _reader(self) -> None:
        async for item in self.transport.inbound:
            if isinstance(item, Message):
                await self._on_message(item.frame, item.head)
            elif isinstance(item, ExchangeEnded):
                self._on_exchange_ended(item)
            elif isinstance(item, Closed):
                self._on_closed(item.reason)
        if self.closed is None:
            self._on_closed("the connection closed")

    def _on_closed(self, reason: str) -> None:
        self.closed = reason
        for p in list(self._pending.values()):
            if p.reply is None:
                p.reply = Reply(p.method, p.request_id, p.seq, transport_problem=reason, lost=True)
                p.done.set()

    def _on_exchange_ended(self, ev: ExchangeEnded) -> None:
        p = self._by_seq.get(ev.reply_to)
        if p is None or p.reply is not None:
            return
        problem = ev.problem or (
            f"HTTP {ev.status} with no JSON-RPC response" if ev.status is not None else "no response"
        )
        p.reply = Reply(p.method, p.request_id, p.seq, transport_problem=problem, http=ev.http, flags=ev.flags,
                        lost=ev.lost)
        p.done.set()

    def _answered_by(self, frame: Frame, data: bytes) -> _Pending | None:
        """The pending request an unreadable frame answers: by HTTP exchange, else by the id
        found at the top level of its first bytes (stream transports carry no other link)."""
        if frame.reply_to is not None:
            return self._by_seq.get(frame.reply_to)
        rid = sniff_id(data)
        return self._pending.get(rid) if rid is not NO_ID and hashable_id(rid) else None

    async def _on_message(self, frame: Frame, head: bytes = b"") -> None:
        if not frame.data:
            # A frame without its bytes: an oversize message discarded unread (or one the wire
            # log had no room for). `head` holds its first bytes, enough to find its id.
            unread = frame.flags & {FrameFlag.OVERSIZE, FrameFlag.DROPPED_BYTES}
            self._on_unreadable(frame, head, (frame.note or "its bytes were not kept") if unread else None)
            return
        # Parsed here without caching it on the frame: a flood of notifications must not keep a
        # parsed copy of each one alive in the WireLog (checks parse the frames they judge).
        msg, why = parse_message(frame.data)
        if not isinstance(msg, dict):
            frame.add_flags(FrameFlag.NOT_JSON if why is not None else FrameFlag.NOT_JSONRPC)
            self._on_unreadable(frame, frame.data[:SNIFF_BYTES], why or "not a JSON object")
        elif "method" not in msg:
            self._on_response(msg, frame)
        elif "id" in msg:
            self._on_server_request(msg, frame)
        else:
            self._on_notification(frame)

    def _on_unreadable(self, frame: Frame, head: bytes, problem: str | None) -> None:
        """A frame that cannot be read as a JSON-RPC object: it answers a pending request when its
        exchange or the id in its first bytes says so (and only when it has a problem to tell);
        else it is kept as unmatched."""
        p = self._answered_by(frame, head) if problem else None
        if p is not None and p.reply is None:
            oversize = FrameFlag.OVERSIZE in frame.flags
            self._settle(p, Reply(
                p.method, p.request_id, p.seq, response_seq=frame.seq, decode_problem=problem, http=frame.http,
                flags=("--max-message-bytes",) if oversize else (),
            ))
        else:
            self._keep_unmatched(frame)

    def _on_server_request(self, msg: dict[str, Any], frame: Frame) -> None:
        if (
            self._tg is not None
            and self._queued_server_requests < MAX_QUEUED_SERVER_REQUESTS
            and self._keep(self.server_requests, frame, "server_requests", MAX_KEPT_SERVER_REQUESTS)
        ):
            self._queued_server_requests += 1
            self._tg.start_soon(self._answer_server_request, msg, frame)
        else:
            # Past the bounds a server->client request is left unanswered (a flood).
            self.dropped_server_requests += 1
            self.transport.wire.discard(frame)

    def _on_notification(self, frame: Frame) -> None:
        if not self._keep(self.notifications, frame, "notifications", MAX_KEPT_NOTIFICATIONS):
            self.dropped_notifications += 1
        if self.on_notification is not None:
            self.on_notification(frame)

    def _on_response(self, msg: dict[str, Any], frame: Frame) -> None:
        rid = msg.get("id")
        p = self._pending.get(rid) if hashable_id(rid) else None
        if p is None and rid is None and "error" in msg and frame.reply_to is not None:
            # JSON-RPC answers an error with id null when it could not read the request's id
            # (HTTP 400 before parsing, say); over HTTP the exchange still tells whose it is.
            p = self._by_seq.get(frame.reply_to)
        if p is None and hashable_id(rid) and rid in self._gave_up:
            # The answer to a request we stopped waiting for: late, not a stray.
            frame.add_flags(FrameFlag.LATE_RESPONSE)
            if len(self.late) < MAX_KEPT_UNMATCHED:
                self.late.append((self._gave_up.pop(rid), frame))
            return
        if p is None or p.reply is not None:
            flag = self._unmatched_flag(msg, answered=p is not None)
            if flag is not None:
                frame.add_flags(flag)
            self._keep_unmatched(frame)
            return
        self._settle(p, _reply_from(p, msg, frame))

    def _unmatched_flag(self, msg: dict[str, Any], *, answered: bool) -> FrameFlag | None:
        """What a response object that answers no waiting request is."""
        rid = msg.get("id")
        if rid is None and "error" in msg:
            return None  # JSON-RPC's answer when it could not read a request's id: not a stray
        if "id" not in msg or ("result" not in msg and "error" not in msg):
            return FrameFlag.NOT_JSONRPC
        if answered or (hashable_id(rid) and rid in self._sent_ids):
            return FrameFlag.DUPLICATE_RESPONSE
        return FrameFlag.STRAY_RESPONSE

    def _settle(self, p: _Pending, reply: Reply) -> None:
        if reply.response_seq is not None:
            self.transport.wire.answers(reply.response_seq, p.seq)
        p.reply = reply
        p.done.set()

    def _keep(self, kept: list[Frame], frame: Frame, kind: str, max_count: int) -> bool:
        """Keep `frame` in `kept` within the count and byte bounds; else let the WireLog drop it."""
        size = len(frame.data)
        if len(kept) < max_count and self._kept_bytes[kind] + size <= MAX_KEPT_BYTES:
            kept.append(frame)
            self._kept_bytes[kind] += size
            return True
        self.transport.wire.discard(frame)
        return False

    def _keep_unmatched(self, frame: Frame) -> None:
        if not self._keep(self.unmatched, frame, "unmatched", MAX_KEPT_UNMATCHED):
            self.dropped_unmatched += 1

    async def _answer_server_request(self, msg: dict[str, Any], frame: Frame) -> None:
        try:
            await self._answer_one(msg)
        finally:
            self._queued_server_requests -= 1

    async def _answer_one(self, msg: dict[str, Any]) -> None:
        async with self._server_request_slots:
            method = msg.get("method")
            handler = self.handlers.get(method) if isinstance(method, str) else None
            result: Any = None
            error: dict[str, Any] | None
            if handler is None:
                error = {"code": -32601, "message": f"Method not found: {str(method)[:200]}"}
            else:
                try:
                    with anyio.fail_after(self.timeout_s):
                        result, error = await handler(str(method), msg.get("params"))
                except TimeoutError:
                    error = {"code": -32603, "message": "client handler timed out"}
                except Exception as exc:  # a handler bug must not end the run
                    error = {"code": -32603, "message": f"client handler failed: {type(exc).__name__}"}
            out: dict[str, Any] = {"jsonrpc": "2.0", "id": msg.get("id")}
            if error is not None:
                out["error"] = error
            else:
                out["result"] = result if result is not None else {}
            headers = self._response_headers() if self._response_headers is not None else None
            # Settled: the next poll reads the effect of this answer (the task's input given).
            await self.transport.send(encode(out), headers=headers, deadline_s=self.timeout_s, settle=True)


def _reply_from(p: _Pending, msg: dict[str, Any], frame: Frame) -> Reply:
    """The Reply a response object makes, its shape problems named rather than raised."""
    reply = Reply(p.method, p.request_id, p.seq, response_seq=frame.seq, http=frame.http)
    if "error" in msg:
        err = msg["error"]
        if isinstance(err, dict):
            reply.error = RpcError(err.get("code"), err.get("message"), err.get("data"), "data" in err)
        else:
            reply.error = RpcError(None, None)
            reply.decode_problem = "the error member is not an object"
    elif "result" in msg:
        reply.result = msg["result"]
        if not isinstance(reply.result, dict):
            reply.decode_problem = "the result member is not an object"
    else:
        reply.decode_problem = "a response with neither result nor error"
    return reply
