"""Answers to the requests a server sends the client: ping, roots/list, elicitation, sampling."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tasks_conformance.core.rpc.peer import ServerRequestHandler
from tasks_conformance.settings.config import RunConfig

Answer = tuple[Any, dict[str, Any] | None]  # (result, error)


def make_handlers(config: RunConfig) -> dict[str, ServerRequestHandler]:
    async def ping(method: str, params: Any) -> Answer:
        return {}, None

    async def roots(method: str, params: Any) -> Answer:
        cwd = Path(config.cwd or Path.cwd()).resolve()
        return {"roots": [{"uri": cwd.as_uri(), "name": cwd.name or "/"}]}, None

    async def elicit(method: str, params: Any) -> Answer:
        if config.elicitation_response is not None:
            return config.elicitation_response, None
        # On the legacy wire the task's question arrives as an elicitation; answer it from
        # --input-responses (the first answer shaped like an ElicitResult).
        for answer in (config.input_responses or {}).values():
            if isinstance(answer, dict) and "action" in answer:
                return answer, None
        return {"action": "decline"}, None

    async def sampling(method: str, params: Any) -> Answer:
        if config.sampling_response is not None:
            return config.sampling_response, None
        return None, {"code": -32601, "message": "sampling is not supported by tasks-conformance"}

    return {"ping": ping, "roots/list": roots, "elicitation/create": elicit, "sampling/createMessage": sampling}
