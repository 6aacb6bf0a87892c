"""JSON-RPC peer: ids, correlation, timeouts, server->client requests, every notification kept."""
