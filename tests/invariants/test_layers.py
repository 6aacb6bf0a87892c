"""The layers of the package: no import cycle between its files, no layer importing one above
it, a package root that stays small, modules that stay short, and reporters that use one
another's public names only.

Every module is parsed with `ast` (nothing is imported), and every import counts: at the top, in
a function, or under `if TYPE_CHECKING:`. A function-local or type-only import hides a cycle from
the interpreter, not from the reader: the two files still depend on each other, so one of them
is at the wrong layer (issue 21). `from package import name` is an edge to `package/name.py` when
that file exists, else to `package/__init__.py`.

One exception: the package's `__init__.py` is both the API facade (its type-only imports name the
API it loads lazily, above everything) and the home of `__version__`, a constant that many layers
read. `from tasks_conformance import __version__` is therefore an edge to `__version__` alone, a
leaf that imports nothing.

And a package's `__init__.py` importing its own submodules is containment, not layering (the
package is made of them; `load_probes` imports every probe module so that it registers): those
edges are left out. An edge from a submodule up to its package's `__init__.py` counts.
"""

from __future__ import annotations

import ast
import itertools
import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.paths import ROOT

PACKAGE = "tasks_conformance"
SRC = ROOT / "src" / PACKAGE
# TASKS_CONFORMANCE_LAYERS_SRC: another checkout's package directory (to see the test fail on old code).
ROOT = Path(os.environ.get("TASKS_CONFORMANCE_LAYERS_SRC", SRC))
VERSION = f"{PACKAGE}.__version__"  # the constant in the package's __init__.py (see above)


def _modules(root: Path) -> dict[str, Path]:
    """Dotted module name → file, for every .py file of the package (the reference server too)."""
    out: dict[str, Path] = {}
    for path in sorted(root.rglob("*.py")):
        parts = list(path.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join([PACKAGE, *parts])] = path
    return out


def _imports(name: str, path: Path, modules: dict[str, Path]) -> Iterator[tuple[str, str, int]]:
    """(imported module, name imported from it or "", line) for every import of the package's own
    modules in `path`, wherever it stands in the file."""
    is_package = path.name == "__init__.py"
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in modules:
                    yield alias.name, "", node.lineno
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".") if is_package else name.split(".")[:-1]
                base = base[: len(base) - node.level + 1]
                source = ".".join([*base, *([node.module] if node.module else [])])
            else:
                source = node.module or ""
            if not source.startswith(PACKAGE):
                continue
            for alias in node.names:
                submodule = f"{source}.{alias.name}"
                if submodule in modules:
                    yield submodule, "", node.lineno
                elif source == PACKAGE and alias.name == "__version__":
                    yield VERSION, "", node.lineno
                elif source in modules:
                    yield source, alias.name, node.lineno


def _contains(name: str, path: Path, target: str) -> bool:
    """Is `target` a submodule of the package `name` (whose file is `path`)?"""
    return path.name == "__init__.py" and target.startswith(f"{name}.")


def import_graph(root: Path) -> dict[str, dict[str, int]]:
    """module → {module it imports: first line that does}."""
    modules = _modules(root)
    graph: dict[str, dict[str, int]] = {m: {} for m in [*modules, VERSION]}
    for name, path in modules.items():
        for target, _name, line in _imports(name, path, modules):
            if target != name and not _contains(name, modules[name], target):
                graph[name].setdefault(target, line)
    return graph


