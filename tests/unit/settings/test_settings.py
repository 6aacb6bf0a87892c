"""The settings schema (settings/): one declaration per setting, from which the command line's
options, the API's keywords, the config-file and suite keys and the pytest plugin's options are
derived. These tests hold the derivations to the schema, and the modules to their import order."""

from __future__ import annotations

import inspect
import subprocess
import sys
from dataclasses import fields
from pathlib import Path
from typing import Any

import pytest
import typer.main

import tasks_conformance
from tasks_conformance.core.errors import UsageError
from tasks_conformance.entry import suite
from tasks_conformance.entry.cli import app
from tasks_conformance.entry.pytest_plugin import plugin_options
from tasks_conformance.settings import (
    API,
    CLIENT,
    DEMO,
    ERA,
    FILE,
    KINDS,
    RUN,
    SERVER,
    SETTINGS,
    SUBJECTS,
    SUITE,
    TARGET,
    RunOptions,
    applying,
    config_file,
)
from tasks_conformance.settings.__main__ import current, typed_keywords
from tasks_conformance.settings.command_line import command_parameter
from tasks_conformance.settings.commands import (
    CALL,
    CALL_ERA,
    COMMAND_OPTIONS,
    FORMAT,
    LIST_CHECKS,
    LIST_SCENARIOS,
    MERGE_OWN,
    SUITE_OWN,
    VERSION,
    CommandOption,
    one_of,
)


def _options(command: Any) -> dict[str, Any]:
    return {opt: p for p in command.params for opt in getattr(p, "opts", ()) if opt.startswith("--")}


def test_every_runoptions_field_is_declared_once_with_a_kind_and_a_long_flag() -> None:
    assert list(SETTINGS) == [f.name for f in fields(RunOptions)]
    assert {spec.kind for spec in SETTINGS.values()} <= set(KINDS)
    for subject in SUBJECTS:  # a flag names one setting of each subject (a client's --era is its own)
        flags = [spec.flag for spec in (*SETTINGS.values(), ERA) if subject in spec.subjects]
        assert len(flags) == len(set(flags)) and all(flag.startswith("--") for flag in flags), subject
    for name, spec in SETTINGS.items():
        assert spec.name == name and spec.help and spec.panel, name
        default = RunOptions.__dataclass_fields__[name].default
        assert default == spec.default and (default == () if spec.kind.repeatable else True), name


def test_each_command_has_the_options_of_the_settings_that_apply_to_it() -> None:
    group = typer.main.get_command(app)
    commands = {RUN: group, DEMO: group.commands["demo"], SUITE: group.commands["suite"]}  # type: ignore[attr-defined]
    for where, command in commands.items():
        options = _options(command)
        for spec in applying(where):
            param = options.pop(spec.flag)
            assert (param.name, param.help, param.metavar) == (spec.name, spec.help, spec.metavar), spec.flag
            assert (spec.short in param.opts) if spec.short else len(param.opts) == 1
        own = {RUN: (VERSION, LIST_CHECKS), DEMO: (), SUITE: SUITE_OWN}[where]
        _pop_own(options, own)
        typer_own = {"--install-completion", "--show-completion"} if where == RUN else set()
        assert set(options) - {"--help"} == typer_own, where


def _pop_own(options: dict[str, Any], own: tuple[CommandOption, ...]) -> None:
    for option in own:
        param = options.pop(option.flag)
        assert (param.name, param.help, param.metavar, param.default) == (
            option.name, option.help, option.metavar, option.default), option.flag
        assert (option.short in param.opts) if option.short else len(param.opts) == 1
        assert param.is_eager == option.eager, option.flag


