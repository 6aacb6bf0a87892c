"""tasks-conformance: judge an MCP server's Tasks behaviour from the bytes on the wire.

The Python API (see docs/api.md), loaded on first use so that importing the package stays cheap:

    run(**settings) -> RunReport              the command line's settings as keywords
    await run_async(**settings) -> RunReport  the same, in a running event loop
    ConfigError                               a setting the command line would refuse (a ValueError)
    RunReport                                 .result (the RunResult reporters read), .wire (the wire log)
    RunResult, CheckResult                    the result model
"""

# No `from __future__ import annotations` and no names imported from typing: every name bound
# here is an attribute of the package, and dir(tasks_conformance) lists the public ones only.
import typing as _typing

__version__ = "0.1.0"

if _typing.TYPE_CHECKING:
    from typing import Any as _Any

    from tasks_conformance.api import ConfigError, RunReport, run, run_async
    from tasks_conformance.result import CheckResult, RunResult

__all__ = ["CheckResult", "ConfigError", "RunReport", "RunResult", "__version__", "run", "run_async"]

_LAZY = {
    "ConfigError": "tasks_conformance.api",
    "RunReport": "tasks_conformance.api",
    "run": "tasks_conformance.api",
    "run_async": "tasks_conformance.api",
    "CheckResult": "tasks_conformance.result",
    "RunResult": "tasks_conformance.result",
}


def __getattr__(name: str) -> "_Any":
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib import import_module

    value = getattr(import_module(module), name)
    globals()[name] = value  # the next access is a plain attribute
    return value


def __dir__() -> list[str]:
    """The public API only (the lazy names included before their first use)."""
    return sorted(__all__)
