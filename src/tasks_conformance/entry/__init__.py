"""The entry points: the command line, the Python API, the pytest plugin, and the glue they share
(several runs in one invocation, suites, the baseline step, `explain`). The top layer: nothing
below imports it."""
