"""Lines read from a stream a client writes (its stdout, the stdio scripted server's stdin), each
bounded: a line over the limit is reported once by its head and the rest of it, up to its newline,
is dropped, never read as a line of its own (no resync in the middle of a line: the tail of an
over-long line is not a message, nor an outcome line).
"""

from __future__ import annotations

HEAD_BYTES = 256  # what is kept of a line over the limit, to say what it was


def split_lines(chunk: bytes, pending: bytearray, skipping: list[bool], limit: int) -> list[tuple[bytes, bool]]:
    """(line, False) for each whole line `chunk` ends, and (its first HEAD_BYTES, True) for a line
    that went over `limit` bytes. `pending` holds the line in progress between chunks, and
    `skipping[0]` whether that line is over the limit (its bytes are dropped until its newline).
    Only the chunk is searched for a newline: a long line is not copied again for each chunk."""
    out: list[tuple[bytes, bool]] = []
    start = 0
    while True:
        newline = chunk.find(b"\n", start)
        piece = chunk[start:] if newline < 0 else chunk[start:newline]
        if not skipping[0]:
            pending.extend(piece)
            if len(pending) > limit:
                skipping[0] = True
                out.append((bytes(pending[:HEAD_BYTES]), True))
                pending.clear()
        if newline < 0:
            return out
        if not skipping[0]:
            out.append((bytes(pending), False))
        pending.clear()
        skipping[0] = False
        start = newline + 1
