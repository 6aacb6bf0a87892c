"""Import httpx without its command-line client.

httpx's package __init__ imports `httpx._main` (its `httpx` command) whenever click, rich and
pygments are installed, and they are here: rich for our human report, click with typer. That
is about half of httpx's import time, paid on every HTTP run for a command we never call.
httpx itself falls back to a stub `httpx.main` when `_main` cannot be imported; we let it, for
that one import only, and then lift the block so `import httpx._main` works as usual later.

Worth it (issue 21: a speed shim stays where it saves at least 5 % of `--help` or of a full run):
a full run over HTTP against the reference server (`slow_compute`, medians of 20 runs alternated,
benchmarks/shims.py, docs/benchmarks.md) took 0.568 s with it and 0.616 s without: +8.4 % wall,
CPU 0.273 s against 0.311 s (+14 %); +8.2 % and +8.3 % in two earlier sessions. `--help` and
stdio runs never import httpx (0 %).
"""

from __future__ import annotations

import sys


def import_httpx() -> None:
    """Import httpx (if nothing has yet) without `httpx._main`."""
    if "httpx" in sys.modules:
        return
    blocked = "httpx._main" not in sys.modules
    if blocked:
        sys.modules["httpx._main"] = None  # type: ignore[assignment]  # makes the import fail: see above
    try:
        import httpx  # noqa: F401
    finally:
        if blocked and "httpx._main" in sys.modules and sys.modules["httpx._main"] is None:
            del sys.modules["httpx._main"]
