"""What a client did in one scenario, read back from the wire log's bytes: each JSON-RPC message
it sent (with its HTTP headers, arrival time and connection) beside what the scripted server
answered, and what its process did. Checks read these and never the scripted server's state.

The unit of evidence is a connection (policy P-47): a server process the client spawned (stdio),
a 2025-11-25 session (HTTP), or the one stateless 2026-07-28 server (HTTP). A task is judged on the
connection that created it (`ScenarioRun.by_connection`); a request naming it on another, which
never created it, is a finding of its own (`ScenarioRun.elsewhere`), never evidence about it.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from tasks_conformance.client.jsonrpc import parse, problems
from tasks_conformance.client.judged import message_of
from tasks_conformance.client.launch import ClientRun
from tasks_conformance.client.scenarios import Scenario
from tasks_conformance.core.eras import Era
from tasks_conformance.core.protocol import decode_header_value, get_path
from tasks_conformance.core.scenario_record import LimitHit
from tasks_conformance.core.text import shown
from tasks_conformance.core.wirelog import Frame, FrameFlag, HttpMeta, WireLog
from tasks_conformance.core.wires import DIALECTS, CreatedTask, Wire

MAX_EXCHANGES = 10_000  # a client that floods the scripted server is judged on its first requests




@dataclass(frozen=True)
class Exchange:
    """One message the client sent and, for a request, the answer it got."""

    seq: int  # the frame of the client's message
    time: float  # when it arrived, seconds into the scenario
    message: dict[str, Any]
    http: HttpMeta | None
    reply_seq: int | None = None
    reply_time: float | None = None
    reply: dict[str, Any] | None = None
    connection: int = 1  # the scripted server's connection it came on (Frame.connection)

    @property
    def method(self) -> str:
        method = self.message.get("method")
        return method if isinstance(method, str) else str(method)  # a judged.Cut stays one

    @property
    def params(self) -> dict[str, Any]:
        params = self.message.get("params")
        return params if isinstance(params, dict) else {}

    @property
    def is_request(self) -> bool:
        return "id" in self.message

    @property
    def result(self) -> Any:
        return (self.reply or {}).get("result")

    @property
    def task_id(self) -> str | None:
        value = self.params.get("taskId")
        return value if isinstance(value, str) else None

    def header(self, name: str) -> str | None:
        return self.http.header(name) if self.http is not None else None

    def decoded_header(self, name: str) -> str | None:
        value = self.header(name)
        return decode_header_value(value) if value is not None else None

    @property
    def seqs(self) -> tuple[int, ...]:
        return (self.seq,) if self.reply_seq is None else (self.seq, self.reply_seq)


@dataclass(frozen=True)
class ScenarioRun:
    """One scenario on one era: the client's process and its exchanges."""

    scenario: Scenario
    era: Era
    client: ClientRun
    exchanges: tuple[Exchange, ...] = field(default=())
    reached: bool = False  # the client sent the scripted server at least one message
    server_problem: str | None = None  # the scripted server could not serve (our side)
    # The scripted server's own requests to the client (an elicitation on a response stream), each
    # with the client's response as its reply.
    server_requests: tuple[Exchange, ...] = field(default=())
    transport: str = "http"  # how the client reached the scripted server: http, or stdio (it spawned it)
    # The client's messages that are not a JSON object (not JSON, NaN included, or another JSON
    # value), each (frame, why): `exchanges` cannot hold them (jsonrpc.py reads them).
    malformed: tuple[tuple[int, str], ...] = field(default=())
    # Over stdio: pids named in a scripted server's hello that the relay did not signal at the end
    # (not verifiably a descendant of the client), each said in words.
    not_signalled: tuple[str, ...] = field(default=())
    # A view of one connection (`on`): its exchanges only; `whole` is the scenario's run.
    connection: int | None = None
    whole: ScenarioRun | None = field(default=None, repr=False, compare=False)
    limits: tuple[LimitHit, ...] = ()  # the limits of the client mode the client reached (README: "Limits")

    def connection_numbers(self) -> tuple[int, ...]:
        """The connections the client's messages came on, in order."""
        return tuple(sorted({e.connection for e in (*self.exchanges, *self.server_requests)})) or (1,)

    def on(self, connection: int) -> ScenarioRun:
        """The run as one connection saw it: its exchanges and the server's requests on it."""
        whole = self.whole or self
        return replace(whole, exchanges=tuple(e for e in whole.exchanges if e.connection == connection),
                       server_requests=tuple(e for e in whole.server_requests if e.connection == connection),
                       connection=connection, whole=whole)

    def by_connection(self) -> list[ScenarioRun]:
        """One view per connection: where each task is judged."""
        return [self.on(c) for c in (self.whole or self).connection_numbers()]

    def elsewhere(self, task_id: str, *methods: str) -> list[Exchange]:
        """Requests (of `methods`) naming a task of this view's connection that went over another
        connection of the scenario, one that did not create a task of that id (P-47)."""
        whole = self.whole or self
        others = {c: set(whole.on(c).created_task_ids()) for c in whole.connection_numbers() if c != self.connection}
        return [e for e in whole.exchanges if e.is_request and e.method in methods and e.task_id == task_id
                and e.connection in others and task_id not in others[e.connection]]

    @property
    def connection_kind(self) -> str:
        """What one connection is here: a server process (stdio), a session (2025-11-25 over HTTP),
        or the stateless server (2026-07-28 over HTTP: one connection)."""
        if self.transport == "stdio":
            return "server process"
        # A wire whose requests stand on their own has no session: the one server is one connection.
        return "connection" if DIALECTS[Wire(self.era)].self_contained("tools/call") else "session"

    def where_is(self, connection: int) -> str:
        return f"{self.connection_kind} {connection}"

    @property
    def label(self) -> str:
        """The scenario's name, and the connection of a view when the client used more than one."""
        whole = self.whole or self
        if self.connection is None or len(whole.connection_numbers()) < 2:
            return self.name
        return f"{self.name}, {self.where_is(self.connection)}"

    @property
    def called(self) -> bool:
        """Whether the client made the request the scenario is about (tools/call, or the
        context's request): without it the scenario showed nothing of the client."""
        method = self.scenario.request_method
        return any(e.is_request and e.method == method for e in self.exchanges)

    def sent(self, *methods: str) -> Iterator[Exchange]:
        return (e for e in self.exchanges if e.method in methods)

    def created_task_ids(self) -> list[str]:
        """Task ids the scripted server handed out in a CreateTaskResult (flat with resultType
        "task", or the task nested under `task`)."""
        out = []
        for e in self.exchanges:
            created = CreatedTask.read(e.result)
            flat_task = get_path(e.result, "resultType") == "task"
            if created.task_id is not None and (created.shape == "nested" or flat_task):
                out.append(created.task_id)
        return out

    @property
    def name(self) -> str:
        return self.scenario.name


