"""The scripted server as a stdio process, for `tasks-conformance client --transport stdio`: the
client under test spawns it (the command is in MCP_CONFORMANCE_SERVER_COMMAND and is the last
argument), it plays one scenario's script with the very servers the HTTP runs use (play.py; their
`respond` knows nothing of the transport), and it reports every frame it read or wrote, with its
time, to the tasks-conformance run that is waiting on 127.0.0.1 (stdio_relay.py), so that stdio
verdicts rest on bytes exactly as HTTP ones do.

    python -m tasks_conformance.client.scripted.stdio --report HOST:PORT --token-file PATH
                                                      --scenario NAME [--lifetime S]

Newline-delimited JSON-RPC on stdin/stdout (play.py). The process ends when stdin ends, when the
run closes the report connection, or after `--lifetime` seconds, whichever comes first: a server a
client leaks cannot outlive the run. SIGTERM ends it TERM_GRACE_S after it is reading stdin, not at
once: what the client wrote before it stopped its server is still read and reported.

This module imports only the standard library (and waits.py) before the hello: a client may stop
its server soon after writing its request (the Python SDK closes stdin, then sends SIGTERM 2 s
later), and on a loaded machine the scripted servers' imports alone can take longer than that. So
the hello and the SIGTERM handler come first, the script after.

The report protocol, one JSON object a line: first `{"token", "pid"}` (the token read from
--token-file, a file only the run's user can read: it is not in the command the client is
given), then one per frame,
`{"seq", "time", "direction", "replyTo", "data"}` (`time` in seconds since the hello, `data` the
frame's bytes in base64, `direction` "in" for what the client sent), and `{"limit"}` each time the
client reaches one (core/scenario_record.py `Limit`: a line over play.MAX_LINE, a message beyond
play.MAX_MESSAGES). A frame is let go of once reported: this process keeps none.
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import json
import os
import signal
import socket
import sys
import threading
import time
from types import FrameType
from typing import TYPE_CHECKING, Any

from tasks_conformance.client.scripted.waits import DEFAULT_WAITS, FLAGS, ScriptedWaits

if TYPE_CHECKING:
    from tasks_conformance.core.wirelog import Frame

DEFAULT_LIFETIME_S = 60.0
CONNECT_TIMEOUT_S = 5.0
TERM_GRACE_S = 1.0  # after SIGTERM: time to read and report what is left in the stdin pipe


class Reporter:
    """Every frame of the local wire log, sent to the run as it is recorded (before the reply it
    describes reaches the client, so the run has it by the time the client has gone)."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.lock = threading.Lock()
        self.broken = False

    def send(self, record: dict[str, Any]) -> None:
        data = json.dumps(record, separators=(",", ":")).encode() + b"\n"
        with self.lock:
            if self.broken:
                return
            try:
                self.sock.sendall(data)
            except OSError:
                self.broken = True  # the run has gone: the watcher ends the process

    def frame(self, frame: Frame) -> None:
        self.send({"seq": frame.seq, "time": round(frame.time, 6), "direction": frame.direction,
                   "replyTo": frame.reply_to, "data": base64.b64encode(frame.data).decode("ascii")})


def _exit_when_closed(sock: socket.socket) -> None:
    """The run closed the report connection (or went away): stop at once."""
    with contextlib.suppress(OSError):
        while sock.recv(4096):
            pass
    os._exit(0)


def _exit_after(seconds: float) -> None:
    threading.Event().wait(seconds)
    os._exit(0)


_SERVING = threading.Event()  # the script is loaded and stdin is being read
_TERM_ASKED = threading.Event()  # SIGTERM came before that


def _on_sigterm(_signum: int, _frame: FrameType | None) -> None:
    """SIGTERM: exit TERM_GRACE_S after stdin is being read (at once if it is, else once the script
    is loaded). Meanwhile stdin is still read (a client closes it first, so its end comes soon and
    the process ends as usual): nothing the client wrote is lost, however long the imports took."""
    if _SERVING.is_set():
        _exit_soon()
    else:
        _TERM_ASKED.set()


def _exit_soon() -> None:
    threading.Thread(target=_exit_after, args=(TERM_GRACE_S,), daemon=True).start()


def build_parser() -> argparse.ArgumentParser:
    """The flags the run starts this server with (stdio_relay.server_argv)."""
    parser = argparse.ArgumentParser(prog="scripted_stdio", description=__doc__.split("\n")[0])
    parser.add_argument("--report", required=True, metavar="HOST:PORT")
    parser.add_argument("--token-file", required=True, metavar="PATH")
    # Its name is checked once the scenarios are imported, after the hello (the module's docstring).
    parser.add_argument("--scenario", required=True)
    parser.add_argument("--lifetime", type=float, default=DEFAULT_LIFETIME_S)
    for name, flag in FLAGS.items():  # the run's waits (scripted/waits.py)
        parser.add_argument(flag, dest=name, type=float, default=getattr(DEFAULT_WAITS, name))
    return parser


def waits_of(ns: argparse.Namespace) -> ScriptedWaits:
    """The waits the flags name (ValueError for one out of bounds)."""
    return ScriptedWaits(**{name: getattr(ns, name) for name in FLAGS})


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    ns = parser.parse_args(argv)
    host, _, port = ns.report.rpartition(":")
    try:
        with open(ns.token_file, encoding="ascii") as f:
            token = f.read(256).strip()
    except (OSError, ValueError) as exc:
        print(f"scripted server: cannot read the tasks-conformance run's token file: {exc}", file=sys.stderr)
        return 1
    try:
        sock = socket.create_connection((host, int(port)), timeout=CONNECT_TIMEOUT_S)
    except (OSError, ValueError) as exc:
        print(f"scripted server: cannot reach the tasks-conformance run at {ns.report}: {exc}", file=sys.stderr)
        return 1
    sock.settimeout(None)
    reporter = Reporter(sock)
    # Before the hello: once the run has it, a SIGTERM must no longer end the process at once.
    signal.signal(signal.SIGTERM, _on_sigterm)
    hello = time.monotonic()  # frame times are seconds since the hello
    reporter.send({"token": token, "pid": os.getpid()})
    threading.Thread(target=_exit_when_closed, args=(sock,), daemon=True).start()
    threading.Thread(target=_exit_after, args=(ns.lifetime,), daemon=True).start()
    import anyio

    from tasks_conformance.client.scenarios import BY_NAME
    from tasks_conformance.client.scripted import play
    from tasks_conformance.core.wirelog import WireLog

    if ns.scenario not in BY_NAME:
        parser.error(f"--scenario: no scenario is named {ns.scenario!r}")
    try:
        waits = waits_of(ns)
    except ValueError as exc:
        parser.error(str(exc))
    wire = WireLog(clock_start=hello)

    def report(frame: Frame) -> None:
        reporter.frame(frame)
        wire.discard(frame)  # the run keeps it: a flood does not fill this process (nor empty its frames)

    wire.observer = report
    app = play.scripted_server(BY_NAME[ns.scenario], wire, waits)
    app.transport = play.CHANNEL
    _SERVING.set()  # signal handlers run in this thread: no SIGTERM comes between these two lines
    if _TERM_ASKED.is_set():
        _exit_soon()
    with contextlib.suppress(KeyboardInterrupt):
        anyio.run(play.serve, app, wire, lambda limit: reporter.send({"limit": limit.value}))
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_WR)
    # Exit without interpreter shutdown: a reader thread may still be blocked in os.read.
    sys.stdout.flush()
    os._exit(0)


if __name__ == "__main__":
    raise SystemExit(main())
