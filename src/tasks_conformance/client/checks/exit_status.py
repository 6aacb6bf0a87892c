"""The client's exit status after a call that succeeded. The official harness convention has two
report channels, stdout and the exit code, so a harness that exits non-zero reports a failure;
after a task that completed without isError no rule was broken on the wire, so it warns (P-54)."""

from __future__ import annotations

from collections.abc import Iterable

from tasks_conformance.client.evidence import ScenarioRun
from tasks_conformance.core.result import CheckWarning
from tasks_conformance.core.verdict import warn

SHOWN = 3


def failed_exits(runs: Iterable[ScenarioRun], scenarios: Iterable[str], rule: str) -> list[CheckWarning]:
    """One warning for the runs of `scenarios` (whose tool succeeds) in which the client exited by
    itself with a non-zero code; a client stopped at --timeout is the runner's to state."""
    wanted = set(scenarios)
    seen: set[str] = set()
    said: list[str] = []
    for run in runs:
        code = run.client.exit_code
        if run.name not in wanted or run.name in seen or run.client.timed_out or code in (None, 0) or not run.reached:
            continue
        seen.add(run.name)  # a run's connections share one client process: said once
        said.append(f"{run.name} ({run.transport}): exit code {code}")
    if not said:
        return []
    return [warn(f"the client exited non-zero after a call that succeeded, which a harness reports as its own "
                 f"failure ({rule}; policy P-54): " + "; ".join(said[:SHOWN]), "P-54")]
