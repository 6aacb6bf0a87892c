"""The test suite's time by file and its 20 slowest tests, from the last pytest run (tests/conftest.py
writes .pytest_cache/tasks-conformance-times.json after every run; a --full or CI run prints it too).
`--record` keeps a whole run's figures in docs/suite-times.json and writes them into the README's
set-up section, which a test holds equal to that file.

    python -m pytest -q            # or --full
    python benchmarks/suite_time.py [--files 30]
    python benchmarks/suite_time.py --record [TIMES_FILE]   # after a fast run, or a fresh clone's .ci/run
"""

from __future__ import annotations

import argparse
import datetime
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
from helpers.suite_times import FILES, RECORDED_FILE, TIMES_FILE, lines, recorded_entry, with_readme_block  # noqa: E402

README = ROOT / "README.md"


def record(times: Path, recorded_file: Path = ROOT / RECORDED_FILE, readme: Path = README) -> str:
    """Keep the run of `times` as its kind's figures and regenerate the README's block."""
    doc = json.loads(times.read_text(encoding="utf-8"))
    entry = recorded_entry(doc, datetime.date.today().isoformat())
    recorded = json.loads(recorded_file.read_text(encoding="utf-8"))
    recorded[doc["run"]] = entry
    recorded_file.write_text(json.dumps(recorded, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    readme.write_text(with_readme_block(readme.read_text(encoding="utf-8"), recorded), encoding="utf-8")
    run = f"the {doc['run']} run ({entry['tests']} tests in {entry['wallSeconds']} s)"
    return f"recorded {run} in {RECORDED_FILE} and README.md"


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--files", type=int, default=FILES)
    parser.add_argument("--record", nargs="?", const=str(ROOT / TIMES_FILE), metavar="TIMES_FILE",
                        help="keep this whole run's figures for the README (default: the last run's times file)")
    args = parser.parse_args(argv)
    path = Path(args.record) if args.record else ROOT / TIMES_FILE
    if not path.is_file():
        print(f"no {path}: run the tests first (python -m pytest -q)", file=sys.stderr)
        return 2
    if args.record:
        try:
            print(record(path))
        except ValueError as exc:
            print(f"suite_time: {exc}", file=sys.stderr)
            return 2
        return 0
    print("\n".join(lines(json.loads(path.read_text(encoding="utf-8")), args.files)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
