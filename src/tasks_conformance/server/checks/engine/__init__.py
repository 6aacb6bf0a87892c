"""The checks' machinery, apart from the area modules beside it: the registry (check(), CheckSpec,
its validation), the preconditions and shape helpers the checks share, rule ownership (one defect,
one failure) and the README's table generated from the registry. No check is defined here."""
