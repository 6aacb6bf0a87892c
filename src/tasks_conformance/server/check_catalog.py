"""The check registry as the command line shows and validates it: the catalog of check ids and
categories that --check-id/--category (and baselines) are checked against, and --list-checks."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from tasks_conformance import __version__
from tasks_conformance.settings.config import Catalog

if TYPE_CHECKING:
    from tasks_conformance.server.checks import CheckSpec


def catalog() -> Catalog:
    """Every check id, in report order, the categories and the spec areas."""
    from tasks_conformance.server.checks import CATEGORIES, ordered_checks

    checks = ordered_checks()
    return Catalog(tuple(c.id for c in checks), CATEGORIES, tuple(dict.fromkeys(c.area for c in checks)))


def listing(*, as_json: bool) -> str:
    """--list-checks: a table for people, or the registry as JSON for scripts."""
    from tasks_conformance.server.checks import CATEGORIES, ordered_checks

    if as_json:
        return json.dumps({
            "toolVersion": __version__,
            "categories": list(CATEGORIES),
            "checks": [check_document(spec) for spec in ordered_checks()],
        }, indent=2)
    rows = []
    for spec in ordered_checks():
        wires = "/".join(sorted(spec.wires - {"none"}))
        # The probe role whose tool the check calls ("-": none), before the title.
        rows.append(f"{spec.id:<48} {spec.category:<10} {wires:<17} {spec.probe_role or '-':<10} {spec.title}")
    return "\n".join(rows)


def check_document(spec: CheckSpec) -> dict[str, Any]:
    """One registry entry as JSON: what it checks, on which wires and transports, and what it needs."""
    return {
        "id": spec.id,
        "area": spec.area,
        "category": spec.category,
        "title": spec.title,
        "description": spec.description,
        "wires": sorted(spec.wires),  # "none": it also runs when no tasks wire was found
        "requirements": {wire: list(ids) for wire, ids in spec.requirements.items()},
        "probes": list(spec.probes),
        "transports": sorted(spec.transports) if spec.transports is not None else None,  # None: any
        "needs": spec.needs,
        "role": spec.probe_role,  # the probe role whose tool it calls (None: it calls no tool)
    }
