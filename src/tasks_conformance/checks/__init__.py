"""The checks, one module per category. Importing this package registers all of them."""

from tasks_conformance.checks import creation, dispatch, lifecycle
from tasks_conformance.checks.registry import CHECKS, CheckSpec

CATEGORIES = ("dispatch", "creation", "lifecycle")


def ordered_checks() -> list[CheckSpec]:
    """Every check in report order: by category, then in the order each module defines them."""
    return sorted(CHECKS.values(), key=lambda c: CATEGORIES.index(c.category))


__all__ = ["CATEGORIES", "CHECKS", "CheckSpec", "creation", "dispatch", "lifecycle", "ordered_checks"]
