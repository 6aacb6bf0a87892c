"""What a run is doing, for whoever listens: the runner's progress words carry their phase as a
field, so the progress line never parses the sentence (the Python API's `progress` callback still
receives the sentence, a `str`)."""

from __future__ import annotations

import enum


class Phase(enum.Enum):
    CONNECTING = "connecting"  # opening the connection and negotiating the era
    PROBE = "probe"  # one probe under way; `detail` says which
    JUDGING = "judging"  # the traffic is over, the checks judge


class Step(str):
    """A progress sentence with its phase and, for a probe, what the probe does."""

    phase: Phase
    detail: str

    def __new__(cls, text: str, phase: Phase, detail: str = "") -> Step:
        step = super().__new__(cls, text)
        step.phase, step.detail = phase, detail
        return step


CONNECTING = Step("connecting and negotiating the protocol era", Phase.CONNECTING)
JUDGING = Step("judging", Phase.JUDGING)


def probing(description: str) -> Step:
    return Step(f"probe: {description}", Phase.PROBE, description)
