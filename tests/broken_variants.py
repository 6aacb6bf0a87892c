"""fixtures/broken_server.py, loaded from its file for the tests (fixtures/ is no package): its
VARIANTS, each declaring the runs that show what it breaks, are the one list the breaking-fixture
and raw-wire tests are derived from."""

from __future__ import annotations

import importlib.util
from types import ModuleType

from conftest import FIXTURES


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("broken_server_fixture", FIXTURES / "broken_server.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


BROKEN_SERVER = _load()
