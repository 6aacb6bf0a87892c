"""``python -m tasks_conformance.reference [flags]``: run the reference server until stopped."""

from tasks_conformance.reference import serve

raise SystemExit(serve())
