"""The server subject: a tasks server under test. Sessions speak each era's client side to it,
probes collect typed evidence, checks judge the evidence, the runner plans and runs them; the
reference server (reference/) is the compliant server the tests and `demo` run against."""
