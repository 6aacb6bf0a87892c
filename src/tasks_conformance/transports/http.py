"""Streamable HTTP: each message its own POST; JSON or SSE responses; every byte logged.

httpx is imported here only, so stdio runs and `--help` never pay for it. Redirects are
followed only within the same origin; a redirect elsewhere is refused and reported, so no
Authorization header or cookie ever reaches another origin.
"""

from __future__ import annotations

import codecs
from collections.abc import Mapping
from urllib.parse import urljoin, urlsplit

import anyio
import httpx
from anyio.abc import TaskGroup
from httpx_sse._decoders import SSEDecoder, SSELineDecoder

from tasks_conformance.transports.base import ExchangeEnded, Message, Transport
from tasks_conformance.wirelog import HttpMeta, WireLog

_MAX_REDIRECTS = 5
_CHUNK = 64 * 1024

HTTP_HINTS = {
    401: "the server needs credentials or refused the ones given (use --access-token or --header)",
    403: "the server refused access (403); check credentials, scopes or the Origin policy",
    404: "no MCP endpoint at this URL (404); check the path (often /mcp)",
    405: "the endpoint does not accept this HTTP method (405)",
    500: "the server failed with an internal error (500)",
}


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
    ) -> None:
        super().__init__(wire, max_message_bytes=max_message_bytes)
        self.url = url
        self.base_headers = dict(headers or {})
        self._client: httpx.AsyncClient | None = None
        self._tg: TaskGroup | None = None
        self._connect_timeout_s = connect_timeout_s

    @property
    def uses_headers(self) -> bool:
        return True

    async def start(self) -> None:
        self._client = httpx.AsyncClient(
            follow_redirects=False,
            timeout=httpx.Timeout(None, connect=self._connect_timeout_s),
            trust_env=False,
        )
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
    ) -> int:
        req_headers = {
            **self.base_headers,
            "Accept": "application/json, text/event-stream",
            "Content-Type": "application/json",
            **(headers or {}),
        }
        frame = self.wire.record(
            "out", "http", data, http=self._meta("POST", self.url, req_headers, None), note=note
        )
        assert self._tg is not None
        self._tg.start_soon(self._exchange, "POST", data, req_headers, frame.seq, deadline_s)
        return frame.seq

    async def delete(self, headers: Mapping[str, str], deadline_s: float = 5.0) -> None:
        """DELETE the session (legacy era); the exchange is logged like any other."""
        req_headers = {**self.base_headers, **headers}
        frame = self.wire.record("out", "http", b"", http=self._meta("DELETE", self.url, req_headers, None))
        with anyio.move_on_after(deadline_s):
            await self._exchange("DELETE", b"", req_headers, frame.seq, deadline_s)

    async def _exchange(
        self, method: str, data: bytes, req_headers: dict[str, str], seq: int, deadline_s: float
    ) -> None:
        assert self._client is not None
        url = self.url
        status: int | None = None
        meta: HttpMeta | None = None
        problem: str | None = None
        try:
            with anyio.fail_after(max(deadline_s, 0.05)):
                for _ in range(_MAX_REDIRECTS + 1):
                    request = self._client.build_request(method, url, content=data, headers=req_headers)
                    resp = await self._client.send(request, stream=True)
                    try:
                        status = resp.status_code
                        meta = self._meta(method, url, req_headers, resp)
                        if resp.is_redirect:
                            location = resp.headers.get("location", "")
                            target = urljoin(url, location)
                            if _origin(target) != _origin(url):
                                problem = (
                                    f"HTTP {status} redirect to another origin "
                                    f"({self.wire.redactor.text(target)}) was not followed, so no "
                                    "credentials or cookies were sent there"
                                )
                                break
                            self.wire.record(
                                "in", "http", b"", http=meta, reply_to=seq,
                                note=f"HTTP {status} redirect within the origin, followed",
                            )
                            url = target
                            continue
                        problem = await self._read_body(resp, meta, seq)
                    finally:
                        await resp.aclose()
                    break
                else:
                    problem = f"more than {_MAX_REDIRECTS} redirects"
        except TimeoutError:
            problem = f"no complete HTTP response within {deadline_s:.1f}s"
        except httpx.ConnectError as exc:
            problem = f"could not connect to {self.wire.redactor.text(url)}: {exc}"
        except httpx.TimeoutException as exc:
            problem = f"HTTP timeout: {exc}"
        except httpx.HTTPError as exc:
            problem = f"HTTP error: {type(exc).__name__}: {exc}"
        except OSError as exc:
            problem = f"network error: {exc}"
        if problem is not None:
            problem = self.wire.redactor.text(problem)
            self.wire.record("in", "event", b"", http=meta, reply_to=seq, note=problem)
        await self._deliver(ExchangeEnded(reply_to=seq, status=status, http=meta, problem=problem))

    async def _read_body(self, resp: httpx.Response, meta: HttpMeta, seq: int) -> str | None:
        ctype = resp.headers.get("content-type", "").split(";")[0].strip().lower()
        if ctype == "text/event-stream":
            return await self._read_sse(resp, meta, seq)
        body = bytearray()
        async for chunk in resp.aiter_raw(_CHUNK):
            body.extend(chunk)
            if len(body) > self.max_message_bytes:
                self.wire.record("in", "http", b"", http=meta, reply_to=seq, note="oversize body discarded")
                return (
                    f"HTTP response body larger than --max-message-bytes ({self.max_message_bytes} bytes); "
                    "rejected"
                )
        if not body and resp.status_code in (200, 202, 204):
            return None
        note = None
        if ctype != "application/json" and body:
            note = f"unexpected Content-Type {ctype or '(none)'!r}"
        frame = self.wire.record("in", "http", bytes(body), http=meta, reply_to=seq, note=note)
        await self._deliver(Message(frame=frame))
        if resp.status_code >= 400 and frame.json() is None:
            hint = HTTP_HINTS.get(resp.status_code, f"HTTP {resp.status_code}")
            return f"HTTP {resp.status_code}: {hint}"
        if note is not None and frame.json() is None:
            return f"response with {note}"
        return None

    async def _read_sse(self, resp: httpx.Response, meta: HttpMeta, seq: int) -> str | None:
        # httpx-sse's decoders parse; the loop here bounds memory per event.
        lines = SSELineDecoder()
        events = SSEDecoder()
        text = codecs.getincrementaldecoder("utf-8")("replace")
        pending = 0
        async for chunk in resp.aiter_raw(_CHUNK):
            pending += len(chunk)
            if pending > self.max_message_bytes:
                self.wire.record("in", "sse", b"", http=meta, reply_to=seq, note="oversize SSE event discarded")
                return (
                    f"an SSE event larger than --max-message-bytes ({self.max_message_bytes} bytes) was "
                    "rejected and the stream closed"
                )
            for line in lines.decode(text.decode(chunk)):
                sse = events.decode(line.rstrip("\n"))
                if sse is None:
                    continue
                pending = 0
                if not sse.data:
                    continue  # priming event (id only) or keep-alive
                frame = self.wire.record(
                    "in", "sse", sse.data.encode("utf-8"), http=meta, reply_to=seq,
                    note=f"event id {sse.id}" if sse.id else None,
                )
                await self._deliver(Message(frame=frame))
        tail = text.decode(b"", final=True)
        for line in [*(lines.decode(tail) if tail else []), *lines.flush(), ""]:
            sse = events.decode(line.rstrip("\n"))
            if sse is not None and sse.data:
                frame = self.wire.record("in", "sse", sse.data.encode("utf-8"), http=meta, reply_to=seq)
                await self._deliver(Message(frame=frame))
        return None

    async def aclose(self) -> None:
        if self._tg is not None:
            self._tg.cancel_scope.cancel()
            try:
                await self._tg.__aexit__(None, None, None)
            except Exception:  # noqa: BLE001 - teardown must not mask the run's outcome
                pass
            self._tg = None
        if self._client is not None:
            with anyio.CancelScope(shield=True), anyio.move_on_after(5):
                await self._client.aclose()
            self._client = None
        self._inbound_send.close()