def test_the_commands_with_options_of_their_own_take_the_declared_ones() -> None:
    """call, merge, requirements and config show: their options are the ones settings/commands.py
    declares (merge's report flags are suite's settings; config show's --config the setting's)."""
    group = typer.main.get_command(app)
    commands: Any = group.commands  # type: ignore[attr-defined]
    cases = [(commands["call"], CALL, ()), (commands["merge"], MERGE_OWN, applying(SUITE)),
             (commands["requirements"], (FORMAT,), ()), (commands["config"].commands["show"], (FORMAT,),
                                                          (SETTINGS["config"],))]
    for command, own, settings in cases:
        options = _options(command)
        _pop_own(options, own)
        for spec in settings:
            assert options.pop(spec.flag).name == spec.name, spec.flag
        assert set(options) <= {"--help"}, command.name
    # Every declared option is some command's: these, the main command's, suite's, the client's.
    held = {*CALL, *MERGE_OWN, FORMAT, VERSION, LIST_CHECKS, *SUITE_OWN, LIST_SCENARIOS}
    assert set(COMMAND_OPTIONS) == held


def test_typer_options_are_made_in_one_place() -> None:
    """Every option of every command is declared as data (settings/__init__.py, settings/commands.py)
    and made a typer option by the generator alone."""
    root = Path(tasks_conformance.__file__).parent
    makers = sorted(str(p.relative_to(root)) for p in root.rglob("*.py") if "typer.Option(" in p.read_text())
    assert makers == ["settings/command_line.py"], makers


def test_a_closed_option_refuses_other_values_in_one_wording() -> None:
    assert one_of(FORMAT, None) is None and one_of(FORMAT, "json") == "json"
    with pytest.raises(UsageError, match=r"^--format must be human or json, got 'xml'$"):
        one_of(FORMAT, "xml")
    with pytest.raises(UsageError, match=r"^--era must be extension or legacy, got 'both'$"):
        one_of(CALL_ERA, "both")
    # An eager option acts through its callback, and only an eager one has one.
    with pytest.raises(ValueError, match="eager"):
        command_parameter(VERSION)
    with pytest.raises(ValueError, match="eager"):
        command_parameter(FORMAT, lambda value: None)


def test_the_file_and_suite_keys_are_the_settings_that_apply_there() -> None:
    assert [k.name for k in config_file.KEYS] == [s.key for s in applying(FILE) if s is not ERA]
    assert [k.field for k in config_file.KEYS] == [s.name for s in applying(FILE) if s is not ERA]
    assert {k.name for k in config_file.KEYS if k.secret} == {s.key for s in SETTINGS.values() if s.secret}
    assert list(suite._keys()) == [s.key for s in applying(TARGET)]
    # The report flags belong to the suite command, one run's file actions to no target.
    assert suite._REPORT_KEYS == ["format", "reporter", "quiet", "verbose", "debug"]
    assert suite._COMMAND_LINE_ONLY == ["config", "update-baseline"]


def test_the_api_keywords_are_the_api_settings_and_their_types_are_generated_and_fresh() -> None:
    params = inspect.signature(tasks_conformance.run).parameters
    assert [p for p in params if p != "progress"] == [s.name for s in applying(API, None)]
    # RunSettings (what editors and type checkers see) is generated from the schema; after a
    # change to it: python -m tasks_conformance.settings
    with open(inspect.getfile(RunOptions), encoding="utf-8") as fh:
        assert current(fh.read()) == typed_keywords(), "stale: run python -m tasks_conformance.settings"
    from tasks_conformance.entry.api import RunSettings

    assert list(RunSettings.__annotations__) == [s.name for s in applying(API, None)]


def test_the_pytest_options_are_the_settings_marked_for_the_plugin() -> None:
    assert {option: spec.name for option, spec in plugin_options()} == {
        f"--tasks-conformance-{spec.pytest}": spec.name
        for spec in SETTINGS.values() if spec.pytest and SERVER in spec.subjects}
    # A client's options: its settings marked for the plugin, under --tasks-conformance-client-.
    assert {option: spec.name for option, spec in plugin_options(CLIENT)} == {
        f"--tasks-conformance-client-{spec.pytest}": spec.name
        for spec in SETTINGS.values() if spec.pytest and CLIENT in spec.subjects}
    assert {spec.name for _option, spec in plugin_options(CLIENT)} >= {"command", "era", "scenarios", "baseline"}
    assert {spec.name for _option, spec in plugin_options()} >= {"command", "url", "config", "tool_name"}


