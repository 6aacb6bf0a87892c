"""The terminal report (rich).

Every string shown here may come from the server under test, so nothing is ever handed to rich
as markup: the report is assembled from `rich.text.Text` objects, which rich never parses for
`[tags]` or `:emoji:` codes, and every value first goes through `_text.visible`, which shows
escape sequences and control characters as `\\x1b`-style escapes. The console is built with
`markup=False, emoji=False, highlight=False` as a second fence.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, TextIO

from tasks_conformance.core.text import encodable, one_line
from tasks_conformance.reporters import PLAIN
from tasks_conformance.reporters._failure import broken_rules, expected_actual, explains, rule_line, shown_message

if TYPE_CHECKING:
    from rich.console import Console
    from rich.text import Text

    from tasks_conformance.core.result import CheckResult, RunResult
    from tasks_conformance.reporters import ReportOptions

# bucket -> (glyph, ascii glyph, word, style)
_BUCKETS: dict[str, tuple[str, str, str, str]] = {
    "passed": ("✓", "+", "pass", "green"),
    "failed": ("✗", "x", "FAIL", "bold red"),
    "not-applicable": ("○", "o", "n/a", "dim"),
    "could-not-run": ("!", "!", "not run", "yellow"),
    "known": ("~", "~", "known", "magenta"),  # a failure a --baseline entry accepts
    "deferred": ("→", ">", "deferred", "cyan"),  # its owner reports the finding (one defect, one failure)
}
# headline (RunResult.headline: the outcome, or "interrupted") -> (word, style)
OUTCOMES: dict[str, tuple[str, str]] = {
    "passed": ("PASSED", "bold green"),
    "failed": ("FAILED", "bold red"),
    "incomplete": ("INCOMPLETE", "bold yellow"),
    "interrupted": ("INTERRUPTED", "bold yellow"),
}
_NARROW = 90
MAX_VERBOSE_FRAME = 1000  # characters of one frame shown under a failed check with --verbose


# A link never wraps. A URL short enough to fit any column is left to rich (it moves a word that
# does not fit to the next line whole); a longer one gets a line of its own, where rich lays out a
# short placeholder (U+2063 is escaped by `_text.visible` in any value, so only placeholders hold
# it), and `Writer.links` puts the URL back, whole, once the text is drawn. A line that is only a
# URL moves left as far as it must to fit, and is wider than the console only when the URL is.
_URL = re.compile(r"https?://\S+?(?=[.,;:!?)\]'\"]*(?:\s|$))")
_FITS = 40
_PLACEHOLDER = re.compile("\u2063(\\d+)\u2063")
_SGR = re.compile(r"\x1b\[[0-9;]*m")
_LEAD = re.compile(r"(?:\x1b\[[0-9;]*m| )*")
_BREAK = re.compile(r" *\n")


class Writer:
    """Makes every value safe for the terminal and for the stream's encoding."""

    def __init__(self, out: TextIO) -> None:
        encoding = getattr(out, "encoding", None) or "utf-8"
        self.encoding = encoding
        self.unicode = encodable("✓✗○⚠—…→", encoding) == "✓✗○⚠—…→"
        self._urls: list[str] = []

    def s(self, value: object, limit: int | None = None) -> str:
        return encodable(one_line(value, limit), self.encoding)

    def u(self, value: object, limit: int | None = None, indent: int = 2) -> str:
        """`s(value)` with each long URL in it on a line of its own (`indent` spaces in), held
        whole: text drawn with it goes through `links` before it is written."""

        def hold(m: re.Match[str]) -> str:
            if len(m.group(0)) <= _FITS:
                return m.group(0)
            self._urls.append(m.group(0))
            return f"\n{' ' * indent}\u2063{len(self._urls) - 1}\u2063\n"

        text = _URL.sub(hold, self.s(value, limit))
        return _BREAK.sub("\n", text).strip("\n") if "\n" in text else text

    def links(self, text: str, width: int) -> str:
        """`text` with every URL back in place of its placeholder, on one line. A line that is
        only a URL moves left as far as it must to fit `width` (when it can)."""
        if not self._urls:
            return text
        return "\n".join(self._line(line, width) for line in text.split("\n"))

    def _line(self, line: str, width: int) -> str:
        if "\u2063" not in line:
            return line
        line = _PLACEHOLDER.sub(lambda m: self._urls[int(m.group(1))], line)
        lead = _LEAD.match(line)
        head, rest = (line[: lead.end()], line[lead.end():]) if lead else ("", line)
        codes = "".join(_SGR.findall(head))
        indent = len(head) - len(codes)
        plain = _SGR.sub("", rest)
        if " " in plain or indent + len(plain) <= width:
            return line  # text around the URL, or it fits where it is
        return " " * max(0, min(indent, width - len(plain))) + codes + rest

    def glyph(self, fancy: str, plain: str) -> str:
        return fancy if self.unicode else plain


