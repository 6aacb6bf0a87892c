"""The repository's paths and the commands of its fixture servers."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "fixtures"
SHARED = ROOT.parent / "shared"
REFERENCE = [sys.executable, "-m", "tasks_conformance.server.reference"]
BROKEN = [sys.executable, str(FIXTURES / "broken_server.py")]
DEMO_INPUT = '{"confirm-1": {"action": "accept", "content": {"confirm": true}}}'



def load_module(path: Path, name: str) -> ModuleType:
    """A module of the repository that is no package's (a fixture, a benchmark), loaded by its path."""
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