def test_suite_does_not_import_the_command_line_and_config_does_not_import_the_file_reader() -> None:
    code = (
        "import sys\n"
        "import tasks_conformance.entry.suite\n"
        "from tasks_conformance.settings.config import RunOptions, build_run_config\n"
        "from tasks_conformance.core.errors import UsageError\n"
        "try:\n"
        "    build_run_config(RunOptions(url='ftp://user:pw@example.test/'))\n"
        "except UsageError as exc:\n"
        "    print(exc)\n"
        "watched = ('tasks_conformance.entry.cli', 'tasks_conformance.settings.config_file', 'typer')\n"
        "print(sorted(m for m in watched if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.splitlines() == [
        "--url must start with http:// or https://, got 'ftp://user:[REDACTED]@example.test/'", "[]"]


def test_a_suite_target_takes_a_table_for_every_pair_setting(tmp_path: Any) -> None:
    # The kind decides: env, header, other-header, probe and probe-args take a table, as in the config file.
    path = tmp_path / "suite.toml"
    path.write_text(
        '[[targets]]\nname = "a"\nurl = "http://127.0.0.1:9/mcp"\ntool-name = "long_job"\n'
        'header = {X-Tenant = "t1"}\nother-header = {Authorization = "Bearer other-123456"}\n'
        'probe = {fault = "rpc_error"}\nprobe-args = {fault = {durationMs = 10}}\n', encoding="utf-8")
    (name, (planned,)), = suite.load(str(path)).targets
    config = planned.config
    assert name == "a" and config.headers == {"X-Tenant": "t1"}
    assert config.other_headers == {"Authorization": "Bearer other-123456"}
    assert config.probes["fault"] == "rpc_error" and config.probe_args["fault"] == {"durationMs": 10}


# One form of each kind, as a file writes it (TOML/JSON values), and its RunOptions form.
FORMS_BY_KIND: dict[str, tuple[Any, Any]] = {
    "text": ("x", "x"), "path": ("a/b", "a/b"), "command": (["my server", "-v"], ("my server", "-v")),
    "json": ({"n": 1}, '{"n": 1}'), "int": (7, 7), "ms": (1500, 1500), "bool": (True, True),
    "many": ("one", ("one",)), "env": ({"A": "1", "PORT": 8080}, ("A=1", "PORT=8080")),
    "headers": ({"X-A": "b"}, ("X-A: b",)), "probes": ({"input": "ask"}, ("input=ask",)),
    "probe-args": ({"input": {"q": 1}}, ('input={"q": 1}',)),
}


def test_each_kind_has_one_converter_the_file_the_suite_and_the_api_share(tmp_path: Any) -> None:
    """settings/values.py converts a value of each kind for the config file, a suite target and the
    API alike: the same value gives the same RunOptions form (an argv: split by the same rule)."""
    from tasks_conformance.entry.api import _options
    from tasks_conformance.settings.values import converted

    assert {k.name for k in KINDS} == set(FORMS_BY_KIND)
    for kind in KINDS:
        given, held = FORMS_BY_KIND[kind.name]
        assert converted(kind, given) == held, kind.name
    spec = next(s for s in SETTINGS.values() if s.kind.name == "env" and TARGET in s.applies)
    file_value = config_file._values({spec.key: {"A": "1"}}, "c.toml", config_file.BY_NAME)[spec.name]
    suite_value = suite._setting("t", spec.key, {"A": "1"}, suite._keys()[spec.key])
    api_value = getattr(_options({spec.name: {"A": "1"}}), spec.name)
    assert file_value == suite_value == api_value == ("A=1",)
    # An argv: the program as given (quoted where it has a space), then its arguments.
    assert _options({"command": ["my server", "-v"]}).command == "'my server'"
    assert _options({"command": ["my server", "-v"]}).args == ("-v",)
    # The API's wrong type is a TypeError in the words the file's usage error uses.
    with pytest.raises(TypeError, match=r"^timeout_ms must be an integer \(milliseconds\), got str$"):
        _options({"timeout_ms": "5"})
