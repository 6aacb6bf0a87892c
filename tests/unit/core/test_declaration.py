"""The tasks declaration is the dialect's (core/wires): each session asks its wire's
`WireDialect.declare` for every request, so `declare_tasks` means the same on both eras and no
session drops it silently."""

from __future__ import annotations

from typing import Any

import anyio

from tasks_conformance.core.protocol import EXT_TASKS, META_CLIENT_CAPS
from tasks_conformance.core.rpc.peer import Peer
from tasks_conformance.core.transports.memory import ScriptedTransport
from tasks_conformance.core.wirelog import WireLog
from tasks_conformance.core.wires import PROTOCOL_EXTENSION
from tasks_conformance.server.session.base import Session
from tasks_conformance.server.session.extension import ExtensionSession
from tasks_conformance.server.session.legacy import LegacySession

TOOL = {"name": "slow", "arguments": {"seconds": 1}}
CALLS: list[tuple[str, dict[str, Any], bool]] = [
    ("tools/call", TOOL, True),
    ("tools/call", TOOL, False),
    ("tools/call", {**TOOL, "task": {"ttl": 5}}, True),
    ("tools/call", {**TOOL, "task": {"ttl": 5}}, False),
    ("tasks/get", {"taskId": "t"}, True),
]


def _sent(make: type[Session]) -> tuple[list[Any], list[bool]]:
    """The params of each request in CALLS as the session sent them, and what it recorded as meant."""
    async def main() -> tuple[list[Any], list[bool]]:
        wire = WireLog()
        transport = ScriptedTransport(wire, lambda sent: sent.result({}))
        await transport.start()
        async with Peer(transport, timeout_s=2.0) as peer:
            session: Session
            if make is LegacySession:
                session = LegacySession(transport, peer, capabilities={})
            else:
                session = ExtensionSession(transport, peer, version=PROTOCOL_EXTENSION,
                                           capabilities={"extensions": {"x/other": {}}})
            for method, params, declare in CALLS:
                await session.request(method, params, declare_tasks=declare)
        await transport.aclose()
        return [f.json().get("params") for f in wire if f.direction == "out"], [i.declared for i in session.intents]

    return anyio.run(main)


def test_the_legacy_session_declares_a_task_with_params_task_on_tools_call_only() -> None:
    sent, meant = _sent(LegacySession)
    assert sent == [
        {**TOOL, "task": {"ttl": 60_000}},  # asked for: added, after the call's own params
        TOOL,  # not asked for: none
        {**TOOL, "task": {"ttl": 5}},  # the probe's own params.task is kept
        TOOL,  # and taken away when the probe declares nothing
        {"taskId": "t"},  # initialize declared tasks for the session: nothing per request
    ]
    assert list(sent[0]) == ["name", "arguments", "task"]
    assert meant == [declare for _, _, declare in CALLS]


def test_the_extension_session_declares_the_extension_in_every_request_envelope() -> None:
    sent, meant = _sent(ExtensionSession)
    extensions = [p["_meta"][META_CLIENT_CAPS].get("extensions") for p in sent]
    assert extensions == [
        {"x/other": {}, EXT_TASKS: {}},
        {"x/other": {}},
        {"x/other": {}, EXT_TASKS: {}},
        {"x/other": {}},
        {"x/other": {}, EXT_TASKS: {}},
    ]
    assert [p.get("task") for p in sent] == [None, None, {"ttl": 5}, {"ttl": 5}, None]  # not the extension's
    assert meant == [declare for _, _, declare in CALLS]