def said_elsewhere(run: ScenarioRun, found: Sequence[Exchange]) -> str:
    """`run.elsewhere(...)`'s requests in words: where they went, and what they got."""
    parts = []
    for e in found[:3]:
        code = get_path(e.reply, "error", "code")
        got = f"answered error {shown(code)}" if code is not None else "answered"
        parts.append(f"{shown(e.method)} #{e.seq} went to {run.where_is(e.connection)}, which did not create it "
                     f"({got})")
    return "; ".join(parts) + (f" and {len(found) - 3} more" if len(found) > 3 else "")


def exchanges_of(wire: WireLog, seqs: Sequence[int]) -> tuple[Exchange, ...]:
    """The client's messages among the frames `seqs` (one scenario's), in arrival order, each with
    the answer that replied to it."""
    frames = [f for f in (wire.get(s) for s in seqs) if f is not None]
    replies: dict[int, Frame] = {f.reply_to: f for f in frames if f.direction == "out" and f.reply_to is not None}
    out: list[Exchange] = []
    for frame in frames:
        if frame.direction != "in" or len(out) >= MAX_EXCHANGES:
            continue
        message = message_of(frame)
        if not isinstance(message, dict):
            continue
        reply = replies.get(frame.seq)
        body = reply.json() if reply is not None else None
        out.append(Exchange(frame.seq, frame.time, message, frame.http,
                            reply.seq if reply is not None else None, reply.time if reply is not None else None,
                            body if isinstance(body, dict) else None, frame.connection or 1))
    return tuple(out)


def malformed_of(wire: WireLog, seqs: Sequence[int]) -> tuple[tuple[int, str], ...]:
    """(frame, why) for each message the client sent among the frames `seqs` that is not a JSON
    object, read strictly (jsonrpc.parse: NaN is not JSON); an HTTP request other than a POST
    (a GET for a stream, a DELETE of the session) carries no message."""
    out: list[tuple[int, str]] = []
    for frame in (wire.get(s) for s in seqs):
        if frame is None or frame.direction != "in" or (frame.http is not None and frame.http.method != "POST"):
            continue
        if FrameFlag.DROPPED_BYTES in frame.flags:
            continue  # the wire log was full: what it said is not known (a limit, in the scenario's record)
        value, why = parse(frame.data)
        if why is None and not isinstance(value, dict):
            why = problems(value)[0][1]
        if why is not None and len(out) < MAX_EXCHANGES:
            out.append((frame.seq, why))
    return tuple(out)


def server_requests_of(wire: WireLog, seqs: Sequence[int]) -> tuple[Exchange, ...]:
    """The requests the scripted server sent the client among the frames `seqs`, each with the
    message the client answered it with (a response with the same id), in the order they were sent."""
    frames = [f for f in (wire.get(s) for s in seqs) if f is not None]
    responses: dict[tuple[int, Any], Frame] = {}  # by (connection, id): ids are a connection's own
    for frame in frames:
        message = message_of(frame) if frame.direction == "in" else None
        if (frame.direction == "in" and isinstance(message, dict) and "method" not in message
                and isinstance(message.get("id"), str | int)):
            responses.setdefault((frame.connection or 1, message["id"]), frame)
    out: list[Exchange] = []
    for frame in frames:
        message = frame.json() if frame.direction == "out" else None  # never the client's, whole (judged.py)
        if not isinstance(message, dict) or not isinstance(message.get("method"), str):
            continue
        rid = message.get("id")
        answer = responses.get((frame.connection or 1, rid)) if isinstance(rid, str | int) else None
        body = answer.json() if answer is not None else None
        out.append(Exchange(frame.seq, frame.time, message, frame.http, answer.seq if answer else None,
                            answer.time if answer else None, body if isinstance(body, dict) else None,
                            frame.connection or 1))
    return tuple(out)
