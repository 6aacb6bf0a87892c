"""The checks, one module per spec area. Importing this package registers all of them;
registry_problems() says what in the registry is inconsistent (every requirement id, probe and
precondition a check names must exist). The test suite holds it to none, so a run does not pay for
reading the requirements registry before its first frame (reports read it, once, at the end)."""

import importlib

from tasks_conformance.server.checks.engine.registry import CHECKS, CheckSpec, validate

CATEGORIES = ("dispatch", "creation", "lifecycle", "base")
# The check modules, by the spec area most of their checks judge (each check declares its own,
# core/areas.py); their order is the report order within a category.
MODULES = ("liveness", "discovery", "declaration", "framing", "creation", "task_object", "status", "results",
           "routing", "cancel", "input", "subscriptions", "capability", "base_protocol", "listing", "association",
           "progress", "durability", "security", "input_requests", "eras")
for _module in MODULES:
    importlib.import_module(f"tasks_conformance.server.checks.{_module}")


def ordered_checks() -> list[CheckSpec]:
    """Every check in report order: by category, then in the order the area modules define them."""
    return sorted(CHECKS.values(), key=lambda c: CATEGORIES.index(c.category))


def registry_problems() -> list[str]:
    """Every inconsistency of the registered checks; empty when they are sound."""
    # Probe names are checked against the typed records (one per probe; a test keeps the two
    # in step), so listing the checks does not import the probes' network layers.
    from tasks_conformance.core.requirements import load
    from tasks_conformance.server.evidence.records import RECORD_TYPES

    registry = load()
    problems = validate(CHECKS, set(RECORD_TYPES), set(registry), {r.id for r in registry.values() if r.level == "MAY"})
    problems += [f"{c.id}: unknown category {c.category!r}" for c in CHECKS.values() if c.category not in CATEGORIES]
    # The probes the checks name: each declares what it reads (imported here, not when listing).
    from tasks_conformance.server.probes import probe_problems

    return problems + probe_problems()


__all__ = ["CATEGORIES", "CHECKS", "MODULES", "CheckSpec", "ordered_checks", "registry_problems"]
