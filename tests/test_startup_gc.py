"""The command line pauses the cyclic collector while it starts and the run resumes it; nothing
else (the Python API, the pytest plugin) has its host's collector touched."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest
from conftest import REFERENCE, run, stdio

from tasks_conformance import startup_gc


@pytest.fixture
def collector() -> Iterator[None]:
    was = gc.isenabled()
    try:
        yield
    finally:
        startup_gc._paused = False
        gc.unfreeze()
        (gc.enable if was else gc.disable)()


def test_a_paused_collector_is_resumed_by_the_run(collector: None) -> None:
    startup_gc.pause()
    assert not gc.isenabled()
    run(**stdio(REFERENCE), check_ids=["tasks-removed-methods-not-found"])
    assert gc.isenabled() and gc.get_freeze_count() > 0


def test_a_collector_the_host_turned_off_stays_off(collector: None) -> None:
    gc.disable()
    startup_gc.pause()
    startup_gc.resume()
    assert not gc.isenabled()


def test_serve_reference_collects_its_garbage() -> None:
    # A server started from the command line runs for as long as it is wanted: the collector the
    # entry paused must be back on while it serves.
    import subprocess
    import sys

    code = ("import gc, sys\nfrom tasks_conformance import reference, __main__\n"
            "reference.serve = lambda argv: print('gc', gc.isenabled()) or 0\n"
            "sys.argv = ['tasks-conformance', 'serve-reference']\n__main__.main()\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert "gc True" in proc.stdout, proc.stderr
