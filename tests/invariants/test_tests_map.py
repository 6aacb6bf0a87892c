"""The tests are a map (CONTRIBUTING, "Adding a test"): each test module in the folder of its kind
and subject, what tests share in tests/helpers/, and no test module importing another."""

from __future__ import annotations

import ast
from collections import Counter
from pathlib import Path

from helpers.paths import ROOT

TESTS = ROOT / "tests"
# unit/<layer>/ names a layer of the package (or tools/: the repository's own scripts);
# e2e/<subject>/ the subject run end to end; interop/ the third-party implementations.
UNIT_LAYERS = {p.name for p in (ROOT / "src" / "tasks_conformance").iterdir() if p.is_dir() and p.name != "schemas"}
KINDS = {"unit": UNIT_LAYERS | {"tools"}, "e2e": {"server", "client", "cli"}, "invariants": set(), "interop": set()}


def _ours(pattern: str) -> list[Path]:
    """The repository's files under tests/ (not the interop suite's installed packages)."""
    return sorted(p for p in TESTS.rglob(pattern)
                  if not any(part.startswith(".") or part == "node_modules" for part in p.relative_to(TESTS).parts))


def _imported(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


def test_every_test_module_is_in_the_folder_of_its_kind_and_subject() -> None:
    misplaced = []
    for path in _ours("test_*.py"):
        parts = path.relative_to(TESTS).parts
        kind, subjects = parts[0], KINDS.get(parts[0])
        if subjects is None or (subjects and (len(parts) != 3 or parts[1] not in subjects)) \
                or (not subjects and len(parts) != 2):
            misplaced.append(str(path.relative_to(ROOT)))
        assert kind != "helpers", path
    assert not misplaced, f"not in tests/unit/<layer>/, tests/e2e/<subject>/, tests/invariants/: {misplaced}"


def test_no_test_module_imports_another_nor_conftest() -> None:
    """Shared code lives in tests/helpers/; a test module imported by another would run its setup
    twice under two names, and its private names would become a contract."""
    strays = {str(p.relative_to(ROOT)): sorted(n for n in _imported(p) if n == "conftest" or n.startswith("test_"))
              for p in [*_ours("test_*.py"), *_ours("helpers/*.py")]}
    assert {k: v for k, v in strays.items() if v} == {}


def test_test_module_names_are_unique() -> None:
    """pytest imports test modules by their base name (no package __init__), so two of one name clash."""
    twice = [name for name, n in Counter(p.name for p in _ours("test_*.py")).items() if n > 1]
    assert twice == []
