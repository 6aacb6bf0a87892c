"""Frame purposes are typed tags (issue 21): a request's frame carries a FrameTag set where the
request is made (why: Purpose, the poll's number; over which connection), and the code that
decides reads the tag, never the frame's note (which stays, for people, in the wire log)."""

from __future__ import annotations

import gc
import json
from typing import Any

import anyio
from helpers.paths import REFERENCE
from helpers.runs import run, stdio

from tasks_conformance.core import steps
from tasks_conformance.core.protocol import HEADER_METHOD, HEADER_NAME
from tasks_conformance.core.rpc.peer import Peer, Reply, RpcError
from tasks_conformance.core.transports.memory import ScriptedTransport
from tasks_conformance.core.wirelog import FrameTag, HttpMeta, Purpose, WireLog, tagging
from tasks_conformance.core.wires import Wire
from tasks_conformance.reporters.progress import CONNECTING_SESSION, STARTING_SESSION, RunProgress
from tasks_conformance.server.checks.routing import mcp_name_routing
from tasks_conformance.server.evidence import DeclaredCall, Discovery, Evidence, Intent, NameRouting, ToolChoice
from tasks_conformance.server.session.extension import ExtensionSession


def _rpc(**message: Any) -> bytes:
    return json.dumps({"jsonrpc": "2.0", **message}).encode()


# -- the tag reaches the frame the request makes ----------------------------------------------------


def test_tagging_tags_the_first_outbound_frame_recorded_in_its_block_only() -> None:
    wire = WireLog()
    seen: list[FrameTag | None] = []
    wire.observer = lambda frame: seen.append(frame.tag)  # the observer sees the tag as the frame is recorded
    poll = FrameTag.polling(3).on(1)
    with tagging(poll):
        wire.record("in", "stdio", _rpc(id=1, result={}))  # what arrives meanwhile is not the request
        first = wire.record("out", "stdio", _rpc(id=2, method="tasks/get"), note="anything at all")
        second = wire.record("out", "stdio", _rpc(method="notifications/initialized"))
    after = wire.record("out", "stdio", _rpc(id=3, method="tasks/get"))
    assert (first.tag, second.tag, after.tag) == (poll, None, None)
    assert seen == [None, poll, None, None]
    # A tag given to the record itself wins; a block without a tag tags nothing.
    with tagging(poll):
        own = wire.record("out", "stdio", _rpc(id=4, method="tools/call"), tag=FrameTag(Purpose.TASK_CREATE))
        next_one = wire.record("out", "stdio", _rpc(id=5, method="tasks/get"))
    with tagging(None):
        untagged = wire.record("out", "stdio", _rpc(id=6, method="tasks/get"))
    assert own.tag == FrameTag(Purpose.TASK_CREATE) and next_one.tag is None and untagged.tag is None


def test_the_tag_stays_in_memory_and_out_of_the_exported_frame() -> None:
    wire = WireLog()
    plain = wire.record("out", "stdio", _rpc(id=1, method="tasks/get"), note="poll #1")
    tagged = wire.record("out", "stdio", _rpc(id=1, method="tasks/get"), note="poll #1", tag=FrameTag.polling(1))
    exported = tagged.to_json()
    del exported["seq"], exported["time"]
    expected = plain.to_json()
    del expected["seq"], expected["time"]
    assert exported == expected and "tag" not in json.dumps(tagged.to_json())


def test_a_connection_keeps_its_number_and_a_number_is_never_given_twice() -> None:
    class Connection:
        pass

    wire = WireLog()
    main, other = Connection(), Connection()
    assert (wire.connection_number(main), wire.connection_number(other), wire.connection_number(main)) == (1, 2, 1)
    del other
    gc.collect()
    assert wire.connection_number(Connection()) == 3  # the closed connection's 2 is not reused


