"""The probes' machinery, apart from the probe modules beside it: what a probe gets (its context),
the schedule that runs the planned probes, and the reading of each probe's preconditions from its
source. No probe is defined here."""
