"""``python -m tasks_conformance.server.reference [flags]``: run the reference server until stopped."""

from tasks_conformance.server.reference import serve

raise SystemExit(serve())
