"""Baselines (--baseline, --strict-baseline, --update-baseline): a listed failure is known in
every report and does not fail the run; a listed check that passes is fixed; an expired entry
fails again; an unknown check id is a usage error. The real failure comes from the breaking
fixture `legacy-ttl-names` (only tasks-ttl-shape fails); the command line runs in this process."""

from __future__ import annotations

import datetime as dt
import json
import shlex
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import jsonschema  # type: ignore[import-untyped,unused-ignore]
import pytest
from helpers.paths import BROKEN, REFERENCE, ROOT
from helpers.runs import invoke, tool, usage_error
from helpers.zygote import forked

import tasks_conformance
from tasks_conformance.core.baseline import PLACEHOLDER_REASON, Baseline, BaselineEntry, apply, parse
from tasks_conformance.core.errors import UsageError
from tasks_conformance.core.result import CheckResult, Discovery, RunResult, decide_outcome
from tasks_conformance.reporters import schema_text

pytest_plugins = ["pytester"]

FAILING = "tasks-ttl-shape"
CHECKS = [FAILING, "tasks-wire-resolvable", "tasks-inline-result"]
REASON = "ttlMs lands in server v2 <see #41> & \"soon\""


def target(broken: bool = True) -> list[str]:
    server = list(forked([*BROKEN, "--break", "legacy-ttl-names"] if broken else REFERENCE))
    args = ["--command", server[0]]
    for arg in [*server[1:], "--transport", "stdio"]:
        args += ["--args", arg]
    args += ["--tool-name", "slow_compute", "--timeout", "5000", "--poll-timeout", "5000"]
    for check in CHECKS:
        args += ["--check-id", check]
    return args


def baseline_file(tmp_path: Path, *entries: str, name: str = "baseline.toml") -> Path:
    path = tmp_path / name
    path.write_text("\n".join(entries), encoding="utf-8")
    return path


def entry(check: str = FAILING, reason: str = REASON, extra: str = "") -> str:
    return f"[[known]]\ncheck = {json.dumps(check)}\nreason = {json.dumps(reason)}\n{extra}"


# ---------------------------------------------------------------------------------------------
# Against a server


def test_without_a_baseline_the_fixture_fails_exactly_one_check() -> None:
    res = invoke(*target(), "--format", "json")
    doc = json.loads(res.stdout)
    assert res.code == 1
    assert {c["id"]: c["status"] for c in doc["checks"]} == {FAILING: "failed", "tasks-wire-resolvable": "passed",
                                                             "tasks-inline-result": "passed"}
    # Without a baseline the documents are what they always were: no baseline fields at all.
    assert "baseline" not in doc and "known" not in doc["counts"]
    assert all("baseline" not in c for c in doc["checks"])


