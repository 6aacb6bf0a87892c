"""The checks, one module per category. Importing this package registers all of them."""

from tasks_conformance.checks import dispatch  # noqa: I001 - registration order is report order
from tasks_conformance.checks import creation, lifecycle  # noqa: F401
from tasks_conformance.checks.registry import CHECKS, CheckSpec

CATEGORIES = ("dispatch", "creation", "lifecycle")

__all__ = ["CATEGORIES", "CHECKS", "CheckSpec"]
