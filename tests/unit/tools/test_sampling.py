"""The fast run's sample of the matrices (tests/helpers/sampling.py): a fixed share of each marked
test's cases, chosen by the case alone, at least one per matrix, and nothing unmarked left out."""

from __future__ import annotations

from dataclasses import dataclass, field

from helpers.paths import ROOT
from helpers.sampling import MARKER, SHARE, kept, left_out, machine_bound


@dataclass
class _Callspec:
    id: str


@dataclass
class _Item:
    """What sampling reads of a pytest item: its id, function name, parameters and markers."""

    nodeid: str
    originalname: str
    callspec: _Callspec
    markers: set[str] = field(default_factory=set)

    def get_closest_marker(self, name: str) -> object | None:
        return name if name in self.markers else None


def _cases(function: str, ids: list[str], marked: bool = True) -> list[_Item]:
    return [_Item(f"tests/e2e/test_x.py::{function}[{i}]", function, _Callspec(i), {MARKER} if marked else set())
            for i in ids]


def _out(items: list[_Item]) -> list[str]:
    return [i.nodeid for i in left_out(items)]  # type: ignore[arg-type]


IDS = [f"fixture-{n}->check-{n % 7}-stdio" for n in range(200)]


def test_a_matrix_keeps_the_cases_its_ids_choose_and_about_its_share() -> None:
    items = _cases("test_m", IDS)
    out = set(_out(items))
    kept_ids = [i.callspec.id for i in items if i.nodeid not in out]
    assert kept_ids == [i for i in IDS if kept(i)]
    assert len(IDS) / SHARE / 2 < len(kept_ids) < len(IDS) / SHARE * 2


def test_a_case_keeps_its_lot_whatever_the_other_cases_and_their_order() -> None:
    whole = set(_out(_cases("test_m", IDS)))
    part = set(_out(_cases("test_m", list(reversed(IDS[:50])))))
    assert part == {n for n in whole if any(n.endswith(f"[{i}]") for i in IDS[:50])}


def test_a_matrix_none_of_whose_ids_is_chosen_still_runs_one_case() -> None:
    ids = [i for i in IDS if not kept(i)][:5]
    assert len(ids) == 5
    out = _out(_cases("test_m", ids))
    assert len(out) == 4 and f"tests/e2e/test_x.py::test_m[{sorted(ids)[0]}]" not in out


def test_an_unmarked_test_loses_no_case() -> None:
    assert _out(_cases("test_u", IDS, marked=False)) == []


def test_each_matrix_is_sampled_on_its_own() -> None:
    ids = [i for i in IDS if not kept(i)][:3]
    out = _out(_cases("test_a", ids) + _cases("test_b", ids))
    assert len(out) == 4  # each keeps one


def test_a_case_id_naming_the_checkout_is_found() -> None:
    items = _cases("test_m", ["/home/me/repo/.venv/bin/python -m server-legacy", "reference-legacy"])
    items += _cases("test_u", ["/home/me/repo/x"], marked=False)
    bound = machine_bound(items, ["/home/me/repo", ""])  # type: ignore[arg-type]
    assert bound == ["tests/e2e/test_x.py::test_m[/home/me/repo/.venv/bin/python -m server-legacy]"]


def test_the_docs_name_the_share_the_sample_keeps() -> None:
    """The README, CONTRIBUTING and the marker's help (pyproject.toml) say how much of a matrix the
    fast run keeps: the share sampling.py keeps (the marker's help said four after it became eight)."""
    words = {2: "two", 4: "four", 8: "eight", 16: "sixteen"}
    said = f"one case in {words[SHARE]}"
    for name in ("README.md", "CONTRIBUTING.md", "pyproject.toml"):
        text = " ".join((ROOT / name).read_text(encoding="utf-8").split())
        assert said in text, f"{name} does not say {said!r}"
        assert not [w for n, w in words.items() if n != SHARE and f"one case in {w}" in text], name
