"""fixtures/broken_server.py, loaded from its file for the tests (fixtures/ is no package): its
VARIANTS, each declaring the runs that show what it breaks, are the one list the breaking-fixture
and raw-wire tests are derived from."""

from __future__ import annotations

from types import ModuleType

from helpers.paths import FIXTURES, load_module


def _load() -> ModuleType:
    return load_module(FIXTURES / "broken_server.py", "broken_server_fixture")


BROKEN_SERVER = _load()
