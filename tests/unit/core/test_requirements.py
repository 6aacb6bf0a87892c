"""The requirements registry and the policies page: the packaged file loads, a broken one is refused
with the entry named, and every requirement id or policy the source cites exists."""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.paths import ROOT

from tasks_conformance.core.requirements import Requirement, get, load, parse

PACKAGE = ROOT / "src" / "tasks_conformance"
POLICIES = ROOT / "docs" / "policies.md"

# The numbering of every family, so that a dropped or mistyped entry shows as a gap.
FAMILIES = {
    "S-EXT-MUST": 35,
    "S-EXT-SHOULD": 8,
    "S-EXT-MAY": 10,
    "S-CORE-MUST": 14,
    "S-CORE-SHOULD": 3,
    "S-LEG-MUST": 23,
    "S-LEG-SHOULD": 10,
    "S-LEG-MAY": 7,
    "S-WIRE": 4,
    "S-CLAIM": 1,
    "C-EXT-MUST": 16,
    "C-EXT-SHOULD": 12,
    "C-EXT-MAY": 7,
    "C-CORE-MUST": 12,
    "C-CORE-SHOULD": 3,
    "C-CORE-MAY": 1,
    "C-LEG-MUST": 15,
    "C-LEG-SHOULD": 9,
    "C-LEG-MAY": 5,
}
POLICY_COUNT = 56
SPEC_HOSTS = ("https://modelcontextprotocol.io/", "https://modelcontextprotocol.github.io/ext-tasks/")

# A cited id, server (S-) or client (C-), optionally followed by "/NN" shorthands for siblings
# ("S-EXT-MUST-18/19").
CITED_ID = re.compile(r"\b([SC]-(?:(?:EXT|LEG|CORE|WIRE)-(?:MUST|SHOULD|MAY)|WIRE|CLAIM)-)(\d{2})((?:/\d{2})*)")
CITED_POLICY = re.compile(r"\bP-\d{2}\b")
POLICY_HEADING = re.compile(r"^## (P-\d{2}) — \S", re.MULTILINE)
CHECK_ID = re.compile(r"""\bid="(tasks-[a-z0-9-]+)\"""")
# Words that point at material users cannot read.
FORBIDDEN = ("spec-digest", "design.md", "../shared", "competitor", "§6")


def _py_sources() -> Iterator[Path]:
    yield from sorted(p for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts)


def _cited_ids(text: str) -> set[str]:
    ids: set[str] = set()
    for m in CITED_ID.finditer(text):
        prefix, first, more = m.groups()
        ids.add(prefix + first)
        ids.update(prefix + n for n in more.split("/") if n)
    return ids


# --- (a) the packaged file -------------------------------------------------------------------


def test_the_packaged_registry_loads_and_is_complete() -> None:
    registry = load()
    assert load() is registry, "load() parses once per process"
    expected = {f"{family}-{n:02d}" for family, count in FAMILIES.items() for n in range(1, count + 1)}
    assert set(registry) == expected
    assert all(isinstance(r, Requirement) and r.id == rid for rid, r in registry.items())


def test_every_requirement_is_well_formed_data() -> None:
    for r in load().values():
        assert r.url.startswith(SPEC_HOSTS), (r.id, r.url)
        assert r.text.endswith((".", "?")) and "\n" not in r.text, r.id
        assert (r.untestable is not None) == (r.testability == "N"), r.id
        family = r.id.split("-")[1]
        eras = {"EXT": "extension", "CORE": "extension", "LEG": "legacy", "WIRE": "both", "CLAIM": "both"}
        assert r.era == eras[family], r.id
        assert r.subject == {"S": "server", "C": "client"}[r.id[0]], r.id


def test_get_returns_an_entry_and_suggests_close_ids_for_a_typo() -> None:
    assert get("S-EXT-MUST-05").url.endswith("#task-creation")
    with pytest.raises(KeyError, match=r"S-EXT-MUST-13"):
        get("S-EXT-MUTS-13")
    with pytest.raises(KeyError, match="unknown requirement id 'nonsense'"):
        get("nonsense")


