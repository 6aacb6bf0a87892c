"""What every reporter says about a failed check beyond its message, computed once.

The requirement(s) broken (id, level, the rule, the spec link: `CheckResult.rules`), the short
expected/actual values a check put in `details`, the policy links its warnings cite, and the
owner a deferral names. Values may come from the server: callers still make them safe for their
format.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tasks_conformance.core.text import dumps, one_line

if TYPE_CHECKING:
    from tasks_conformance.core.result import CheckResult, RuleRef

MAX_VALUE = 200  # characters of one expected/actual value


def short_value(value: object, limit: int = MAX_VALUE) -> str:
    """A value on one line, as JSON (strings quoted), cut to `limit` characters."""
    return one_line(dumps(value), limit)


def expected_actual(check: CheckResult) -> list[tuple[str, str]]:
    """("expected", value) and ("actual", value), for those the check set in its details."""
    return [(key, short_value(check.details[key])) for key in ("expected", "actual") if key in check.details]


def broken_rules(check: CheckResult) -> tuple[list[RuleRef], list[RuleRef]]:
    """(the rules the failure is about, the check's other rules): the check's typed `broken`
    ids; a failure naming none is about every rule the check judges on the wire."""
    return check.broken_rules


def rule_line(rule: RuleRef) -> str:
    """`S-EXT-MUST-03 (MUST): Every CreateTaskResult carries resultType "task".`"""
    return f"{rule.id} ({rule.level}): {rule.text}"


def explains(check: CheckResult) -> bool:
    """Does this check's result get the rule/expected/actual explanation? Failures do."""
    return check.bucket == "failed"


def deferred_words(check: CheckResult) -> str | None:
    """`deferred to OWNER`, the words every report puts before a deferral's message; None for a
    check that did not defer."""
    if check.bucket != "deferred":
        return None
    return f"deferred to {check.deferredTo}" if check.deferredTo else "deferred"


def shown_message(check: CheckResult) -> str:
    """The message a report shows for a check (its title when it has none); a deferral's names
    the check it defers to first."""
    message = check.message or check.title
    words = deferred_words(check)
    return f"{words}: {message}" if words else message
