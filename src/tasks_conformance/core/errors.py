"""Exceptions of the tool itself. They mean "we could not talk", never "the server is wrong".

    ToolError
    ├── UsageError            bad flags or flag values (exit 2)
    └── TransportError        the connection could not be made or kept
        └── ConnectFailed     could not start/reach the server

A server's wrong answer is evidence, carried in a Reply, not an exception.
"""

from __future__ import annotations

from tasks_conformance.core.causes import CauseKind


class ToolError(Exception):
    """Base of every error the tool raises on purpose."""


class UsageError(ToolError):
    """The user's flags cannot be run (exit code 2)."""


class TransportError(ToolError):
    pass


class ConnectFailed(TransportError):
    """`kind`: what the user changes to get past it, where it is more than "nothing answered"."""

    kind: CauseKind | None = None
