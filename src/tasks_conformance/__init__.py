"""tasks-conformance: judge an MCP server's Tasks behaviour from the bytes on the wire."""

__version__ = "0.1.0"

__all__ = ["__version__"]
