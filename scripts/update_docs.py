"""Regenerate the parts of the docs that come from the registry (the README's table of checks).

    python scripts/update_docs.py          # rewrite them
    python scripts/update_docs.py --check  # exit 1 when they are stale (what the test asks)
"""

from __future__ import annotations

import sys
from pathlib import Path

from tasks_conformance.checks.catalogue import checks_table, replace_section

README = Path(__file__).resolve().parent.parent / "README.md"


def main(argv: list[str]) -> int:
    text = README.read_text(encoding="utf-8")
    fresh = replace_section(text, checks_table())
    if fresh == text:
        return 0
    if "--check" in argv:
        print("README.md's table of checks is stale: run python scripts/update_docs.py", file=sys.stderr)
        return 1
    README.write_text(fresh, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