def test_a_known_failure_passes_the_run_and_every_reporter_says_known(tmp_path: Path) -> None:
    base = baseline_file(tmp_path, entry(extra='era = "2026-07-28"\n'))
    files = {name: tmp_path / f"report.{name}" for name in ("json", "json-summary", "junit-xml", "markdown", "human")}
    reporters = [arg for name, path in files.items() for arg in ("--reporter", f"{name}={path}")]
    res = invoke(*target(), "--baseline", str(base), *reporters)
    assert res.code == 0, res
    text = {name: path.read_text(encoding="utf-8") for name, path in files.items()}

    doc = json.loads(text["json"])
    jsonschema.validate(doc, json.loads(schema_text("json")))
    assert doc["outcome"] == "passed" and doc["counts"]["known"] == 1 and doc["counts"]["failed"] == 0
    known = next(c for c in doc["checks"] if c["id"] == FAILING)
    assert known["status"] == "failed"  # what the check found is unchanged; the baseline accepts it
    assert known["baseline"]["state"] == "known" and known["baseline"]["reason"] == REASON
    assert doc["baseline"]["entries"] == [{"check": FAILING, "era": "2026-07-28", "reason": REASON, "expires": None,
                                           "state": "known"}]
    assert "1 known (baseline)" in doc["summary"]
    assert next(c for c in doc["checks"] if c["id"] == "tasks-inline-result")["baseline"] is None

    summary = json.loads(text["json-summary"])
    jsonschema.validate(summary, json.loads(schema_text("json-summary")))
    assert next(c for c in summary["checks"] if c["id"] == FAILING)["baseline"]["state"] == "known"
    assert summary["counts"]["known"] == 1 and summary["baseline"]["path"] == str(base)

    tree = ET.fromstring(text["junit-xml"])
    xmlschema = pytest.importorskip("xmlschema")
    xmlschema.XMLSchema(str(ROOT / "tests" / "data" / "junit.xsd")).validate(text["junit-xml"])
    case = next(c for c in tree.iter("testcase") if c.get("name") == FAILING)
    skipped = case.find("skipped")
    assert skipped is not None and skipped.get("message") == f"known failure: {REASON}"
    assert case.find("failure") is None
    suite = tree.find("testsuite")
    assert suite is not None and suite.get("failures") == "0" and suite.get("skipped") == "1"

    row = next(line for line in text["markdown"].splitlines() if f"`{FAILING}`" in line)
    assert row.startswith("| 🟡 known failure |")
    assert "baseline\\: known failure\\: ttlMs lands in server v2 &lt;see #41&gt; &amp; \"soon\"" in row
    human = text["human"]
    assert f"~ known  {FAILING}" in human and f"baseline: known failure: {REASON}" in human
    assert human.rstrip().splitlines()[-2].startswith("PASSED")


def test_a_known_failure_scores_as_not_passed(tmp_path: Path) -> None:
    plain = json.loads(invoke(*target(), "--format", "json").stdout)
    base = baseline_file(tmp_path, entry())
    known = json.loads(invoke(*target(), "--baseline", str(base), "--format", "json").stdout)
    assert known["outcome"] == "passed" and plain["outcome"] == "failed"
    assert known["score"] == plain["score"] < 100


def test_an_entry_for_the_other_era_does_not_apply(tmp_path: Path) -> None:
    base = baseline_file(tmp_path, entry(extra='era = "legacy"\n'))
    res = invoke(*target(), "--baseline", str(base), "--format", "json")
    doc = json.loads(res.stdout)
    assert res.code == 1 and doc["baseline"]["entries"][0]["state"] == "unused"
    human = invoke(*target(), "--baseline", str(base), "--format", "human").stdout
    assert f"not used in this run: {FAILING}" in " ".join(human.split())  # the path may wrap


def test_an_expired_entry_fails_again_and_says_so(tmp_path: Path) -> None:
    base = baseline_file(tmp_path, entry(extra="expires = 2020-01-31\n"))
    res = invoke(*target(), "--baseline", str(base), "--format", "human")
    assert res.code == 1, res
    assert "baseline entry expired on 2020-01-31; this failure counts again" in res.stdout
    doc = json.loads(invoke(*target(), "--baseline", str(base), "--format", "json").stdout)
    failed = next(c for c in doc["checks"] if c["id"] == FAILING)
    assert failed["baseline"]["state"] == "expired" and doc["counts"]["failed"] == 1


def test_an_entry_that_has_not_expired_yet_still_holds(tmp_path: Path) -> None:
    later = (dt.date.today() + dt.timedelta(days=30)).isoformat()
    base = baseline_file(tmp_path, entry(extra=f"expires = {later}\n"))
    res = invoke(*target(), "--baseline", str(base), "--format", "human")
    assert res.code == 0 and f"known failure (until {later})" in res.stdout


def test_a_fixed_entry_is_reported_and_fails_only_with_strict_baseline(tmp_path: Path) -> None:
    base = baseline_file(tmp_path, entry())
    res = invoke(*target(broken=False), "--baseline", str(base), "--format", "human")
    assert res.code == 0, res
    assert "fixed — remove it from the baseline" in res.stdout and "1 baseline entry fixed" in res.stdout
    md = tmp_path / "r.md"
    res = invoke(*target(broken=False), "--baseline", str(base), "--strict-baseline", "--reporter", f"markdown={md}",
                 "--format", "json")
    assert res.code == 1, res
    doc = json.loads(res.stdout)
    assert doc["outcome"] == "failed" and doc["baseline"]["strict"] is True
    assert next(c for c in doc["checks"] if c["id"] == FAILING)["baseline"]["state"] == "fixed"
    assert "fixed — remove it from the baseline" in md.read_text(encoding="utf-8")