def make_console(out: TextIO, options: ReportOptions) -> Console:
    from rich.console import Console

    return Console(
        file=out,
        color_system="standard" if options.color else None,
        force_terminal=options.color,
        force_interactive=False,
        no_color=not options.color,
        width=options.width or 120,
        highlight=False,
        markup=False,
        emoji=False,
        soft_wrap=False,
        legacy_windows=False,
    )


def summary_line(result: RunResult, w: Writer) -> Text:
    from rich.text import Text

    word, style = OUTCOMES.get(result.headline, (result.headline.upper(), "bold"))
    line = Text()
    line.append(w.s(word), style=style)
    line.append("  ")
    line.append(w.s(result.summary))
    score = result.score
    line.append(f"  score {score if score is not None else 'n/a'}/100", style="bold")
    line.append(f" ({w.s(result.profile, 80)})", style="dim")
    if result.durationMs:
        line.append(f"  ({result.durationMs / 1000:.2f} s)", style="dim")
    return line


def _server_name(info: dict[str, Any] | None) -> str | None:
    if not isinstance(info, dict):
        return None
    parts = [str(info[k]) for k in ("name", "version") if info.get(k) not in (None, "")]
    return " ".join(parts) or None


def _header(result: RunResult, w: Writer) -> Any:
    from rich.table import Table
    from rich.text import Text

    d = result.discovery
    grid = Table.grid(padding=(0, 2))
    grid.add_column(style="dim", no_wrap=True)
    grid.add_column(overflow="fold")

    def row(key: str, value: str | None, style: str = "") -> None:
        if value:
            grid.add_row(key, Text(value, style=style))

    row("target", w.u(result.target, 400, indent=0), "bold")
    protocol = w.s(d.protocolVersion) if d.protocolVersion else "unknown"
    row("protocol", f"{protocol} ({w.s(d.wire_words)})")
    row("server", w.s(_server_name(d.serverInfo), 200) if d.serverInfo else None)
    if d.probedTool is not None or d.toolCount is not None:
        tool = w.s(d.probedTool, 120) if d.probedTool is not None else "none probed"
        counts = []
        if d.toolCount is not None:
            counts.append(f"{d.toolCount} tool" + ("" if d.toolCount == 1 else "s"))
        if d.taskCapableToolCount is not None:
            counts.append(f"{d.taskCapableToolCount} task-capable")
        row("tool", f"{tool} ({', '.join(counts)})" if counts else tool)
        if d.probedToolReason and d.probedTool is not None:
            row("", w.s(d.probedToolReason, 300), "dim")
    for role, chosen in d.roles.items():  # the other probe roles: which tool, and why
        if role != "task":
            tool = w.s(chosen.get("tool"), 120) if chosen.get("tool") else "none"
            row(f"{w.s(role, 20)} role", f"{tool}: {w.s(chosen.get('reason'), 300)}")
    row("task", w.s(d.createdTaskId, 120) if d.createdTaskId is not None else None)
    row("profile", w.s(result.profile, 80))
    if result.toolVersion:
        row("checker", f"tasks-conformance {w.s(result.toolVersion, 40)}", "dim")
    return grid


def _status_cell(check: CheckResult, w: Writer) -> Text:
    from rich.text import Text

    glyph, plain, word, style = _BUCKETS.get(check.bucket, ("?", "?", check.bucket, ""))
    return Text(f"{w.glyph(glyph, plain)} {w.s(word)}", style=style, no_wrap=True)


