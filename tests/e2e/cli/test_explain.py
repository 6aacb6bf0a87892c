"""`tasks-conformance explain ID`, `tasks-conformance requirements` (the coverage matrix) and the
generated docs/requirements.md; every requirement a check cites links to its own era's spec."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest
from helpers.paths import ROOT
from helpers.policy_citations import cited_policies

from tasks_conformance.client.checks import CLIENT_CHECKS
from tasks_conformance.core.requirements import load
from tasks_conformance.core.wires import Wire
from tasks_conformance.entry import coverage
from tasks_conformance.entry.cli import run_cli
from tasks_conformance.server.checks import CHECKS, ordered_checks

LEGACY_SPEC = "/specification/2025-11-25/"
EXTENSION_SPECS = ("modelcontextprotocol.io/specification/2026-07-28/", "ext-tasks/specification/2026-07-28/")
# Extension rules that only SEP-2663 (the public proposal that introduced the extension) states,
# in its backward-compatibility section; named one by one so that no other rule can drift there.
SEP_2663_ONLY = {"S-EXT-MUST-24", "S-EXT-MUST-25", "S-EXT-MUST-26", "S-EXT-MUST-27", "S-EXT-MUST-28"}
SEP_2663 = "https://modelcontextprotocol.io/seps/2663-tasks-extension#"
SEP_2663_COMPAT = SEP_2663 + "backward-compatibility"


def _cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = run_cli(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("check_id", sorted(CHECKS))
def test_explain_every_check(capsys: pytest.CaptureFixture[str], check_id: str) -> None:
    code, out, err = _cli(capsys, "explain", check_id)
    assert code == 0, err
    spec = CHECKS[check_id]
    assert out.startswith(f"{check_id}: {spec.title}")
    assert "Precondition:" in out and "What it sends:" in out and "What it expects:" in out
    from tasks_conformance.server.probes import load_probes

    for probe in spec.probes:
        assert f"- {probe}: {load_probes()[probe].description}" in out
    registry = load()
    for judge in spec.judges.values():
        for rid in judge.requirements:
            assert f"{rid} ({registry[rid].level}): {registry[rid].text}" in out
            assert registry[rid].url in out
    # Its breaking fixture, by the command that starts it (issue: explain names it).
    breaking = out.split("Breaking fixture", 1)[1].split("\n\n", 1)[0]
    assert "python fixtures/" in breaking and "  none" not in breaking


@pytest.mark.matrix
@pytest.mark.parametrize("rid", list(load()))
def test_explain_every_requirement(capsys: pytest.CaptureFixture[str], rid: str) -> None:
    code, out, err = _cli(capsys, "explain", rid)
    assert code == 0, err
    req = load()[rid]
    assert out.startswith(f"{rid} ({req.level})")
    assert req.text in out and req.url in out
    judges = [c.id for c in ordered_checks() if any(rid in j.requirements for j in c.judges.values())]
    judges += [c.id for c in CLIENT_CHECKS.values() if rid in c.requirements]
    honour = [c.id for c in ordered_checks() if rid in c.permits]
    honour += [c.id for c in CLIENT_CHECKS.values() if rid in c.permits]
    if judges:
        assert f"Judged by: {', '.join(judges)}" in out
    elif honour:
        assert f"Permitted; honoured by: {', '.join(honour)}" in out
    else:
        assert f"Not tested: {req.untestable or req.not_tested or coverage.NO_CHECK_YET}" in out


def test_explain_is_case_insensitive(capsys: pytest.CaptureFixture[str]) -> None:
    assert _cli(capsys, "explain", "s-ext-must-03")[1].startswith("S-EXT-MUST-03 (MUST)")
    assert _cli(capsys, "explain", "TASKS-INLINE-RESULT")[1].startswith("tasks-inline-result:")
    assert _cli(capsys, "explain", "S-EXT-MUST-3")[1].startswith("S-EXT-MUST-03 (MUST)")


def test_explain_an_untestable_requirement_says_why(capsys: pytest.CaptureFixture[str]) -> None:
    rid, req = next((i, r) for i, r in load().items() if r.testability == "N")
    out = _cli(capsys, "explain", rid)[1]
    assert f"Not tested: {req.untestable}" in out


def test_explain_an_unknown_id_is_exit_2_with_close_matches(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _cli(capsys, "explain", "tasks-inline-reslt")
    assert code == 2 and out == ""
    assert err.startswith("tasks-conformance: error: unknown check or requirement id 'tasks-inline-reslt'")
    assert "close matches: tasks-inline-result" in err
    code, _out, err = _cli(capsys, "explain", "S-EXT-MUTS-03")
    assert code == 2 and "S-EXT-MUST-03" in err
    code, _out, err = _cli(capsys, "explain", "zzz")
    assert code == 2 and "close matches" not in err


def test_every_cited_requirement_links_to_its_own_eras_spec() -> None:
    registry = load()
    for spec in ordered_checks():
        for wire, judge in spec.judges.items():
            for rid in judge.requirements:
                req = registry[rid]
                if req.era == "legacy":
                    assert LEGACY_SPEC in req.url, (spec.id, rid, req.url)
                elif req.era == "extension" and rid in SEP_2663_ONLY:
                    assert req.url == SEP_2663_COMPAT, (spec.id, rid, req.url)
                elif req.era == "extension":
                    assert any(s in req.url for s in EXTENSION_SPECS), (spec.id, rid, req.url)
                else:
                    assert LEGACY_SPEC in req.url or any(s in req.url for s in EXTENSION_SPECS), (rid, req.url)
                # A judge on one wire cites that wire's rules (or the shared base rules).
                if wire is Wire.LEGACY:
                    assert req.era in ("legacy", "both"), (spec.id, rid)
                elif wire is Wire.EXTENSION:
                    assert req.era in ("extension", "both"), (spec.id, rid)


def test_requirements_matrix_text_and_json(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _err = _cli(capsys, "requirements")
    assert code == 0
    lines = out.splitlines()
    registry = load()
    for rid, req in registry.items():
        line = next(line for line in lines if line.split(" ", 1)[0] == rid)
        assert req.level in line
    code, out, _err = _cli(capsys, "requirements", "--format", "json")
    assert code == 0
    doc = json.loads(out)
    assert [r["id"] for r in doc["requirements"]] == list(registry)
    n = doc["counts"]
    assert n["requirements"] == len(registry) == n["tested"] + n["permitted"] + n["untestable"] + n["notTestedYet"]
    by_subject = doc["countsBySubject"]
    assert set(by_subject) == {"server", "client"}
    for key, value in n.items():
        assert by_subject["server"][key] + by_subject["client"][key] == value, key
    assert by_subject["client"]["requirements"] == sum(r.subject == "client" for r in registry.values()) > 0
    by_id = {r["id"]: r for r in doc["requirements"]}
    # tasks-inline-result judges S-EXT-MUST-10; an N row says why it is not tested.
    assert "tasks-inline-result" in by_id["S-EXT-MUST-10"]["checks"] and by_id["S-EXT-MUST-10"]["notTested"] is None
    untestable = next(r for r in registry.values() if r.testability == "N")
    assert by_id[untestable.id]["checks"] == [] and by_id[untestable.id]["notTested"] == untestable.untestable
    assert _cli(capsys, "requirements", "--format", "xml")[0] == 2


# What a client T rule's notTested must say: what is not built yet that would judge it.
NOT_BUILT_YET = "Not built yet"


def test_every_requirement_is_judged_permitted_or_explained(capsys: pytest.CaptureFixture[str]) -> None:
    # The coverage bar, for SERVER rules: a T requirement is judged by a check, or (a MAY) honoured by
    # one; a P one is judged, honoured, or carries the reason it is not judged; an N one says why it
    # cannot be seen.
    code, out, _err = _cli(capsys, "requirements", "--format", "json")
    assert code == 0
    doc = json.loads(out)
    explained = {r["id"]: r["notTested"] is not None and r["notTested"] != coverage.NO_CHECK_YET
                 for r in doc["requirements"]}
    open_rows = []
    for r in (r for r in doc["requirements"] if r["subject"] == "server"):
        if r["testability"] == "T":
            ok = bool(r["checks"]) or (r["level"] == "MAY" and bool(r["permittedBy"]))
        else:
            ok = bool(r["checks"]) or bool(r["permittedBy"]) or explained[r["id"]]
        if not ok:
            open_rows.append(r["id"])
    assert not open_rows, open_rows
    assert doc["counts"]["notTestedYet"] == 0
    # Every visible MAY is honoured by at least one check: the freedom is declared where it could be misjudged.
    mays = [r for r in doc["requirements"] if r["level"] == "MAY" and r["testability"] != "N"
            and r["subject"] == "server"]
    assert mays and all(r["permittedBy"] for r in mays), [r["id"] for r in mays if not r["permittedBy"]]
    text_out = _cli(capsys, "requirements")[1]
    assert coverage.NO_CHECK_YET not in text_out
    assert "permitted; honoured by: " in text_out


def test_every_client_requirement_is_judged_permitted_or_says_what_is_not_built(
        capsys: pytest.CaptureFixture[str]) -> None:
    # The coverage bar, for CLIENT rules, kept honest while the client mode grows: a T rule is judged by
    # a client check, or (a MAY) honoured by one, or its notTested says what is not built yet that
    # would judge it; a P rule is judged, honoured or explained; an N one says why it cannot be seen.
    # A rule a check judges or honours carries no notTested: a reason that outlived its check is stale.
    doc = json.loads(_cli(capsys, "requirements", "--format", "json")[1])
    registry = load()
    explained = {r["id"]: r["notTested"] not in (None, coverage.NO_CHECK_YET) for r in doc["requirements"]}
    client = [r for r in doc["requirements"] if r["subject"] == "client"]
    assert client and {r["id"][:2] for r in client} == {"C-"}
    open_rows, stale = [], []
    for r in client:
        req = registry[r["id"]]
        covered = bool(r["checks"]) or bool(r["permittedBy"])
        if covered and req.not_tested is not None:
            stale.append(r["id"])
        if r["testability"] == "T":
            ok = covered or (req.not_tested or "").startswith(NOT_BUILT_YET)
        else:
            ok = covered or explained[r["id"]]
        if not ok:
            open_rows.append(r["id"])
    assert not open_rows, open_rows
    assert not stale, stale
    assert doc["countsBySubject"]["client"]["notTestedYet"] == 0
    # A visible client MAY a scenario lets a client use is honoured by the checks that see it; one no
    # scenario shows yet says so (a T one), or why the wire cannot show it (a P one).
    mays = [r for r in client if r["level"] == "MAY" and r["testability"] != "N"]
    unhonoured = [r["id"] for r in mays if not r["permittedBy"] and not (
        (registry[r["id"]].not_tested or "").startswith(NOT_BUILT_YET) if r["testability"] == "T"
        else explained[r["id"]])]
    assert mays and any(r["permittedBy"] for r in mays) and not unhonoured, unhonoured
    # Every rule a client check cites, judged or permitted, is a client rule of the registry.
    for check in CLIENT_CHECKS.values():
        for rid in (*check.requirements, *check.permits):
            assert rid in registry and registry[rid].subject == "client", (check.id, rid)
        assert all(registry[rid].level == "MAY" for rid in check.permits), check.id


def test_docs_requirements_md_is_current() -> None:
    out = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "update_docs.py"), "--check"],
        capture_output=True, text=True, timeout=60,
    )
    assert out.returncode == 0, out.stderr
    text = (ROOT / "docs" / "requirements.md").read_text(encoding="utf-8")
    assert text == coverage.markdown()
    for rid, req in load().items():
        assert f"| [{rid}]({req.url}) | {req.level} |" in text


def test_every_policy_a_check_cites_has_a_section_in_docs_policies() -> None:
    # The ids the checks give as data (warn(text, "P-NN"), policies=(…)); the prose of every source
    # file, descriptions included, is held to the same headings by test_requirements.py.
    cited = cited_policies()
    headings = set(re.findall(r"^## (P-\d{2}) ", (ROOT / "docs" / "policies.md").read_text(encoding="utf-8"), re.M))
    assert cited and cited <= headings


@pytest.mark.parametrize("check_id", sorted(CLIENT_CHECKS))
def test_explain_every_client_check(capsys: pytest.CaptureFixture[str], check_id: str) -> None:
    from tasks_conformance.client.scenarios import SCENARIOS

    code, out, err = _cli(capsys, "explain", check_id)
    assert code == 0, err
    check = CLIENT_CHECKS[check_id]
    assert out.startswith(f"{check_id}: {check.title}") and check.description in out
    assert "client check (tasks-conformance client)" in out
    for scenario in SCENARIOS:
        assert (f"- {scenario.name} " in out) == check.reads(scenario.name), scenario.name
    registry = load()
    for rid in (*check.requirements, *check.permits):
        assert f"{rid} ({registry[rid].level}): {registry[rid].text}" in out and registry[rid].url in out
    assert ("What it permits" in out) == bool(check.permits)
    assert "not in the requirements registry" not in out


def test_explain_a_client_check_and_a_client_rule(capsys: pytest.CaptureFixture[str]) -> None:
    out = _cli(capsys, "explain", "TASKS-CLIENT-INPUT-ANSWERED")[1]
    assert out.startswith("tasks-client-input-answered: ")
    assert "- tasks-client-input (extension): " in out and "- tasks-client-lifecycle " not in out
    assert "C-EXT-MUST-09 (MUST): " in out and "What it permits" in out and "C-EXT-MAY-07 (MAY): " in out
    assert "--scenario tasks-client-input" in out
    out = _cli(capsys, "explain", "c-ext-must-2")[1]
    assert out.startswith("C-EXT-MUST-02 (MUST) — Clients: 2026-07-28 extension")
    assert "Judged by: tasks-client-follows-task" in out
    assert "Client scenarios that show it: tasks-client-lifecycle, tasks-client-sync-result" in out
    out = _cli(capsys, "explain", "C-EXT-MAY-07")[1]
    assert "Permitted; honoured by: tasks-client-input-answered" in out
    assert "A MAY is a freedom the client has" in out
    legacy = _cli(capsys, "explain", "C-LEG-MUST-05")[1]
    assert "Clients: 2025-11-25" in legacy and "Judged by: tasks-client-legacy-fetches-result" in legacy
    legacy = _cli(capsys, "explain", "C-LEG-MUST-06")[1]
    assert "Judged by: tasks-client-legacy-keeps-polling" in legacy
    legacy = _cli(capsys, "explain", "C-LEG-MUST-09")[1]
    assert "Judged by: tasks-client-legacy-list-cursor" in legacy
    assert "Client scenarios that show it: tasks-client-legacy-list" in legacy
    legacy = _cli(capsys, "explain", "C-LEG-MUST-12")[1]
    assert "Judged by: tasks-client-legacy-hosted-capabilities" in legacy
    assert "Client scenarios that show it: tasks-client-legacy-hosted" in legacy
    legacy = _cli(capsys, "explain", "C-LEG-SHOULD-06")[1]
    assert "Judged by: tasks-client-legacy-get-stream" in legacy
    assert "Client scenarios that show it: tasks-client-legacy-get-stream" in legacy
    extension = _cli(capsys, "explain", "C-EXT-SHOULD-11")[1]
    assert "Judged by: tasks-client-subscription-ack" in extension
    legacy = _cli(capsys, "explain", "C-LEG-MUST-11")[1]
    assert "Not tested: Not built yet: no 2025-11-25 client scenario sends task progress" in legacy
    code, _out, err = _cli(capsys, "explain", "tasks-client-follows-tsk")
    assert code == 2 and "close matches: tasks-client-follows-task" in err


def test_the_coverage_matrix_includes_the_client_checks(capsys: pytest.CaptureFixture[str]) -> None:
    judged, honoured = coverage.judged_by(), coverage.permitted_by()
    for check in CLIENT_CHECKS.values():
        assert all(check.id in judged[rid] for rid in check.requirements), check.id
        assert all(check.id in honoured[rid] for rid in check.permits), check.id
    by_id = {r["id"]: r for r in json.loads(_cli(capsys, "requirements", "--format", "json")[1])["requirements"]}
    assert by_id["C-EXT-MUST-02"]["checks"] == ["tasks-client-follows-task"]
    assert by_id["C-EXT-MUST-02"]["subject"] == "client" and by_id["S-EXT-MUST-10"]["subject"] == "server"
    assert by_id["C-EXT-MAY-07"]["permittedBy"] == ["tasks-client-input-answered"]
    text = coverage.markdown()
    assert text.index("## Clients: ") > text.index("## both wires")  # the client sections come after the server ones


def test_every_client_rule_links_to_its_own_eras_spec() -> None:
    for rid, req in load().items():
        if req.subject != "client":
            continue
        if req.era == "legacy":
            assert LEGACY_SPEC in req.url or req.url == SEP_2663_COMPAT, (rid, req.url)
        else:
            assert any(s in req.url for s in EXTENSION_SPECS) or req.url.startswith(SEP_2663), (rid, req.url)


def test_explain_a_check_lists_the_freedoms_it_permits(capsys: pytest.CaptureFixture[str]) -> None:
    out = _cli(capsys, "explain", "tasks-cancel-ack-shape")[1]
    assert "What it permits" in out
    assert "S-EXT-MAY-07 (MAY)" in out and "S-LEG-MAY-06 (MAY)" in out
    out = _cli(capsys, "explain", "S-EXT-MAY-07")[1]
    assert "Permitted; honoured by: tasks-cancel-ack-shape" in out
