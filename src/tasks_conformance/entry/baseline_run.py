"""The baseline step after a run, shared by the command line and the Python API: the --baseline
file applied to the result, then --update-baseline written from it. The runner never sees it."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from tasks_conformance.settings.config import RunConfig

# A run's execution: a server run's (server/runner.py) or a client run's (client/runner.py), a
# dataclass whose `result` is the RunResult.
Execution = TypeVar("Execution", bound=Any)


def after_run(config: RunConfig, execution: Execution, known_ids: tuple[str, ...] = ()) -> tuple[Execution, str | None]:
    """`execution` (a server or a client run's) with the baseline applied, and a line saying what
    --update-baseline wrote (None when it was not asked for). Raises UsageError when the file cannot be written."""
    if config.baseline is None and config.update_baseline is None:
        return execution, None  # the common case pays no import
    from tasks_conformance.core import baseline

    result = execution.result
    if config.baseline is not None:
        result = baseline.apply(result, config.baseline)
        execution = replace(execution, result=result)
    if config.update_baseline is None:
        return execution, None
    if result.interrupted:
        return execution, f"--update-baseline: the run was interrupted; {config.update_baseline} left as it was"
    n = baseline.update(config.update_baseline, result, known_ids)
    return execution, f"wrote {n} baseline entr{'y' if n == 1 else 'ies'} to {config.update_baseline}"
