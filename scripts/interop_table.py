#!/usr/bin/env python3
"""Run tasks-conformance against the real third-party servers and clients of the interop suite and
write ``docs/interop-results.md``: one table row per server and transport, one column per check;
then one row per real client (``tasks-conformance client``), one column per client check.

The matrices (scenarios, tools, arguments, clients, and the verdict that is right for each check)
are the ones ``tests/interop/test_interop.py`` and ``tests/interop/test_clients.py`` assert; this
script runs the same cells and reports what tasks-conformance said, marking every cell where that
differs from the right verdict.

    python scripts/interop_table.py [--output docs/interop-results.md] [--workers 4] [--keep-logs]
                                    [--only servers|clients]

``--only`` reruns one half and keeps the other half of the existing file as it is.

Servers and clients that cannot run here get a row saying why. Exit status: 0
when the file was written, even if some verdicts disagree (the file lists them).
"""

from __future__ import annotations

import argparse
import concurrent.futures
import datetime as dt
import json
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "interop"))

import test_clients as C  # noqa: E402  (needs the path above)
import test_interop as T  # noqa: E402

from tasks_conformance import __version__  # noqa: E402

SYMBOL = {T.P: "✓", T.F: "✗", T.NA: "n/a", T.CNR: "?", T.DEF: "↪", None: "—"}
DEFAULT_OUTPUT = ROOT / "docs" / "interop-results.md"
CLIENTS_HEADING = "## Real clients (`tasks-conformance client`)"


def short(check_id: str) -> str:
    return check_id.removeprefix("tasks-")


