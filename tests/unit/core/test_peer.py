"""The JSON-RPC peer against a scripted server (no process): correlation, timeouts, server
requests, and how every frame that answers nothing is classified and bounded."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from helpers.scripted import answer_pings, as_dict, barrier, run, running

from tasks_conformance.core.rpc import peer as peer_module
from tasks_conformance.core.rpc.codec import NO_ID, encode, sniff_id
from tasks_conformance.core.transports.memory import Reaction, ScriptedTransport, Sent
from tasks_conformance.core.wirelog import FrameFlag, WireLog

NOTE = {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info"}}


def _flags(wire: WireLog, seq: int | None) -> frozenset[FrameFlag]:
    assert seq is not None
    frame = wire.get(seq)
    assert frame is not None
    return frame.flags


def test_concurrent_requests_get_their_own_answers_whatever_the_order() -> None:
    wire = WireLog()
    held: list[Sent] = []

    def script(sent: Sent) -> Reaction:
        held.append(sent)
        if len(held) < 2:
            return None
        # Both requests are in: answer the second first.
        return [held[1].result({"n": 2}), held[0].result({"n": 1})]

    async def body() -> None:
        async with running(ScriptedTransport(wire, script)) as peer:
            replies: dict[str, Any] = {}

            async def ask(name: str) -> None:
                replies[name] = await peer.request(name)

            async with anyio.create_task_group() as tg:
                tg.start_soon(ask, "first")
                await anyio.wait_all_tasks_blocked()
                tg.start_soon(ask, "second")
        assert replies["first"].result == {"n": 1} and replies["second"].result == {"n": 2}
        for reply in replies.values():
            frame = wire.get(reply.response_seq)
            assert frame is not None and as_dict(frame.json())["id"] == reply.request_id
            assert frame.flags == frozenset()

    run(body)


def test_a_request_nobody_answers_times_out_and_its_late_answer_is_flagged_late() -> None:
    wire = WireLog()
    transport = ScriptedTransport(wire, answer_pings())

    async def body() -> None:
        async with running(transport) as peer:
            reply = await peer.request("tools/list", timeout_s=0.05)
            assert reply.timed_out and not reply.answered and reply.response_seq is None
            transport.push(transport.sent[0].result({"tools": []}))
            await barrier(peer)
            assert [m for m, _ in peer.late] == ["tools/list"]
            assert FrameFlag.LATE_RESPONSE in peer.late[0][1].flags
            assert peer.unmatched == []

    run(body)


def test_server_requests_are_answered_from_the_handler_table() -> None:
    wire = WireLog()
    answered = anyio.Event()
    answers: list[Sent] = []

    def script(sent: Sent) -> Reaction:
        if sent.method is None:  # the client's answers to the server's requests
            answers.append(sent)
            if len(answers) == 2:
                answered.set()
        return None

    async def elicit(method: str, params: Any) -> tuple[Any, dict[str, Any] | None]:
        return {"action": "accept", "echo": params}, None

    async def body() -> None:
        transport = ScriptedTransport(wire, script)
        async with running(transport, handlers={"elicitation/create": elicit}) as peer:
            transport.push(
                {"jsonrpc": "2.0", "id": "s1", "method": "elicitation/create", "params": {"q": 1}},
                {"jsonrpc": "2.0", "id": "s2", "method": "sampling/createMessage"},
            )
            await answered.wait()
            assert len(peer.server_requests) == 2
        by_id = {a.id: as_dict(a.json()) for a in answers}
        assert by_id["s1"]["result"] == {"action": "accept", "echo": {"q": 1}}
        assert by_id["s2"]["error"]["code"] == -32601

    run(body)


def test_a_response_to_an_id_never_sent_is_a_stray() -> None:
    wire = WireLog()
    transport = ScriptedTransport(wire, answer_pings())

    async def body() -> None:
        async with running(transport) as peer:
            transport.push({"jsonrpc": "2.0", "id": 4242, "result": {}})
            await barrier(peer)
            assert [f.flags for f in peer.unmatched] == [frozenset({FrameFlag.STRAY_RESPONSE})]

    run(body)


def test_a_second_answer_to_one_request_is_a_duplicate_now_or_later() -> None:
    wire = WireLog()

    def script(sent: Sent) -> Reaction:
        if sent.method == "ping":
            return sent.result({})
        return [sent.result({"first": True}), sent.result({"second": True})]

    async def body() -> None:
        transport = ScriptedTransport(wire, script)
        async with running(transport) as peer:
            reply = await peer.request("tools/list")
            assert reply.result == {"first": True}
            transport.push(transport.sent[0].result({"third": True}))
            await barrier(peer)
            assert [f.flags for f in peer.unmatched] == [frozenset({FrameFlag.DUPLICATE_RESPONSE})] * 2

    run(body)


def test_id_true_does_not_answer_request_1() -> None:
    wire = WireLog()

    def script(sent: Sent) -> Reaction:
        if sent.method == "ping":
            return sent.result({})
        assert sent.id == 1
        return {"jsonrpc": "2.0", "id": True, "result": {}}

    async def body() -> None:
        async with running(ScriptedTransport(wire, script)) as peer:
            reply = await peer.request("tools/list", timeout_s=0.05)
            assert reply.timed_out
            await barrier(peer)
            assert [f.flags for f in peer.unmatched] == [frozenset({FrameFlag.STRAY_RESPONSE})]

    run(body)


def test_non_json_lines_are_flagged_and_a_broken_answer_still_settles_its_request() -> None:
    wire = WireLog()

    def script(sent: Sent) -> Reaction:
        if sent.method == "ping":
            return sent.result({})
        # Cut short: not JSON, but its id is readable from its first bytes.
        return b'{"jsonrpc":"2.0","id":%d,"result":{"tools":[\n' % sent.id

    async def body() -> None:
        transport = ScriptedTransport(wire, script)
        async with running(transport) as peer:
            transport.push(b"DEBUG: starting up\n", b"\xff\xfe\n", b"[1, 2]\n", b'{"hello": 1}\n')
            reply = await peer.request("tools/list")
            assert reply.decode_problem is not None and "not valid JSON" in reply.decode_problem
            assert _flags(wire, reply.response_seq) == {FrameFlag.NOT_JSON}
            assert [f.flags for f in peer.unmatched] == [
                {FrameFlag.NOT_JSON}, {FrameFlag.NOT_JSON}, {FrameFlag.NOT_JSONRPC}, {FrameFlag.NOT_JSONRPC},
            ]

    run(body)


def test_an_error_with_id_null_is_not_flagged_a_stray() -> None:
    wire = WireLog()
    transport = ScriptedTransport(wire, answer_pings())

    async def body() -> None:
        async with running(transport) as peer:
            transport.push({"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "parse error"}})
            await barrier(peer)
            assert [f.flags for f in peer.unmatched] == [frozenset()]

    run(body)


def test_an_oversize_answer_is_discarded_and_flagged_but_settles_its_request() -> None:
    wire = WireLog()

    def script(sent: Sent) -> Reaction:
        return sent.result({"blob": "x" * 5000})

    async def body() -> None:
        async with running(ScriptedTransport(wire, script, max_message_bytes=1000)) as peer:
            reply = await peer.request("tools/list")
            assert reply.decode_problem is not None and "--max-message-bytes" in reply.decode_problem
            frame = wire.get(reply.response_seq or 0)
            assert frame is not None and frame.data == b"" and frame.flags == {FrameFlag.OVERSIZE}

    run(body)


def test_a_closed_connection_settles_what_is_pending() -> None:
    transport = ScriptedTransport(WireLog(), lambda sent: None)

    async def body() -> None:
        async with running(transport) as peer:
            async with anyio.create_task_group() as tg:

                async def ask() -> None:
                    reply = await peer.request("tools/list")
                    assert reply.transport_problem == "the server closed its output stream"

                tg.start_soon(ask)
                await anyio.wait_all_tasks_blocked()
                transport.hang_up()
            assert peer.closed is not None
            after = await peer.request("tools/list")
            assert after.transport_problem == peer.closed

    run(body)


def test_floods_are_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    # The bounds are lowered so that the flood stays small; the rule is the same.
    monkeypatch.setattr(peer_module, "MAX_KEPT_NOTIFICATIONS", 20)
    monkeypatch.setattr(peer_module, "MAX_KEPT_UNMATCHED", 10)
    monkeypatch.setattr(peer_module, "MAX_KEPT_SERVER_REQUESTS", 5)
    wire = WireLog()
    transport = ScriptedTransport(wire, answer_pings())

    async def body() -> None:
        async with running(transport) as peer:
            transport.push(*[NOTE] * 50)
            transport.push(*[{"jsonrpc": "2.0", "id": 10_000 + n, "result": {}} for n in range(30)])
            transport.push(*[{"jsonrpc": "2.0", "id": f"s{n}", "method": "roots/list"} for n in range(12)])
            await barrier(peer)
            assert (len(peer.notifications), peer.dropped_notifications) == (20, 30)
            assert (len(peer.unmatched), peer.dropped_unmatched) == (10, 20)
            assert (len(peer.server_requests), peer.dropped_server_requests) == (5, 7)
        # What the peer let go of, the wire log let go of too.
        assert wire.discarded == 30 + 20 + 7

    run(body)


def test_sniff_id_reads_the_top_level_id_only() -> None:
    assert sniff_id(b'{"jsonrpc":"2.0","id":7,"result":{') == 7
    assert sniff_id(b'{"result":{"id":1,"x":[{"id":2}]},"id":"a"') == "a"
    assert sniff_id(b'{"a":"}\\"{","id":null,') is None
    assert sniff_id(b'{"id":true}') is NO_ID
    assert sniff_id(b'{"id":{"x":1}}') is NO_ID
    assert sniff_id(b'{"result":' + b"[" * 5000) is NO_ID
    assert sniff_id(b"[1]") is NO_ID
    assert sniff_id(encode({"jsonrpc": "2.0", "id": 3})) == 3
