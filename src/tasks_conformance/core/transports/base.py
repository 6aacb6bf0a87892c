"""The transport contract.

A transport sends one message at a time (`send`) and delivers what arrives as `Inbound` items
on one stream: a logged message frame, or an event (an HTTP exchange that ended, the peer
exiting). Every byte goes into the WireLog before anyone else sees it.
"""

from __future__ import annotations

import abc
from collections.abc import Mapping
from dataclasses import dataclass

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from tasks_conformance.core.causes import CauseKind
from tasks_conformance.core.wirelog import Frame, HttpMeta, WireLog

# How many inbound items may wait unread; the reader drains continuously, so this only
# bounds a burst (e.g. 100 000 notifications) instead of letting it grow memory.
INBOUND_BUFFER = 1024


@dataclass(frozen=True)
class Message:
    """One inbound message frame (already in the WireLog).

    `head` is set only for a message that was too large and was discarded unread (its frame
    carries no data): its first bytes, so the peer can tell which request it answered.
    """

    frame: Frame
    head: bytes = b""


@dataclass(frozen=True)
class ExchangeEnded:
    """An HTTP exchange for outbound frame `reply_to` is over (it may have carried 0..n messages)."""

    reply_to: int
    status: int | None
    http: HttpMeta | None
    problem: str | None = None  # why it ended abnormally (connection refused, oversize, bad type…)
    flags: tuple[str, ...] = ()  # the flags that may get past the problem (--max-message-bytes…)
    lost: bool = False  # the connection was refused or dropped: the server may be gone


@dataclass(frozen=True)
class Closed:
    """The connection is gone for good (process exited, stream closed)."""

    reason: str


Inbound = Message | ExchangeEnded | Closed


class Transport(abc.ABC):
    kind: str = "abstract"

    def __init__(self, wire: WireLog, *, max_message_bytes: int) -> None:
        self.wire = wire
        self.max_message_bytes = max_message_bytes
        send, recv = anyio.create_memory_object_stream[Inbound](INBOUND_BUFFER)
        self._inbound_send: MemoryObjectSendStream[Inbound] = send
        self.inbound: MemoryObjectReceiveStream[Inbound] = recv

    @property
    def uses_headers(self) -> bool:
        return False

    @property
    def starts_process(self) -> bool:
        """Whether start() starts the server itself: then the first answer waits for a cold start
        (--startup-timeout), not only for a request."""
        return False

    @abc.abstractmethod
    async def start(self) -> None: ...

    def fresh(self) -> Transport | None:
        """Another, unstarted transport to the same target that shares no connection or state
        with this one (a new process, socket or HTTP client); None when there is no way to."""
        return None

    @abc.abstractmethod
    async def send(
        self,
        data: bytes,
        *,
        headers: Mapping[str, str] | None = None,
        deadline_s: float = 30.0,
        note: str | None = None,
        settle: bool = False,
    ) -> int:
        """Send one message; return the seq of its outbound frame. With `settle`, return only once
        the peer has taken the message in: over a stream the bytes are in order with everything
        sent after them anyway, but separate HTTP requests carry no order of their own, so an HTTP
        transport waits for the response status (a notification's 202) within `deadline_s`."""

    @abc.abstractmethod
    async def aclose(self) -> None: ...

    def failure_context(self) -> str:
        """Human text about why the peer may have failed (stderr tail, exit code)."""
        return ""

    def exit_code(self) -> int | None:
        """The server process's own exit code, when this transport started it and it exited
        before the run closed it (None otherwise)."""
        return None

    def output_tail(self) -> str:
        """The end of what the server process wrote besides MCP messages (stderr), redacted."""
        return ""

    def problem_kind(self) -> CauseKind | None:
        """What the user must change when this connection failed, where the transport knows
        more than "nothing answered" (stdout that is not JSON, credentials refused)."""
        return None

    async def _deliver(self, item: Inbound) -> None:
        try:
            await self._inbound_send.send(item)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            pass
