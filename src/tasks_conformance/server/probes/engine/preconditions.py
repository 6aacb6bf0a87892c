"""Which preconditions a probe's code assumes: the ProbeContext reads of PRECONDITION_READS in the
probe function and in every function of the probe modules it calls, read from their source with
`ast` (nothing runs). probe_problems() compares them with what the probe declares."""

from __future__ import annotations

import ast
import inspect
import textwrap
from collections.abc import Callable, Iterator
from types import FunctionType
from typing import Any

from tasks_conformance.server.probes import PRECONDITION_READS, Precondition, ProbeSpec

_PROBES_PACKAGE = "tasks_conformance.server.probes"


def _tree(fn: FunctionType) -> ast.AST | None:
    try:
        return ast.parse(textwrap.dedent(inspect.getsource(fn)))
    except (OSError, TypeError, SyntaxError):
        return None


def _callees(fn: FunctionType, tree: ast.AST) -> Iterator[FunctionType]:
    """The functions `fn` calls by name that are its own module's or a probe module's."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            target: Any = fn.__globals__.get(node.func.id)
            if isinstance(target, FunctionType) and (
                    target.__module__ == fn.__module__ or target.__module__.startswith(_PROBES_PACKAGE)):
                yield target


def assumed(fn: Callable[..., Any]) -> dict[Precondition, str]:
    """Precondition -> the first function whose code assumes it, over `fn` and what it calls."""
    found: dict[Precondition, str] = {}
    seen: set[FunctionType] = set()
    stack = [fn] if isinstance(fn, FunctionType) else []
    while stack:
        current = stack.pop()
        if current in seen:
            continue
        seen.add(current)
        tree = _tree(current)
        if tree is None:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and node.attr in PRECONDITION_READS:
                found.setdefault(PRECONDITION_READS[node.attr], current.__qualname__)
        stack.extend(_callees(current, tree))
    return found


def undeclared_reads(spec: ProbeSpec) -> list[str]:
    """What `spec`'s code assumes that it does not declare, in words."""
    declared = spec.preconditions
    return [f"{where}() assumes a {need.value} ({_READ_OF[need]}) that the probe does not declare"
            for need, where in assumed(spec.fn).items() if need not in declared]


_READ_OF = {p: name for name, p in PRECONDITION_READS.items()}
