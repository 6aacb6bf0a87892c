"""Small things a user meets first: the rules in `requirements`, the help of `serve-reference`,
what `dir(tasks_conformance)` shows, and what the live progress line says while a probe opens a
session of its own."""

from __future__ import annotations

import json
from typing import Any

import pytest
from helpers.runs import invoke

import tasks_conformance
from tasks_conformance.core.requirements import load
from tasks_conformance.entry import coverage
from tasks_conformance.server.reference.config import ServerConfig, build_parser, parse_args

# -- `requirements`: the rule itself, not only its id ------------------------------------------------

RULE_INDENT = " " * 16  # under the level column; the checks' own continuation lines sit further right


def _blocks(out: str) -> dict[str, list[str]]:
    """The lines of `requirements` per requirement id (its id line first)."""
    blocks: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in out.splitlines():
        if line.startswith(("S-", "C-")):
            current = blocks.setdefault(line.split(" ", 1)[0], [])
        elif not line.strip():
            current = None
        if current is not None:
            current.append(line)
    return blocks


def test_requirements_shows_every_rule_wrapped_under_its_id() -> None:
    res = invoke("requirements")
    assert res.code == 0, res
    blocks = _blocks(res.stdout)
    registry = load()
    assert list(blocks) == list(registry)
    for rid, req in registry.items():
        head, *rest = blocks[rid]
        assert head.split()[:1] == [rid] and req.level in head
        rule = [line for line in rest if line.startswith(RULE_INDENT) and not line[len(RULE_INDENT)].isspace()]
        assert " ".join(" ".join(rule).split()) == " ".join(req.text.split()), rid


def test_requirements_text_keeps_to_the_width_and_never_splits_a_check_id() -> None:
    out = coverage.text(80)
    for line in out.splitlines()[:-1]:  # the summary is one paragraph of its own
        assert len(line) <= 80 or len(line.split()) <= 3, line
    every_check = {c for row in coverage.rows() for c in (*row.checks, *row.permitted_by)}
    words = {w.strip(",") for w in out.split()}
    assert every_check <= words


def test_requirements_json_carries_the_rule_and_its_link() -> None:
    res = invoke("requirements", "--format", "json")
    assert res.code == 0, res
    by_id = {r["id"]: r for r in json.loads(res.stdout)["requirements"]}
    for rid, req in load().items():
        assert (by_id[rid]["text"], by_id[rid]["url"]) == (req.text, req.url)


# -- `serve-reference --help`: the style of every other command, every flag of the server ----------

def _long_flags() -> set[str]:
    """The reference server's own flags (its argparse parser), --help aside."""
    parser = build_parser()
    return {o for action in parser._actions for o in action.option_strings if o.startswith("--")} - {"--help"}


def test_serve_reference_help_is_in_the_style_of_the_other_commands() -> None:
    res = invoke("serve-reference", "--help")
    assert res.code == 0, res
    # In-process the program's name is the test runner's; the shape of the first line is the same.
    demo = invoke("demo", "--help").stdout.splitlines()[0]
    first = res.stdout.splitlines()[0]
    assert demo.startswith("Usage: ") and demo.endswith(" demo [OPTIONS]")
    assert first == demo.removesuffix(" demo [OPTIONS]") + " serve-reference [OPTIONS]"
    assert "\nOptions:\n" in res.stdout and "-h, --help  " in res.stdout
    shown = " ".join(res.stdout.split())
    for flag in sorted(_long_flags()):
        assert f" {flag} " in shown, flag
    for metavar in ("--transport stdio|http|tcp|unix", "--era both|legacy|extension", "--bearer-token TOKEN",
                    "--port N"):
        assert metavar in shown, metavar


def test_serve_reference_declares_exactly_the_servers_flags_and_defaults() -> None:
    from typer.main import get_command

    from tasks_conformance.entry.cli import app

    group = get_command(app)
    command = group.commands["serve-reference"]  # type: ignore[attr-defined]
    declared = {o for p in command.params for o in getattr(p, "opts", ()) if o.startswith("--")} - {"--help"}
    assert declared == _long_flags()
    # The defaults the help shows are the server's own.
    defaults = {p.opts[0]: p.default for p in command.params if p.opts and p.opts[0].startswith("--")}
    server = ServerConfig()
    assert (defaults["--transport"], defaults["--host"], defaults["--port"], defaults["--era"]) == (
        server.transport, server.host, server.port, server.era)
    assert (defaults["--task-duration-ms"], defaults["--poll-interval-ms"], defaults["--ttl-ms"]) == (
        server.task_duration_ms, server.poll_interval_ms, server.ttl_ms)


def test_serve_reference_hands_the_flags_given_to_the_server(monkeypatch: pytest.MonkeyPatch) -> None:
    import tasks_conformance.server.reference as reference

    seen: list[list[str] | None] = []

    def fake_serve(argv: list[str] | None = None, **_kw: Any) -> int:
        seen.append(argv)
        return 0

    monkeypatch.setattr(reference, "serve", fake_serve)
    res = invoke("serve-reference", "--transport", "http", "--port", "8123", "--era", "extension", "--bearer-token",
                 "a", "--bearer-token", "b", "--no-tcp-nodelay", "--ttl-ms", "5")
    assert res.code == 0, res
    assert parse_args(seen[-1]) == ServerConfig(transport="http", port=8123, era="extension", bearer_tokens=("a", "b"),
                                                tcp_nodelay=False, ttl_ms=5)
    assert invoke("serve-reference").code == 0 and seen[-1] == []  # nothing given: the server's defaults


@pytest.mark.parametrize(("args", "message"), [
    (["--port", "70000"], "serve-reference: argument --port: not a TCP port: 70000 (see --help)"),
    (["--transport", "pigeon"], "serve-reference: argument --transport: invalid choice: 'pigeon'"),
    (["--ttl-ms=-1"], "serve-reference: argument --ttl-ms: must be >= 0: -1 (see --help)"),
])
def test_a_bad_serve_reference_value_is_one_line(args: list[str], message: str) -> None:
    res = invoke("serve-reference", *args)
    assert (res.code, res.stdout) == (2, "")
    assert res.stderr.startswith(f"tasks-conformance: error: {message}") and res.stderr.count("\n") == 1


# -- dir(tasks_conformance): the public API only ----------------------------------------------------

def test_dir_of_the_package_is_its_public_api() -> None:
    assert dir(tasks_conformance) == sorted(tasks_conformance.__all__)
    # Not merely hidden: the typing helpers are no attributes of the package.
    for name in ("annotations", "TYPE_CHECKING", "Any"):
        assert name not in vars(tasks_conformance), name
        assert not hasattr(tasks_conformance, name), name
