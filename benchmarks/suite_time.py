"""The test suite's time by file and its 20 slowest tests, from the last pytest run (tests/conftest.py
writes .pytest_cache/tasks-conformance-times.json after every run; a --full or CI run prints it too).

    python -m pytest -q            # or --full
    python benchmarks/suite_time.py [--files 30]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
from suite_times import FILES, TIMES_FILE, lines  # noqa: E402


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--files", type=int, default=FILES)
    args = parser.parse_args(argv)
    path = ROOT / TIMES_FILE
    if not path.is_file():
        print(f"no {TIMES_FILE}: run the tests first (python -m pytest -q)", file=sys.stderr)
        return 2
    print("\n".join(lines(json.loads(path.read_text(encoding="utf-8")), args.files)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
