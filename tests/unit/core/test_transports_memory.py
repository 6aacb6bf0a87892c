"""The scripted in-memory transports themselves: what the script sees, what the WireLog
records, and the HTTP-like behaviour a script can ask for."""

from __future__ import annotations

import io
import json

import pytest
from helpers.scripted import next_inbound, run

from tasks_conformance.core.transports.base import Closed, ExchangeEnded, Message
from tasks_conformance.core.transports.memory import (
    Answer,
    Reaction,
    ScriptedHttpTransport,
    ScriptedTransport,
    ScriptExhausted,
    Sent,
)
from tasks_conformance.core.transports.stream import Line, LineFramer, Oversize
from tasks_conformance.core.wirelog import FrameFlag, WireLog
from tasks_conformance.reporters import write_wire_log

PING = b'{"jsonrpc":"2.0","id":1,"method":"ping"}'
PONG = {"jsonrpc": "2.0", "id": 1, "result": {}}


def test_a_stream_records_both_directions_exactly_and_the_script_sees_each_message() -> None:
    wire = WireLog()
    transport = ScriptedTransport(wire, [PONG, None])

    async def body() -> None:
        await transport.start()
        try:
            out_seq = await transport.send(PING, note="a ping")
            item = await next_inbound(transport)
            assert isinstance(item, Message) and item.frame.data == json.dumps(PONG, separators=(",", ":")).encode()
            await transport.send(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')
            with pytest.raises(ScriptExhausted):
                await transport.send(PING)
        finally:
            await transport.aclose()
        out = wire.get(out_seq)
        assert out is not None and (out.direction, out.channel, out.data, out.note) == ("out", "stdio", PING, "a ping")
        assert [s.data for s in transport.sent][:1] == [PING] and transport.sent[0].method == "ping"
        assert [f.direction for f in wire] == ["out", "in", "out", "out"]

    run(body)


def test_pushed_bytes_are_framed_by_the_real_line_reader() -> None:
    wire = WireLog()
    transport = ScriptedTransport(wire, [], channel="tcp", max_message_bytes=100)

    async def body() -> None:
        await transport.start()
        try:
            transport.push(b'{"jsonrpc":"2.0",', b'"method":"a"}\r\n\n  \n' + b"x" * 150 + b"\n", b"tail")
            transport.hang_up()
            items = [await next_inbound(transport) for _ in range(4)]
        finally:
            await transport.aclose()
        assert isinstance(items[0], Message) and items[0].frame.data == b'{"jsonrpc":"2.0","method":"a"}'
        assert isinstance(items[1], Message) and items[1].frame.flags == {FrameFlag.OVERSIZE}
        assert items[1].head == b"x" * 150
        assert isinstance(items[2], Message) and items[2].frame.flags == {FrameFlag.NO_NEWLINE}
        assert isinstance(items[3], Closed) and items[3].reason == "the server closed its output stream"
        assert {f.channel for f in wire} == {"tcp"} and transport.kind == "tcp"

    run(body)


def test_flags_are_exported_by_name_only_when_a_frame_has_some() -> None:
    wire = WireLog(max_bytes=10)
    wire.record("out", "stdio", b"{}")
    wire.record("in", "stdio", b"0123456789", flags=[FrameFlag.NOT_JSON])
    out = io.StringIO()
    write_wire_log(wire, out)
    rows = [json.loads(line) for line in out.getvalue().splitlines()]
    assert "flags" not in rows[0]
    assert rows[1]["flags"] == ["DROPPED_BYTES", "NOT_JSON"] and rows[1]["text"] == ""
    assert "the wire log is full" in rows[1]["note"]


def _http(*steps: Reaction) -> ScriptedHttpTransport:
    return ScriptedHttpTransport(WireLog(), list(steps), headers={"Authorization": "Bearer t0k"})


async def _exchange(transport: ScriptedHttpTransport, data: bytes = PING) -> list[Message | ExchangeEnded | Closed]:
    """Send one POST and collect what it brings, up to the end of its exchange."""
    await transport.send(data, headers={"Mcp-Method": "ping"})
    items = []
    while True:
        item = await next_inbound(transport)
        items.append(item)
        if isinstance(item, ExchangeEnded):
            return items


def test_http_a_json_answer_is_one_frame_tied_to_its_post_and_headers_reach_the_script() -> None:
    transport = _http(PONG)

    async def body() -> None:
        await transport.start()
        try:
            message, ended = await _exchange(transport)
        finally:
            await transport.aclose()
        assert isinstance(message, Message) and isinstance(ended, ExchangeEnded)
        assert message.frame.channel == "http" and message.frame.reply_to == 1 and ended.problem is None
        assert message.frame.http is not None and message.frame.http.status == 200
        sent = transport.sent[0]
        assert sent.http_method == "POST" and sent.data == PING
        assert sent.header("mcp-method") == "ping" and sent.header("authorization") == "Bearer t0k"
        assert "text/event-stream" in (sent.header("accept") or "")

    run(body)


def test_http_statuses_content_types_and_hang_up() -> None:
    transport = _http(
        None,
        Answer((b"<html>nope</html>",), 404, "text/html"),
        Answer.json(PONG, content_type="text/plain"),
        Answer((), 307, None, (("location", "/mcp2"),)),
        PONG,
    )

    async def body() -> None:
        await transport.start()
        try:
            (accepted,) = await _exchange(transport)
            assert isinstance(accepted, ExchangeEnded) and accepted.status == 202 and accepted.problem is None
            (missing,) = await _exchange(transport)
            assert isinstance(missing, ExchangeEnded) and missing.problem is not None and "404" in missing.problem
            mislabelled, _ = await _exchange(transport)
            assert isinstance(mislabelled, Message) and mislabelled.frame.flags == {FrameFlag.WRONG_CONTENT_TYPE}
            redirected, _ = await _exchange(transport)
            assert isinstance(redirected, Message) and redirected.frame.http is not None
            assert redirected.frame.http.url.endswith("/mcp2")
            transport.hang_up()
            (refused,) = await _exchange(transport)
            assert isinstance(refused, ExchangeEnded) and refused.problem is not None
            assert "could not connect" in refused.problem
        finally:
            await transport.aclose()

    run(body)


def test_http_several_messages_become_an_sse_body() -> None:
    def script(sent: Sent) -> Reaction:
        return [{"jsonrpc": "2.0", "method": "notifications/message"}, sent.result({})]

    transport = ScriptedHttpTransport(WireLog(), script)

    async def body() -> None:
        await transport.start()
        try:
            note, answer, ended = await _exchange(transport)
        finally:
            await transport.aclose()
        assert isinstance(note, Message) and isinstance(answer, Message) and isinstance(ended, ExchangeEnded)
        assert (note.frame.channel, answer.frame.channel) == ("sse", "sse")
        assert answer.frame.json() == PONG

    run(body)


def _frame_lines(chunks: list[bytes], limit: int) -> list[Line | Oversize]:
    framer = LineFramer(limit)
    return [item for chunk in chunks for item in framer.feed(chunk)] + framer.end()


@pytest.mark.parametrize("size", [1, 3, 64])
def test_the_line_framer_gives_the_same_lines_whatever_the_chunks(size: int) -> None:
    stream = b'{"a":1}\r\n\n   \n' + b"y" * 40 + b'\n{"b":2}\n' + b"z" * 30
    chunks = [stream[i : i + size] for i in range(0, len(stream), size)]
    items = _frame_lines(chunks, 20)
    assert [i.data if isinstance(i, Line) else i.size for i in items] == [b'{"a":1}', 40, b'{"b":2}', 30]
    # An oversize line keeps what was buffered when it crossed the bound: its first bytes.
    heads = [i.head for i in items if isinstance(i, Oversize)]
    assert all(len(h) > 20 and h == h[:1] * len(h) for h in heads)
    assert _frame_lines([b"tail"], 20) == [Line(b"tail", terminated=False)]
