"""The shape the code keeps: era knowledge in one place, docs generated from the registry."""

from __future__ import annotations

import re
import subprocess
import sys

from helpers.paths import ROOT

from tasks_conformance.server.checks.engine.readme_table import END, START, checks_table

SRC = ROOT / "src" / "tasks_conformance"
# Era names compared as strings, or the Wire members of a tasks era compared directly.
ERA_COMPARISON = re.compile(
    r"""(==|!=|\bis\b(\s+not)?)\s*(["'](legacy|extension)["']|Wire\.(LEGACY|EXTENSION))"""
    r"""|(["'](legacy|extension)["']|Wire\.(LEGACY|EXTENSION))\s*(==|!=|\bis\b)"""
)
# wires/ is the home of era knowledge and session/ speaks each era; the reference server is an
# independent implementation that shares no code with the checker on purpose.
ERA_HOMES = ("core/wires", "server/session", "server/reference")


def test_no_era_comparison_outside_wires_and_session() -> None:
    found = []
    for path in SRC.rglob("*.py"):
        rel = path.relative_to(SRC)
        if any(rel.as_posix().startswith(home + "/") for home in ERA_HOMES):
            continue
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            if ERA_COMPARISON.search(line):
                found.append(f"{rel}:{n}: {line.strip()}")
    assert not found, "ask the WireDialect (or judge per wire) instead:\n" + "\n".join(found)


def test_the_era_comparison_detector_detects() -> None:
    assert ERA_COMPARISON.search('if ev.wire == "extension":')
    assert ERA_COMPARISON.search("if d.wire is Wire.LEGACY:")
    assert not ERA_COMPARISON.search("if ev.wire is Wire.NONE:")


def test_the_era_literals_name_the_wires_of_the_dialect_registry() -> None:
    """The values are built from core/wires; the one Literal that types them must agree."""
    from typing import get_args

    from tasks_conformance.core import eras
    from tasks_conformance.core.requirements import ERAS
    from tasks_conformance.core.wires import TASK_WIRES
    from tasks_conformance.settings.config import EXPECT_WIRES, ExpectWire

    assert set(eras.ERAS) == {str(wire) for wire in TASK_WIRES}
    assert set(get_args(eras.EraOrBoth)) == ERAS == {*eras.ERAS, eras.BOTH}
    assert set(get_args(ExpectWire)) == set(EXPECT_WIRES)


# A Literal that spells an era's name: only core/eras.py may (every other type is built from it).
ERA_LITERAL = re.compile(r"""Literal\[[^\]]*["'](?:legacy|extension|modern)["']""")


def test_one_era_literal_in_src_and_no_other_word_for_an_era() -> None:
    spelt = [f"{path.relative_to(SRC)}:{n}" for path in sorted(SRC.rglob("*.py")) if path.name != "eras.py"
             for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if ERA_LITERAL.search(line)]
    assert spelt == []
    modern = [f"{path.relative_to(SRC)}:{n}" for path in sorted(SRC.rglob("*")) if path.is_file()
              and path.suffix in (".py", ".js", ".css", ".html", ".json", ".toml", ".md")
              for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if "modern" in line.lower()]
    assert modern == []


def test_the_era_literal_detector_detects() -> None:
    assert ERA_LITERAL.search('Era = Literal["legacy", "modern"]')
    assert ERA_LITERAL.search("X = Literal['both', 'extension']")
    assert not ERA_LITERAL.search('Transport = Literal["http", "stdio"]')


def test_readme_table_of_checks_is_generated_from_the_registry() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split(START, 1)[1].split(END, 1)[0].strip()
    assert section == checks_table(), "README.md is stale: run python scripts/update_docs.py"


def test_update_docs_check_mode_agrees() -> None:
    proc = subprocess.run([sys.executable, str(ROOT / "scripts" / "update_docs.py"), "--check"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr


def test_every_probe_has_its_typed_record_and_every_record_a_probe() -> None:
    from tasks_conformance.server.evidence.records import RECORD_TYPES
    from tasks_conformance.server.probes import load_probes

    probes = load_probes()
    assert set(probes) == set(RECORD_TYPES)
    assert all(spec.record is RECORD_TYPES[name] for name, spec in probes.items())


def test_listing_the_checks_loads_no_network_layer() -> None:
    code = ("import sys; import tasks_conformance.server.checks; "
            "print(sorted(m for m in sys.modules if m.startswith(('anyio', 'httpx', 'tasks_conformance.core.rpc'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True).stdout
    assert out.strip() == "[]"


def test_every_check_belongs_to_a_spec_area_which_names_its_junit_class() -> None:
    from xml.etree import ElementTree as ET

    from tasks_conformance.client.checks import CLIENT_CHECKS
    from tasks_conformance.core.areas import AREAS
    from tasks_conformance.core.result import CheckResult, Discovery, RunResult
    from tasks_conformance.reporters.junit import to_xml
    from tasks_conformance.server.checks import CHECKS

    # Every area holds a check, every check an area.
    assert {c.area for c in [*CHECKS.values(), *CLIENT_CHECKS.values()]} == set(AREAS)
    assert CHECKS["tasks-legacy-list-includes-task"].area == "listing"
    assert CHECKS["tasks-legacy-status-transitions"].area == "status"
    check = CheckResult(id="tasks-legacy-list-includes-task", category="lifecycle", area="listing", title="t",
                        description="d", requirements=["S-LEG-MUST-17"], status="passed")
    result = RunResult(outcome="passed", target="x", durationMs=1, discovery=Discovery(), checks=[check])
    xml = to_xml(result, "UTF-8", None)
    assert [c.get("classname") for c in ET.fromstring(xml).iter("testcase")] == ["tasks_conformance.listing"]


def test_the_machinery_defines_no_check_and_no_probe() -> None:
    """checks/engine/ and probes/engine/ hold the machinery apart from the area modules: every
    judge and every probe function lives beside them, none inside."""
    from tasks_conformance.server.checks import CHECKS
    from tasks_conformance.server.probes import load_probes

    judges = {j.fn.__module__ for spec in CHECKS.values() for j in spec.judges.values()}
    probes = {p.fn.__module__ for p in load_probes().values()}
    assert judges and probes
    assert not {m for m in judges if m.startswith("tasks_conformance.server.checks.engine")}
    assert not {m for m in probes if m.startswith("tasks_conformance.server.probes.engine")}
    assert all(m.startswith("tasks_conformance.server.checks.") for m in judges)
