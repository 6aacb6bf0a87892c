"""Record the normalised JSON reports tests/invariants/test_report_stability.py compares against.

    python scripts/record_reports.py [--src PATH] [--runs N] [--workers N] [--case ID ...] [--check]

--src is the `src` directory of the code to record (default: this tree's); the fixtures come from
the same tree (PATH/..). Use a worktree of the commit before a change:

    git worktree add /tmp/wt-before COMMIT
    python scripts/record_reports.py --src /tmp/wt-before/src
    git worktree remove --force /tmp/wt-before

Every case runs --runs times (default 2, one full pass after another, each on a small pool) with
the test module's own runner and normaliser; the first pass is written, one small JSON a case, to
tests/data/reports-before/. Cases whose normalised reports differ between passes are printed with
the diff (they are flaky: mask what varies in the normaliser, or list them in FLAKY), and the exit
code is 1. --check compares with the recorded files instead of writing them.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
import time
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parent.parent


def _module() -> ModuleType:
    sys.path.insert(0, str(ROOT / "tests"))  # the test module's helpers
    path = ROOT / "tests" / "invariants" / "test_report_stability.py"
    spec = importlib.util.spec_from_file_location("test_report_stability", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--src", type=Path, default=ROOT / "src", help="the src/ directory of the code to record")
    parser.add_argument("--out", type=Path, default=None, help="where to write (default: tests/data/reports-before)")
    parser.add_argument("--runs", type=int, default=2, help="passes over every case, compared (default 2)")
    parser.add_argument("--workers", type=int, default=None, help="cases at once (default: the test's pool size)")
    parser.add_argument("--case", action="append", default=[], help="record only this case id (repeatable)")
    parser.add_argument("--check", action="store_true", help="compare with the recorded files; write nothing")
    parser.add_argument("--dump", type=Path, default=None,
                        help="also write every pass's raw and normalised reports here (to study what varies)")
    args = parser.parse_args(argv)

    m = _module()
    src = args.src.resolve()
    if not (src / "tasks_conformance" / "__init__.py").exists():
        parser.error(f"{src} holds no tasks_conformance package")
    out_dir = args.out or m.RECORDED
    cases = [m.BY_ID[c] for c in args.case] if args.case else m.CASES
    workers = args.workers or m.WORKERS

    passes = []
    for n in range(max(1, args.runs)):
        started = time.monotonic()
        passes.append(m.run_all(cases, src, src.parent, workers=workers))
        slowest = max(passes[-1].values(), key=lambda o: o.elapsed_s)
        print(f"pass {n + 1}: {len(cases)} cases in {time.monotonic() - started:.0f}s "
              f"(slowest {slowest.case.id}: {slowest.elapsed_s:.1f}s)", file=sys.stderr)

    if args.dump:
        for n, p in enumerate(passes, 1):
            for cid, o in p.items():
                d = args.dump / f"pass{n}"
                d.mkdir(parents=True, exist_ok=True)
                if o.raw is not None:
                    (d / f"{cid}.raw.json").write_text(json.dumps(o.raw, indent=1), encoding="utf-8")
                if o.report is not None:
                    (d / f"{cid}.json").write_text(m.dumps(o.report), encoding="utf-8")

    status = 0
    errors = [o for o in passes[0].values() if o.error]
    for o in errors:
        print(f"ERROR {o.case.id}: {o.error}", file=sys.stderr)
        status = 1
    flaky = []
    for case in cases:
        reports = [p[case.id].report for p in passes]
        if any(r is None for r in reports):
            continue
        for n, r in enumerate(reports[1:], 2):
            a, b = m.without_flaky(case.id, reports[0]), m.without_flaky(case.id, r)
            if a != b:
                flaky.append(case.id)
                print(f"FLAKY {case.id} (pass 1 vs pass {n}):\n{m.diff(a, b, ('pass 1', f'pass {n}'))}")
                break
    if flaky:
        status = 1
        print(f"{len(flaky)} case(s) differ between identical runs: {', '.join(flaky)}", file=sys.stderr)

    if args.check:
        for case in cases:
            got = passes[0][case.id].report
            path = out_dir / f"{case.id}.json"
            if got is None or not path.exists():
                continue
            before = m.without_flaky(case.id, json.loads(path.read_text(encoding="utf-8")))
            if before != m.without_flaky(case.id, got):
                status = 1
                print(f"DIFFERS {case.id}:\n{m.diff(before, m.without_flaky(case.id, got), ('recorded', 'now'))}")
        return status

    out_dir.mkdir(parents=True, exist_ok=True)
    written = 0
    for case in cases:
        report = passes[0][case.id].report
        if report is None:
            continue
        (out_dir / f"{case.id}.json").write_text(m.dumps(report), encoding="utf-8")
        written += 1
    size = sum(p.stat().st_size for p in out_dir.glob("*.json"))
    print(f"wrote {written} reports to {out_dir} ({size / 1024:.0f} KiB in all)", file=sys.stderr)
    return status


if __name__ == "__main__":
    sys.exit(main())
