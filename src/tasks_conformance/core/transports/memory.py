"""Scripted in-memory transports, for tests that need no server process.

A script plays the server: it sees each outbound message and says what comes back. Only the
bottom layer is replaced — the bytes never touch a pipe, socket or port — and everything above
it is the code real runs use, so frames are recorded in the WireLog exactly as in a real run:

* `ScriptedTransport` is a `StreamTransport` (as stdio, TCP and Unix sockets are) whose byte
  streams are in memory: line splitting, the oversize bound and the missing last newline are
  handled by the real reader.
* `ScriptedHttpTransport` is an `HttpTransport` whose httpx client talks to an
  `httpx.MockTransport`: status codes, Content-Type, SSE bodies (in the chunks the script
  chose), redirects and request headers go through the real exchange code.

A script is either a callable `(Sent) -> Reaction` or a sequence of reactions, the nth for the
nth outbound message (notifications and answers to server requests count too). A reaction is
None (nothing comes back), one item or a list of items; an item is a JSON-RPC message (a dict),
raw bytes, or an `Answer`:

* on a stream, a dict is written as one line, bytes and an Answer's chunks verbatim;
* over HTTP, the reaction is the one response to the POST: nothing -> 202 with no body, one
  dict -> a JSON body, several dicts -> an SSE body with one event each, bytes -> a JSON body
  of those chunks, an Answer -> exactly that response.

Over HTTP there is no channel for unsolicited messages (this client opens no GET stream): a
script puts them in the SSE body of some response instead. This module imports httpx; only
tests import it.
"""

from __future__ import annotations

import math
from collections.abc import AsyncIterator, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeAlias

import anyio
import httpx
from anyio.abc import ByteReceiveStream, ByteSendStream
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from tasks_conformance.core.rpc.codec import encode, parse_message
from tasks_conformance.core.transports.http import HttpTransport
from tasks_conformance.core.transports.stream import StreamTransport
from tasks_conformance.core.wirelog import WireLog

DEFAULT_MAX_MESSAGE_BYTES = 1024 * 1024
DEFAULT_URL = "http://scripted.invalid/mcp"


@dataclass(frozen=True)
class Sent:
    """One outbound message as the scripted server receives it."""

    data: bytes
    headers: tuple[tuple[str, str], ...] = ()  # HTTP request headers; none on a stream
    http_method: str | None = None  # POST or DELETE over HTTP; None on a stream

    def json(self) -> Any:
        """The message parsed, or None when it is not JSON."""
        return parse_message(self.data)[0]

    @property
    def method(self) -> str | None:
        """The JSON-RPC method of a request or notification."""
        msg = self.json()
        method = msg.get("method") if isinstance(msg, dict) else None
        return method if isinstance(method, str) else None

    @property
    def id(self) -> Any:
        msg = self.json()
        return msg.get("id") if isinstance(msg, dict) else None

    def header(self, name: str) -> str | None:
        want = name.lower()
        return next((v for k, v in self.headers if k.lower() == want), None)

    def result(self, result: Any) -> dict[str, Any]:
        """A response carrying `result` to this request."""
        return {"jsonrpc": "2.0", "id": self.id, "result": result}

    def error(self, code: int, message: str, data: Any = None) -> dict[str, Any]:
        """An error response to this request."""
        err: dict[str, Any] = {"code": code, "message": message}
        if data is not None:
            err["data"] = data
        return {"jsonrpc": "2.0", "id": self.id, "error": err}


@dataclass(frozen=True)
class Answer:
    """An HTTP response; on a stream only its chunks count, written verbatim."""

    chunks: tuple[bytes, ...] = ()
    status: int = 200
    content_type: str | None = "application/json"
    headers: tuple[tuple[str, str], ...] = ()

    @classmethod
    def json(cls, msg: Any, *, status: int = 200, content_type: str | None = "application/json") -> Answer:
        return cls((encode(msg),), status, content_type)

    @classmethod
    def sse(cls, *events: Mapping[str, Any] | bytes, status: int = 200) -> Answer:
        """An event stream: a dict becomes one `data:` event; bytes are sent as they are (to
        script ids, comments, CRLF or an event split across chunks). One chunk per argument."""
        chunks = tuple(e if isinstance(e, bytes) else b"data: " + encode(e) + b"\n\n" for e in events)
        return cls(chunks, status, "text/event-stream")

    @classmethod
    def empty(cls, status: int = 202) -> Answer:
        return cls((), status, None)


Item: TypeAlias = Mapping[str, Any] | bytes | Answer
Reaction: TypeAlias = Item | Sequence[Item] | None
Script: TypeAlias = Callable[[Sent], Reaction] | Sequence[Reaction]


class ScriptExhausted(Exception):
    """A sequence script had no reaction left for an outbound message."""


class _Player:
    """Runs a script: keeps what was sent and turns each outbound message into items."""

    def __init__(self, script: Script) -> None:
        self._script = script
        self.sent: list[Sent] = []

    def react(self, sent: Sent) -> list[Item]:
        self.sent.append(sent)
        if callable(self._script):
            return _items(self._script(sent))
        n = len(self.sent)
        if n > len(self._script):
            raise ScriptExhausted(f"no reaction scripted for outbound message #{n}: {sent.data[:200]!r}")
        return _items(self._script[n - 1])


