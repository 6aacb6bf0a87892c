"""The client checks, one module per area: what every request carries (requests.py) and how a
task is followed (following.py) on 2026-07-28, the 2025-11-25 wire's rules (legacy.py, and those
read from the traffic every legacy scenario makes, legacy_rules.py), and the JSON-RPC framing of
every message on both (framing.py); the 2026-07-28 base protocol's request rules (core_rules.py),
its HTTP headers beyond tasks/* (headers.py) and the answers besides a result (mrtr.py); a task
subscription's acknowledgement (subscriptions.py). Importing
this package registers all of them."""

from tasks_conformance.client.checks import following, framing, legacy, requests  # noqa: F401  (they register on import)

# isort: split
# Registered after the others, so that the checks' report order stays what it was.
from tasks_conformance.client.checks import core_rules, headers, mrtr  # noqa: F401  (2026-07-28 base protocol rules)
from tasks_conformance.client.checks import legacy_rules as legacy_rules
from tasks_conformance.client.checks import subscriptions as subscriptions
from tasks_conformance.client.checks.registry import CLIENT_CHECKS, ClientCheck

__all__ = ["CLIENT_CHECKS", "ClientCheck"]