def test_importing_the_module_parses_nothing() -> None:
    code = (
        "import sys, tasks_conformance.core.requirements as r\n"
        "assert 'tomllib' not in sys.modules, 'tomllib imported at import time'\n"
        "assert r.load.cache_info().currsize == 0, 'the registry was loaded at import time'\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr[-2000:]


# --- (b) a broken file is refused, naming the entry ------------------------------------------

GOOD = """
[[requirement]]
id = "S-EXT-MUST-01"
level = "MUST NOT"
derived = false
era = "extension"
testability = "T"
text = "A rule."
url = "https://modelcontextprotocol.io/specification/2026-07-28/basic#meta"

[[requirement]]
id = "S-LEG-SHOULD-06"
level = "SHOULD"
derived = false
era = "legacy"
testability = "N"
text = "Another rule."
url = "https://modelcontextprotocol.io/specification/2025-11-25/basic/utilities/tasks#task-cancellation"
untestable = "It happens inside the server."
"""


def test_a_good_small_file_parses() -> None:
    registry = parse(GOOD)
    assert list(registry) == ["S-EXT-MUST-01", "S-LEG-SHOULD-06"]
    assert registry["S-LEG-SHOULD-06"].untestable == "It happens inside the server."
    assert registry["S-EXT-MUST-01"].level == "MUST NOT"


def _second_entry(**changes: str | None) -> str:
    """GOOD with fields of its second entry replaced (a value of None drops the line)."""
    head, second = GOOD.split("[[requirement]]")[1:]
    lines = []
    for line in second.strip().splitlines():
        key = line.split("=", 1)[0].strip()
        if key in changes:
            value = changes.pop(key)
            if value is not None:
                lines.append(f"{key} = {value}")
        else:
            lines.append(line)
    lines.extend(f"{k} = {v}" for k, v in changes.items() if v is not None)
    return "[[requirement]]" + head + "[[requirement]]\n" + "\n".join(lines) + "\n"


@pytest.mark.parametrize(
    "changes, message",
    [
        ({"id": '"S-LEG-SHOULD-6"'}, r"entry 2 \(S-LEG-SHOULD-6\): malformed id"),
        ({"id": '"S-FOO-MUST-01"', "era": '"legacy"'}, r"malformed id 'S-FOO-MUST-01'"),
        ({"level": '"MUSTN\'T"'}, r"entry 2 \(S-LEG-SHOULD-06\): unknown level"),
        ({"level": '"MUST"'}, r"level 'MUST' does not fit an id that says SHOULD"),
        ({"era": '"modern"'}, r"\(S-LEG-SHOULD-06\): unknown era 'modern'"),
        ({"era": '"extension"'}, r"S-LEG requirements belong to era 'legacy'"),
        ({"testability": '"X"'}, r"\(S-LEG-SHOULD-06\): unknown testability 'X'"),
        ({"url": '"http://modelcontextprotocol.io/x#y"'}, r"\(S-LEG-SHOULD-06\): url .* must be https://"),
        ({"url": '"https://modelcontextprotocol.io/x"'}, r"\(S-LEG-SHOULD-06\): url .* #section anchor"),
        ({"untestable": None}, r"\(S-LEG-SHOULD-06\): testability N needs an untestable reason"),
        ({"testability": '"T"'}, r"\(S-LEG-SHOULD-06\): untestable is only for testability N"),
        ({"text": None}, r"\(S-LEG-SHOULD-06\): missing text"),
        ({"text": '"  "'}, r"\(S-LEG-SHOULD-06\): text must be a non-empty string"),
        ({"derived": '"no"'}, r"\(S-LEG-SHOULD-06\): derived must be true or false"),
        ({"untestible": '"typo"'}, r"\(S-LEG-SHOULD-06\): unknown keys \['untestible'\]"),
        ({"notTested": '"hidden"'}, r"\(S-LEG-SHOULD-06\): notTested is only for testability P, or T on a client"),
        ({"testability": '"P"', "untestable": None, "notTested": '"  "'},
         r"\(S-LEG-SHOULD-06\): notTested must be a non-empty string"),
    ],
)
def test_a_broken_entry_is_refused_naming_it(changes: dict[str, str | None], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse(_second_entry(**changes))


CLIENT = """
[[requirement]]
id = "C-EXT-MUST-10"
level = "MUST"
derived = true
era = "extension"
testability = "T"
text = "A client rule."
url = "https://modelcontextprotocol.github.io/ext-tasks/specification/2026-07-28/tasks.html#task-creation"
notTested = "No scenario for it is built yet."
"""


def _client_entry(**changes: str | None) -> str:
    """CLIENT with fields replaced (a value of None drops the line)."""
    lines = []
    for line in CLIENT.strip().splitlines():
        key = line.split("=", 1)[0].strip()
        if key in changes:
            value = changes.pop(key)
            if value is not None:
                lines.append(f"{key} = {value}")
        else:
            lines.append(line)
    lines.extend(f"{k} = {v}" for k, v in changes.items() if v is not None)
    return GOOD + "\n" + "\n".join(lines) + "\n"


def test_a_client_rule_parses_with_its_subject() -> None:
    registry = parse(_client_entry())
    assert registry["C-EXT-MUST-10"].subject == "client"
    assert registry["S-EXT-MUST-01"].subject == "server" and registry["S-LEG-SHOULD-06"].subject == "server"
    # A client T rule may say what is not built yet; so may a P one, of either subject.
    assert registry["C-EXT-MUST-10"].not_tested == "No scenario for it is built yet."
    legacy = parse(_client_entry(id='"C-LEG-SHOULD-02"', level='"SHOULD"', era='"legacy"', testability='"P"'))
    assert legacy["C-LEG-SHOULD-02"].era == "legacy"


@pytest.mark.parametrize(
    "changes, message",
    [
        ({"id": '"C-EXT-MUST-1"'}, r"entry 3 \(C-EXT-MUST-1\): malformed id .*C-\(.*\)-\(MUST\|SHOULD\|MAY\)-nn"),
        ({"id": '"C-WIRE-01"'}, r"malformed id 'C-WIRE-01'"),
        ({"id": '"X-EXT-MUST-10"'}, r"malformed id 'X-EXT-MUST-10'"),
        ({"id": '"c-ext-must-10"'}, r"malformed id 'c-ext-must-10'"),
        ({"era": '"legacy"'}, r"C-EXT requirements belong to era 'extension', not 'legacy'"),
        ({"id": '"C-LEG-MUST-10"'}, r"C-LEG requirements belong to era 'legacy', not 'extension'"),
        ({"level": '"SHOULD"'}, r"level 'SHOULD' does not fit an id that says MUST"),
        ({"testability": '"N"', "untestable": '"inside"'},
         r"\(C-EXT-MUST-10\): notTested is only for testability P, or T on a client rule \(this one is N\)"),
    ],
)
def test_a_broken_client_entry_is_refused_naming_it(changes: dict[str, str | None], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse(_client_entry(**changes))


def test_not_tested_on_a_server_t_rule_is_refused() -> None:
    with pytest.raises(ValueError, match=r"\(S-LEG-SHOULD-06\): notTested is only for testability P, or T on a "
                                         r"client rule \(this one is T\)"):
        parse(_second_entry(testability='"T"', untestable=None, notTested='"hidden"'))


@pytest.mark.parametrize(
    "text, message",
    [
        ("[[requirement]\n", r"not valid TOML"),
        ("", r"no \[\[requirement\]\] tables"),
        (GOOD + "\n[extra]\nx = 1\n", r"unknown top-level keys \['extra'\]"),
        ("requirement = [1]\n", r"entry 1: is int, not a table"),
        (GOOD + GOOD, r"entry 3: duplicate id 'S-EXT-MUST-01'"),
    ],
)
def test_a_broken_file_is_refused(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse(text)


# --- (c) every requirement id the source cites exists ----------------------------------------


def test_every_requirement_id_cited_in_the_source_exists() -> None:
    registry = load()
    unknown = {
        f"{path.relative_to(ROOT)}: {rid}"
        for path in _py_sources()
        for rid in _cited_ids(path.read_text(encoding="utf-8"))
        if rid not in registry
    }
    assert not unknown, sorted(unknown)


def test_the_citation_scanner_sees_shorthand_siblings() -> None:
    assert _cited_ids("(S-EXT-MUST-18/19) and S-WIRE-02") == {"S-EXT-MUST-18", "S-EXT-MUST-19", "S-WIRE-02"}
    assert _cited_ids("C-EXT-MUST-13/14, C-CORE-MUST-06") == {"C-EXT-MUST-13", "C-EXT-MUST-14", "C-CORE-MUST-06"}


# --- (d) every policy the source cites is a heading of docs/policies.md ----------------------


def _policy_headings() -> list[str]:
    return POLICY_HEADING.findall(POLICIES.read_text(encoding="utf-8"))


def test_every_policy_cited_in_the_source_is_a_heading() -> None:
    headings = set(_policy_headings())
    missing = {
        f"{path.relative_to(ROOT)}: {pid}"
        for path in _py_sources()
        for pid in CITED_POLICY.findall(path.read_text(encoding="utf-8"))
        if pid not in headings
    }
    assert not missing, sorted(missing)


def test_the_policies_page_has_every_policy_in_order_with_its_parts() -> None:
    text = POLICIES.read_text(encoding="utf-8")
    assert _policy_headings() == [f"P-{n:02d}" for n in range(1, POLICY_COUNT + 1)]
    sections = re.split(r"^## (?=P-\d{2} )", text, flags=re.MULTILINE)[1:]
    for section in sections:
        pid = section[:4]
        assert "**What tasks-conformance does.**" in section, pid
        assert "**Applied by:**" in section, pid


def test_the_policies_page_names_only_real_checks() -> None:
    modules = [*(PACKAGE / "server" / "checks").glob("*.py"), *(PACKAGE / "client" / "checks").glob("*.py")]
    known = {cid for path in modules for cid in CHECK_ID.findall(path.read_text())}
    named = set(re.findall(r"\btasks-(?!conformance\b)[a-z0-9]+(?:-[a-z0-9]+)+", POLICIES.read_text()))
    assert named, "the page names no checks"
    assert named <= known, sorted(named - known)


# --- (e) nothing shipped or documented points at material users cannot read -------------------


def _forbidden_hits(path: Path) -> list[str]:
    text = path.read_bytes().decode("utf-8", errors="replace").lower()
    return [f"{path.relative_to(ROOT)}: {word}" for word in FORBIDDEN if word in text]


def test_the_package_cites_no_private_material() -> None:
    hits = [
        hit
        for path in sorted(PACKAGE.rglob("*"))
        if path.is_file() and "__pycache__" not in path.parts
        for hit in _forbidden_hits(path)
    ]
    assert not hits, "\n".join(hits)


def test_the_policies_page_cites_no_private_material() -> None:
    assert not _forbidden_hits(POLICIES)


def test_the_registry_read_as_a_file_is_the_package_resource() -> None:
    # load() reads the file beside the module (cheaper than importlib.resources, which it falls
    # back to for a package it cannot read as a file): both must be the same bytes.
    from importlib.resources import files

    from tasks_conformance.core.requirements import RESOURCE, _packaged_text

    assert _packaged_text() == (files("tasks_conformance.core") / RESOURCE).read_text(encoding="utf-8")


def test_the_registry_falls_back_to_importlib_resources(monkeypatch: pytest.MonkeyPatch) -> None:
    import builtins

    from tasks_conformance.core import requirements

    real_open = builtins.open

    def refuse_the_direct_path(file: object, *args: object, **kwargs: object) -> object:
        if str(file).endswith(requirements.RESOURCE):
            raise FileNotFoundError(file)  # as inside a zip: no file on disk
        return real_open(file, *args, **kwargs)  # type: ignore[call-overload]

    direct = requirements._packaged_text()
    monkeypatch.setattr(builtins, "open", refuse_the_direct_path)
    assert requirements._packaged_text() == direct
