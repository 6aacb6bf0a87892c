"""Where the checks cite policies, read from their source: the typed ids of every `warn(text,
"P-NN", …)` and every `passed/failed/could_not_run(message, policies=("P-NN",))`, and any `P-NN`
a sentence names outside them (a citation in prose only, which no report would link).

Descriptions (`check(description=…)`) and docstrings cite policies in prose by design: `explain`
prints them, no result carries them.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

from helpers.paths import ROOT

CHECKS_DIR = ROOT / "src" / "tasks_conformance" / "server" / "checks"
POLICY_WORDS = re.compile(r"(?<![\w-])P-\d{2}(?![\w-])")
# The calls that take a sentence first and the policies it cites as data.
_WARN = "warn"
_VERDICTS = ("passed", "failed", "could_not_run")


@dataclass(frozen=True)
class Citation:
    where: str  # file:line
    call: str
    typed: frozenset[str]  # the ids given as data
    prose: frozenset[str]  # the ids its sentence names


def _name(node: ast.expr) -> str:
    return node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else ""


def _words(node: ast.AST) -> frozenset[str]:
    return frozenset(pid for n in ast.walk(node) if isinstance(n, ast.Constant) and isinstance(n.value, str)
                     for pid in POLICY_WORDS.findall(n.value))


def _strings(nodes: list[ast.expr]) -> frozenset[str]:
    return frozenset(n.value for n in nodes if isinstance(n, ast.Constant) and isinstance(n.value, str))


def _typed(call: ast.Call, name: str) -> frozenset[str]:
    if name == _WARN:
        return _strings(call.args[1:])
    for kw in call.keywords:
        if kw.arg == "policies" and isinstance(kw.value, ast.Tuple | ast.List):
            return _strings(kw.value.elts)
    return frozenset()


def _docstrings(tree: ast.Module) -> set[int]:
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                out.add(id(first.value))
    return out


def scan(paths: list[Path] | None = None) -> tuple[list[Citation], list[str]]:
    """(every citing call, the places a sentence names a policy outside any citing call)."""
    citations: list[Citation] = []
    stray: list[str] = []
    for path in paths or sorted(CHECKS_DIR.glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        covered = _docstrings(tree)
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            name = _name(node.func)
            if name == "check":
                covered |= {id(n) for kw in node.keywords if kw.arg == "description" for n in ast.walk(kw.value)}
            elif name in (_WARN, *_VERDICTS) and node.args:
                data = node.args[1:] if name == _WARN else [k.value for k in node.keywords if k.arg == "policies"]
                covered |= {id(n) for part in (node.args[0], *data) for n in ast.walk(part)}
                typed, prose = _typed(node, name), _words(node.args[0])
                if typed or prose:
                    citations.append(Citation(f"{path.name}:{node.lineno}", name, typed, prose))
        stray += [f"{path.name}:{n.lineno}: {n.value[:80]!r}" for n in ast.walk(tree)
                  if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in covered
                  and POLICY_WORDS.search(n.value)]
    return citations, stray


def cited_policies() -> set[str]:
    """Every policy id a check cites as data."""
    return {pid for c in scan()[0] for pid in c.typed}
