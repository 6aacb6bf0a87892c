"""Transports move bytes and record every frame in the WireLog; they know nothing of JSON-RPC ids."""
