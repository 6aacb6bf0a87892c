"""Regenerate docs/requirements.md, the coverage matrix, from requirements.toml and the checks.

    python scripts/update_requirements_doc.py          # rewrite it
    python scripts/update_requirements_doc.py --check  # exit 1 when it is stale (what the test asks)
"""

from __future__ import annotations

import sys
from pathlib import Path

from tasks_conformance.coverage import markdown

DOC = Path(__file__).resolve().parent.parent / "docs" / "requirements.md"


def main(argv: list[str]) -> int:
    fresh = markdown()
    old = DOC.read_text(encoding="utf-8") if DOC.exists() else None
    if fresh == old:
        return 0
    if "--check" in argv:
        print("docs/requirements.md is stale: run python scripts/update_requirements_doc.py", file=sys.stderr)
        return 1
    DOC.write_text(fresh, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
