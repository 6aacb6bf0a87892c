"""A deferral is a verdict of its own (one defect, one failure: the check that owns the rule fails,
the other defers to it): skipReason `deferred`, naming its owner in every report, neither failed
nor could-not-run, never making a run incomplete and left out of the score. And a run that tested
nothing (every check not applicable) is incomplete, never passed (policy P-46). On hand-made results;
the runs against servers and clients are in test_one_defect.py, test_baseline.py, test_durable.py
and test_client_settings.py."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

from helpers.made_runs import DEFERRING, OWNER, a_check, a_run, deferred_run, nothing_tested_run, render_text

from tasks_conformance.core.profiles import score
from tasks_conformance.reporters.badge import message
from tasks_conformance.reporters.html import run_data


def _case(xml: str, name: str) -> ET.Element:
    root = ET.fromstring(xml.split("\n", 1)[1])
    return next(c for c in root.iter("testcase") if c.get("name") == name)


def test_a_deferral_is_neither_failed_nor_could_not_run() -> None:
    result = deferred_run()
    deferring = result.checks[2]
    assert deferring.bucket == "deferred" and deferring.deferredTo == OWNER
    assert result.outcome == "failed"  # the owner's failure, alone
    assert result.incompleteCauses == [] and result.incompleteReason is None
    assert result.counts() == {"total": 3, "passed": 1, "failed": 1, "couldNotRun": 0, "notApplicable": 0,
                               "deferred": 1}
    assert result.summary == "1/3 checks passed, 1 failed, 0 could not run, 0 not applicable, 1 deferred"
    creation = result.category_summary()["creation"].to_json()
    assert creation == {"total": 2, "passed": 0, "failed": 1, "skipped": 1, "couldNotRun": 0, "deferred": 1}
    # The score counts the defect once, at its owner: as if the deferring check had not been selected.
    assert result.score == score(result.checks[:2]) == 50
    # The owner's failure accepted, nothing else fails: the run passes (the baseline case, by hand).
    assert a_run([result.checks[0], deferring]).outcome == "passed"


def test_a_deferral_names_its_owner_in_every_report() -> None:
    result = deferred_run()
    doc = json.loads(render_text("json", result))
    by_id = {c["id"]: c for c in doc["checks"]}
    assert (by_id[DEFERRING]["skipReason"], by_id[DEFERRING]["deferredTo"]) == ("deferred", OWNER)
    assert by_id[DEFERRING]["details"]["deferredTo"] == {"S-LEG-MUST-02": OWNER}
    assert by_id[OWNER]["deferredTo"] is None and doc["counts"]["deferred"] == 1
    summary = {c["id"]: c for c in json.loads(render_text("json-summary", result))["checks"]}
    assert (summary[DEFERRING]["skipReason"], summary[DEFERRING]["deferredTo"]) == ("deferred", OWNER)

    case = _case(render_text("junit-xml", result), DEFERRING)
    assert [e.tag for e in case if e.tag in ("failure", "error", "skipped")] == ["skipped"]
    skipped = case.find("skipped")
    assert skipped is not None and (skipped.get("message") or "").startswith(f"deferred to {OWNER}: S-LEG-MUST-02")

    human = render_text("human", result)
    row = next(line for line in human.splitlines() if DEFERRING in line)
    assert row.startswith("→ deferred") and f"deferred to {OWNER}:" in " ".join(human.split())
    assert "1 deferred" in human.splitlines()[-2] and "could not run," in human.splitlines()[-2]
    assert "Could not establish conformance" not in human

    markdown = render_text("markdown", result)
    md_row = next(line for line in markdown.splitlines() if f"`{DEFERRING}`" in line)
    assert md_row.startswith("| ↪️ deferred |") and f"deferred to {OWNER}\\:" in md_row.replace("\\-", "-")
    assert "**Incomplete:**" not in markdown

    checks = [c for area in run_data("", result)["areas"] for c in area["checks"]]
    html = next(c for c in checks if c["id"] == DEFERRING)
    assert html["bucket"] == "deferred" and html["deferredTo"] == OWNER and "cause" not in html
    assert [c["bucket"] for c in checks] == ["failed", "deferred", "passed"]  # by area: creation first
    assert message(result)[0] == "1/3 passed"  # the badge counts what the summary counts (1/3 checks passed)


def test_a_run_that_tested_nothing_is_incomplete_with_the_fix_its_checks_name() -> None:
    result = nothing_tested_run()
    assert result.outcome == "incomplete" and result.score is None
    (cause,) = result.incompleteCauses
    assert cause.cause == "nothing was tested: none of the 2 checks selected applies to this run (policy P-46)"
    assert cause.fix == "give --server-command to test durability" and cause.checks == ()
    assert (result.incompleteReason or "").startswith("Could not establish conformance — nothing was tested")
    human = render_text("human", result)
    assert human.splitlines()[-1] == "Could not establish conformance — 1 cause above"
    assert "fix: give --server-command to test durability" in human
    assert "> **Incomplete:** Could not establish conformance\n" in render_text("markdown", result)
    assert message(result)[0] == "0/2 passed, nothing tested"
    # Without a fix of their own, the checks point at choosing others.
    plain = a_run([a_check("tasks-legacy-task-id-wins", "skipped", skip="not-applicable", message="legacy only")])
    assert plain.outcome == "incomplete" and "tasks-conformance explain ID" in plain.incompleteCauses[0].fix
    # One check tested beside them, and the run is what that check says: not-applicable never holds it back.
    tested = a_run([*result.checks, a_check("tasks-wire-resolvable", "passed")])
    assert tested.outcome == "passed" and tested.incompleteCauses == []
