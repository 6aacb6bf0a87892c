"""Header value encoding (the Streamable HTTP transport's value encoding): a value that is not
safe ASCII, or that looks like the =?base64?…?= sentinel itself, travels encoded; it decodes back."""

from __future__ import annotations

import pytest

from tasks_conformance.core.protocol import decode_header_value, encode_header_value


@pytest.mark.parametrize(("value", "encoded"), [
    ("task-1", False),
    ("tâche-1", True),
    (" padded ", True),
    ("=?base64?dGFzaw==?=", True),  # a plain value that looks like the sentinel must not be read as one
])
def test_unsafe_values_travel_encoded_and_come_back(value: str, encoded: bool) -> None:
    sent = encode_header_value(value)
    assert (sent != value) is encoded
    assert decode_header_value(sent) == value


def test_an_id_with_a_lone_surrogate_travels_encoded_and_never_raises() -> None:
    # JSON allows "\ud800"; a hostile server's task id must not crash the run that echoes it in Mcp-Name.
    value = "\ud800-task"
    sent = encode_header_value(value)
    assert sent.startswith("=?base64?") and sent.isascii()
