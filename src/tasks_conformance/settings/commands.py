"""The options of a command that are no setting of a run: `call`'s, `merge`'s, `suite`'s `--jobs`
and `--shard`, `requirements`' and `config show`'s `--format`, `client --list-scenarios`, the
main command's `--version` and `--list-checks`. Declared here, beside the run settings
(settings/__init__.py), as data: command_line.py makes each a typer option, so every option of
every command has one declaration and one generator. A value kind is the settings' (`Kind`), and
a closed set of values is checked by `one_of`, with the one wording every command uses.

Stdlib only and cheap to import, like the settings: the command line reads it on every start.
"""

# ruff: noqa: E501  (one option a line: its help reads best unbroken)

from typing import Any, Final, NamedTuple

from tasks_conformance.core.eras import CALL_ERAS
from tasks_conformance.core.errors import UsageError
from tasks_conformance.core.fleet_history import DEFAULT_LENGTH
from tasks_conformance.settings import BOOL, INT, JSON, MS, TEXT, Kind

HUMAN_JSON: Final = ("human", "json")


class CommandOption(NamedTuple):
    """One option of one command: `name` is the parameter the command receives (a keyword of its
    **flags), `default` its value when not given, `choices` the values it takes (empty: any of its
    kind), `eager` an option typer handles before the others (its command gives the callback)."""

    name: str
    default: Any
    flag: str
    metavar: str | None
    kind: Kind
    help: str
    short: str | None = None
    choices: tuple[str, ...] = ()
    eager: bool = False

    @property
    def flags(self) -> tuple[str, ...]:
        return (self.short, self.flag) if self.short else (self.flag,)


def one_of(option: CommandOption, value: Any) -> Any:
    """`value`, when the option takes it (not given, None, stands for its default); else the usage
    error every command words the same way."""
    if option.choices and value is not None and value not in option.choices:
        raise UsageError(f"{option.flag} must be {' or '.join(option.choices)}, got {value!r}")
    return value


# `requirements` and `config show`: how the output is shaped.
FORMAT: Final = CommandOption("format", None, "--format", "|".join(HUMAN_JSON), TEXT, "human (default) or json",
                              choices=HUMAN_JSON)

# The main command's eager options: they act before any other flag is converted.
VERSION: Final = CommandOption("version", False, "--version", None, BOOL, "Print the version", eager=True)
LIST_CHECKS: Final = CommandOption("list_checks", False, "--list-checks", None, BOOL,
                                   "List the checks and exit (as JSON with --format json)", eager=True)

# `tasks-conformance client`'s own.
LIST_SCENARIOS: Final = CommandOption("list_scenarios", False, "--list-scenarios", None, BOOL,
                                      "List the scenarios (with --format json: their eras, context keys and rules) and exit")

# `suite`'s own (its report flags are the settings that apply to SUITE).
SUITE_OWN: Final = (
    CommandOption("jobs", None, "--jobs", "N", INT, "Run at most N targets at once (default: the CPU count)", short="-j"),
    CommandOption("shard", None, "--shard", "I/N", TEXT, "Run only the targets whose position in FILE (from 0) modulo N is I-1: split one file across N CI jobs"),
)

# `merge`'s own (its report flags are `suite`'s).
MERGE_OWN: Final = (
    CommandOption("latest", False, "--latest", None, BOOL, "A run present in two reports: keep the newer (by its startedAt) instead of stopping with an error"),
    CommandOption("history", None, "--history", "DIR", TEXT, "Keep this merge's summary in DIR (one small JSON per run, named by its time) and mark each target's last outcomes, when each failure began and its regressions"),
    CommandOption("history_length", DEFAULT_LENGTH, "--history-length", "N", INT, f"With --history: how many outcomes of each target the reports show (default {DEFAULT_LENGTH})"),
    CommandOption("fail_on_regression", False, "--fail-on-regression", None, BOOL, "With --history: exit 1 when a check that passed a target's last run fails now, even when a baseline accepts the failure"),
)

# `call`: one tool called as a task by the reference client.
CALL_ERA: Final = CommandOption("era", "extension", "--era", "|".join(CALL_ERAS), TEXT, "the tasks wire to speak (extension, the default: 2026-07-28; legacy: 2025-11-25)", choices=CALL_ERAS)
CALL_FORMAT: Final = CommandOption("format", "human", "--format", "|".join(HUMAN_JSON), TEXT, "the outcome as a sentence (human) or as JSON", choices=HUMAN_JSON)
CALL: Final = (
    CommandOption("url", None, "--url", "URL", TEXT, "the server's Streamable HTTP endpoint"),
    CommandOption("command", None, "--command", "CMD", TEXT, "a stdio server to spawn instead (split like a shell would)"),
    CommandOption("tool_name", None, "--tool-name", "TOOL", TEXT, "the tool to call as a task"),
    CommandOption("tool_args", "{}", "--tool-args", "JSON", JSON, "its arguments: a JSON object, @FILE or -"),
    CALL_ERA,
    CommandOption("cancel_after", None, "--cancel-after", "MS", MS, "send tasks/cancel this long after the task was created, then follow it to its end"),
    CommandOption("input_responses", None, "--input-responses", "JSON", JSON, 'answers to input requests (a JSON object, @FILE or -): by key, else "*", else the first shaped for the request; an elicitation none fits is declined'),
    CommandOption("timeout", 60_000, "--timeout", "MS", MS, "at most this long in all; a task still live then is cancelled (default 60000)"),
    CALL_FORMAT,
)

# Every command option, for the tests that hold them to one declaration.
COMMAND_OPTIONS: Final = (FORMAT, VERSION, LIST_CHECKS, LIST_SCENARIOS, *SUITE_OWN, *MERGE_OWN, *CALL)
