"""The requirements the checks cite, loaded from requirements.toml (shipped in this package): the
rules a tasks server keeps (ids S-…, judged by the server checks) and those a tasks client keeps
(ids C-…, judged by `tasks-conformance client`'s checks). Each `Requirement` says which it is, its
`subject`.

The registry is data, not code, so that a reader can audit every rule, its level and its link to
the public specification in one file. Importing this module parses nothing: the file is read and
validated on the first `load()`, and any defect is reported as a `ValueError` naming the entry.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from types import MappingProxyType
from typing import Any, Final, Literal, cast, get_args

from tasks_conformance.core.eras import BOTH
from tasks_conformance.core.eras import EraOrBoth as Era
from tasks_conformance.core.wires import DIALECTS

Level = Literal["MUST", "MUST NOT", "SHOULD", "SHOULD NOT", "MAY"]
# For typing; ERAS (from the dialect registry) is what is checked, and a test holds them equal.
# The era of the rules every wire shares (base JSON-RPC and transport).
BOTH_WIRES: Final = BOTH
# T: black-box testable; P: partial, heuristic or needs a cooperating fixture; N: not observable.
Testability = Literal["T", "P", "N"]
# Who keeps the rule: a server (S- ids) or a client (C- ids).
Subject = Literal["server", "client"]

LEVELS: Final[frozenset[str]] = frozenset(get_args(Level))
ERAS: Final[frozenset[str]] = frozenset({*(str(wire) for wire in DIALECTS), BOTH_WIRES})
TESTABILITIES: Final[frozenset[str]] = frozenset(get_args(Testability))

RESOURCE: Final = "requirements.toml"

# The id's family fixes the era, so a copied entry that kept the wrong era is caught.
_ERA_OF_FAMILY: Final[Mapping[str, str]] = {
    **{family: str(wire) for wire, d in DIALECTS.items() for family in d.requirement_families},
    "WIRE": BOTH_WIRES,
    # Claims a server author makes beyond the specification, judged only when asked for (the
    # durable profile); never a rule the specification states.
    "CLAIM": BOTH_WIRES,
}
_ID = re.compile(rf"^S-({'|'.join(_ERA_OF_FAMILY)})-(MUST|SHOULD|MAY)-\d{{2}}$")
# Client rules come from the dialects' families only (no client WIRE rules of ours).
_CLIENT_FAMILIES: Final = tuple(family for family in _ERA_OF_FAMILY if family not in ("WIRE", "CLAIM"))
_CLIENT_ID = re.compile(rf"^C-({'|'.join(_CLIENT_FAMILIES)})-(MUST|SHOULD|MAY)-\d{{2}}$")
# Our own base JSON-RPC/transport rules, and the claims, carry no level in their id.
_WIRE_ID = re.compile(r"^S-(WIRE|CLAIM)-\d{2}$")
_SUBJECT_OF_PREFIX: Final[Mapping[str, Subject]] = {"S": "server", "C": "client"}
# The level word in the id bounds the level: an S-…-MUST-nn entry may be MUST or MUST NOT.
_LEVELS_OF_WORD: Final[Mapping[str, frozenset[str]]] = {
    "MUST": frozenset({"MUST", "MUST NOT"}),
    "SHOULD": frozenset({"SHOULD", "SHOULD NOT"}),
    "MAY": frozenset({"MAY"}),
}

_REQUIRED: Final = ("id", "level", "derived", "era", "testability", "text", "url")
_OPTIONAL: Final = ("untestable", "notTested")


@dataclass(frozen=True, slots=True)
class Requirement:
    id: str
    level: Level
    derived: bool  # derived from neighbouring normative text rather than stated outright
    era: Era
    testability: Testability
    text: str
    url: str  # the public spec page, with the anchor of the section the rule comes from
    untestable: str | None = None  # why an N requirement cannot be observed from outside
    # For a P requirement no check judges: why the part the other side could see is not judged (what
    # the wire cannot show, or the policy that keeps it open). A server T requirement never has one; a
    # client T requirement has one while what would judge it is not built yet (and says what that is).
    not_tested: str | None = None
    subject: Subject = "server"  # who keeps it: "server" (S- ids) or "client" (C- ids)


def parse(text: str, *, source: str = RESOURCE) -> Mapping[str, Requirement]:
    """Parse and validate registry TOML; raise ValueError naming the first bad entry."""
    # Imported here, not at module level, so importing the package stays cheap.
    import tomllib

    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"{source}: not valid TOML: {exc}") from exc
    extra = sorted(set(doc) - {"requirement"})
    if extra:
        raise ValueError(f"{source}: unknown top-level keys {extra}; only [[requirement]] tables belong here")
    entries = doc.get("requirement")
    if not isinstance(entries, list) or not entries:
        raise ValueError(f"{source}: no [[requirement]] tables")
    out: dict[str, Requirement] = {}
    for n, entry in enumerate(entries, start=1):
        req = _entry(entry, f"{source}: entry {n}")
        if req.id in out:
            raise ValueError(f"{source}: entry {n}: duplicate id {req.id!r}")
        out[req.id] = req
    return MappingProxyType(out)


@cache
def load() -> Mapping[str, Requirement]:
    """The packaged registry, read and validated once per process."""
    return parse(_packaged_text())


def _packaged_text() -> str:
    # Every report reads the registry once it has judged, so this is on the path between the
    # run's last frame and its exit. A package installed as files (a wheel, an editable or
    # source checkout) is read directly: importlib.resources would first import its readers,
    # about 3 ms of that path. A package it cannot read as a file (inside a zip) goes through it.
    path = os.path.join(os.path.dirname(__file__), RESOURCE)
    try:
        with open(path, encoding="utf-8") as fh:
            return fh.read()
    except OSError:
        from importlib import resources

        return resources.files(__package__ or "tasks_conformance").joinpath(RESOURCE).read_text(encoding="utf-8")


def get(requirement_id: str) -> Requirement:
    """One requirement; an unknown id raises KeyError suggesting the nearest known ids."""
    registry = load()
    try:
        return registry[requirement_id]
    except KeyError:
        import difflib

        close = difflib.get_close_matches(requirement_id, list(registry), n=3, cutoff=0.6)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        raise KeyError(f"unknown requirement id {requirement_id!r}{hint}") from None


def _entry(entry: Any, where: str) -> Requirement:
    if not isinstance(entry, dict):
        raise ValueError(f"{where}: is {type(entry).__name__}, not a table")
    rid = entry.get("id")
    if isinstance(rid, str):
        where = f"{where} ({rid})"
    missing = [k for k in _REQUIRED if k not in entry]
    if missing:
        raise ValueError(f"{where}: missing {', '.join(missing)}")
    unknown = sorted(set(entry) - set(_REQUIRED) - set(_OPTIONAL))
    if unknown:
        raise ValueError(f"{where}: unknown keys {unknown}")
    for key in ("id", "level", "era", "testability", "text", "url"):
        if not isinstance(entry[key], str) or not entry[key].strip():
            raise ValueError(f"{where}: {key} must be a non-empty string")
    if not isinstance(entry["derived"], bool):
        raise ValueError(f"{where}: derived must be true or false")
    subject, family, word = _id_parts(entry["id"], where)
    level, era, testability = entry["level"], entry["era"], entry["testability"]
    if level not in LEVELS:
        raise ValueError(f"{where}: unknown level {level!r} (one of {', '.join(sorted(LEVELS))})")
    if word is not None and level not in _LEVELS_OF_WORD[word]:
        raise ValueError(f"{where}: level {level!r} does not fit an id that says {word}")
    if era not in ERAS:
        raise ValueError(f"{where}: unknown era {era!r} (one of {', '.join(sorted(ERAS))})")
    if era != _ERA_OF_FAMILY[family]:
        family_id = f"{entry['id'][0]}-{family}"
        raise ValueError(f"{where}: {family_id} requirements belong to era {_ERA_OF_FAMILY[family]!r}, not {era!r}")
    if testability not in TESTABILITIES:
        raise ValueError(f"{where}: unknown testability {testability!r} (one of T, P, N)")
    url = entry["url"]
    if not url.startswith("https://") or "#" not in url or url.endswith("#"):
        raise ValueError(f"{where}: url {url!r} must be https:// with a #section anchor")
    untestable = entry.get("untestable")
    if untestable is not None and (not isinstance(untestable, str) or not untestable.strip()):
        raise ValueError(f"{where}: untestable must be a non-empty string")
    if testability == "N" and untestable is None:
        raise ValueError(f"{where}: testability N needs an untestable reason")
    if testability != "N" and untestable is not None:
        raise ValueError(f"{where}: untestable is only for testability N (this one is {testability})")
    not_tested = entry.get("notTested")
    if not_tested is not None and (not isinstance(not_tested, str) or not not_tested.strip()):
        raise ValueError(f"{where}: notTested must be a non-empty string")
    # A client T rule may say what is not built yet to judge it; a server T rule never may.
    if not_tested is not None and testability != "P" and not (subject == "client" and testability == "T"):
        raise ValueError(f"{where}: notTested is only for testability P, or T on a client rule "
                         f"(this one is {testability})")
    return Requirement(
        id=entry["id"],
        level=cast(Level, level),
        derived=entry["derived"],
        era=cast(Era, era),
        testability=cast(Testability, testability),
        text=entry["text"].strip(),
        url=url,
        untestable=untestable.strip() if untestable is not None else None,
        not_tested=not_tested.strip() if not_tested is not None else None,
        subject=subject,
    )


def _id_parts(rid: str, where: str) -> tuple[Subject, str, str | None]:
    """(subject, family, level word) of a well-formed id; the WIRE form has no level word."""
    wire_id = _WIRE_ID.match(rid)
    if wire_id:
        return "server", wire_id.group(1), None
    m = _ID.match(rid) or _CLIENT_ID.match(rid)
    if m is None:
        families = "|".join(_CLIENT_FAMILIES)
        raise ValueError(
            f"{where}: malformed id {rid!r} (expected S-({families})-(MUST|SHOULD|MAY)-nn, S-WIRE-nn or S-CLAIM-nn "
            f"for a server rule, C-({families})-(MUST|SHOULD|MAY)-nn for a client rule)"
        )
    return _SUBJECT_OF_PREFIX[rid[0]], m.group(1), m.group(2)
