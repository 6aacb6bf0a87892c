"""The reference client where the README and the official suite's convention name it: the harness
entry `python -m tasks_conformance.client.reference_client URL`, and `call`, `Outcome` and
`Harness` for a Python harness. The client itself is client/reference/ (client.py its harness,
wire.py, extension.py and legacy.py its flows)."""

from tasks_conformance.client.reference.client import FLOWS, Harness, Outcome, call, main

__all__ = ["FLOWS", "Harness", "Outcome", "call", "main"]

if __name__ == "__main__":
    raise SystemExit(main())
