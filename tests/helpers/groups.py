"""The slow groups the fast run leaves out, and what a module running all its cases at once may
assume about its worker."""

from __future__ import annotations

import os
from types import ModuleType

# The slow groups: `python -m pytest -q` leaves them out, `--full` (what .ci/run runs) keeps them.
SLOW_GROUPS = ("interop", "official", "hostile", "packaging", "slow")


# Set for the workers of a --full run: the modules in a slow group as a whole run on one worker
# (xdist's loadgroup), so those that start all their cases at once on a pool of their own may do so.
WHOLE_MODULES = "TASKS_CONFORMANCE_WHOLE_MODULES"


def whole_module(module: ModuleType | None) -> bool:
    """Whether a module is in a slow group as a whole (its pytestmark names one): a --full run
    keeps such a module on one worker, after the other such modules, as its tests may share one
    pool of servers or clients (a module-scoped fixture starting every case at once) or an
    interop runtime that must not run twice at once. A test marked slow on its own is not: it
    goes to whichever worker is free."""
    marks = getattr(module, "pytestmark", [])
    return any(getattr(m, "name", None) in SLOW_GROUPS for m in (marks if isinstance(marks, list) else [marks]))


def starts_all_cases(module: ModuleType) -> bool:
    """Whether a module's pool may start every case at once: in one process, or on the --full
    worker that holds the whole module (whole_module); a worker otherwise gets some of the
    module's tests only."""
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        return True
    return bool(os.environ.get(WHOLE_MODULES)) and whole_module(module)