def _checks_table(result: RunResult, w: Writer, width: int, verbose: bool = False) -> Any:
    pointers = result.cause_pointers("below")
    from rich.table import Table
    from rich.text import Text

    narrow = width < _NARROW
    table = Table(box=None, show_header=True, header_style="bold", pad_edge=False, show_edge=False)
    table.add_column("", no_wrap=True)
    # Narrow terminals: the message goes on its own line under the check id, where it has the
    # whole width, instead of a column squeezed beside 46 characters of id.
    table.add_column("check", no_wrap=not narrow, overflow="fold")
    if not narrow:
        table.add_column("category", no_wrap=True, style="dim")
        table.add_column("result", overflow="fold")

    def add(status: Text | str, check_id: Text | str, category: str, message: Text) -> None:
        if narrow:
            if str(check_id):
                table.add_row(status, check_id)
            table.add_row("", message)
            return
        table.add_row(status, check_id, category, message)

    warn = w.glyph("⚠", "!")
    for check in result.checks:
        message = Text(pointers.get(check.id) or w.u(shown_message(check), 2000))
        add(_status_cell(check, w), Text(w.s(check.id, 120)), w.s(check.category, 40), message)
        if explains(check):
            broken, others = broken_rules(check)
            for rule in broken:
                add("", "", "", Text(w.s(rule_line(rule), 600), style="bold"))
                if rule.url:
                    add("", "", "", Text(f"  {w.u(rule.url, 300, indent=0)}", style="cyan"))
            if others:
                also = ", ".join(w.s(r.id, 40) for r in others)
                add("", "", "", Text(f"also judged here: {also} (tasks-conformance explain {w.s(check.id, 120)})",
                                     style="dim"))
            pairs = expected_actual(check)
            if pairs:
                add("", "", "", Text("  ".join(f"{k}: {w.u(v)}" for k, v in pairs)))
        if check.baseline is not None:
            style = "bold red" if check.baseline.state == "expired" else "magenta"
            add("", "", "", Text(f"baseline: {w.u(check.baseline.note, 2000)}", style=style))
        for warning in check.warnings:
            add("", "", "", Text(f"{warn} {w.u(warning.text, 2000)}", style="yellow"))
            for policy in warning.refs:
                add("", "", "", Text(f"  {policy.id}: {policy.url}", style="dim"))
        if check.bucket == "failed" and check.evidence:
            seqs = ", ".join(f"#{n}" for n in check.evidence[:12])
            more = f" (+{len(check.evidence) - 12} more)" if len(check.evidence) > 12 else ""
            hint = "" if verbose else " (-v shows them)"
            add("", "", "", Text(f"evidence: frames {seqs}{more}{hint}", style="dim"))
            if verbose:
                for frame in check.frames:
                    add("", "", "", Text(w.s(frame, MAX_VERBOSE_FRAME), style="dim"))
    return table


# Trailing padding that rich adds to table cells, possibly followed by closing style codes.
TRAILING_SPACE = re.compile(r" +((?:\x1b\[[0-9;]*m)*)$", re.MULTILINE)


def render_human(result: RunResult, out: TextIO, *, options: ReportOptions = PLAIN) -> None:
    console = make_console(out, options)
    w = Writer(out)
    with console.capture() as capture:
        _draw(console, result, w, options)
    out.write(w.links(TRAILING_SPACE.sub(r"\1", capture.get()), console.width))


def _draw(console: Console, result: RunResult, w: Writer, options: ReportOptions) -> None:
    from rich.text import Text

    if options.quiet:
        # --quiet prints one line, however narrow the terminal.
        console.print(summary_line(result, w), soft_wrap=True)
        return
    console.print(Text("MCP Tasks conformance", style="bold"))
    console.print(_header(result, w))
    console.print()
    causes = result.incompleteCauses
    blocked = sum(len(c.checks) for c in causes)
    if result.checks and len(causes) == 1 and blocked == len(result.checks):
        # Nothing ran, for one reason (an unreachable server): one line, not a table of "not run".
        every = f"all {blocked} checks" if blocked > 1 else "1 check"
        console.print(Text(f"{w.glyph('!', '!')} not run  {every}: {w.u(causes[0].cause, 2000, indent=4)}",
                           style="yellow"))
        console.print(Text(f"  fix: {w.u(causes[0].fix, 2000, indent=4)}"))
    elif result.checks:
        # Each cause once, below the table, whatever the outcome: a row it blocked points at it.
        console.print(_checks_table(result, w, console.width, options.verbose))
        for n, cause in enumerate(causes, 1):
            console.print()
            label = f"cause {n}: " if len(causes) > 1 else ""
            console.print(Text(f"{w.glyph('!', '!')} {label}{w.u(cause.cause, 2000, indent=4)}", style="yellow"))
            console.print(Text(f"  fix: {w.u(cause.fix, 2000, indent=4)}"))
            if cause.checks:
                console.print(Text(f"  blocked: {w.s(', '.join(cause.checks), 4000)}", style="dim"))
    else:
        console.print(Text("no checks ran", style="dim"))
    if options.verbose and result.scenarios:  # a client run: what the client did in each scenario
        console.print()
        console.print(Text("the client, scenario by scenario:", style="bold"))
        for record in result.scenarios:
            for n, line in enumerate(record.lines()):
                console.print(Text(w.u(line, 2000, indent=4), style="dim" if n else ""))
    unused = [e.check for e, state in result.baseline.entries if state == "unused"] if result.baseline else []
    if unused:
        console.print()
        console.print(Text(f"baseline {w.s(result.baseline.path if result.baseline else '', 300)}: "
                           f"not used in this run: {w.s(', '.join(unused), 2000)}", style="dim"))
    console.print()
    console.print(summary_line(result, w))
    if causes or result.incompleteReason:
        # The causes are above, each once; this closing line only counts them.
        n = len(causes)
        tail = f"{n} cause{'' if n == 1 else 's'} above"
        if blocked:  # a run that tested nothing, or was interrupted, may have blocked none
            tail = f"{blocked} check{'' if blocked == 1 else 's'} could not run, {tail}"
        closing = f"Could not establish conformance — {tail}" if causes else result.incompleteReason or ""
        console.print(Text(w.u(closing, 4000), style="yellow"))
