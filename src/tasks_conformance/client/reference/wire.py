"""The reference client's parts both eras share: the outcome it reports, one JSON-RPC peer
(`Link`; over Streamable HTTP in http.py, each message its own POST, a reply read as
JSON or from an SSE stream; over stdio in stdio.py), and the polling loop's clock,
waits and cancel. A breaking client (fixtures/broken_client.py) is a subclass of an era's flow
that overrides one of its methods, as a breaking server subclasses the reference server: nothing
here breaks a rule on request.

Every network wait is bounded by the call's timeout, and so is every loop over what the server
sends (polls, input keys, input rounds, pages)."""

from __future__ import annotations

import contextlib
import itertools
import time
from collections.abc import Awaitable, Callable, Coroutine, Mapping
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

import anyio

from tasks_conformance import __version__
from tasks_conformance.client.reference.trace import CallTrace
from tasks_conformance.core.input_answers import match_answer
from tasks_conformance.core.protocol import TERMINAL_STATUSES, encode_header_value, get_path
from tasks_conformance.core.wires import WireDialect

if TYPE_CHECKING:
    pass

JSON = dict[str, Any]
Headers = dict[str, str | bytes]
Clock = Callable[[], float]
Sleep = Callable[[float], Awaitable[None]]

OUTCOME_STATUSES = ("completed", "failed", "cancelled", "working", "input_required", "abandoned", "unknown")
INTERNAL_ERROR = -32603
ACCEPT = "application/json, text/event-stream"
CLIENT_INFO: JSON = {"name": "tasks-conformance-reference-client", "version": __version__}
DEFAULT_POLL_INTERVAL_MS = 1000  # the spec sets none; used only when the server sends no interval
MAX_REPLY_BYTES = 16 * 1024 * 1024
MAX_POLLS = 10_000
MAX_INPUT_KEYS = 1_000
MAX_INPUT_ROUNDS = 100
MAX_PAGES = 100
ELICIT_DECLINE: JSON = {"action": "decline"}  # an elicitation the user gave no answer for


@dataclass(frozen=True)
class Outcome:
    """How the call ended, as the client surfaces it: `status` is one of OUTCOME_STATUSES
    (`working`/`input_required`: what was last seen when the wait ran out)."""

    status: str
    is_error: bool = False
    error: JSON | None = None  # {"code", "message"}, kept exactly as the server sent them
    result: JSON | None = None
    failure: str | None = None  # an exchange that failed (no connection, no reply): no JSON-RPC error
    trace: CallTrace | None = field(default=None, compare=False)  # what the call did, step by step

    def to_json(self) -> JSON:
        out: JSON = {"status": self.status, "isError": self.is_error, "error": self.error}
        if self.failure is not None:
            out["failure"] = self.failure
        return out


GONE_AFTER = 2  # tasks/get errors in a row that mean the task is gone (once may be a refused early poll)


@dataclass(frozen=True)
class CallOptions:
    """What `call` was asked to do, read by both eras' flows."""

    tool_name: str
    arguments: JSON
    cancel_after_ms: int | None = None
    cancel_when_working: bool = False
    input_responses: Mapping[str, Any] = field(default_factory=dict)
    request: JSON | None = None  # {"method", "params"} sent instead of tools/call
    offer_version: str | None = None  # the protocol version the first request offers (2026-07-28)
    list_tasks: bool = False  # list the session's tasks once the task exists (2025-11-25 tasks/list)
    # Declare capabilities.tasks list and cancel, and serve them: a list of no tasks, a cancel of a
    # task it does not know refused (2025-11-25; it hosts none, having no task-augmented requests).
    hosts_tasks: bool = False
    # Cancel the call itself while it is in flight (2026-07-28 request-level cancellation, C-CORE-MUST-09).
    cancel_request: bool = False
    # Subscribe to the task's notifications with subscriptions/listen once it exists, polling on
    # whatever the acknowledgement covers (2026-07-28, C-EXT-SHOULD-11).
    subscribe: bool = False
    timeout_s: float = 30
    on_status: Callable[[str], None] | None = None
    clock: Clock = time.monotonic
    sleep: Sleep = anyio.sleep
    # A second connection to the same server (the server spawned again, a new HTTP client): the
    # reference opens none; a client that cancels elsewhere (a breaking fixture) does.
    reconnect: Callable[[], AbstractAsyncContextManager[Link]] | None = None


def invalid(what: str) -> Outcome:
    return Outcome("unknown", error={"code": INTERNAL_ERROR, "message": f"invalid response: {what}"})


def rpc_error(error: Any) -> JSON:
    """A JSON-RPC error's code and message, exactly as sent."""
    code, message = get_path(error, "code"), get_path(error, "message")
    if isinstance(code, int) and not isinstance(code, bool) and isinstance(message, str):
        return {"code": code, "message": message}
    return {"code": INTERNAL_ERROR, "message": "invalid response: a malformed JSON-RPC error"}


