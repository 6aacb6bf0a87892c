"""How long a scripted server waits for what a client may never do.

A scenario's server cannot tell a client that is slow from one that never acts: it waits a while,
then moves on (a task waiting for a cancel or an answer fails, a slow call answers, a stream ends).
These waits are parameters of the run, not constants, so that tests shorten them instead of waiting
them out; a user's run keeps the defaults, long enough for any client that acts."""

from __future__ import annotations

from dataclasses import dataclass

# The scripted stdio server's flags, one per field: the run passes its waits on to the process.
FLAGS = {"give_up_s": "--give-up-s", "slow_answer_s": "--slow-answer-s", "listen_s": "--listen-s"}


@dataclass(frozen=True)
class ScriptedWaits:
    # 2025-11-25: a task that would wait forever (for a cancel or an input answer) fails after this
    # long, and a request of ours the client leaves unanswered is given up; a GET stream stays open
    # twice as long (the scenario's server goes sooner).
    give_up_s: float = 6.0
    # tasks-client-request-cancel: how long the slow tools/call runs before it answers, unless cancelled.
    slow_answer_s: float = 3.0
    # tasks-client-subscription-ack: how long a subscriptions/listen stream stays open (then ends gracefully).
    listen_s: float = 6.0

    def __post_init__(self) -> None:
        for name in FLAGS:
            if not 0 < getattr(self, name) <= 600:
                raise ValueError(f"{name} must be in (0, 600] seconds, got {getattr(self, name)!r}")

    def argv(self) -> tuple[str, ...]:
        """The flags that give a scripted stdio server these waits: those other than the default
        (a user's run starts the server with the command line it always had)."""
        default = ScriptedWaits()
        return tuple(part for name, flag in FLAGS.items() if getattr(self, name) != getattr(default, name)
                     for part in (flag, f"{getattr(self, name):g}"))


DEFAULT_WAITS = ScriptedWaits()  # a user's run
