"""The JUnit XML schema the reports are validated against, and the validator of a json report
of several runs (a suite, a merge, --era both)."""

from __future__ import annotations

import json
from typing import Any

import jsonschema  # type: ignore[import-untyped,unused-ignore]
from referencing import Registry, Resource

from helpers.paths import ROOT
from tasks_conformance.reporters import schema_text

JUNIT_XSD = ROOT / "tests" / "data" / "junit.xsd"


def multi_validator() -> jsonschema.Draft202012Validator:
    """The multi schema, its $refs to the single-run schemas resolved from the shipped files."""
    schemas = [json.loads(schema_text(kind)) for kind in ("json", "json-summary", "multi")]
    for schema in schemas:
        jsonschema.Draft202012Validator.check_schema(schema)
    registry: Registry[Any] = Registry().with_resources((s["$id"], Resource.from_contents(s)) for s in schemas)
    return jsonschema.Draft202012Validator(schemas[2], registry=registry)
