"""What the handshake established, frozen once negotiation is over. The raw replies stay, for
checks to judge."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from tasks_conformance.core.causes import CauseKind
from tasks_conformance.core.wires import Wire, WireDialect, dialect_for

if TYPE_CHECKING:
    from tasks_conformance.core.rpc.peer import Reply


@dataclass(frozen=True)
class Discovery:
    protocol_version: str | None = None  # the protocol version in use, or None when nothing answered
    wire: Wire = Wire.NONE
    discover_reply: Reply | None = None
    initialize_reply: Reply | None = None
    tools_replies: tuple[Reply, ...] = ()
    tools: tuple[dict[str, Any], ...] = ()
    # tools/list entries that are not a tool object with a string name (or a `tools` that is not
    # a list): a listing with any cannot say which names exist.
    tools_unreadable: int = 0
    server_info: dict[str, Any] | None = None
    server_capabilities: dict[str, Any] | None = None
    legacy_placement: str | None = None  # "capabilities.tasks" | "capabilities.experimental.tasks"
    looked_for: tuple[str, ...] = ()  # what was looked for on each era, when no wire was found
    connection_problem: str | None = None  # could not talk at all
    connection_problem_kind: CauseKind = CauseKind.UNREACHABLE  # what to change about it
    negotiation_notes: tuple[str, ...] = ()
    # With --expect-wire and no wire of that era: the wire the server speaks instead, if any
    # (looked at only to say so; the run does not switch to it).
    other_wire: Wire = Wire.NONE
    other_protocol_version: str | None = None

    @property
    def dialect(self) -> WireDialect | None:
        return dialect_for(self.wire)

    @property
    def tools_listed(self) -> bool:
        """tools/list answered (its last page) so the tool names are known."""
        return bool(self.tools_replies) and self.tools_replies[-1].ok

    @property
    def names_known(self) -> bool:
        """tools/list answered with readable entries only, so a name it lacks does not exist."""
        return self.tools_listed and not self.tools_unreadable

    @property
    def lists_no_tool(self) -> bool:
        """tools/list answered, readably, with no tool at all."""
        return self.names_known and not self.tools

    def tool_named(self, name: str | None) -> dict[str, Any] | None:
        return next((t for t in self.tools if t.get("name") == name), None)
