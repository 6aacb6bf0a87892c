"""Suite files written for the tests (TOML), the reference server as a target, and the fleet
of targets the merge and fan-in recipes combine. Their servers fork from the tests' zygote
(helpers.zygote): a suite's subject is what the tool makes of its targets, not their processes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from helpers.paths import BROKEN, REFERENCE
from helpers.zygote import forked


def toml_value(value: Any) -> str:
    return json.dumps(value)  # JSON strings, lists and numbers are TOML too


def write_suite(path: Path, targets: list[dict[str, Any]], defaults: dict[str, Any] | None = None) -> Path:
    lines: list[str] = []
    if defaults:
        lines.append("[defaults]")
        lines += [f"{k} = {toml_value(v)}" for k, v in defaults.items()]
    for target in targets:
        lines.append("[[targets]]")
        lines += [f"{k} = {toml_value(v)}" for k, v in target.items()]
    path.write_text("\n".join(lines) + "\n")
    return path


def reference(name: str, *extra: str, **keys: Any) -> dict[str, Any]:
    return {"name": name, "command": [*forked(REFERENCE), "--transport", "stdio", *extra], **keys}


QUICK = ["--transport", "stdio", "--task-duration-ms", "50"]


def fleet_suite(path: Path, broken: str = "removed-methods-served") -> Path:
    """Three targets, four runs: the reference server, once per era too, and a broken fixture."""
    return write_suite(path, [
        {"name": "ref", "command": [*forked(REFERENCE), *QUICK]},
        {"name": "ref-both", "command": [*forked(REFERENCE), *QUICK], "era": "both"},
        {"name": "broken", "command": [*forked(BROKEN), "--break", broken, *QUICK]},
    ], defaults={"tool-name": "slow_compute", "timeout": 10000, "check-id": STEADY})


def suite_verdicts(doc: dict[str, Any]) -> list[tuple[str, str, list[tuple[str, str, str | None]]]]:
    """Each run's label, outcome and checks (id, status, skip reason): what must not change."""
    return [(t["label"], t["outcome"], [(c["id"], c["status"], c["skipReason"]) for c in t["result"]["checks"]])
            for t in doc["targets"]]


# Checks whose verdict does not depend on how fast the server's task runs against the probes (a
# cancel that finds the task still running, progress sent before it ends): two runs of the file
# compared check by check must agree whatever the machine's load.
STEADY = ["tasks-server-stays-up", "tasks-wire-resolvable", "tasks-declaration-hygiene", "tasks-wire-framing",
          "tasks-result-type-discipline", "tasks-ttl-shape", "tasks-invalid-task-id-rejected",
          "tasks-removed-methods-not-found"]
