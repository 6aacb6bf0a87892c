"""The cyclic garbage collector paused while the command line starts, and resumed for the run.

Start-up imports modules, builds the typer app and the check registry: objects that live as long
as the process, which the collector would walk again at every threshold for nothing (about 12 ms
of a run's start, measured by benchmarks/task_bound.py). Only the command line pauses it (the
Python API and the pytest plugin leave the host's collector alone); the run resumes it with
everything built so far frozen out of its way, so a hostile server's cyclic garbage is still
collected during the run.
"""

from __future__ import annotations

import gc

_paused = False


def pause() -> None:
    global _paused
    if gc.isenabled():
        gc.disable()
        _paused = True


def resume() -> None:
    """Collect again, if pause() stopped it; what exists now is frozen (never collected)."""
    global _paused
    if _paused:
        _paused = False
        gc.freeze()
        gc.enable()
