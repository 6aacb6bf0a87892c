"""The client's supervisor: a small process between the run and the client under test (launch.py
starts it as `python -I -S subreaper.py`, so it imports the standard library only), so that
nothing the client starts outlives its scenario, not even a process that left the client's
process group or session (setsid, a double fork).

On Linux it makes itself a child subreaper (prctl PR_SET_CHILD_SUBREAPER): a descendant whose
parent exits is re-parented to it, not to init, so every descendant still alive has it as an
ancestor and its tree, read from /proc, is the client's whole tree. It starts the client in a
session of its own (as the run always did), says when the client exited, and, when told, stops
the client's process group (SIGTERM, then SIGKILL) and then every descendant still alive, which it
names ("left behind"). Where the machine allows no subreaper or has no /proc it stops the client's
process group only, and says that descendants outside it were not tracked.

It signals only processes that descend from it, read from /proc just before the signal (through a
pidfd where the kernel has them, so the pid cannot be reused between the check and the signal).
Bounded: at most MAX_PROCS_SCANNED entries of /proc read per scan, MAX_DESCENDANTS processes
named and stopped, SWEEP_ROUNDS rounds, and its own --lifetime.

The control protocol, one JSON object a line on the socket given as --control FD. To the run:
{"started": PID} or {"error": TEXT}; {"exit": CODE} when the client exits; after a sweep
{"left": [[PID, COMMAND], ...], "tracked": BOOL, "more": BOOL}. From the run: the lines `term`,
`kill` and `sweep`. When the socket ends (the run has gone) or --lifetime passes, it does all
three at once and exits.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import socket
import sys
import time
from collections.abc import Collection, Sequence
from typing import Any

PR_SET_CHILD_SUBREAPER = 36
MAX_PROCS_SCANNED = 65_536  # entries of /proc read in one scan of the tree
MAX_DESCENDANTS = 256  # processes named and stopped in a sweep; beyond, "more" is said
MAX_DEPTH = 256  # steps up a parent chain
SWEEP_ROUNDS = 4  # SIGTERM, then SIGKILL (a descendant may fork while it is being stopped)
COMMAND_BYTES = 4096  # of a left-behind process's command line (the run redacts, then cuts it)
POLL_S = 0.02
SCAN_S = 0.05  # between scans of /proc while left-behind processes are stopping


def make_subreaper() -> bool:
    """Become the child subreaper of everything the client starts (Linux 3.4+); False elsewhere."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        return int(libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)) == 0
    except (OSError, AttributeError):
        return False


def has_proc() -> bool:
    return os.path.isdir("/proc/self/task")


