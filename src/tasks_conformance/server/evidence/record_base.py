"""What every probe record shares (the base class) and the small values records hold."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from tasks_conformance.core.causes import Reason
from tasks_conformance.core.wires import UnknownIdProbe

if TYPE_CHECKING:
    # Annotations only: listing the checks must not import the JSON-RPC and transport layers.
    from tasks_conformance.core.rpc.peer import Reply


@dataclass
class ProbeRecord:
    probe: ClassVar[str]
    ran: bool = False
    not_run: Reason | None = None  # why the probe did not run (a precondition fell), with its fix
    harness_problem: str | None = None  # our own fault (e.g. an override the transport cannot carry)
    harness_traceback: str | None = None  # where our own fault was raised: --debug prints it
    elapsed_ms: int = 0

    def all_replies(self) -> list[Reply]:
        """Every reply the record holds, in the order they were asked."""
        from tasks_conformance.core.rpc.peer import Reply

        out: list[Reply] = []
        for value in vars(self).values():
            if isinstance(value, Reply):
                out.append(value)
            elif isinstance(value, list):
                out.extend(v for v in value if isinstance(v, Reply))
                out.extend(v.reply for v in value if isinstance(v, (Update, UnknownIdAnswer)))
            elif isinstance(value, dict):
                out.extend(v for v in value.values() if isinstance(v, Reply))
        return out


@dataclass(frozen=True)
class Update:
    """One tasks/update sent while polling, with the inputRequests keys it answered."""

    keys: tuple[str, ...]
    reply: Reply


@dataclass(frozen=True)
class UnknownIdAnswer:
    asked: UnknownIdProbe
    reply: Reply


class InputTie(enum.StrEnum):
    """What ties a server->client request (elicitation, sampling) to the task being followed."""

    META = "meta"  # its related-task _meta names the task
    STREAM = "stream"  # it came on the stream of a tasks/result for the task (HTTP)
    # It arrived while the task was live, on no stream that names a request (stdio), while no
    # tools/call of ours, which may ask for input synchronously, was outstanding.
    LIVE = "live"
    # The same, but while a tools/call of ours was outstanding: it may be that call's own question
    # (stdio cannot tell), so it shows the task may have asked, and its _meta is not judged.
    UNTOLD = "untold"


@dataclass(frozen=True)
class InputRequestSeen:
    """One elicitation/create or sampling/createMessage tied to the task (S-LEG-MUST-13)."""

    seq: int
    method: str
    tie: InputTie
    names_task: bool  # its _meta carries the related-task key naming the task
