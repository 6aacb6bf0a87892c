"""The `badge` reporter: an SVG badge in the shields style for a README, "MCP tasks | 21/47 passed",
coloured by the run's outcome (`--reporter badge=badge.svg`). It counts what every report's
summary counts ("21/47 checks passed, 1 failed, …": the passed checks of all the run's checks),
so the badge and the report it stands for never show two different fractions.

Self-contained (no font, script or link to fetch); every text in it is escaped, and the only text
that comes from a run is numbers and the outcome word.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TextIO
from xml.sax.saxutils import escape

from tasks_conformance.reporters import PLAIN

if TYPE_CHECKING:
    from tasks_conformance.core.result import RunResult
    from tasks_conformance.reporters import ReportOptions

LABEL = "MCP tasks"
COLOURS = {"passed": "#4c1", "failed": "#e05d44", "incomplete": "#dfb317", "interrupted": "#9f9f9f"}
# Verdana 11px, as shields draws it: about this many pixels per character, plus the padding.
CHAR_PX, PAD_PX = 7, 10


def message(result: RunResult) -> tuple[str, str]:
    """(the badge's right-hand text, its colour)."""
    n = result.counts()
    word = "interrupted" if result.interrupted else result.outcome
    text = f"{n['passed']}/{n['total']} passed" if word != "interrupted" else "interrupted"  # RunResult.summary's
    if word == "incomplete":
        # Incomplete with none that could not run: nothing was tested (policy P-46).
        text += f", {n['couldNotRun']} could not run" if n["couldNotRun"] else ", nothing tested"
    return text, COLOURS.get(word, COLOURS["interrupted"])


def svg(label: str, text: str, colour: str) -> str:
    left, right = len(label) * CHAR_PX + PAD_PX, len(text) * CHAR_PX + PAD_PX
    width = left + right
    title = escape(f"{label}: {text}")
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="20" role="img" aria-label="{title}">'
        f"<title>{title}</title>"
        f'<linearGradient id="s" x2="0" y2="100%"><stop offset="0" stop-color="#bbb" stop-opacity=".1"/>'
        f'<stop offset="1" stop-opacity=".1"/></linearGradient>'
        f'<clipPath id="r"><rect width="{width}" height="20" rx="3" fill="#fff"/></clipPath>'
        f'<g clip-path="url(#r)"><rect width="{left}" height="20" fill="#555"/>'
        f'<rect x="{left}" width="{right}" height="20" fill="{colour}"/>'
        f'<rect width="{width}" height="20" fill="url(#s)"/></g>'
        f'<g fill="#fff" text-anchor="middle" font-family="Verdana,Geneva,DejaVu Sans,sans-serif" font-size="11">'
        f'<text x="{left / 2:g}" y="14">{escape(label)}</text>'
        f'<text x="{left + right / 2:g}" y="14">{escape(text)}</text></g></svg>\n'
    )


def render_badge(result: RunResult, out: TextIO, *, options: ReportOptions = PLAIN) -> None:
    text, colour = message(result)
    out.write(svg(LABEL, text, colour))
