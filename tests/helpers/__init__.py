"""What the tests share and are not tests themselves: the repository's paths, running the tool in
this process or as a command, starting and stopping servers, made-up runs and evidence for the
reporters and checks, and the fast run's shortened settings. A test imports from here, never from
another test module; tests/conftest.py holds only pytest's hooks."""