def _items(reaction: Reaction) -> list[Item]:
    if reaction is None:
        return []
    if isinstance(reaction, (bytes, Answer, Mapping)):
        return [reaction]
    return list(reaction)


# -- stream ---------------------------------------------------------------------------------


def _stream_bytes(item: Item) -> Iterable[bytes]:
    if isinstance(item, bytes):
        return (item,)
    if isinstance(item, Answer):
        return item.chunks
    return (encode(item) + b"\n",)


class _PipeReader(ByteReceiveStream):
    """The server's output: whatever was pushed, handed out at most `max_bytes` at a time, so
    a large push reaches the reader in chunks as a real pipe would."""

    def __init__(self, recv: MemoryObjectReceiveStream[bytes]) -> None:
        self._recv = recv
        self._rest = b""

    async def receive(self, max_bytes: int = 65536) -> bytes:
        if not self._rest:
            self._rest = await self._recv.receive()  # EndOfStream once hung up and drained
        out, self._rest = self._rest[:max_bytes], self._rest[max_bytes:]
        return out

    async def aclose(self) -> None:
        self._recv.close()


class _ScriptSink(ByteSendStream):
    """The server's input: each write is one message line, answered by the script."""

    def __init__(self, owner: ScriptedTransport) -> None:
        self._owner = owner

    async def send(self, item: bytes) -> None:
        self._owner._on_outbound(item.removesuffix(b"\n"))

    async def aclose(self) -> None:
        pass


class ScriptedTransport(StreamTransport):
    """Newline-delimited JSON-RPC with a scripted server, as over stdio."""

    def __init__(
        self,
        wire: WireLog,
        script: Script,
        *,
        channel: str = "stdio",
        max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
    ) -> None:
        super().__init__(wire, max_message_bytes=max_message_bytes)
        self.kind = channel
        self.channel = channel
        self._player = _Player(script)
        out: tuple[MemoryObjectSendStream[bytes], MemoryObjectReceiveStream[bytes]]
        # Unbounded, so that a script may answer (or a test push a flood) from inside send()
        # without waiting for the reader: the reader drains it as a real pipe is drained.
        out = anyio.create_memory_object_stream[bytes](math.inf)
        self._output, self._output_reader = out

    @property
    def sent(self) -> list[Sent]:
        """Every outbound message, in order."""
        return self._player.sent

    async def _open(self) -> tuple[ByteReceiveStream, ByteSendStream]:
        return _PipeReader(self._output_reader), _ScriptSink(self)

    def _on_outbound(self, data: bytes) -> None:
        self.push(*self._player.react(Sent(data)))

    def push(self, *items: Item) -> None:
        """Make the server write, unasked (notifications, late or stray answers, garbage)."""
        for item in items:
            for chunk in _stream_bytes(item):
                if chunk:
                    self._output.send_nowait(chunk)

    def hang_up(self) -> None:
        """The server closes its output: what was pushed is still read, then the connection
        ends as when a real server closes stdout."""
        self._output.close()

    async def aclose(self) -> None:
        self._output.close()
        await self._close_tasks()


# -- HTTP -----------------------------------------------------------------------------------


def _http_answer(items: list[Item]) -> Answer:
    if not items:
        return Answer.empty()
    if len(items) == 1 and isinstance(items[0], Answer):
        return items[0]
    if any(isinstance(i, Answer) for i in items):
        raise ValueError("over HTTP an Answer is the whole response: return it alone")
    if all(isinstance(i, bytes) for i in items):
        return Answer(tuple(i for i in items if isinstance(i, bytes)))
    if len(items) == 1:
        return Answer.json(items[0])
    return Answer.sse(*(i for i in items if not isinstance(i, Answer)))


async def _body(chunks: tuple[bytes, ...]) -> AsyncIterator[bytes]:
    for chunk in chunks:
        yield chunk


class ScriptedHttpTransport(HttpTransport):
    """Streamable HTTP with a scripted server: one response per POST (or DELETE)."""

    def __init__(
        self,
        wire: WireLog,
        script: Script,
        *,
        url: str = DEFAULT_URL,
        headers: Mapping[str, str] | None = None,
        max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
    ) -> None:
        super().__init__(
            wire, url=url, headers=headers, max_message_bytes=max_message_bytes,
            http_transport=httpx.MockTransport(self._handle),
        )
        self._player = _Player(script)
        self._hung_up = False

    @property
    def sent(self) -> list[Sent]:
        """Every outbound request, in order."""
        return self._player.sent

    def hang_up(self) -> None:
        """The server goes away: every later exchange fails to connect."""
        self._hung_up = True

    def _handle(self, request: httpx.Request) -> httpx.Response:
        if self._hung_up:
            raise httpx.ConnectError("connection refused (the scripted server hung up)", request=request)
        sent = Sent(request.content, tuple(request.headers.multi_items()), request.method)
        answer = _http_answer(self._player.react(sent))
        headers = list(answer.headers)
        if answer.content_type is not None:
            headers.append(("content-type", answer.content_type))
        return httpx.Response(answer.status, headers=headers, content=_body(answer.chunks))
