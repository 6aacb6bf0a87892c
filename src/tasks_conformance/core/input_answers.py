"""Which of the user's answers (`--input-responses`, by key) answers one input request: the one
rule the main command's poller and the reference client (`call`) both follow.

By key first. Servers may mint their own keys (e.g. "<taskId>:<hex>"), which no answer written
before the run can name, so an unmatched request then takes the "*" answer, or else the first
answer shaped for its method (an ElicitResult has "action"; a CreateMessageResult has "role" and
"content"; a ListRootsResult has "roots"). A request none of them fits has no answer: what the
caller does then (leave it pending, decline it) is the caller's to say."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from tasks_conformance.core.protocol import get_path

ANSWER_SHAPES = {"elicitation/create": ("action",), "sampling/createMessage": ("role", "content"),
                 "roots/list": ("roots",)}
# How an answer was found: under the request's own key, as the "*" answer, or as the first answer
# shaped for the request's method.
MatchedBy = Literal["key", "*", "shape"]


def match_answer(key: str | None, request: Any, responses: Mapping[str, Any]) -> tuple[Any, MatchedBy] | None:
    """The answer to one input request (`key` None: a request that has no key, as a 2025-11-25
    elicitation has none) and how it was found; None when no answer fits."""
    if key is not None and key in responses:
        return responses[key], "key"
    if "*" in responses:
        return responses["*"], "*"
    answer = _shaped_answer(request, responses)
    return (answer, "shape") if answer is not None else None


def answers_for(pending: Mapping[str, Any], responses: Mapping[str, Any]) -> dict[str, Any]:
    """The answers to the outstanding inputRequests (by key) that `responses` has one for."""
    out: dict[str, Any] = {}
    for key, request in pending.items():
        found = match_answer(key, request, responses)
        if found is not None:
            out[key] = found[0]
    return out


def _shaped_answer(request: Any, responses: Mapping[str, Any]) -> Any:
    method = get_path(request, "method")
    want = ANSWER_SHAPES.get(method) if isinstance(method, str) else None
    if not want:
        return None
    return next((a for a in responses.values() if isinstance(a, dict) and all(k in a for k in want)), None)
