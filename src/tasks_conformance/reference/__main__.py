from tasks_conformance.reference import serve

raise SystemExit(serve())
