"""What the fast run shortens of a client run: the scenarios a breaking client is judged over, and
the scripted servers' waits for what a client may never do.

A check that reads many scenarios is broken over the scenarios made to exercise the break's rule or
the check's (their `rules` name it) and a sample of one scenario of each kind of the client's
traffic: each scenario is a client process, and every scenario the check reads, per break, was two
thirds of the client modules' time. The --full run still judges every break over every scenario
(test_over_every_scenario_nothing_but_the_owner_fails and its stdio and legacy twins).

A break that never does what a scenario waits for (a cancel, an answer, a look at a stream) makes
the scripted server wait its give-up time: 6 s for a user, QUICK_WAITS in the tests, which are
still long enough for the reference client and every breaking client to act."""

from __future__ import annotations

from tasks_conformance.client.checks import CLIENT_CHECKS
from tasks_conformance.client.scenarios import BY_NAME, SCENARIOS
from tasks_conformance.client.scripted.waits import ScriptedWaits
from tasks_conformance.core.eras import Era

QUICK_WAITS = ScriptedWaits(give_up_s=1.0, slow_answer_s=0.5, listen_s=1.0)

# Per wire: a task followed to its end, an input answered, a cancel, and a request that is not a
# tool call (extension) or a listing (legacy).
EVERY_SCENARIO_SAMPLE: dict[Era, tuple[str, ...]] = {
    "extension": ("tasks-client-lifecycle", "tasks-client-input", "tasks-client-cancel",
                  "tasks-client-task-on-prompt"),
    "legacy": ("tasks-client-legacy-lifecycle", "tasks-client-legacy-input", "tasks-client-legacy-cancel",
               "tasks-client-legacy-list"),
}


def judged_over(owner: str, rule: str, era: Era, transport: str) -> tuple[str, ...]:
    """The scenarios of `era` over `transport` that a break of `rule`, owned by the check `owner`,
    is judged over: all the owner reads when those are few, else those of them that exercise the
    rule or the owner's rules, or are in the sample."""
    runnable = [s.name for s in SCENARIOS if era in s.eras and transport in s.transports]
    named = CLIENT_CHECKS[owner].scenarios
    reads = [s for s in named if s in runnable] if named else runnable  # a check that names none reads all
    sample = EVERY_SCENARIO_SAMPLE[era]
    if len(reads) <= len(sample):
        return tuple(reads)
    rules = {rule, *CLIENT_CHECKS[owner].requirements}  # a check may need its own rules' scenario
    chosen = tuple(s for s in reads if rules & set(BY_NAME[s].rules) or s in sample)
    assert chosen, (owner, rule)  # a check that reads none of them would be judged on nothing
    return chosen
