"""The client mode's scripted 2026-07-28 server answers what a compliant server answers: its
server/discover, tools/list and prompts/get results validate against the official 2026-07-28
schema. A real SDK client (@modelcontextprotocol/client 2.4.0) validates them and stopped before
its first tools/call when server/discover and tools/list lacked the CacheableResult fields
(ttlMs, cacheScope), so every scenario was judged on a client that never got to call."""

from __future__ import annotations

import json
from typing import Any

import jsonschema
import pytest
from helpers.paths import SHARED

from tasks_conformance.client.scenarios import BY_NAME
from tasks_conformance.client.scripted.extension import ScriptedServer
from tasks_conformance.core.protocol import EXT_TASKS, META_CLIENT_CAPS, META_PROTOCOL_VERSION
from tasks_conformance.core.wirelog import WireLog

SPEC = SHARED / "spec-data"
pytestmark = pytest.mark.skipif(not SPEC.is_dir(), reason="../shared/spec-data is not present")
META = {META_PROTOCOL_VERSION: "2026-07-28", META_CLIENT_CAPS: {"extensions": {EXT_TASKS: {}}}}


def _validator(definition: str) -> jsonschema.Draft202012Validator:
    doc = json.loads((SPEC / "core-2026-07-28.schema.json").read_text())
    return jsonschema.Draft202012Validator({**doc, "$ref": f"#/$defs/{definition}"})


def _answer(method: str, params: dict[str, Any]) -> Any:
    server = ScriptedServer(BY_NAME["tasks-client-lifecycle"].script, WireLog())
    status, body = server.answer({"jsonrpc": "2.0", "id": 1, "method": method, "params": {**params, "_meta": META}})
    assert status == 200 and body is not None and "result" in body, body
    return body["result"]


@pytest.mark.parametrize("method,params,definition", [
    ("server/discover", {}, "DiscoverResult"),
    ("tools/list", {}, "ListToolsResult"),
    ("prompts/get", {"name": "scripted_prompt"}, "GetPromptResult"),
])
def test_scripted_server_results_validate(method: str, params: dict[str, Any], definition: str) -> None:
    _validator(definition).validate(_answer(method, params))


def test_discover_names_the_server_in_meta() -> None:
    assert _answer("server/discover", {})["_meta"]["io.modelcontextprotocol/serverInfo"]["name"]