def test_json_baselines_work_too(tmp_path: Path) -> None:
    base = tmp_path / "b.json"
    known = [{"check": FAILING, "reason": "r", "expires": "2999-01-01"}]
    base.write_text(json.dumps({"known": known}), encoding="utf-8")
    assert invoke(*target(), "--baseline", str(base), "-q").code == 0


def test_update_baseline_round_trip_keeps_reasons(tmp_path: Path) -> None:
    base = tmp_path / "b.toml"
    res = invoke(*target(), "--update-baseline", str(base), "-q")
    assert res.code == 1 and f"wrote 1 baseline entry to {base}" in res.stderr
    written = base.read_text(encoding="utf-8")
    assert f'check = "{FAILING}"' in written and PLACEHOLDER_REASON in written and 'era = "2026-07-28"' in written
    # The reader writes the reason; updating again keeps it, and the baseline passes the run.
    base.write_text(written.replace(PLACEHOLDER_REASON, "waiting for v2"), encoding="utf-8")
    assert invoke(*target(), "--baseline", str(base), "--update-baseline", str(base), "-q").code == 0
    assert 'reason = "waiting for v2"' in base.read_text(encoding="utf-8")
    # Once the server is fixed, an update empties the baseline.
    assert invoke(*target(broken=False), "--update-baseline", str(base), "-q").code == 0
    assert parse(base.read_text(encoding="utf-8"), str(base)) == ()
    as_json = tmp_path / "b.json"
    assert invoke(*target(), "--update-baseline", str(as_json), "-q").code == 1
    assert json.loads(as_json.read_text(encoding="utf-8"))["known"][0]["check"] == FAILING


# One defect, two checks that see it: the owner of S-LEG-MUST-02 fails, the other defers to it.
OWNER, DEFERRING = "tasks-required-tool-needs-task", "tasks-undeclared-creation-refused"


def owned_defect() -> list[str]:
    server = list(forked([*BROKEN, "--break", "required-without-task-ok"]))
    args = ["--command", server[0]]
    for arg in [*server[1:], "--transport", "stdio"]:
        args += ["--args", arg]
    return [*args, "--protocol-version", "2025-11-25", "--check-id", OWNER, "--check-id", DEFERRING,
            "--timeout", "5000", "--poll-timeout", "3000"]


def test_a_deferral_follows_its_owner_under_a_baseline(tmp_path: Path) -> None:
    # The command line as a user runs it: write the baseline from today's failures, then run with it.
    base = tmp_path / "baseline.toml"
    first = tool(*owned_defect(), "--update-baseline", str(base), "--format", "json")
    assert first.returncode == 1, first.stderr
    assert [e.check for e in parse(base.read_text(encoding="utf-8"), str(base))] == [OWNER]  # the one failure
    known = tool(*owned_defect(), "--baseline", str(base), "--format", "json")
    # The owner's failure is known, and the deferral follows it: nothing fails, nothing is incomplete.
    assert known.returncode == 0, known.stdout
    doc = json.loads(known.stdout)
    assert doc["outcome"] == "passed" and doc["incompleteCauses"] == [] and doc["incompleteReason"] is None
    by_id = {c["id"]: c for c in doc["checks"]}
    assert by_id[OWNER]["baseline"]["state"] == "known"
    assert (by_id[DEFERRING]["status"], by_id[DEFERRING]["skipReason"]) == ("skipped", "deferred")
    assert by_id[DEFERRING]["deferredTo"] == OWNER and by_id[OWNER]["deferredTo"] is None
    assert doc["counts"] == {"total": 2, "passed": 0, "failed": 0, "couldNotRun": 0, "notApplicable": 0,
                             "deferred": 1, "known": 1}


