"""The fast run's sample of the matrices: a test marked `matrix` runs one assertion over many cases
(every breaking fixture, every scenario, every requirement), and the fast run keeps a fixed share
of its cases; `--full` (what CI runs) and `-m matrix` run every case.

Which cases a run keeps depends on the case alone (a hash of its parameter id), never on the order
or the other cases: adding a fixture changes no other case's lot, and two fast runs of one tree run
the same cases. Each matrix keeps at least one case, so none goes untried in the fast run.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterable

import pytest

MARKER = "matrix"
# One case in SHARE is kept. Measured on 2026-12-07 (2 cores): the marked matrices held some 205 s
# of the fast run's 594 s of test time, 47 s of its CPU, at one in four. One in eight (2026-12-07,
# issue 32): the fast run went from 2175 tests to 2105 (140 s to 115 s on one tree; 131 s on a fresh
# clone, within the 130 to 141 s spread seen there before); the cases of a matrix test one assertion
# each, so the fast run still tries every matrix, and --full every case.
SHARE = 8


def kept(case_id: str) -> bool:
    return zlib.crc32(case_id.encode("utf-8")) % SHARE == 0


def _case_id(item: pytest.Item) -> str:
    callspec = getattr(item, "callspec", None)
    return callspec.id if callspec is not None else item.nodeid


def _matrix(item: pytest.Item) -> str | None:
    """The matrix an item is a case of (its module and function), None if it is no matrix's case."""
    if item.get_closest_marker(MARKER) is None:
        return None
    return f"{item.nodeid.split('::', 1)[0]}::{getattr(item, 'originalname', None) or item.name}"


def machine_bound(items: Iterable[pytest.Item], paths: Iterable[str]) -> list[str]:
    """The matrices' case ids that name one of `paths` (the checkout, the interpreter): such an
    id, and so the sample, would change with where the tree is checked out."""
    roots = [p for p in paths if p]
    return [item.nodeid for item in items
            if _matrix(item) is not None and any(root in _case_id(item) for root in roots)]


def left_out(items: Iterable[pytest.Item]) -> list[pytest.Item]:
    """The cases of the marked matrices that the fast run leaves out."""
    by_matrix: dict[str, list[pytest.Item]] = {}
    for item in items:
        matrix = _matrix(item)
        if matrix is not None:
            by_matrix.setdefault(matrix, []).append(item)
    out: list[pytest.Item] = []
    for cases in by_matrix.values():
        keep = [c for c in cases if kept(_case_id(c))] or sorted(cases, key=_case_id)[:1]
        kept_ids = set(map(id, keep))
        out += [c for c in cases if id(c) not in kept_ids]
    return out
