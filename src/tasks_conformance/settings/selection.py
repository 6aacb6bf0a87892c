"""Which checks a server run selects: --profile, --check-id, --category and --area, each name
checked against the catalog of the registry (settings/ never imports the checks: the command line
passes the catalog in, and an empty one checks no names)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from tasks_conformance.core.areas import matching
from tasks_conformance.core.errors import UsageError
from tasks_conformance.core.profiles import PROFILES

if TYPE_CHECKING:
    from tasks_conformance.settings import RunOptions


@dataclass(frozen=True)
class Catalog:
    """The check ids, categories and spec areas a selection may name; empty means "do not check names"."""

    check_ids: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    areas: tuple[str, ...] = ()


NO_CATALOG = Catalog()  # checks no names (the checks are not imported for it)


def selection(o: RunOptions, catalog: Catalog) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    """--profile, then --check-id and --category without repeats, each name checked against the
    catalog; a --check-id must belong to the profile (they narrow it, never widen it)."""
    profile = PROFILES.get(o.profile)
    if profile is None:
        raise UsageError(f"unknown --profile {o.profile!r}; valid profiles: {', '.join(PROFILES)}")
    ids = tuple(dict.fromkeys(o.check_ids))
    unknown = [i for i in ids if catalog.check_ids and i not in catalog.check_ids]
    if unknown:
        raise UsageError(f"unknown --check-id {', '.join(unknown)}; valid ids: {', '.join(catalog.check_ids)}")
    outside = [i for i in ids if not profile.accepts(i)]
    if outside:
        raise UsageError(
            f"--check-id {', '.join(outside)} is not in profile {o.profile} ({profile.id}); "
            "use --profile standard to run any check"
        )
    cats = tuple(dict.fromkeys(o.categories))
    bad = [c for c in cats if catalog.categories and c not in catalog.categories]
    if bad:
        raise UsageError(f"unknown --category {', '.join(bad)}; valid categories: {', '.join(catalog.categories)}")
    areas = tuple(dict.fromkeys(o.areas))
    none = [a for a in areas if catalog.areas and not matching(a, catalog.areas)]
    if none:
        raise UsageError(f"--area {', '.join(none)} names no spec area; the areas: {', '.join(catalog.areas)}")
    return ids, cats, areas