def plain_outcome(result: JSON) -> Outcome:
    """A call's own result (no task): completed, carrying its tool error if it has one."""
    return Outcome("completed", is_error=result.get("isError") is True, result=result)


def encode_name(value: str) -> str:
    """A header value as Streamable HTTP carries it (C-CORE-MUST-06): the core's encoding."""
    return encode_header_value(value)


class ClientFailure(Exception):
    """An exchange that could not be completed: a transport error, a timeout, an unreadable reply."""


T = TypeVar("T")


async def beside(background: Callable[[], Coroutine[Any, Any, None]], body: Callable[[], Awaitable[T]]) -> T:
    """What `body` returns, with `background` running meanwhile (a stream read, a subscription, a
    delayed notification) and stopped as `body` ends. A ClientFailure of `body` is raised as
    itself, not inside an exception group, so the call reports it as any other failed exchange."""
    result: list[T] = []
    failure: list[ClientFailure] = []
    async with anyio.create_task_group() as tg:
        tg.start_soon(background)
        try:
            result.append(await body())
        except ClientFailure as exc:
            failure.append(exc)
        finally:
            tg.cancel_scope.cancel()
    if failure:
        raise failure[0]
    return result[0]


class StreamEnded(ClientFailure):
    """A response stream that closed before it carried the response (or that the client dropped)."""


@dataclass(frozen=True)
class Reply:
    """A JSON-RPC response: its request's id and either a result object or an error."""

    id: int
    result: JSON | None = None
    error: JSON | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    error_data: Any = None  # the error's data, as sent (a -32022's supported versions)


ServerRequestHandler = Callable[[JSON], Awaitable[None]]


class Link:
    """A JSON-RPC peer, whatever carries it (HttpLink, or stdio.py's StdioLink): requests numbered
    from 1, replies matched by id, and the requests the server sends meanwhile handed to `on_server_request`."""

    def __init__(self, timeout_s: float) -> None:
        self.timeout_s = timeout_s
        self._ids = itertools.count(1)
        self.last_id = 0  # the id of the latest request sent (a request cancelled in flight names it)
        self.on_server_request: ServerRequestHandler | None = None

    async def request(self, method: str, params: JSON, headers: Headers) -> Reply:
        rid = self.reserve_id()
        message, reply_headers = await self.exchange(
            {"jsonrpc": "2.0", "id": rid, "method": method, "params": params}, headers, rid)
        if "error" in message:
            return Reply(rid, error=rpc_error(message["error"]), headers=reply_headers,
                         error_data=get_path(message, "error", "data"))
        result = message.get("result")
        if not isinstance(result, dict):
            raise ClientFailure(f"invalid response to {method}: the result is not an object")
        return Reply(rid, result=result, headers=reply_headers)

    def reserve_id(self) -> int:
        """The next request id, taken now (a request sent in the background names it before its reply)."""
        self.last_id = next(self._ids)
        return self.last_id

    async def notify(self, method: str, params: JSON | None, headers: Headers) -> None:
        body: JSON = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            body["params"] = params
        await self.exchange(body, headers, None)

    async def respond(self, message: JSON, headers: Headers) -> None:
        await self.exchange(message, headers, None)

    async def exchange(self, body: JSON, headers: Headers, want: int | None) -> tuple[JSON, Mapping[str, str]]:
        """Send one message; for a request (`want` its id), wait for its response (and the
        headers it came with, where the transport has them)."""
        raise NotImplementedError


