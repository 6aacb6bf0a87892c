"""The scripted servers a client under test talks to, one per era (extension.py for 2026-07-28,
legacy.py for 2025-11-25), each saying only how it answers a message (`respond`): http.py serves
them on 127.0.0.1 and records every byte, stdio.py runs one as the process a stdio client spawns,
and waits.py holds how long they wait for what a client may never do (a run's parameter)."""