def test_a_real_run_tags_every_request_where_it_is_made() -> None:
    # The reference server over stdio, with the dual-era probe's connection of its own.
    ex = run(**stdio(REFERENCE), tool_name="slow_compute",
             check_ids=["tasks-inline-result", "tasks-extension-in-initialize-ignored"])
    requests = [f for f in ex.wire if f.direction == "out" and "method" in (f.json() or {}) and "id" in f.json()]
    assert requests and all(f.tag is not None and f.tag.connection is not None for f in requests)
    tags = [f.tag for f in requests if f.tag is not None]
    assert tags[0] == FrameTag(Purpose.ERA_PROBE, connection=1)
    assert [t.purpose for t in tags].count(Purpose.TASK_CREATE) == 1
    polls = [f for f in requests if f.tag is not None and f.tag.purpose is Purpose.POLL]
    assert [f.tag.poll for f in polls if f.tag is not None] == list(range(1, len(polls) + 1)) and polls
    assert all(f.json()["method"] == "tasks/get" for f in polls)
    # The dual-era probe's 2025-11-25 session: another connection, opened by its initialize.
    others = [f for f in requests if f.tag is not None and f.tag.connection != 1]
    assert others and others[0].json()["method"] == "initialize"
    assert others[0].tag == FrameTag(Purpose.HANDSHAKE, connection=2)
    # Notifications and our answers are no requests of ours: they carry no tag.
    assert all(f.tag is None for f in ex.wire if f.direction == "out" and "id" not in (f.json() or {"id": 0}))


# -- the progress line reads the tags ----------------------------------------------------------------


def _progress() -> tuple[RunProgress, WireLog]:
    state = RunProgress(30.0, clock=lambda: 100.0)
    wire = WireLog()
    wire.observer = state.on_frame
    state.say(steps.CONNECTING)
    wire.record("out", "stdio", _rpc(id=1, method="server/discover"), tag=FrameTag(Purpose.ERA_PROBE, connection=1))
    wire.record("in", "stdio", _rpc(id=1, result={}))
    state.say(steps.probing("call the probe tool declaring tasks support"))
    wire.record("out", "stdio", _rpc(id=2, method="tools/call"), tag=FrameTag(Purpose.TASK_CREATE, connection=1))
    wire.record("in", "stdio", _rpc(id=2, result={"resultType": "task", "taskId": "t", "status": "working"}))
    return state, wire


def test_the_poll_count_is_the_tags_number_whatever_the_notes_say() -> None:
    state, wire = _progress()
    wire.record("out", "stdio", _rpc(id=3, method="tasks/get"), note="poll #9",
                tag=FrameTag(Purpose.PROBE, connection=1))  # not a poll of the probe task
    wire.record("in", "stdio", _rpc(id=3, result={"taskId": "t", "status": "completed"}))
    assert state.line() == "task running · 0.0s · task working"
    wire.record("out", "stdio", _rpc(id=4, method="tasks/get"), note="a read",
                tag=FrameTag.polling(4).on(1))
    wire.record("in", "stdio", _rpc(id=4, result={"taskId": "t", "status": "input_required"}))
    assert state.line() == "task running · 0.0s · task input_required, poll 4 · 30s left of --poll-timeout"


def test_the_task_is_created_by_the_tagged_request_not_the_noted_one() -> None:
    state = RunProgress(30.0, clock=lambda: 100.0)
    wire = WireLog()
    wire.observer = state.on_frame
    wire.record("out", "stdio", _rpc(id=1, method="tools/call"), note="declared tools/call",
                tag=FrameTag(Purpose.PROBE, connection=1))
    wire.record("in", "stdio", _rpc(id=1, result={"taskId": "x", "status": "working"}))
    assert state.task_status is None
    wire.record("out", "stdio", _rpc(id=2, method="tools/call"), note="declared tools/call of the input tool",
                tag=FrameTag(Purpose.TASK_CREATE, connection=1))
    wire.record("in", "stdio", _rpc(id=2, result={"taskId": "t", "status": "working"}))
    assert state.task_status == "working"


def test_a_second_session_is_the_connection_that_sent_it_not_how_far_its_ids_are() -> None:
    state, wire = _progress()
    wire.record("out", "stdio", _rpc(id=3, method="tasks/get"), tag=FrameTag.polling(1).on(1))
    wire.record("in", "stdio", _rpc(id=3, result={"taskId": "t", "status": "completed"}))
    assert state.line() == "probes · 0.0s · task completed, poll 1 · call the probe tool declaring tasks support"
    # The main connection's requests, whatever their ids: never another session.
    wire.record("out", "stdio", _rpc(id=900_000, method="tasks/get"), tag=FrameTag(Purpose.PROBE, connection=1))
    assert STARTING_SESSION not in state.line() and CONNECTING_SESSION not in state.line()
    # Another connection whose ids start where the main one's did: a session starting.
    wire.record("out", "stdio", _rpc(id=4, method="initialize"), tag=FrameTag(Purpose.HANDSHAKE, connection=2))
    assert state.line().endswith(f" · {STARTING_SESSION}")
    wire.record("in", "stdio", _rpc(id=4, result={}))
    assert STARTING_SESSION not in state.line()
    wire.record("out", "stdio", _rpc(id=5, method="tasks/get"), tag=FrameTag(Purpose.PROBE, connection=3))
    assert state.line().endswith(f" · {CONNECTING_SESSION}")


