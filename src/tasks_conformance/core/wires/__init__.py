"""The one home of era knowledge: a WireDialect per tasks wire. Outside this package and
`session/`, no code compares era names; it asks the dialect of the wire in use."""

from __future__ import annotations

from tasks_conformance.core.wires.base import (
    DIALECT_TYPES,
    TASK_SUPPORT_VALUES,
    CreatedTask,
    Level,
    UnknownIdProbe,
    Wire,
    WireDialect,
    listed_task_support,
    task_object,
    task_support,
)
from tasks_conformance.core.wires.extension import ExtensionDialect
from tasks_conformance.core.wires.legacy import LegacyDialect

DIALECT_TYPES.extend([LegacyDialect, ExtensionDialect])
DIALECTS: dict[Wire, WireDialect] = {d.wire: d() for d in DIALECT_TYPES}
TASK_WIRES: tuple[Wire, ...] = tuple(DIALECTS)
# The protocol version each tasks wire is spoken on, as sessions send it.
PROTOCOL_LEGACY = LegacyDialect.protocol_version
PROTOCOL_EXTENSION = ExtensionDialect.protocol_version


def dialect_for(wire: Wire) -> WireDialect | None:
    """The dialect of a tasks wire; None for Wire.NONE."""
    return DIALECTS.get(wire)


def dialect_for_version(protocol_version: str | None) -> WireDialect | None:
    return next((d for d in DIALECTS.values() if d.protocol_version == protocol_version), None)


__all__ = [
    "DIALECTS",
    "PROTOCOL_EXTENSION",
    "PROTOCOL_LEGACY",
    "TASK_SUPPORT_VALUES",
    "TASK_WIRES",
    "CreatedTask",
    "ExtensionDialect",
    "LegacyDialect",
    "Level",
    "UnknownIdProbe",
    "Wire",
    "WireDialect",
    "dialect_for",
    "dialect_for_version",
    "listed_task_support",
    "task_object",
    "task_support",
]