def node_version() -> str:
    node = shutil.which("node")
    if node is None:
        return "not installed"
    try:
        return subprocess.run([node, "--version"], capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def cell_text(run: T.CellRun | None, scenario: T.Scenario, transport: str, check_id: str) -> str:
    if check_id not in scenario.selected:
        return "—"
    right = scenario.verdict(check_id, transport)
    if run is None or run.report is None:
        return f"! ({SYMBOL[right]})"
    ours = run.verdict(check_id)
    text = SYMBOL.get(ours, str(ours))
    return text if ours == right else f"**{text}** ≠ {SYMBOL[right]}"


def exit_text(run: T.CellRun | None, scenario: T.Scenario, transport: str) -> str:
    right = scenario.exit_code(transport)
    if run is None:
        return "—"
    if run.returncode is None:
        return f"! ({right})"
    return str(run.returncode) if run.returncode == right else f"**{run.returncode}** ≠ {right}"


def client_cell(run: C.ClientRunResult | None, client: C.RealClient, check_id: str) -> str:
    right = client.expected[check_id]
    if run is None or run.report is None:
        return f"! ({SYMBOL[right]})"
    ours = run.verdict(check_id)
    text = SYMBOL.get(ours, str(ours)) + (" ⚠" if run.warnings(check_id) else "")
    return text if ours == right else f"**{text}** ≠ {SYMBOL[right]}"


def render_clients(results: dict[str, C.ClientRunResult], skipped: dict[str, str], seconds: float) -> str:
    today = dt.datetime.now(dt.UTC).date().isoformat()
    out = [
        CLIENTS_HEADING,
        "",
        f"Generated on {today} with **tasks-conformance {__version__}**; {len(results)} client runs in "
        f"{seconds:.0f} s.",
        "",
        "Each row is one `python -m tasks_conformance client --command <harness> --era <era> --format json` "
        "run: every scenario of the era, each against a fresh scripted server, with the client driven by a "
        "small harness in `tests/interop/clients/` that follows the client-harness convention. The *right* "
        "verdicts come from `tests/interop/test_clients.py`, which derives them from the clients' packaged "
        "source and captured traffic (`tests/interop/EXPECTED.md`, \"Real clients\"); the interop tests "
        "assert the same table. ⚠ passed with a warning (a SHOULD, or a rule the policies only warn on), "
        "listed under *Client warnings*.",
        "",
    ]
    for era, title in (("extension", "2026-07-28 extension"), ("legacy", "2025-11-25 (tasks in core)")):
        checks = C.era_checks(era)
        out += [f"### {title}", "",
                "| client | packages | exit | " + " | ".join(c.removeprefix("tasks-client-") for c in checks) + " |",
                "|" + "---|" * (3 + len(checks))]
        for client in C.CLIENTS:
            if client.era != era:
                continue
            name = f"{client.id}<br>*{client.title}*"
            if client.id in skipped:
                out.append(f"| {name} | {C.versions_text(client)} | skipped: {skipped[client.id]} |"
                           + " |" * (len(checks) - 1))
                continue
            run = results.get(client.id)
            right = client.exit_code()
            code = "—" if run is None else str(run.returncode) if run.returncode == right else \
                f"**{run.returncode}** ≠ {right}"
            cells = [client_cell(run, client, c) for c in checks]
            out.append("| " + " | ".join([name, C.versions_text(client), code, *cells]) + " |")
        out.append("")
    out += ["### Client warnings", ""]
    for client in C.CLIENTS:
        run = results.get(client.id)
        for check_id in client.expected:
            for warning in run.warnings(check_id) if run is not None else []:
                out.append(f"- **{client.id}** `{check_id}`: {warning[:400]}")
    out += ["", "### Client disagreements", ""]
    found = False
    for client in C.CLIENTS:
        run = results.get(client.id)
        if run is None:
            continue
        problems = [f"the run itself: {run.problem}"] if run.problem else []
        for check_id, right in client.expected.items():
            ours = run.verdict(check_id) if run.report is not None else None
            if ours != right:
                message = run.checks().get(check_id, {}).get("message", "")
                problems.append(f"`{check_id}`: ours **{ours}**, right **{right}** — our message: {message[:300]}")
        if run.returncode != client.exit_code():
            problems.append(f"exit code: ours **{run.returncode}**, right **{client.exit_code()}**")
        if problems:
            found = True
            out.append(f"- **{client.id}**:")
            out += [f"  - {p}" for p in problems]
    if not found:
        out.append("None: every client verdict matched.")
    out.append("")
    return "\n".join(out)


def render(results: dict[tuple[str, str], T.CellRun], skipped: dict[str, str], seconds: float) -> str:
    today = dt.datetime.now(dt.UTC).date().isoformat()
    out: list[str] = [
        "# tasks-conformance against real servers and clients",
        "",
        f"Generated by `scripts/interop_table.py` on {today} with **tasks-conformance {__version__}** "
        f"(Python {platform.python_version()}, Node {node_version()}); {len(results)} runs in {seconds:.0f} s.",
        "Do not edit by hand: rerun the script.",
        "",
        "Each row is one `python -m tasks_conformance --format json` run against a freshly started "
        "third-party server (stdio, or Streamable HTTP on an ephemeral 127.0.0.1 port). The tools, "
        "arguments and the *right* verdict of every check come from `tests/interop/test_interop.py`, "
        "which derives them from the servers' real behaviour (`tests/interop/EXPECTED.md`) and the spec "
        "digest's policies; the interop tests assert the same table.",
        "",
        "Legend: ✓ passed · ✗ failed · n/a not applicable · ? could not run · ↪ deferred to the check "
        "that owns the rule (it fails for both) · — not selected in this "
        "scenario · **ours** ≠ right: tasks-conformance's verdict differs from the right one (listed under "
        "*Disagreements*) · ! the run produced no report.",
        "",
    ]
    checks = list(T.ALL_CHECKS)
    header = "| {} |".format(" | ".join(["server", "version", "wire", "transport", "exit", *map(short, checks)]))
    rule = "|" + "---|" * (5 + len(checks))

    def rows(main: bool) -> list[str]:
        lines: list[str] = []
        for scenario in T.SCENARIOS:
            if scenario.main != main:
                continue
            for transport in scenario.transports:
                name = scenario.server if main else f"{scenario.server}<br>*{scenario.title}*"
                version = T.server_version(scenario.server)
                if scenario.id in skipped:
                    lines.append(f"| {name} | {version} | — | {transport} | skipped: {skipped[scenario.id]} |"
                                 + " |" * (len(checks) - 1))
                    continue
                run = results.get((scenario.id, transport))
                disc = (run.report or {}).get("discovery", {}) if run else {}
                wire = f"{disc.get('wire', '?')} ({disc.get('protocolVersion') or '—'})"
                cells = [cell_text(run, scenario, transport, c) for c in checks]
                lines.append("| " + " | ".join([name, version, wire, transport, exit_text(run, scenario, transport),
                                                 *cells]) + " |")
        return lines

    out += ["## Every check, per server and transport", "", header, rule, *rows(True), ""]
    out += [
        "## Further scenarios (selected checks)",
        "",
        "Other tools of the same servers, run with `--check-id` for the checks they exercise: input "
        "requests, tool errors, a task-required tool, and sdk-tasks' CreateTaskResult that already says "
        "`input_required`.",
        "",
        header.replace("| server |", "| server, scenario |", 1),
        rule,
        *rows(False),
        "",
    ]
    out += ["## Tools and arguments", "", "| scenario | tool | arguments | input responses |", "|---|---|---|---|"]
    for scenario in T.SCENARIOS:
        args = f"`{json.dumps(dict(scenario.args))}`" if scenario.tool else "—"
        inputs = f"`{json.dumps(dict(scenario.input_responses))}`" if scenario.input_responses else "—"
        out.append(f"| {scenario.id} | {scenario.tool or '—'} | {args} | {inputs} |")
    out.append("")

    out += ["## Disagreements", ""]
    found = False
    for scenario in T.SCENARIOS:
        for transport in scenario.transports:
            run = results.get((scenario.id, transport))
            if run is None:
                continue
            problems: list[str] = []
            if run.problem:
                problems.append(f"the run itself: {run.problem}")
            wrong = [c for c in scenario.selected
                     if (run.verdict(c) if run.report is not None else None) != scenario.verdict(c, transport)]
            wire_down = run.report is not None and run.verdict("tasks-wire-resolvable") == T.CNR
            if wire_down and len(wrong) == len(scenario.selected):
                # One cause, every check: say it once.
                check = run.checks().get("tasks-wire-resolvable", {})
                problems.append(f"every check is **could-not-run** — our message: {check.get('message', '')[:300]}")
                wrong = []
            for check_id in wrong:
                right = scenario.verdict(check_id, transport)
                ours = run.verdict(check_id) if run.report is not None else None
                check = run.checks().get(check_id, {})
                line = f"`{check_id}`: ours **{ours}**, right **{right}**"
                if check.get("message"):
                    line += f" — our message: {check['message'][:300]}"
                problems.append(line)
            if run.returncode != scenario.exit_code(transport):
                problems.append(f"exit code: ours **{run.returncode}**, right **{scenario.exit_code(transport)}**")
            whys = dict.fromkeys(
                known[1] for c in (*scenario.selected, "exit-code")
                if (known := T.DISAGREEMENTS.get((scenario.id, transport, c))) is not None
            )
            if problems:
                problems += [f"why (known disagreement): {why}" for why in whys]
                found = True
                out.append(f"- **{scenario.id}** over **{transport}**:")
                out += [f"  - {p}" for p in problems]
    if not found:
        out.append("None: every verdict matched.")
    out += ["", "## Observations (no verdict changes)", ""]
    out += [f"- {note}" for note in T.OBSERVATIONS]
    out.append("")
    return "\n".join(out)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--output", type=Path, default=DEFAULT_OUTPUT)
    parser.add_argument("--workers", type=int, default=T.WORKERS)
    parser.add_argument("--keep-logs", action="store_true", help="keep the wire logs and print where")
    parser.add_argument("--only", choices=("servers", "clients"),
                        help="rerun one half only, keeping the other half of --output as it is")
    opts = parser.parse_args()
    existing = opts.output.read_text(encoding="utf-8") if opts.only and opts.output.exists() else ""
    kept_servers, _, kept_clients = existing.partition(CLIENTS_HEADING)
    if opts.only and not (kept_servers if opts.only == "clients" else CLIENTS_HEADING in existing):
        parser.error(f"--only {opts.only} keeps the other half of {opts.output}, which has none")

    skipped: dict[str, str] = {}
    cells: list[tuple[T.Scenario, str]] = []
    for scenario in T.SCENARIOS if opts.only != "clients" else ():
        why = T.availability(scenario)
        if why is not None:
            skipped[scenario.id] = why
            print(f"skip {scenario.id}: {why}", file=sys.stderr)
            continue
        cells += [(scenario, transport) for transport in scenario.transports]

    clients = C.CLIENTS if opts.only != "servers" else ()
    client_skips = {c.id: why for c in clients if (why := c.availability()) is not None}
    for client_id, why in client_skips.items():
        print(f"skip client {client_id}: {why}", file=sys.stderr)

    workdir = Path(tempfile.mkdtemp(prefix="interop-table-"))
    started = time.monotonic()
    results: dict[tuple[str, str], T.CellRun] = {}
    client_results: dict[str, C.ClientRunResult] = {}
    try:
        with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, opts.workers)) as pool:
            futures = {pool.submit(T.run_cell, s, t, workdir): (s.id, t) for s, t in cells}
            for future in concurrent.futures.as_completed(futures):
                key = futures[future]
                results[key] = run = future.result()
                print(f"{key[0]:32} {key[1]:5} exit {run.returncode} in {run.seconds:.1f}s"
                      + (f"  [{run.problem}]" if run.problem else ""), file=sys.stderr)
        servers_seconds = time.monotonic() - started
        # Each client run already runs two scenarios at a time: two clients at once is enough.
        with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
            client_futures = {pool.submit(C.run_client, c, workdir): c.id for c in clients
                              if c.id not in client_skips}
            for future in concurrent.futures.as_completed(client_futures):
                client_results[client_futures[future]] = crun = future.result()
                print(f"client {crun.client.id:25} exit {crun.returncode} in {crun.seconds:.1f}s"
                      + (f"  [{crun.problem}]" if crun.problem else ""), file=sys.stderr)
        servers = kept_servers if opts.only == "clients" else render(results, skipped, servers_seconds)
        clients_text = CLIENTS_HEADING + kept_clients if opts.only == "servers" else \
            render_clients(client_results, client_skips, time.monotonic() - started - servers_seconds)
        text = servers.rstrip("\n") + "\n\n" + clients_text.rstrip("\n") + "\n"
    finally:
        if opts.keep_logs:
            print(f"wire logs kept in {workdir}", file=sys.stderr)
        else:
            shutil.rmtree(workdir, ignore_errors=True)
    opts.output.parent.mkdir(parents=True, exist_ok=True)
    opts.output.write_text(text, encoding="utf-8")
    print(f"wrote {opts.output}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