def cycles(graph: dict[str, dict[str, int]]) -> list[list[str]]:
    """One cycle for each strongly connected component of more than one module (Tarjan), each
    as a path that ends where it starts."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                components.append(sorted(component))

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 10 * len(graph) + 100))
    try:
        for v in sorted(graph):
            if v not in index:
                visit(v)
    finally:
        sys.setrecursionlimit(limit)
    return [_one_cycle(graph, set(c), c[0]) for c in components]


def _one_cycle(graph: dict[str, dict[str, int]], component: set[str], start: str) -> list[str]:
    """The shortest path from `start` back to itself inside its component (breadth first)."""
    came_from: dict[str, str] = {}
    frontier = [start]
    while frontier:
        following: list[str] = []
        for v in frontier:
            for w in sorted(graph[v]):
                if w not in component:
                    continue
                if w == start:
                    path = [v]
                    while path[-1] != start:
                        path.append(came_from[path[-1]])
                    return [start, *reversed(path[:-1]), start]
                if w not in came_from:
                    came_from[w] = v
                    following.append(w)
        frontier = following
    raise AssertionError(f"{start} is in a cycle but none was found")  # pragma: no cover


def _describe(graph: dict[str, dict[str, int]], cycle: list[str]) -> str:
    steps = [f"{a} (line {graph[a][b]}) -> {b}" for a, b in itertools.pairwise(cycle)]
    return "\n    ".join(steps)


def test_no_import_cycle_between_files() -> None:
    graph = import_graph(ROOT)
    assert len(graph) > 50, f"no modules found under {ROOT}"
    found = cycles(graph)
    message = "\n".join(f"import cycle:\n    {_describe(graph, c)}" for c in found)
    if found:
        print(message)
    assert not found, message


def test_reporters_import_no_private_name_of_another_module() -> None:
    modules = _modules(ROOT)
    offences = []
    for name, path in modules.items():
        if not name.startswith(f"{PACKAGE}.reporters"):
            continue
        for target, imported, line in _imports(name, path, modules):
            private = imported.startswith("_") and not (imported.startswith("__") and imported.endswith("__"))
            if private and target != name:
                offences.append(f"{path.relative_to(ROOT)}:{line}: {imported} from {target}")
    assert not offences, "reporters use each other's public names only:\n" + "\n".join(offences)


# The layers, lowest first. A module may import its own layer and the ones below, never one above;
# the two subjects share a layer and never import each other (the client mode must not grow on
# the server's internals). The package root (the API facade and `python -m`) is above them all.
LAYERS: dict[str, int] = {"core": 0, "settings": 1, "server": 2, "client": 2, "reporters": 3, "entry": 4}
SUBJECTS = ("server", "client")
ROOT_MODULES_MAX = 8
LINES_MAX, REFERENCE_LINES_MAX = 450, 500


def _unit(module: str) -> str:
    """The top-level package of the layout a module belongs to ("" for the package root)."""
    parts = module.split(".")
    return parts[1] if len(parts) > 2 or (len(parts) == 2 and parts[1] in LAYERS) else ""


def _layer(module: str) -> int:
    return LAYERS.get(_unit(module), len(LAYERS))


def layer_violations(graph: dict[str, dict[str, int]]) -> list[str]:
    out = []
    for a, targets in graph.items():
        for b, line in targets.items():
            if b == VERSION:
                continue
            ua, ub = _unit(a), _unit(b)
            upward = _layer(b) > _layer(a)
            across = ua != ub and ua in SUBJECTS and ub in SUBJECTS
            if upward or across:
                out.append(f"{a} (line {line}) -> {b}: {ua or 'root'} may not import {ub or 'root'}")
    return out


def test_no_layer_imports_one_above_it() -> None:
    graph = import_graph(ROOT)
    units = {_unit(m) for m in graph if m != VERSION}
    assert units == {"", *LAYERS}, f"a package outside the layers: {sorted(units - {'', *LAYERS})}"
    found = layer_violations(graph)
    assert not found, "\n".join(found)


def test_the_package_root_holds_at_most_eight_modules() -> None:
    modules = sorted(p.name for p in ROOT.glob("*.py"))
    assert len(modules) <= ROOT_MODULES_MAX, modules


def test_no_module_is_over_its_length_limit() -> None:
    long = []
    for path in sorted(ROOT.rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        limit = REFERENCE_LINES_MAX if rel.startswith("server/reference/") else LINES_MAX
        n = len(path.read_text(encoding="utf-8").splitlines())
        if n > limit:
            long.append(f"{rel}: {n} lines (limit {limit})")
    assert not long, "\n".join(long)


def test_the_layer_rule_catches_an_upward_and_a_sideways_import() -> None:
    graph = {
        "tasks_conformance.core.result": {"tasks_conformance.server.runner": 3},
        "tasks_conformance.server.runner": {"tasks_conformance.core.result": 1, "tasks_conformance.client.x": 2},
        "tasks_conformance.entry.cli": {"tasks_conformance.server.runner": 1, VERSION: 2},
        "tasks_conformance.client.x": {"tasks_conformance.core.result": 1},
    }
    found = layer_violations(graph)
    assert [f.split(" ")[0] for f in found] == ["tasks_conformance.core.result", "tasks_conformance.server.runner"]


# -- the detector itself ---------------------------------------------------------------------


def test_the_cycle_detector_finds_a_cycle_and_only_a_cycle() -> None:
    graph = {"a": {"b": 1}, "b": {"c": 2}, "c": {"a": 3}, "d": {"a": 4}, "e": {}}
    assert cycles(graph) == [["a", "b", "c", "a"]]
    assert cycles({"a": {"b": 1}, "b": {}, "c": {"a": 1, "b": 2}}) == []


@pytest.mark.parametrize(("code", "expected"), [
    ("from tasks_conformance.result import RunResult", ("tasks_conformance.result", "RunResult")),
    ("import tasks_conformance.result", ("tasks_conformance.result", "")),
    ("from tasks_conformance import result", ("tasks_conformance.result", "")),
    ("from tasks_conformance import __version__", ("tasks_conformance.__version__", "")),
    ("from tasks_conformance import api", ("tasks_conformance", "api")),
    ("from ..result import RunResult", ("tasks_conformance.result", "RunResult")),
    ("from . import _text", ("tasks_conformance.reporters._text", "")),
    ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from tasks_conformance.result import X",
     ("tasks_conformance.result", "X")),
    ("def f():\n    from tasks_conformance.reporters.markdown import _cell",
     ("tasks_conformance.reporters.markdown", "_cell")),
])
def test_every_kind_of_import_is_an_edge(tmp_path: Path, code: str, expected: tuple[str, str]) -> None:
    path = tmp_path / "mod.py"
    path.write_text(code + "\n")
    modules = {m: tmp_path for m in ("tasks_conformance", "tasks_conformance.result", "tasks_conformance.reporters",
                                     "tasks_conformance.reporters._text", "tasks_conformance.reporters.markdown",
                                     "tasks_conformance.reporters.human")}
    found = [(target, name) for target, name, _line in _imports("tasks_conformance.reporters.human", path, modules)]
    assert expected in found


# The reference client is a client of its own, as the reference server is a server of its own: a
# defect of the checker's stack (its session, runner, transports' clients, JSON-RPC reading) must
# not be one the reference client shares, or the scripted servers it is run against would pass
# it unseen. From core it takes the wire's words and constants, the SSE framing parser, the answer
# matching the main command's --input-responses uses (one meaning of an answer), and the httpx
# loader; everything else it does itself (reference/wire.py's Link: its own JSON-RPC peer).
REFERENCE_CLIENT_TAKES = {
    VERSION, f"{PACKAGE}.core.eras", f"{PACKAGE}.core.wires", f"{PACKAGE}.core.protocol", f"{PACKAGE}.core.text",
    f"{PACKAGE}.core.input_answers", f"{PACKAGE}.core.transports.sse", f"{PACKAGE}.core.transports.lean_httpx",
}


def test_the_reference_client_is_independent_of_the_checkers_stack() -> None:
    own = f"{PACKAGE}.client.reference"  # the package client/reference/ and the harness entry reference_client
    graph = import_graph(ROOT)
    taken = {(m, t) for m, targets in graph.items() if m.startswith(own) for t in targets if not t.startswith(own)}
    assert taken, "no reference client module found"
    stray = sorted(f"{m} -> {t}" for m, t in taken if t not in REFERENCE_CLIENT_TAKES)
    assert not stray, "\n".join(stray)
