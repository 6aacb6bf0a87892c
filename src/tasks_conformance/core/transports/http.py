"""Streamable HTTP: each message its own POST; JSON or SSE responses; every byte logged.

httpx is imported here only, so stdio runs and `--help` never pay for it. Redirects are
followed only within the same origin; a redirect elsewhere is refused and reported, so no
Authorization header or cookie ever reaches another origin.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import urljoin, urlsplit

import anyio
import httpx
from anyio.abc import TaskGroup

from tasks_conformance.core.causes import CauseKind, Reason, by_flag
from tasks_conformance.core.transports.base import ExchangeEnded, Message, Transport
from tasks_conformance.core.transports.http_tuning import http_transport
from tasks_conformance.core.transports.sse import SseEvent, SseParser
from tasks_conformance.core.wirelog import FrameFlag, HttpMeta, WireLog

if TYPE_CHECKING:
    from tasks_conformance.core.oauth import TokenSource

_MAX_REDIRECTS = 5

HTTP_HINTS = {
    401: "the server needs credentials or refused the ones given (use --access-token or --header)",
    407: "a proxy needs credentials (407)",
    403: "the server refused access (403); check credentials, scopes or the Origin policy",
    404: "no MCP endpoint at this URL (404); check the path (often /mcp)",
    405: "the endpoint does not accept this HTTP method (405)",
    500: "the server failed with an internal error (500)",
}


def _is_message(value: object) -> bool:
    return isinstance(value, dict) and ("method" in value or "result" in value or "error" in value) and (
        value.get("jsonrpc") == "2.0" or "id" in value
    )


def _is_jsonrpc(value: object) -> bool:
    """A JSON-RPC message (or a batch of them), as opposed to some other JSON body."""
    if isinstance(value, list):
        return bool(value) and all(_is_message(v) for v in value)
    return _is_message(value)


@dataclass
class _Exchange:
    """How far one HTTP exchange got: the URL now asked, the last status and metadata, and
    the problem that ended it, if any."""

    url: str
    status: int | None = None
    meta: HttpMeta | None = None
    problem: str | None = None
    # Set once the server's final status is known (or the exchange ended without one): what a
    # settled send waits for, so that a request sent after it cannot overtake it at the server.
    taken: anyio.Event | None = None

    def settled(self) -> None:
        if self.taken is not None:
            self.taken.set()


def _origin(url: str) -> tuple[str, str, int | None]:
    parts = urlsplit(url)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    return parts.scheme, (parts.hostname or "").lower(), port


class HttpTransport(Transport):
    kind = "http"

    def __init__(
        self,
        wire: WireLog,
        *,
        url: str,
        headers: Mapping[str, str] | None = None,
        max_message_bytes: int,
        connect_timeout_s: float = 10.0,
        http_transport: httpx.AsyncBaseTransport | None = None,
        oauth: TokenSource | None = None,
    ) -> None:
        super().__init__(wire, max_message_bytes=max_message_bytes)
        # None in real runs; tests pass an httpx.MockTransport (see transports/memory.py) so
        # that everything above the socket is the code real runs use.
        self._http_transport = http_transport
        self.url = url
        self.base_headers = dict(headers or {})
        self._client: httpx.AsyncClient | None = None
        self._tg: TaskGroup | None = None
        self._connect_timeout_s = connect_timeout_s
        self.oauth = oauth  # --refresh-token & co: the token before the run, a new one on a 401

    @property
    def uses_headers(self) -> bool:
        return True

    def with_headers(self, headers: Mapping[str, str]) -> HttpTransport:
        """Another transport to the same endpoint that sends these headers instead of the
        declared ones (a second principal's credentials), sharing no connection or cookie."""
        return HttpTransport(
            self.wire, url=self.url, headers=headers, max_message_bytes=self.max_message_bytes,
            connect_timeout_s=self._connect_timeout_s, http_transport=self._http_transport,
        )

    def fresh(self) -> HttpTransport:
        """Another transport to the same endpoint that shares nothing with this one but the
        declared headers (credentials, --header): its own connection pool and no cookie jar
        in common, so the server can tell it from this client only by what it sends. An OAuth
        token source is shared: the credentials are the same principal's, refreshed once."""
        return HttpTransport(
            self.wire, url=self.url, headers=self.base_headers, max_message_bytes=self.max_message_bytes,
            connect_timeout_s=self._connect_timeout_s, http_transport=self._http_transport, oauth=self.oauth,
        )

    async def start(self) -> None:
        self._client = httpx.AsyncClient(
            follow_redirects=False,
            timeout=httpx.Timeout(None, connect=self._connect_timeout_s),
            trust_env=False,
            transport=self._http_transport or http_transport(tls=urlsplit(self.url).scheme == "https"),
        )
        if self.oauth is not None:
            # Raises OAuthFailed (a ConnectFailed): the run reports it as why nothing could run.
            self.base_headers["Authorization"] = await self.oauth.initial(self._client, self.base_headers)
        self._tg = anyio.create_task_group()
        await self._tg.__aenter__()

    def _meta(
        self, method: str, url: str, req_headers: Mapping[str, str], resp: httpx.Response | None
    ) -> HttpMeta:
        red = self.wire.redactor
        return HttpMeta(
            method=method,
            url=red.text(url),
            status=resp.status_code if resp is not None else None,
            request_headers=tuple(red.headers(req_headers)),
            response_headers=tuple(red.headers(list(resp.headers.multi_items()))) if resp is not None else (),
        )

    async def send(
        self,
        data: bytes,
        *,
        headers: Mapping[str, str] | None = None,
        deadline_s: float = 30.0,
        note: str | None = None,
        settle: bool = False,
    ) -> int:
        req_headers = {
            # Bodies are logged and bounded as raw bytes: ask for them uncompressed.
            "Accept-Encoding": "identity",
            **self.base_headers,
            "Accept": "application/json, text/event-stream",
            "Content-Type": "application/json",
            **(headers or {}),
        }
        frame = self.wire.record(
            "out", "http", data, http=self._meta("POST", self.url, req_headers, None), note=note
        )
        assert self._tg is not None
        taken = anyio.Event() if settle else None
        self._tg.start_soon(self._exchange, "POST", data, req_headers, frame.seq, deadline_s, taken)
        if taken is not None:
            # The exchange itself is bounded by deadline_s and sets `taken` however it ends.
            await taken.wait()
        return frame.seq

    async def raw_exchange(
        self, method: str, data: bytes, headers: Mapping[str, str], *, deadline_s: float, note: str
    ) -> tuple[int, ExchangeEnded | None, list[int]]:
        """One HTTP exchange outside JSON-RPC (a notification POST, a GET, a DELETE), logged like
        every other, on a transport no peer reads: (the request's seq, how it ended, the seqs of
        the messages that came back). The end is logged too, so a bare status is evidence."""
        req_headers = {
            "Accept-Encoding": "identity", **self.base_headers, "Accept": "application/json, text/event-stream",
            **({"Content-Type": "application/json"} if data else {}), **headers,
        }
        frame = self.wire.record("out", "http", data, http=self._meta(method, self.url, req_headers, None), note=note)
        await self._exchange(method, data, req_headers, frame.seq, deadline_s)
        ended: ExchangeEnded | None = None
        messages: list[int] = []
        while True:
            try:
                item = self.inbound.receive_nowait()
            except anyio.WouldBlock:
                break
            if isinstance(item, ExchangeEnded) and item.reply_to == frame.seq:
                ended = item
            elif isinstance(item, Message):
                messages.append(item.frame.seq)
        if ended is not None and ended.problem is None:
            self.wire.record("in", "event", b"", http=ended.http, reply_to=frame.seq,
                             note=f"HTTP {ended.status}, {len(messages)} message(s)")
        return frame.seq, ended, messages

    async def delete(self, headers: Mapping[str, str], deadline_s: float = 5.0) -> None:
        """DELETE the session (legacy era); the exchange is logged like any other."""
        req_headers = {**self.base_headers, **headers}
        frame = self.wire.record("out", "http", b"", http=self._meta("DELETE", self.url, req_headers, None))
        with anyio.move_on_after(deadline_s):
            await self._exchange("DELETE", b"", req_headers, frame.seq, deadline_s)

    async def _exchange(
        self, method: str, data: bytes, req_headers: dict[str, str], seq: int, deadline_s: float,
        taken: anyio.Event | None = None,
    ) -> None:
        ex = _Exchange(url=self.url, taken=taken)
        lost = False
        try:
            with anyio.fail_after(max(deadline_s, 0.05)):
                await self._follow_redirects(method, data, req_headers, seq, ex)
        except Exception as exc:
            # Anything, even a header value httpx/h11 cannot encode: this exchange fails, never
            # the run, because an exception escaping here would cancel the session.
            ex.problem = self._failure(exc, ex.url, deadline_s)
            lost = isinstance(exc, (httpx.ConnectError, httpx.RemoteProtocolError, httpx.ReadError))
        finally:
            ex.settled()
        flags: tuple[str, ...] = ()
        if ex.problem is not None:
            # The settings that may fix it travel as fields; the text is redacted for people.
            flags = ex.problem.cause.flags if isinstance(ex.problem, Reason) else ()
            ex.problem = self.wire.redactor.text(ex.problem)
            self.wire.record("in", "event", b"", http=ex.meta, reply_to=seq, note=ex.problem)
        await self._deliver(ExchangeEnded(reply_to=seq, status=ex.status, http=ex.meta, problem=ex.problem,
                                          flags=flags, lost=lost))

    async def _follow_redirects(
        self, method: str, data: bytes, req_headers: dict[str, str], seq: int, ex: _Exchange
    ) -> None:
        """Send the request, following redirects within the origin only; `ex` keeps the state
        so far, which the caller reports if this raises."""
        assert self._client is not None
        refreshed = False
        for _ in range(_MAX_REDIRECTS + 1):
            request = self._client.build_request(method, ex.url, content=data, headers=req_headers)
            resp = await self._client.send(request, stream=True)
            try:
                ex.status = resp.status_code
                ex.meta = self._meta(method, ex.url, req_headers, resp)
                if resp.status_code == 401 and self.oauth is not None and not refreshed:
                    # An expired token: refresh once and send the same request again.
                    fresh = await self.oauth.after_401(req_headers.get("Authorization"),
                                                       resp.headers.get("www-authenticate"))
                    if fresh is not None:
                        refreshed = True
                        req_headers["Authorization"] = self.base_headers["Authorization"] = fresh
                        self.wire.record("in", "http", b"", http=ex.meta, reply_to=seq, note=(
                            "HTTP 401: the OAuth access token was refreshed; the request is sent again"))
                        continue
                if not resp.is_redirect:
                    # The server has the message once it answers; a stream may stay open, so its
                    # headers settle it, a plain body once read (and logged: what follows, follows it).
                    if resp.headers.get("content-type", "").lower().startswith("text/event-stream"):
                        ex.settled()
                    ex.problem = await self._read_body(resp, ex.meta, seq, settled=ex.taken is not None)
                    ex.settled()
                    return
                target = urljoin(ex.url, resp.headers.get("location", ""))
                if _origin(target) != _origin(ex.url):
                    ex.problem = (
                        f"HTTP {ex.status} redirect to another origin ({self.wire.redactor.text(target)}) "
                        "was not followed, so no credentials or cookies were sent there"
                    )
                    return
                self.wire.record(
                    "in", "http", b"", http=ex.meta, reply_to=seq,
                    note=f"HTTP {ex.status} redirect within the origin, followed",
                )
                ex.url = target
            finally:
                await resp.aclose()
        ex.problem = f"more than {_MAX_REDIRECTS} redirects"

    def problem_kind(self) -> CauseKind | None:
        # An OAuth refresh the authorization server refused: the 401s that followed say so.
        return CauseKind.OAUTH if self.oauth is not None and self.oauth.refused else None

    def _failure(self, exc: Exception, url: str, deadline_s: float) -> str:
        """Why an exchange failed, in words (checked from the most specific kind down)."""
        if isinstance(exc, TimeoutError):
            return f"no complete HTTP response within {deadline_s:.1f}s"
        if isinstance(exc, httpx.ConnectError):
            return f"could not connect to {self.wire.redactor.text(url)}: {exc}"
        if isinstance(exc, httpx.TimeoutException):
            return f"HTTP timeout: {exc}"
        if isinstance(exc, httpx.HTTPError):
            return f"HTTP error: {type(exc).__name__}: {exc}"
        if isinstance(exc, OSError):
            return f"network error: {exc}"
        return f"the HTTP exchange failed: {type(exc).__name__}: {exc}"

    @staticmethod
    def _chunks(resp: httpx.Response) -> AsyncIterator[bytes]:
        # Raw bytes unless the server compressed anyway (despite Accept-Encoding: identity);
        # then decoded, and bounded by the caller after every chunk. No chunk_size: httpx would
        # hold bytes back until that many arrived, stalling an SSE stream; network reads are
        # bounded (64 KiB) by httpcore already.
        encoding = resp.headers.get("content-encoding", "identity").strip().lower()
        return resp.aiter_raw() if encoding in ("", "identity") else resp.aiter_bytes()

    def _status_problem(self, resp: httpx.Response, meta: HttpMeta) -> str:
        status = resp.status_code
        if status == 401:
            sent = meta.header("authorization") is not None
            hint = (
                self.oauth.describe_401() if self.oauth is not None else
                "the server refused the credentials given (check --access-token / --header)" if sent else
                "the server needs credentials; none were sent (use --access-token or --header)"
            )
            challenge = resp.headers.get("www-authenticate")
            if challenge:
                hint += f"; WWW-Authenticate: {challenge[:200]}"
            if self.oauth is None:
                return Reason(by_flag(f"HTTP {status}: {hint}", "", "--access-token", "--header"))
        else:
            hint = HTTP_HINTS.get(status, "the server answered with an error status and no JSON-RPC response")
        return f"HTTP {status}: {hint}"

    async def _read_body(self, resp: httpx.Response, meta: HttpMeta, seq: int, *, settled: bool = False) -> str | None:
        ctype = resp.headers.get("content-type", "").split(";")[0].strip().lower()
        if ctype == "text/event-stream":
            return await self._read_sse(resp, meta, seq)
        body = bytearray()
        async for chunk in self._chunks(resp):
            body.extend(chunk)
            if len(body) > self.max_message_bytes:
                self.wire.record(
                    "in", "http", b"", http=meta, reply_to=seq, note="oversize body discarded",
                    flags=(FrameFlag.OVERSIZE,),
                )
                return Reason(by_flag(
                    f"HTTP response body larger than --max-message-bytes ({self.max_message_bytes} bytes); "
                    "rejected", "", "--max-message-bytes",
                ))
        if not body and resp.status_code in (200, 202, 204):
            if settled:
                # What a settled send waited for, in the log: what was sent after it follows it.
                self.wire.record("in", "event", b"", http=meta, reply_to=seq,
                                 note=f"HTTP {resp.status_code}, no body: accepted")
            return None
        note = None
        flags: tuple[FrameFlag, ...] = ()
        if ctype != "application/json" and body:
            note = f"unexpected Content-Type {ctype or '(none)'!r}"
            flags = (FrameFlag.WRONG_CONTENT_TYPE,)
        frame = self.wire.record("in", "http", bytes(body), http=meta, reply_to=seq, note=note, flags=flags)
        parsed = frame.json()
        if _is_jsonrpc(parsed):
            # JSON-RPC, even with an error status or a wrong Content-Type: the peer judges it
            # (the frame's WRONG_CONTENT_TYPE flag keeps the problem for the checks).
            await self._deliver(Message(frame=frame))
            return None
        # Not JSON-RPC (an error page, an OAuth error object, HTML): the status or the type
        # explains the failure better than "not valid JSON" would.
        if resp.status_code >= 400:
            return self._status_problem(resp, meta)
        if not body:
            return f"HTTP {resp.status_code} with an empty body"
        if note is not None:
            return f"HTTP {resp.status_code} response with {note} and no JSON-RPC message in it"
        await self._deliver(Message(frame=frame))
        return None

    async def _read_sse(self, resp: httpx.Response, meta: HttpMeta, seq: int) -> str | None:
        """Read a text/event-stream body (see transports/sse.py): each event with data becomes a
        frame holding exactly its bytes; memory is bounded by --max-message-bytes per event."""
        parser = SseParser(self.max_message_bytes)
        delivered = 0
        async for chunk in self._chunks(resp):
            for event in parser.feed(chunk):
                await self._deliver_sse(event, meta, seq)
                delivered += 1
            if parser.oversize:
                self.wire.record(
                    "in", "sse", b"", http=meta, reply_to=seq, note="oversize SSE event discarded",
                    flags=(FrameFlag.OVERSIZE,),
                )
                return Reason(by_flag(
                    f"an SSE event larger than --max-message-bytes ({self.max_message_bytes} bytes) "
                    "was rejected and the stream closed", "", "--max-message-bytes",
                ))
        for event in parser.end():
            await self._deliver_sse(event, meta, seq)
            delivered += 1
        if delivered == 0 and resp.status_code >= 400:
            return self._status_problem(resp, meta)
        return None

    async def _deliver_sse(self, event: SseEvent, meta: HttpMeta, seq: int) -> None:
        notes = []
        if event.event_id:
            notes.append(f"event id {event.event_id[:200]}")
        if event.unterminated:
            notes.append("the stream ended before the event's closing blank line")
        frame = self.wire.record(
            "in", "sse", event.data, http=meta, reply_to=seq, note="; ".join(notes) or None,
            flags=(FrameFlag.NO_NEWLINE,) if event.unterminated else (),
        )
        await self._deliver(Message(frame=frame))

    async def aclose(self) -> None:
        if self._tg is not None:
            self._tg.cancel_scope.cancel()
            try:
                await self._tg.__aexit__(None, None, None)
            except Exception:
                pass
            self._tg = None
        if self._client is not None:
            with anyio.CancelScope(shield=True), anyio.move_on_after(5):
                await self._client.aclose()
            self._client = None
        self._inbound_send.close()
