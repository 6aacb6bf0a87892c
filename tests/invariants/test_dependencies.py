"""The dependency bounds: every requirement the package and its test extra name has a lower and
an upper bound, so that a fresh install next month resolves to versions the suite has run on (a
new release without an upper bound once turned the suite red on a fresh machine: a deprecation
warning on stderr). The interop extra pins exact releases of the third-party servers it runs."""

from __future__ import annotations

import re
import tomllib

import pytest
from helpers.paths import ROOT

PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())


def _bounded(requirement: str) -> bool:
    spec = requirement.split(";")[0]
    return ">=" in spec and re.search(r"<(?!=)", spec) is not None


def _requirements() -> list[str]:
    project = PYPROJECT["project"]
    return [*project["dependencies"], *project["optional-dependencies"]["test"],
            *PYPROJECT["build-system"]["requires"]]


@pytest.mark.parametrize("requirement", _requirements())
def test_every_dependency_has_a_lower_and_an_upper_bound(requirement: str) -> None:
    assert _bounded(requirement), f"{requirement}: give it a tested lower bound (>=) and upper bound (<)"


@pytest.mark.parametrize("requirement", PYPROJECT["project"]["optional-dependencies"]["interop"])
def test_the_interop_servers_are_pinned(requirement: str) -> None:
    assert re.fullmatch(r"[A-Za-z0-9._-]+==[0-9][0-9A-Za-z.]*", requirement), requirement


def test_the_bound_test_can_fail() -> None:
    assert not _bounded("authlib>=1.3") and not _bounded("rich<16") and _bounded("rich>=13.7,<16")


def test_ci_runs_the_readmes_full_test_command() -> None:
    readme = (ROOT / "README.md").read_text()
    [command] = [line for line in readme.splitlines() if line.startswith("python3 -m venv") and "pytest" in line]
    pytest_part = command.rsplit("&& ", 1)[1]
    assert pytest_part == "python -m pytest -q --full"
    ci = (ROOT / ".ci" / "run").read_text().splitlines()
    assert ci[-1] == pytest_part, "CI runs exactly the README's test command"