def test_baseline_from_the_config_file(tmp_path: Path) -> None:
    base = baseline_file(tmp_path, entry())
    conf = tmp_path / "c.toml"
    conf.write_text(f"baseline = {json.dumps(str(base))}\n", encoding="utf-8")
    assert invoke(*target(), "--config", str(conf), "-q").code == 0
    conf.write_text(f"baseline = {json.dumps(str(base))}\nstrict-baseline = true\n", encoding="utf-8")
    assert invoke(*target(broken=False), "--config", str(conf), "-q").code == 1


def test_the_api_sees_known(tmp_path: Path) -> None:
    base = baseline_file(tmp_path, entry())
    server = list(forked([*BROKEN, "--break", "legacy-ttl-names", "--transport", "stdio"]))
    report = tasks_conformance.run(command=server, tool_name="slow_compute", check_ids=CHECKS, baseline=base,
                                   timeout_ms=5000, poll_timeout_ms=5000)
    assert report.passed and report.exit_code == 0 and report.failed == []
    assert report.check(FAILING).bucket == "known"


def test_the_pytest_plugin_skips_a_known_failure_with_its_reason(pytester: pytest.Pytester, tmp_path: Path) -> None:
    base = baseline_file(tmp_path, entry(reason="waiting for v2"))
    server = shlex.join(forked([*BROKEN, "--break", "legacy-ttl-names", "--transport", "stdio"]))
    args = ["--tasks-conformance-command", server, "--tasks-conformance-tool", "slow_compute",
            "--tasks-conformance-timeout", "5000", "--tasks-conformance-poll-timeout", "5000",
            *[a for c in CHECKS for a in ("--tasks-conformance-check-id", c)]]
    failing = pytester.runpytest_subprocess("-v", "-rs", *args)
    assert failing.ret == 1
    known = pytester.runpytest_subprocess("-v", "-rs", *args, "--tasks-conformance-baseline", str(base))
    assert known.ret == 0, known.stdout.str()
    known.stdout.fnmatch_lines([f"*tasks-conformance::{FAILING} SKIPPED*", "*known failure: waiting for v2*"])
    known.assert_outcomes(passed=2, skipped=1)


# ---------------------------------------------------------------------------------------------
# Usage errors


@pytest.mark.parametrize(("text", "message"), [
    (entry(check="tasks-ttl-shap"), "entry 1: unknown check id 'tasks-ttl-shap'; did you mean tasks-ttl-shape or "
                                     "tasks-ttl-integer-shape or tasks-status-payload-shape?"),
    (entry(reason=""), f"entry 1 ({FAILING}): reason must be a non-empty string: say why the failure is accepted"),
    (entry(extra='era = "2024-01-01"\n'), f"entry 1 ({FAILING}): era must be one of 2025-11-25, 2026-07-28, legacy, "
                                          "extension, got '2024-01-01'"),
    (entry(extra='expires = "next week"\n'),
     f"entry 1 ({FAILING}): expires must be a date YYYY-MM-DD, got 'next week'"),
    (entry(extra='expiry = 2030-01-01\n'), "entry 1: unknown key 'expiry' (did you mean expires?)"),
    (entry() + "\n" + entry(), f"{FAILING} is listed twice"),
    ("known = 3\n", "known must be a list of entries"),
    ("[[know]]\ncheck = 'x'\n", "unknown key 'know'; a baseline has one key, known (a list of entries)"),
    ("{not json",
     "not valid JSON or TOML: Expecting property name enclosed in double quotes: line 1 column 2 (char 1)"),
])
def test_a_bad_baseline_is_a_one_line_usage_error(tmp_path: Path, text: str, message: str) -> None:
    base = baseline_file(tmp_path, text)
    got = usage_error(*target(), "--baseline", str(base))
    assert got.startswith(f"--baseline {base}: ") and got.endswith(message), got


