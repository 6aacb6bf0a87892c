"""Order is declared, never assumed. Separate HTTP requests carry no order of their own, so the
checker waits for the answer of every step a later one depends on (the initialized notification's
202 before any request of the session; an answer to the server's request before the read that
sees its effect) and overlaps only the rest.

The fixture `per-post-workers` handles each POST on its own after a random wait and refuses a
2025-11-25 request that overtook the session's notifications/initialized, so a request sent
before what it depends on was answered fails there by chance: one run shows little, many show it.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import anyio
import pytest
from helpers.paths import BROKEN, DEMO_INPUT
from helpers.processes import HttpServer, http_server

from tasks_conformance.core.wirelog import Frame
from tasks_conformance.server.checks import CATEGORIES, CHECKS
from tasks_conformance.server.runner import Execution, execute
from tasks_conformance.settings.config import build_config

LEGACY = {"protocol_version": "2025-11-25", "tool_name": "confirm_action", "input_responses": DEMO_INPUT}
EXTENSION = {"protocol_version": "2026-07-28", "tool_name": "confirm_action", "input_responses": DEMO_INPUT}
ERAS = {"legacy": LEGACY, "extension": EXTENSION}
RUNS = 50
AT_ONCE = 5  # runs in flight together against the one server: its workers interleave them too


@pytest.fixture(scope="module")
def reordering() -> Iterator[HttpServer]:
    server = http_server([*BROKEN, "--break", "per-post-workers"])
    try:
        yield server
    finally:
        server.stop()


def _runs(url: str, settings: dict[str, Any], n: int) -> list[Execution]:
    configs = [build_config(known_check_ids=tuple(CHECKS), known_categories=CATEGORIES, url=url,
                            timeout_ms=10_000, poll_timeout_ms=10_000, **settings) for _ in range(n)]
    out: list[Execution] = []

    async def main() -> None:
        turns = anyio.Semaphore(AT_ONCE)

        async def one(config: Any) -> None:
            async with turns:
                out.append(await execute(config))

        async with anyio.create_task_group() as tg:
            for config in configs:
                tg.start_soon(one, config)

    anyio.run(main)
    return out


def _not_passed(ex: Execution) -> dict[str, str]:
    return {c.id: f"{c.bucket}: {c.message}" for c in ex.result.checks if c.bucket in ("failed", "could-not-run")}


def _method(frame: Frame) -> str | None:
    msg = frame.json()
    return msg.get("method") if isinstance(msg, dict) else None


def _is_request(frame: Frame) -> bool:
    msg = frame.json()
    return frame.direction == "out" and isinstance(msg, dict) and "method" in msg and "id" in msg


def _is_answer(frame: Frame) -> bool:
    """An answer the checker gave to a request of the server's."""
    msg = frame.json()
    return isinstance(msg, dict) and "id" in msg and "method" not in msg and ("result" in msg or "error" in msg)


def _settled_at(frames: list[Frame], sent: Frame) -> int:
    """The seq of the frame that shows `sent` was taken in: its bodiless 202 in the log."""
    answers = [f.seq for f in frames if f.direction == "in" and f.reply_to == sent.seq]
    assert answers, f"no answer logged for frame {sent.seq} ({_method(sent)})"
    return answers[0]


@pytest.mark.parametrize("era", sorted(ERAS))
def test_no_request_overtakes_the_initialized_notification(reordering: HttpServer, era: str) -> None:
    """The wire log's order: on each 2025-11-25 session, every request after the handshake was sent
    after the initialized notification's 202 was logged; each answer to a server request was
    awaited (its 202 logged) too."""
    (ex,) = _runs(reordering.url, ERAS[era], 1)
    assert not _not_passed(ex), _not_passed(ex)
    assert ex.result.wire is not None
    frames = ex.result.wire.frames()
    notified = [f for f in frames if f.direction == "out" and _method(f) == "notifications/initialized"]
    # Legacy: the run's own session; extension: the probe that opens a 2025-11-25 session beside it.
    assert notified
    for note in notified:
        accepted = _settled_at(frames, note)
        # The session's connection, as its initialize request's tag names it.
        init = [f for f in frames if f.seq < note.seq and _is_request(f) and _method(f) == "initialize"][-1]
        assert init.tag is not None
        later = [f for f in frames if _is_request(f) and f.seq > note.seq and _method(f) != "initialize"
                 and f.tag is not None and f.tag.connection == init.tag.connection]
        assert later, "no request followed the handshake"
        assert all(f.seq > accepted for f in later), [(f.seq, _method(f)) for f in later if f.seq < accepted]
    for answer in [f for f in frames if f.direction == "out" and _is_answer(f)]:
        _settled_at(frames, answer)  # an answer to a server request is awaited too


@pytest.mark.slow
@pytest.mark.parametrize("era", sorted(ERAS))
def test_full_runs_pass_on_a_server_that_handles_posts_in_any_order(reordering: HttpServer, era: str) -> None:
    """50 runs out of 50 pass, each era: what the checker sends after a step that it depends on
    never reaches the server first."""
    results = _runs(reordering.url, ERAS[era], RUNS)
    bad = [problems for ex in results if (problems := _not_passed(ex))]
    assert len(results) == RUNS and not bad, f"{len(bad)} of {RUNS} runs: {bad[:3]}"
