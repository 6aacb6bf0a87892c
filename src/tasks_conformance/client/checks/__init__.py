"""The client checks, one module per area: what every request carries (requests.py) and how a
task is followed (following.py) on 2026-07-28, the 2025-11-25 wire's rules (legacy.py, and those
read from the traffic every legacy scenario makes, legacy_rules.py), and the JSON-RPC framing of
every message on both (framing.py). Importing this package registers all of them."""

from tasks_conformance.client.checks import following, framing, legacy, requests  # noqa: F401  (they register on import)
from tasks_conformance.client.checks import legacy_rules as legacy_rules
from tasks_conformance.client.checks.registry import CLIENT_CHECKS, ClientCheck

__all__ = ["CLIENT_CHECKS", "ClientCheck"]
