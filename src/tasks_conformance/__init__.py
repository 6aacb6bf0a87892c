"""tasks-conformance: judge an MCP server's Tasks behaviour from the bytes on the wire.

The Python API (see docs/api.md), loaded on first use so that importing the package stays cheap:

    run(**settings) -> RunReport              the command line's settings as keywords
    run(subject="client", command=[...])      judge a tasks client instead (`tasks-conformance client`)
    await run_async(**settings) -> RunReport  the same, in a running event loop
    ConfigError                               a setting the command line would refuse (a ValueError)
    RunReport                                 .result (the RunResult reporters read), .wire (the wire log)
    RunResult, CheckResult                    the result model
    RunSettings                               the keywords of run/run_async, as a TypedDict (for editors)
"""

# No `from __future__ import annotations` and no names imported from typing: every name bound
# here is an attribute of the package, and dir(tasks_conformance) lists the public ones only.
import typing as _typing

__version__ = "0.1.0"

if _typing.TYPE_CHECKING:
    from typing import Any as _Any

    from tasks_conformance.core.result import CheckResult, RunResult
    from tasks_conformance.entry.api import ConfigError, RunReport, run, run_async
    from tasks_conformance.settings import RunSettings

__all__ = ["CheckResult", "ConfigError", "RunReport", "RunResult", "RunSettings", "__version__", "run", "run_async"]

_LAZY = {
    "ConfigError": "tasks_conformance.entry.api",
    "RunReport": "tasks_conformance.entry.api",
    "run": "tasks_conformance.entry.api",
    "run_async": "tasks_conformance.entry.api",
    "CheckResult": "tasks_conformance.core.result",
    "RunResult": "tasks_conformance.core.result",
    "RunSettings": "tasks_conformance.settings",
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
