"""`python -m tasks_conformance.settings`: rewrite the generated `RunSettings` (the API's typed
keywords) in settings/__init__.py from the schema; `--check` only says whether it is stale."""

from __future__ import annotations

import sys
from pathlib import Path

from tasks_conformance.settings import API, SETTINGS

BEGIN, END = "    # --- generated: RunSettings ---\n", "    # --- end: RunSettings ---\n"
SOURCE = Path(__file__).with_name("__init__.py")


def typed_keywords() -> str:
    """The TypedDict of the API's keywords, as source."""
    lines = ["    class RunSettings(TypedDict, total=False):",
             '        """The keywords of `run`/`run_async`: the settings, in their Python forms (see RunOptions)."""',
             ""]
    lines += [f"        {s.name}: {s.kind.api}" for s in SETTINGS.values() if API in s.applies]
    return "\n".join(lines) + "\n"


def current(text: str) -> str:
    return text[text.index(BEGIN) + len(BEGIN):text.index(END)]


def main(argv: list[str]) -> int:
    text = SOURCE.read_text(encoding="utf-8")
    fresh = typed_keywords()
    if current(text) == fresh:
        return 0
    if "--check" in argv:
        print(f"{SOURCE} is stale: run python -m tasks_conformance.settings", file=sys.stderr)
        return 1
    head, tail = text.split(BEGIN)
    SOURCE.write_text(head + BEGIN + fresh + tail[tail.index(END):], encoding="utf-8")
    print(f"rewrote RunSettings in {SOURCE}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