class Flow:
    """One call on one era: what both eras' flows share (the task being followed, its poll
    interval, the waits, cancelling on time and never leaving a live task silently)."""

    dialect: ClassVar[WireDialect]

    def __init__(self, link: Link, options: CallOptions) -> None:
        self.link, self.opt = link, options
        self.deadline = options.clock() + options.timeout_s
        self.task_id: str | None = None
        self.call_id: int | None = None  # the JSON-RPC id of the request that created the task
        self.status = "unknown"
        self.interval_s = DEFAULT_POLL_INTERVAL_MS / 1000
        self.interval_seen = False
        self.cancel_at: float | None = None
        self.cancel_sent = False
        self.errors = 0  # tasks/get answered with an error, in a row
        self.gone = False  # the server no longer knows the task (it expired, or was deleted)
        self.left = False  # it believes the task ended without reading a terminal status (a cancel sent elsewhere)
        self.trace = CallTrace(self.dialect.wire.value, self.dialect.protocol_version)

    async def run(self) -> Outcome:
        raise NotImplementedError

    async def cancel(self) -> None:
        """Ask the server to cancel the task (each era its own way)."""
        raise NotImplementedError

    async def open(self) -> Outcome | None:
        """What a connection needs before the call (2025-11-25: initialize); an Outcome when it failed."""
        return None

    def now(self) -> float:
        return self.opt.clock()

    def expired(self) -> bool:
        return self.now() >= self.deadline

    def live(self) -> bool:
        return self.task_id is not None and self.status not in TERMINAL_STATUSES and not self.gone

    def poll_failed(self, error: JSON | None) -> Outcome | None:
        """A tasks/get answered with an error: polling goes on after the first; after the second in
        a row the task is gone (its ttl ran out, or the server deleted it): the outcome is unknown,
        with the server's error, and there is nothing left to cancel."""
        self.errors += 1
        if self.errors < self.gone_after():
            return None
        self.gone = True
        self.trace.stopped("gone")
        return Outcome("unknown", error=error)

    def gone_after(self) -> int:
        """How many tasks/get errors in a row mean the task is gone."""
        return GONE_AFTER

    def invalid(self, what: str) -> Outcome:
        self.trace.stopped("invalid")
        return invalid(what)

    def timed_out(self) -> bool:
        """The deadline has passed: the call stops here (the caller leaves the task)."""
        if self.expired():
            self.trace.stopped("timeout")
            return True
        return False

    def begin(self, task_id: str, task: JSON) -> None:
        self.task_id = task_id
        self.trace.task_id = task_id
        self.observe(task)
        if self.opt.cancel_after_ms is not None:
            self.cancel_at = self.now() + self.opt.cancel_after_ms / 1000

    def observe(self, task: JSON) -> None:
        """A task snapshot: its status, and its poll interval when it gives one (the latest wins)."""
        status = task.get("status")
        if isinstance(status, str):
            self.status = status
            self.trace.saw(status)
            if self.opt.on_status is not None:
                self.opt.on_status(status)
        ms = self.dialect.poll_interval_ms(task)
        if ms is not None:
            self.take_interval(ms)

    def take_interval(self, ms: float) -> None:
        """A snapshot's poll interval: the latest one given is the one waited (C-EXT-SHOULD-02)."""
        self.interval_s, self.interval_seen = ms / 1000, True

    def poll_wait_s(self) -> float:
        """How long to wait before the next poll: the server's interval (C-EXT-SHOULD-01, C-LEG-SHOULD-02)."""
        return self.interval_s

    async def maybe_cancel(self) -> None:
        if self.cancel_sent or not self.live():
            return
        when_working = self.opt.cancel_when_working and self.status == "working"
        if when_working:
            await self.send_cancel("asked to cancel the task once it is working")
        elif self.cancel_at is not None and self.now() >= self.cancel_at:
            await self.send_cancel(f"--cancel-after {self.opt.cancel_after_ms} ms")

    async def send_cancel(self, reason: str) -> None:
        self.cancel_sent = True
        self.trace.cancel_reason = reason
        try:
            await self.cancel()
        except ClientFailure as exc:
            self.trace.cancel_reply = f"nothing: {exc}"
            raise

    def cancel_answered(self, reply: Reply, said: str = "an ack") -> None:
        self.trace.cancel_reply = said if reply.error is None else \
            f"error {reply.error.get('code')}: {reply.error.get('message')}"

    async def wait(self, seconds: float) -> None:
        """Wait `seconds` (never past the deadline), sending a cancel due meanwhile on time."""
        end = min(self.now() + seconds, self.deadline)
        if self.cancel_at is not None and not self.cancel_sent and self.cancel_at < end:
            await self.opt.sleep(max(0.0, self.cancel_at - self.now()))
            await self.maybe_cancel()
        await self.opt.sleep(max(0.0, end - self.now()))

    async def leave(self, reason: str | None = None) -> None:
        """Before giving up on a live task (`reason`; None: the deadline, or a transport failure):
        cancel it rather than abandon it silently (C-EXT-SHOULD-03). Best effort."""
        if self.live() and not self.cancel_sent:
            why = reason or f"the timeout ({self.opt.timeout_s * 1000:.0f} ms) ran out with the task live"
            with contextlib.suppress(ClientFailure):
                await self.send_cancel(why)

    def answer_for(self, key: str | None, request: Any) -> JSON | None:
        """The answer to one input request, as the user gave it (core/input_answers.py: its key,
        else "*", else the first answer shaped for its method); with none, an elicitation is
        declined, never accepted; None for a request this client cannot answer otherwise (it
        declares elicitation only). Each request and what was sent go into the trace."""
        found = match_answer(key, request, self.opt.input_responses)
        if found is not None and isinstance(found[0], dict):
            self.trace.asked(key, request, found[0], found[1])
            return dict(found[0])
        if get_path(request, "method") == "elicitation/create":
            self.trace.asked(key, request, dict(ELICIT_DECLINE), "declined")
            return dict(ELICIT_DECLINE)
        self.trace.asked(key, request, None, "unanswered")
        return None
