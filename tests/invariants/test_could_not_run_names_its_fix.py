"""Every could-not-run says what the user changes so that the check runs (a flag, a tool, a timeout,
or what the server must do): a reason without a fix cannot be added.

Three nets: the type (`could_not_run` takes a Cause or a Reason, never a bare sentence; mypy runs
as a test), the constructors (`unmet` and `by_flag` refuse a cause without its fix), and this file,
which walks every could-not-run site and every Cause built in the source."""

from __future__ import annotations

import ast
import re

import pytest
from helpers.paths import ROOT

from tasks_conformance.core.causes import Cause, CauseKind, by_flag, harness, reason, unmet
from tasks_conformance.core.verdict import could_not_run

SRC = ROOT / "src" / "tasks_conformance"
# The one Cause built from a message rather than at a could-not-run site: a report read back from
# JSON (a baseline, the API's results) whose check carried no typed cause.
READERS = {"core/incomplete.py"}
# Sites whose kind is a variable, and where it comes from: the connection's own failure (unreachable,
# OAuth, stdout not JSON, an HTTP status), each kind with its fix in causes.py.
CONNECTION_KINDS = {"server/checks/discovery.py"}
# Kinds whose fix is the kind's own (the table in causes.py), so the site need not give one.
OWN_FIX = {k.name for k in CauseKind} - {"CHECK_NEEDS", "SETTING"}


# The names this file walks the calls of.
WALKED = ("could_not_run", "Cause")


def _every_call() -> dict[str, list[tuple[str, ast.Call]]]:
    """Every call of a WALKED name in the source, from one walk: each test worker collects this
    module, so the source is parsed once per worker, not once per name. A file whose text never
    holds one of the names has no call of it and is not parsed (the walk took 1.8 s of each
    worker's 4 s collection when it parsed all 224 files)."""
    named = re.compile(r"\b(?:" + "|".join(WALKED) + r")\b")
    out: dict[str, list[tuple[str, ast.Call]]] = {}
    for path in sorted(SRC.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        if not named.search(text):
            continue
        rel = path.relative_to(SRC).as_posix()
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.Call):
                func = node.func
                called = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
                if called in WALKED:
                    out.setdefault(called, []).append((f"{rel}:{node.lineno}", node))
    return out


_CALLS = _every_call()


def _calls(name: str) -> list[tuple[str, ast.Call]]:
    assert name in WALKED, name
    return _CALLS.get(name, [])


def _is_text(node: ast.expr) -> bool:
    """A sentence written at the site: a literal, an f-string, a sum or join of them, `a or "b"`."""
    if (isinstance(node, ast.Constant) and isinstance(node.value, str)) or isinstance(node, ast.JoinedStr):
        return True
    if isinstance(node, ast.BinOp):
        return _is_text(node.left) or _is_text(node.right)
    if isinstance(node, ast.BoolOp):
        return any(_is_text(v) for v in node.values)
    if isinstance(node, ast.IfExp):
        return _is_text(node.body) or _is_text(node.orelse)
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "join"


SITES = _calls("could_not_run")


def test_the_sites_are_found() -> None:
    # The walk must see the sites it guards: a refactor that renamed the function would empty it.
    assert len(SITES) > 80, len(SITES)


@pytest.mark.parametrize("where,call", SITES, ids=[w for w, _ in SITES])
def test_no_could_not_run_site_gives_a_bare_sentence(where: str, call: ast.Call) -> None:
    if where.startswith("core/verdict.py"):
        return
    assert call.args, f"{where}: could_not_run without its cause"
    assert not _is_text(call.args[0]), (
        f"{where}: a could-not-run gives a bare sentence; build its cause with unmet(text, fix), "
        "by_flag(text, fix) or got(text, reply, fix=…), so that it says what to change")


def _kind(call: ast.Call) -> str | None:
    given = call.args[1] if len(call.args) > 1 else next((k.value for k in call.keywords if k.arg == "kind"), None)
    return given.attr if isinstance(given, ast.Attribute) else None


def _has_fix(call: ast.Call) -> bool:
    fix = call.args[2] if len(call.args) > 2 else next((k.value for k in call.keywords if k.arg == "fix"), None)
    flags = call.args[3] if len(call.args) > 3 else next((k.value for k in call.keywords if k.arg == "flags"), None)
    return (fix is not None and not (isinstance(fix, ast.Constant) and not fix.value)) or flags is not None


CAUSES = [(w, c) for w, c in _calls("Cause") if not w.startswith("core/causes.py")]


@pytest.mark.parametrize("where,call", CAUSES, ids=[w for w, _ in CAUSES])
def test_every_cause_built_names_its_fix(where: str, call: ast.Call) -> None:
    if where.split(":")[0] in READERS:
        return
    kind = _kind(call)
    if kind is None and where.split(":")[0] in CONNECTION_KINDS:
        return
    assert kind is not None, f"{where}: a Cause without its kind (the default says nothing of a fix)"
    assert kind in OWN_FIX or _has_fix(call), f"{where}: a {kind} cause must say what to change (fix= or flags)"


def test_the_constructors_refuse_a_cause_without_its_fix() -> None:
    with pytest.raises(ValueError):
        unmet("the task was not seen to end", "")
    with pytest.raises(ValueError):
        by_flag("the task was not seen to end")
    assert unmet("x", "raise --poll-timeout").fix == "raise --poll-timeout"
    assert by_flag("x", "", "--timeout").flags == ("--timeout",)


def test_a_verdict_carries_the_fix_to_the_report() -> None:
    verdict = could_not_run(reason("the task was not seen to end", "raise --poll-timeout"))
    assert verdict.cause is not None and verdict.cause.fix_for("tasks-x", "") == "raise --poll-timeout"
    assert "raise --poll-timeout" in verdict.message
    # A fault of ours says so, with the kind's own fix.
    assert "report it" in harness("oops").fix_for("tasks-x", "")


def test_every_kind_has_a_fix() -> None:
    for kind in CauseKind:
        cause = Cause("x", kind, fix="do this") if kind.name in ("CHECK_NEEDS", "SETTING") else Cause("x", kind)
        assert cause.fix_for("tasks-x", "http://127.0.0.1:1/mcp"), kind
