"""Interop suite configuration: the ``interop`` marker.

``tests/`` has no ``__init__.py``, so this file and ``tests/conftest.py`` are both imported
as the module ``conftest``; pytest replaces ``sys.modules["conftest"]`` with whichever it
loaded last. The sibling test modules do ``from conftest import ROOT, cli, …``, so once this
file is registered ``sys.modules["conftest"]`` is pointed back at ``tests/conftest.py``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

_PARENT_CONFTEST = Path(__file__).resolve().parent.parent / "conftest.py"


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "interop: runs tasks-conformance against real third-party MCP servers (tests/interop); "
        "deselect with -m 'not interop'",
    )
    for plugin in config.pluginmanager.get_plugins():
        path = getattr(plugin, "__file__", None)
        if path and Path(path).resolve() == _PARENT_CONFTEST:
            sys.modules["conftest"] = plugin
            break