def test_baseline_flag_errors(tmp_path: Path) -> None:
    assert usage_error(*target(), "--strict-baseline") == "--strict-baseline needs --baseline FILE"
    assert usage_error(*target(), "--update-baseline", str(tmp_path)) == "--update-baseline needs a file name"
    nowhere = tmp_path / "missing" / "b.toml"
    assert usage_error(*target(), "--update-baseline", str(nowhere)) == (
        f"--update-baseline: cannot write {str(nowhere)!r}: no writable directory {str(nowhere.parent)!r}")
    missing = tmp_path / "none.toml"
    assert usage_error(*target(), "--baseline", str(missing)) == (
        f"--baseline: cannot read {str(missing)!r}: no such file (--update-baseline {missing} writes it from a "
        "run's failures)")


# ---------------------------------------------------------------------------------------------
# apply(), on hand-made results


def result_of(*checks: CheckResult, wire: str = "extension") -> RunResult:
    outcome = decide_outcome(list(checks))
    return RunResult(outcome=outcome, target="t", durationMs=1, discovery=Discovery(wire=wire),  # type: ignore[arg-type]
                     checks=list(checks))


def check(cid: str, status: str, skip: str | None = None) -> CheckResult:
    return CheckResult(id=cid, category="c", title=cid, description="", requirements=[], status=status,  # type: ignore[arg-type]
                       skipReason=skip, message=f"{cid} {status}")  # type: ignore[arg-type]


def baseline(*entries: BaselineEntry, strict: bool = False) -> Baseline:
    return Baseline("b.toml", entries, strict)


def test_apply_marks_each_entry() -> None:
    res = result_of(check("a", "failed"), check("b", "passed"), check("c", "skipped", "not-applicable"),
                    check("d", "failed"))
    day = dt.date(2026, 6, 1)
    out: Any = apply(res, baseline(BaselineEntry("a", "r"), BaselineEntry("b", "r"), BaselineEntry("c", "r"),
                                   BaselineEntry("d", "r", expires=dt.date(2026, 5, 31)),
                                   BaselineEntry("x", "r")), today=day)
    assert [c.bucket for c in out.checks] == ["known", "passed", "not-applicable", "failed"]
    assert [s for _e, s in out.baseline.entries] == ["known", "fixed", "unused", "expired", "unused"]
    assert out.outcome == "failed"  # d expired
    assert res.checks[0].baseline is None  # the run's own result is not changed in place
    # The expiry day itself still holds.
    same_day: Any = apply(result_of(check("d", "failed")), baseline(BaselineEntry("d", "r", expires=day)), today=day)
    assert same_day.outcome == "passed"


def test_a_known_failure_never_hides_an_incomplete_run() -> None:
    res = result_of(check("a", "failed"), check("b", "skipped", "could-not-run"))
    out: Any = apply(res, baseline(BaselineEntry("a", "r")))
    assert out.outcome == "incomplete" and out.incompleteReason


def test_strict_fails_only_for_a_fixed_entry() -> None:
    out: Any = apply(result_of(check("a", "failed")), baseline(BaselineEntry("a", "r"), strict=True))
    assert out.outcome == "passed"
    out = apply(result_of(check("a", "passed")), baseline(BaselineEntry("a", "r"), strict=True))
    assert out.outcome == "failed"


def test_parse_reads_toml_and_json_alike() -> None:
    toml = parse('[[known]]\ncheck = "a"\nreason = "r"\nera = "2025-11-25"\nexpires = 2027-01-02\n', "b.toml")
    js = parse('{"known": [{"check": "a", "reason": "r", "era": "2025-11-25", "expires": "2027-01-02"}]}', "b.json")
    assert toml == js == (BaselineEntry("a", "r", wire="legacy", era="2025-11-25", expires=dt.date(2027, 1, 2)),)
    with pytest.raises(UsageError):
        parse('{"known": [{"check": "a"}]}', "b.json")


# ---------------------------------------------------------------------------------------------
# Round trips: what --update-baseline writes, the next run reads back (every era value)

BROKEN_CLIENT = [sys.executable, str(ROOT / "fixtures" / "broken_client.py")]
# One breaking client per era, each failing one check of its era in the scenario named for it.
CLIENT_BREAKS = {"extension": ("no-extension-on-get", "tasks-client-lifecycle", "tasks-client-declares-extension"),
                 "legacy": ("legacy-extension-meta", "tasks-client-legacy-lifecycle",
                            "tasks-client-legacy-no-extension-wire")}


