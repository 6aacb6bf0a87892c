"""The era words, spelt once: a tasks wire by its name (`legacy`: 2025-11-25, `extension`:
2026-07-28, SEP-2663), and `both` for what belongs to either or runs on each in turn. Every type
of src/ that holds an era is built from these; protocol versions are wire constants (core/wires/,
and the reference server's protocol.py), never an era's name."""

from __future__ import annotations

from typing import Final, Literal, get_args

Era = Literal["legacy", "extension"]
EraOrBoth = Literal[Era, "both"]

ERAS: Final[tuple[Era, ...]] = get_args(Era)
BOTH: Final = "both"
