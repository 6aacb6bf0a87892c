"""Example third-party reporters for tasks-conformance (a test fixture)."""

from __future__ import annotations

from typing import Any, TextIO

CALLS: list[str] = []


def count_reporter(result: Any, out: TextIO) -> None:
    """One line: outcome and the number of checks per bucket."""
    CALLS.append("example-count")
    counts = result.counts()
    out.write(f"example-count outcome={result.outcome} total={counts['total']} failed={counts['failed']}\n")


def options_reporter(result: Any, out: TextIO, *, options: Any = None) -> None:
    """Declares the keyword `options`, so it is given the ReportOptions the command line chose."""
    CALLS.append("example-options")
    out.write(f"example-options quiet={options.quiet} color={options.color} width={options.width}\n")


def exploding_reporter(result: Any, out: TextIO) -> None:
    CALLS.append("example-boom")
    raise RuntimeError("the example reporter always fails")


def shadowing_json(result: Any, out: TextIO) -> None:
    CALLS.append("json")
    out.write("this is not the built-in json reporter\n")