def _known(doc: dict[str, Any]) -> list[str]:
    runs = list(doc["eras"].values()) if "eras" in doc else [doc]
    return sorted(c["id"] for run in runs for c in run["checks"] if (c.get("baseline") or {}).get("state") == "known")


@pytest.mark.parametrize("era", ["auto", "both"])
@pytest.mark.parametrize("variant", ["legacy-ttl-names", "no-tasks"])
def test_a_server_baseline_written_for_each_era_value_reads_back(tmp_path: Path, era: str, variant: str) -> None:
    """--update-baseline, then --baseline with the same file: every failure written is known. A server
    that speaks no tasks wire too (its run found no wire to write the entries for)."""
    server = list(forked([*BROKEN, "--break", variant, "--transport", "stdio"]))
    args = ["--command", shlex.join(server), "--era", era, "--timeout", "5000", "--poll-timeout", "5000",
            "--tool-name", "slow_compute",
            *(a for c in (CHECKS if variant != "no-tasks" else ["tasks-wire-resolvable"]) for a in ("--check-id", c))]
    base = tmp_path / "b.toml"
    first = invoke(*args, "--update-baseline", str(base), "-q")
    assert first.code == 1 and "baseline entr" in first.stderr, first
    written = parse(base.read_text(encoding="utf-8"), str(base))
    assert written
    again = invoke(*args, "--baseline", str(base), "--format", "json")
    assert again.code == 0, again.stderr + again.stdout[-1500:]
    assert set(_known(json.loads(again.stdout))) == {e.check for e in written}


@pytest.mark.parametrize("era", ["extension", "legacy", "both"])
def test_a_client_baseline_written_for_each_era_value_reads_back(tmp_path: Path, era: str) -> None:
    """`client --era both --update-baseline` wrote era = "2025-11-25, 2026-07-28", which the next run
    refused (exit 2); the entries of a run over both eras hold on every era."""
    eras = ("extension", "legacy") if era == "both" else (era,)
    for break_era in eras:  # one run per break: a client breaks one rule
        brk, scenario, check_id = CLIENT_BREAKS[break_era]
        scenarios = [a for e in eras for a in ("--scenario", CLIENT_BREAKS[e][1])]
        args = ["client", "--command", shlex.join(forked([*BROKEN_CLIENT, "--break", brk])), "--era", era, *scenarios]
        base = tmp_path / f"{break_era}.toml"
        first = invoke(*args, "--update-baseline", str(base), "-q")
        assert first.code == 1 and "wrote 1 baseline entry" in first.stderr, first
        (entry_,) = parse(base.read_text(encoding="utf-8"), str(base))
        assert entry_.check == check_id and (entry_.era is None) == (era == "both"), entry_
        again = invoke(*args, "--baseline", str(base), "--format", "json")
        assert again.code == 0, again.stderr + again.stdout[-1500:]
        assert _known(json.loads(again.stdout)) == [check_id]
        if era != "both":  # a one-era file holds in a run over both eras too
            both = invoke("client", "--command", shlex.join(forked([*BROKEN_CLIENT, "--break", brk])), "--era", "both",
                          "--scenario", scenario, "--baseline", str(base), "--format", "json")
            assert both.code == 0 and _known(json.loads(both.stdout)) == [check_id], both


def test_an_era_listing_several_eras_reads_as_each_of_them() -> None:
    """What a client run over both eras wrote before: one era each, or every era."""
    (every,) = parse('[[known]]\ncheck = "a"\nreason = "r"\nera = "2025-11-25, 2026-07-28"\n', "b.toml")
    assert every.wire is None and every.era == "2025-11-25, 2026-07-28"
    (one,) = parse('[[known]]\ncheck = "a"\nreason = "r"\nera = "legacy, 2025-11-25"\n', "b.toml")
    assert one.wire == "legacy"
    with pytest.raises(UsageError, match="era must be one of"):
        parse('[[known]]\ncheck = "a"\nreason = "r"\nera = "2025-11-25, 2024-01-01"\n', "b.toml")
