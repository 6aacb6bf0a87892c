"""The era words, spelt once: a tasks wire by its name (`legacy`: 2025-11-25, `extension`:
2026-07-28, SEP-2663), `both` for what belongs to either or runs on each in turn, and `auto` for
a run that negotiates one. Every type of src/ that holds an era is built from these; protocol
versions are wire constants (core/wires/, and the reference server's protocol.py), never an
era's name.

Every command's `--era` takes these words in the one meaning, each the ones it can act on: a run
of the checks against a server negotiates (`auto`), pins one wire or runs both in turn; a client
run plays one wire or both; `call` makes its one call on one wire; the reference server serves one
wire or both."""

from __future__ import annotations

from typing import Final, Literal, get_args

Era = Literal["legacy", "extension"]
EraOrBoth = Literal[Era, "both"]

ERAS: Final[tuple[Era, ...]] = get_args(Era)
BOTH: Final = "both"
AUTO: Final = "auto"

# What each command's --era takes, its default first.
SERVER_RUN_ERAS: Final = (AUTO, *ERAS, BOTH)  # the main command, demo, a config file, a suite target
CLIENT_RUN_ERAS: Final = ("extension", "legacy", BOTH)  # `client`, a client target
CALL_ERAS: Final = ("extension", "legacy")  # `call`
SERVE_ERAS: Final = (BOTH, *ERAS)  # `serve-reference`
