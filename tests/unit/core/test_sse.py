"""The text/event-stream parser on byte chunks, alone and inside the HTTP transport."""

from __future__ import annotations

import pytest
from helpers.scripted import as_dict, run, running

from tasks_conformance.core.rpc.codec import encode
from tasks_conformance.core.transports.memory import Answer, Reaction, ScriptedHttpTransport, Sent
from tasks_conformance.core.transports.sse import SseEvent, SseParser
from tasks_conformance.core.wirelog import FrameFlag, WireLog

STREAM = (
    b": a comment\n"
    b"id: prime-1\n"
    b"data:\n"
    b"\n"  # a priming event: an id and empty data, not a message
    b"event: message\n"
    b'data: {"a":\n'
    b"data: 1}\n"
    b"\n"
    b"id: 2\n"
    b"data:\xff\xfe raw\n"
    b"\n"
)
EXPECTED = [SseEvent(b'{"a":\n1}', "prime-1"), SseEvent(b"\xff\xfe raw", "2")]


def _parse(chunks: list[bytes], limit: int = 1 << 20) -> list[SseEvent]:
    parser = SseParser(limit)
    events = [e for chunk in chunks for e in parser.feed(chunk)]
    return events + parser.end()


def test_a_stream_in_one_chunk() -> None:
    assert _parse([STREAM]) == EXPECTED


@pytest.mark.parametrize("size", [1, 2, 3, 7])
def test_events_split_across_chunks_come_out_the_same(size: int) -> None:
    assert _parse([STREAM[i : i + size] for i in range(0, len(STREAM), size)]) == EXPECTED


@pytest.mark.parametrize("newline", [b"\r\n", b"\r"])
def test_crlf_and_cr_line_ends(newline: bytes) -> None:
    stream = STREAM.replace(b"\n", newline)
    assert _parse([stream]) == EXPECTED
    # A CR at the end of one chunk and the LF at the start of the next are one line end.
    assert _parse([stream[i : i + 1] for i in range(len(stream))]) == EXPECTED


def test_a_priming_event_alone_dispatches_nothing_but_its_id_is_kept() -> None:
    parser = SseParser(1000)
    assert parser.feed(b"id: 42\ndata:\n\n: keep-alive\n\n") == []
    assert parser.event_id == "42"
    assert parser.feed(b"data: x\n\n") == [SseEvent(b"x", "42")]


def test_an_event_the_stream_never_closes_is_dispatched_unterminated() -> None:
    assert _parse([b"data: 1\n", b"data: 2"]) == [SseEvent(b"1\n2", None, unterminated=True)]


def test_an_oversize_event_stops_the_parser() -> None:
    parser = SseParser(10)
    assert parser.feed(b"data: short\n\ndata: 0123") == [SseEvent(b"short")]
    assert not parser.oversize
    assert parser.feed(b"456789") == []
    assert parser.oversize
    assert parser.feed(b"\n\ndata: more\n\n") == [] and parser.end() == []


def test_an_oversize_line_without_a_break_is_caught_before_it_ends() -> None:
    parser = SseParser(10)
    parser.feed(b"data: " + b"x" * 20)
    assert parser.oversize


def _answer_with(answer: Answer) -> ScriptedHttpTransport:
    def script(sent: Sent) -> Reaction:
        msg = as_dict(sent.json())
        return Answer(
            tuple(c.replace(b"ID", encode(msg["id"])) for c in answer.chunks), answer.status, answer.content_type,
        )

    return ScriptedHttpTransport(WireLog(), script, max_message_bytes=200)


def test_the_http_transport_reads_an_sse_answer_split_mid_event() -> None:
    transport = _answer_with(Answer.sse(
        b"id: p\ndata:\n\n",
        b'data: {"jsonrpc":"2.0","method":"notifications/progress"}\n\ndata: {"jsonrpc":"2.0",',
        b'"id":ID,"result":{"ok":true}}\r',
        b"\n\r\n",
    ))

    async def body() -> None:
        async with running(transport) as peer:
            reply = await peer.request("tools/call")
            assert reply.result == {"ok": True}
            assert reply.status == 200
            assert len(peer.notifications) == 1
        frames = [f for f in transport.wire if f.direction == "in"]
        assert [f.channel for f in frames] == ["sse", "sse"]
        assert {f.reply_to for f in frames} == {1}
        assert frames[1].note == "event id p" and frames[1].flags == frozenset()

    run(body)


def test_an_sse_answer_cut_short_is_flagged_no_newline() -> None:
    transport = _answer_with(Answer.sse(b'data: {"jsonrpc":"2.0","id":ID,"result":{}}'))

    async def body() -> None:
        async with running(transport) as peer:
            reply = await peer.request("tools/call")
            assert reply.ok
            frame = transport.wire.get(reply.response_seq or 0)
            assert frame is not None and frame.flags == {FrameFlag.NO_NEWLINE}

    run(body)


def test_an_oversize_sse_event_is_flagged_and_fails_the_exchange() -> None:
    transport = _answer_with(Answer.sse(b"data: " + b"x" * 150, b"y" * 100 + b"\n\n"))

    async def body() -> None:
        async with running(transport) as peer:
            reply = await peer.request("tools/call")
            assert reply.transport_problem is not None and "larger than --max-message-bytes" in reply.transport_problem
        oversize = [f for f in transport.wire if FrameFlag.OVERSIZE in f.flags]
        assert [(f.channel, f.data) for f in oversize] == [("sse", b"")]

    run(body)