def stat(pid: int) -> tuple[int, str, int, int] | None:
    """(parent pid, state, process group, start time) of a process, from /proc; None: gone or unreadable."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            data = f.read()
    except OSError:
        return None
    fields = data.rpartition(b")")[2].split()  # the command, in parentheses, may hold anything
    try:
        return int(fields[1]), fields[0].decode("ascii", "replace"), int(fields[2]), int(fields[19])
    except (IndexError, ValueError):
        return None


def start_time(pid: int) -> int | None:
    """When the process started (clock ticks since boot): with its pid, it names one process."""
    st = stat(pid)
    return st[3] if st is not None else None


def descends_from(pid: int, roots: Collection[int]) -> bool | None:
    """Whether the process descends from one of `roots` (its parent chain in /proc, bounded);
    None: this machine cannot tell (no /proc)."""
    if not has_proc():
        return None
    current = pid
    for _ in range(MAX_DEPTH):
        st = stat(current)
        if st is None:
            return False
        if st[0] in roots:
            return True
        if st[0] <= 1:
            return False
        current = st[0]
    return False


def signal_descendant(pid: int, sig: int, roots: Collection[int]) -> bool:
    """Send `sig` to `pid` only if it descends from one of `roots`, checked after a pidfd pins the
    process where the kernel has them. Whether it was sent."""
    fd: int | None = None
    with contextlib.suppress(AttributeError, OSError):
        fd = os.pidfd_open(pid)
    try:
        if descends_from(pid, roots) is not True:
            return False
        if fd is not None:
            signal.pidfd_send_signal(fd, sig)
        else:
            os.kill(pid, sig)
        return True
    except OSError:
        return False
    finally:
        if fd is not None:
            os.close(fd)


def descendants(root: int) -> tuple[list[tuple[int, int]], bool]:
    """The live descendants of `root`, parents first, each (pid, process group); and whether a
    limit cut the scan."""
    children: dict[int, list[tuple[int, int]]] = {}
    limited = False
    try:
        names = os.listdir("/proc")
    except OSError:
        return [], False
    scanned = 0
    for name in names:
        if not name.isdigit():
            continue
        scanned += 1
        if scanned > MAX_PROCS_SCANNED:
            limited = True
            break
        st = stat(int(name))
        if st is not None and st[1] not in ("Z", "X"):
            children.setdefault(st[0], []).append((int(name), st[2]))
    found: list[tuple[int, int]] = []
    queue = list(children.get(root, ()))
    while queue:
        if len(found) >= MAX_DESCENDANTS:
            return found, True
        proc = queue.pop(0)
        found.append(proc)
        queue.extend(children.get(proc[0], ()))
    return found, limited


def command_of(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            raw = f.read(COMMAND_BYTES)
    except OSError:
        return "?"
    return " ".join(part.decode("utf-8", "replace") for part in raw.split(b"\0") if part) or "?"


class Supervisor:
    def __init__(self, control: socket.socket, wake: int, grace_s: float) -> None:
        self.control = control
        self.wake = wake  # readable when a SIGCHLD arrived
        self.grace_s = grace_s
        self.me = os.getpid()
        self.tracked = make_subreaper() and has_proc()
        self.client: int | None = None
        self.code: int | None = None

    def say(self, message: dict[str, Any]) -> None:
        with contextlib.suppress(OSError):
            self.control.sendall(json.dumps(message, separators=(",", ":")).encode() + b"\n")

    def reap(self) -> None:
        """Reap every exited child (the client, and orphans re-parented here); say the client's exit."""
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            if pid == self.client and self.code is None:
                self.code = os.waitstatus_to_exitcode(status)
                self.say({"exit": self.code})

    def pause(self, seconds: float) -> None:
        """Wait up to `seconds` for a child to exit, reaping."""
        with contextlib.suppress(OSError):
            if select.select([self.wake], [], [], seconds)[0]:
                os.read(self.wake, 4096)
        self.reap()

    def group(self, sig: int) -> None:
        """Signal the client's process group: its members in the tree where it is tracked (no pid
        outside it), the whole group by its id otherwise (as the run did before it had this)."""
        if self.client is None:
            return
        if not self.tracked:
            with contextlib.suppress(OSError):
                os.killpg(self.client, sig)
            return
        members = [pid for pid, pgrp in descendants(self.me)[0] if pgrp == self.client]
        for pid in members:
            signal_descendant(pid, sig, (self.me,))

    def term(self) -> None:
        self.group(signal.SIGTERM)
        deadline = time.monotonic() + self.grace_s
        while self.code is None and time.monotonic() < deadline:
            self.pause(POLL_S)

    def sweep(self) -> dict[str, Any]:
        """Stop every descendant still alive, naming each."""
        left: dict[int, str] = {}
        more = False
        if not has_proc():
            return {"left": [], "tracked": False, "more": False}
        for n in range(SWEEP_ROUNDS):
            found, limited = descendants(self.me)
            more = more or limited
            if not found:
                break
            for pid, _pgrp in found:
                if pid not in left:
                    left[pid] = command_of(pid)
                signal_descendant(pid, signal.SIGTERM if n == 0 else signal.SIGKILL, (self.me,))
            deadline = time.monotonic() + (self.grace_s if n == 0 else SCAN_S * 4)
            while time.monotonic() < deadline and descendants(self.me)[0]:
                self.pause(SCAN_S)
        self.reap()
        return {"left": [[pid, cmd] for pid, cmd in left.items()], "tracked": self.tracked, "more": more}

    def finish(self) -> None:
        self.term()
        self.group(signal.SIGKILL)
        self.sweep()


def main(argv: Sequence[str]) -> int:
    if "--" not in argv:
        print("usage: subreaper.py --control FD --grace S --lifetime S -- COMMAND...", file=sys.stderr)
        return 2
    split = list(argv).index("--")
    opts = dict(zip(argv[:split:2], argv[1:split:2], strict=False))
    command = list(argv[split + 1:])
    control = socket.socket(fileno=int(opts["--control"]))
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_r, False)
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w, warn_on_full_buffer=False)
    signal.signal(signal.SIGCHLD, lambda _sig, _frame: None)
    sup = Supervisor(control, wake_r, float(opts.get("--grace", "2")))
    deadline = time.monotonic() + float(opts.get("--lifetime", "3600"))
    import subprocess

    try:  # close_fds (the default): the client inherits neither the control socket nor the pipe
        proc = subprocess.Popen(command, start_new_session=True)
    except OSError as exc:
        sup.say({"error": f"{type(exc).__name__}: {exc}"})
        return 0
    sup.client = proc.pid
    # The client's stdin, stdout and stderr are the run's pipes: holding them here would keep them
    # open after the client and what it started have closed them.
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    os.close(null)
    sup.say({"started": proc.pid})
    pending = b""
    while time.monotonic() < deadline:
        ready: list[int] = []
        wait_s = min(1.0, max(0.0, deadline - time.monotonic()))
        with contextlib.suppress(OSError):
            ready = select.select([control.fileno(), wake_r], [], [], wait_s)[0]
        if wake_r in ready:
            with contextlib.suppress(OSError):
                os.read(wake_r, 4096)
        sup.reap()
        if control.fileno() not in ready:
            continue
        try:
            data = control.recv(4096)
        except OSError:
            data = b""
        if not data:
            break  # the run has gone: stop everything
        pending += data
        while b"\n" in pending:
            line, _, pending = pending.partition(b"\n")
            word = line.strip().decode("ascii", "replace")
            if word == "term":
                sup.term()
            elif word == "kill":
                sup.group(signal.SIGKILL)
                sup.reap()
            elif word == "sweep":
                sup.say(sup.sweep())
                return 0
        pending = pending[-4096:]
    sup.finish()
    return 0


if __name__ == "__main__":
    code = main(sys.argv[1:])
    sys.stdout.flush()
    os._exit(code)
