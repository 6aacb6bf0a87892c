"""The spec areas, spelt once: each check, server or client, declares the area of the specification
it judges (`area=` in its registration), and reports group by it (the JUnit classname, the HTML
and markdown sections, the pytest plugin's items); `--area` selects by it. An area is a name, not
a module: moving a check's code to another module changes no report.

Categories (core/result.py) stay the coarse grouping the MCPJam-compatible reports use."""

from __future__ import annotations

from typing import Final

# Each area and its title. Both subjects' `cancel`, `framing` and `subscriptions` read the same.
AREAS: Final[dict[str, str]] = {
    # Server checks.
    "liveness": "Liveness", "discovery": "Discovery of the tasks wire", "declaration": "Task declarations",
    "framing": "JSON-RPC framing", "creation": "Task creation", "task_object": "The task object",
    "status": "Task status", "results": "Task results", "routing": "Request routing", "cancel": "Cancellation",
    "input": "Input required", "subscriptions": "Task subscriptions", "capability": "Capability negotiation",
    "base": "Base protocol", "listing": "Listing tasks", "association": "Messages associated with a task",
    "progress": "Task progress", "durability": "Durability", "security": "Security",
    "input_requests": "Input requests", "eras": "Eras kept apart",
    # Client checks.
    "requests": "What every request carries", "following": "Following a task",
    "legacy": "The 2025-11-25 task wire", "legacy_rules": "Following a 2025-11-25 task",
    "core_rules": "Base protocol requests", "headers": "HTTP request headers",
    "mrtr": "Answers besides a result",
}


def area_title(area: str) -> str:
    """The area in words: its title, or (an area this table lacks, a hand-made category) its name
    with spaces."""
    return AREAS.get(area) or area.replace("_", " ")


def matching(prefix: str, areas: tuple[str, ...] | list[str]) -> list[str]:
    """The areas `--area prefix` selects: the area of that name, or every one it begins."""
    return [a for a in areas if a == prefix or a.startswith(prefix)]
