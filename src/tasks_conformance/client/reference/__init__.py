"""The bundled reference tasks client, a client of its own (tests/invariants/test_layers.py holds it so): its
JSON-RPC peer and transports (wire.py, http.py, stdio.py), one flow per era (extension.py,
legacy.py), what a call did (trace.py) and the harness entry (client.py; run as
`python -m tasks_conformance.client.reference_client`). It has no switch that breaks a rule: the
breaking clients subclass its flows in fixtures/broken_client.py."""
