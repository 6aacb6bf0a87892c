"""Build what a connection is made of from the run's settings: the transport for the target,
and the client capabilities to declare."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tasks_conformance.core.transports.base import Transport
from tasks_conformance.core.wirelog import WireLog
from tasks_conformance.settings.config import RunConfig

DEFAULT_CLIENT_CAPABILITIES: dict[str, Any] = {"elicitation": {"form": {}}, "roots": {}}

TransportFactory = Callable[[RunConfig, WireLog], Transport]


def make_transport(config: RunConfig, wire: WireLog) -> Transport:
    """The transport for the configured target (imports only the one in use: httpx is costly)."""
    if config.transport == "stdio":
        from tasks_conformance.core.transports.stdio import StdioTransport

        return StdioTransport(
            wire, command=config.command, cwd=config.cwd, env=config.env,
            max_message_bytes=config.max_message_bytes,
        )
    if config.transport == "http":
        from tasks_conformance.core.transports.lean_httpx import import_httpx

        import_httpx()  # before transports.http imports it: see lean_httpx
        from tasks_conformance.core.transports.http import HttpTransport

        assert config.url is not None
        oauth = None
        if config.oauth is not None:
            from tasks_conformance.core.oauth import token_source

            oauth = token_source(config.oauth, config.url, wire, config.timeout_s)
        return HttpTransport(
            wire, url=config.url, headers=config.headers, max_message_bytes=config.max_message_bytes,
            connect_timeout_s=min(config.timeout_s, 10.0), oauth=oauth,
        )
    from tasks_conformance.core.transports.sockets import SocketTransport

    return SocketTransport(
        wire, tcp=config.tcp, unix=config.unix, max_message_bytes=config.max_message_bytes,
        connect_timeout_s=min(config.timeout_s, 10.0),
    )


def client_capabilities(config: RunConfig) -> dict[str, Any]:
    if config.client_capabilities is not None:
        return dict(config.client_capabilities)
    return dict(DEFAULT_CLIENT_CAPABILITIES)