# -- the routing check reads the tags ----------------------------------------------------------------


def _tasks_get_over_http(wire: WireLog, rid: int, tag: FrameTag, name: str, method: str) -> Reply:
    meta = HttpMeta("POST", "http://127.0.0.1/mcp", request_headers=((HEADER_NAME, name), (HEADER_METHOD, method)))
    out = wire.record("out", "http", _rpc(id=rid, method="tasks/get", params={"taskId": "t1"}), http=meta, tag=tag)
    error = {"code": -32020, "message": "header mismatch"}
    inn = wire.record("in", "http", _rpc(id=rid, error=error), reply_to=out.seq,
                      http=HttpMeta("POST", meta.url, status=400))
    return Reply("tasks/get", rid, out.seq, inn.seq, http=inn.http, error=RpcError(-32020, "header mismatch"))


def test_only_the_requests_tagged_as_header_mismatch_probes_may_carry_wrong_routing_headers() -> None:
    wire = WireLog()
    mismatch = FrameTag(Purpose.HEADER_MISMATCH, connection=1)
    name_probe = _tasks_get_over_http(wire, 1, mismatch, "not-t1", "tasks/get")
    method_probe = _tasks_get_over_http(wire, 2, mismatch, "t1", "tasks/conformance-mismatch")
    # A request of another probe whose note happens to end in "mismatch": its headers must be right.
    other = _tasks_get_over_http(wire, 3, FrameTag(Purpose.PROBE, connection=1), "t2", "tasks/get")
    intents = (
        Intent(name_probe.request_seq, "tasks/get", "2026-07-28", True),
        Intent(method_probe.request_seq, "tasks/get", "2026-07-28", True),
        Intent(other.request_seq, "tasks/get", "2026-07-28", True),
    )
    routing = NameRouting(ran=True, task_id="t1", sent_name="not-t1", name_mismatch=name_probe,
                          method_mismatch=method_probe)
    ev = Evidence(wire_log=wire, discovery=Discovery(protocol_version="2026-07-28", wire=Wire.EXTENSION),
                  transport="http",
                  tool=ToolChoice("slow", "test"), intents=intents,
                  records={NameRouting.probe: routing, DeclaredCall.probe: DeclaredCall(ran=True)})
    verdict = mcp_name_routing(ev)
    assert verdict.skip_reason == "could-not-run" and "harness bug" in verdict.message
    assert f"frame {other.request_seq} Mcp-Name" in verdict.message
    assert f"frame {name_probe.request_seq} " not in verdict.message
    assert f"frame {method_probe.request_seq} " not in verdict.message
    # With the other request's headers right, the probes' answers are judged (and pass).
    ev = Evidence(wire_log=wire, discovery=ev.discovery, transport="http", tool=ev.tool, intents=intents[:2],
                  records=ev.records)
    assert mcp_name_routing(ev).status == "passed"


def test_the_session_tags_its_requests_with_its_connection() -> None:
    async def main() -> list[FrameTag | None]:
        wire = WireLog()
        transport = ScriptedTransport(wire, lambda sent: sent.result({}))
        await transport.start()
        async with Peer(transport, timeout_s=2.0) as peer:
            session = ExtensionSession(transport, peer, version="2026-07-28", capabilities={})
            await session.request("tasks/get", {"taskId": "t"}, purpose="poll #1", tag=FrameTag.polling(1))
            await session.request("tasks/get", {"taskId": "t"}, purpose="poll #2")
        await transport.aclose()
        return [f.tag for f in wire if f.direction == "out"]

    assert anyio.run(main) == [FrameTag(Purpose.POLL, poll=1, connection=1), FrameTag(Purpose.PROBE, connection=1)]
