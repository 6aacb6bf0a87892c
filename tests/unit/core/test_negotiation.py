"""Era negotiation against scripted servers: no process, every frame still in the wire log."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from helpers.scripted import run

from tasks_conformance.core.transports.base import Transport
from tasks_conformance.core.transports.memory import Reaction, ScriptedTransport, Sent
from tasks_conformance.core.wirelog import WireLog
from tasks_conformance.core.wires import Wire
from tasks_conformance.server.evidence import Discovery
from tasks_conformance.server.session.connect import Connection
from tasks_conformance.settings.config import RunConfig

EXT = "io.modelcontextprotocol/tasks"
TOOLS = {"tools": [{"name": "slow", "inputSchema": {"type": "object"}, "execution": {"taskSupport": "optional"}}]}
Script = Callable[[Sent], Reaction]


def extension(extension: bool = True) -> Script:
    def script(sent: Sent) -> Reaction:
        if sent.method == "server/discover":
            caps: dict[str, Any] = {"tools": {}}
            if extension:
                caps["extensions"] = {EXT: {}}
            return sent.result({"resultType": "complete", "supportedVersions": ["2026-07-28"], "capabilities": caps})
        if sent.method == "tools/list":
            return sent.result({"resultType": "complete", **TOOLS})
        if sent.method == "initialize":
            return sent.error(-32022, "unsupported", {"supported": ["2026-07-28"]})
        return None

    return script


def legacy(placement: tuple[str, ...] = ("tasks",)) -> Script:
    def script(sent: Sent) -> Reaction:
        if sent.method == "initialize":
            caps: dict[str, Any] = {"tools": {}}
            node = caps
            for key in placement:
                node = node.setdefault(key, {})
            node["requests"] = {"tools": {"call": {}}}
            return sent.result({"protocolVersion": "2025-11-25", "capabilities": caps,
                                "serverInfo": {"name": "legacy", "version": "1"}})
        if sent.method == "tools/list":
            return sent.result(TOOLS)
        if sent.method == "notifications/initialized":
            return None
        return sent.error(-32601, "Method not found")

    return script


def negotiate(*scripts: Script, **settings: Any) -> tuple[Discovery, list[ScriptedTransport], WireLog]:
    """Open a Connection whose transports (one per (re)connect) play the scripts in turn."""
    made: list[ScriptedTransport] = []
    config = RunConfig(transport="stdio", command=("scripted",), timeout_ms=500, **settings)
    wire = WireLog()

    def factory(_config: RunConfig, log: WireLog) -> Transport:
        transport = ScriptedTransport(log, scripts[min(len(made), len(scripts) - 1)])
        made.append(transport)
        return transport

    async def body() -> Discovery:
        conn = Connection(config, wire, transport_factory=factory)
        try:
            await conn.open()
        finally:
            await conn.aclose()
        return conn.finish()

    return run(body), made, wire


def methods(transports: list[ScriptedTransport]) -> list[list[str | None]]:
    return [[s.method for s in t.sent] for t in transports]


def test_a_extension_server_with_the_extension_resolves_without_initialize() -> None:
    d, made, _ = negotiate(extension())
    assert d.wire is Wire.EXTENSION and d.protocol_version == "2026-07-28"
    assert [t["name"] for t in d.tools] == ["slow"]
    assert methods(made) == [["server/discover", "tools/list"]]


def test_a_legacy_server_falls_back_to_initialize_on_the_same_connection() -> None:
    d, made, _ = negotiate(legacy())
    assert d.wire is Wire.LEGACY and d.legacy_placement == "capabilities.tasks"
    assert methods(made) == [["server/discover", "initialize", "notifications/initialized", "tools/list"]]
    assert any("falling back to initialize" in n for n in d.negotiation_notes)


def test_the_experimental_placement_is_recognised_and_named() -> None:
    d, _, _ = negotiate(legacy(("experimental", "tasks")))
    assert d.wire is Wire.LEGACY and d.legacy_placement == "capabilities.experimental.tasks"


def test_a_extension_server_without_the_extension_is_asked_for_legacy_on_a_fresh_connection() -> None:
    # The first process fixed its era at server/discover; the second one speaks 2025-11-25.
    d, made, _ = negotiate(extension(extension=False), legacy())
    assert len(made) == 2 and d.wire is Wire.LEGACY
    assert methods(made)[1][0] == "initialize"
    assert any("the legacy wire answered initialize" in n for n in d.negotiation_notes)


def test_without_either_wire_discovery_keeps_the_extension_answers_and_says_what_it_looked_for() -> None:
    d, made, _ = negotiate(extension(extension=False))
    assert d.wire is Wire.NONE and d.protocol_version == "2026-07-28"
    assert [t["name"] for t in d.tools] == ["slow"]  # the extension tools/list, not the failed legacy attempt's
    assert any("is absent" in s for s in d.looked_for) and any("initialize gave" in s for s in d.looked_for)
    assert d.connection_problem is None and len(made) == 2


def test_expect_wire_legacy_skips_the_era_probe() -> None:
    d, made, _ = negotiate(legacy(), expect_wire="legacy")
    assert d.wire is Wire.LEGACY and methods(made)[0][0] == "initialize"


def test_a_silent_server_is_a_connection_problem_not_a_missing_wire() -> None:
    d, _, wire = negotiate(lambda sent: None)
    assert d.wire is Wire.NONE and d.connection_problem is not None
    assert [f.direction for f in wire][:1] == ["out"]  # what we sent is still on the record


def test_discovery_is_frozen() -> None:
    d, _, _ = negotiate(extension())
    try:
        d.wire = Wire.NONE  # type: ignore[misc]
    except AttributeError:
        return
    raise AssertionError("Discovery must be immutable once negotiation is over")
