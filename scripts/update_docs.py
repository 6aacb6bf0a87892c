"""Regenerate the docs that come from the registry and the requirements file: the README's table
of checks and docs/requirements.md (the coverage matrix).

    python scripts/update_docs.py          # rewrite what is stale
    python scripts/update_docs.py --check  # exit 1 naming what is stale (what the tests ask)
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

from tasks_conformance.checks.catalogue import checks_table, replace_section
from tasks_conformance.coverage import markdown

ROOT = Path(__file__).resolve().parent.parent

# Each generated document: its path and how its fresh text follows from the current text.
GENERATED: dict[str, Callable[[str], str]] = {
    "README.md": lambda text: replace_section(text, checks_table()),
    "docs/requirements.md": lambda _text: markdown(),
}


def main(argv: list[str]) -> int:
    stale = []
    for name, regenerate in GENERATED.items():
        path = ROOT / name
        text = path.read_text(encoding="utf-8") if path.exists() else ""
        fresh = regenerate(text)
        if fresh != text:
            stale.append(name)
            if "--check" not in argv:
                path.write_text(fresh, encoding="utf-8")
    if stale and "--check" in argv:
        print(f"stale: {', '.join(stale)}; run python scripts/update_docs.py", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
