"""Flag values converted without pydantic (cli_coercion) must be exactly what typer gives."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import pytest
import typer.main

from tasks_conformance.entry import cli_coercion
from tasks_conformance.entry.cli import app

typer_coercion = pytest.importorskip("typer._coercion")
if cli_coercion.RuntimeParam is None:  # pragma: no cover - a typer without the pydantic layer
    pytest.skip("this typer converts without pydantic", allow_module_level=True)

SAMPLES: dict[Any, list[Any]] = {
    str: [None, "", "x", "http://127.0.0.1:1/mcp", " padded ", "ünï", "0"],
    int: [None, 0, 30_000, "0", "7", "30000", "1" * 18, "1" * 19, "007", "-3", "+3", " 5", "1_000", "abc", "",
          "٣", "1.5"],
    bool: [None, True, False],
    list[str]: [None, (), ("a",), ("a", "b"), ["x", ""]],
}


def _commands() -> list[Any]:
    group = typer.main.get_command(app)
    return [group, *group.commands.values()]  # type: ignore[attr-defined]


def _outcome(runtime: Any, value: Any, param: Any, ctx: Any) -> tuple[str, Any]:
    try:
        return "value", runtime.coerce(value, param=param, ctx=ctx)
    except Exception as exc:  # typer's BadParameter: compare its message
        return type(exc).__name__, exc.format_message() if hasattr(exc, "format_message") else str(exc)


def test_every_parameter_converts_as_typer_does() -> None:
    compared = 0
    for command in _commands():
        ctx = command.make_context(command.name or "x", [], resilient_parsing=True)
        for param in command.get_params(ctx):
            desc = getattr(param, "type_descriptor", None)
            if desc is None or desc.annotation not in SAMPLES:
                continue
            ours = cli_coercion.PlainRuntimeParam(
                parameter_info=desc.parameter_info, annotation=desc.annotation, descriptor=desc,
            )
            theirs = typer_coercion.build_runtime_param(desc)
            for value in SAMPLES[desc.annotation]:
                got, want = _outcome(ours, value, param, ctx), _outcome(theirs, value, param, ctx)
                assert got == want, f"{command.name} {param.name} {value!r}: {got} != {want}"
                assert type(got[1]) is type(want[1])
                compared += 1
    assert compared > 200  # every option of the main command and the subcommands was compared


def test_install_covers_every_option_of_the_main_command() -> None:
    group = typer.main.get_command(app)
    ctx = group.make_context("tasks-conformance", [], resilient_parsing=True)
    params = [p for p in group.get_params(ctx) if hasattr(p, "type_descriptor")]
    for p in params:
        p._runtime_param = None
    assert cli_coercion.install(params) == len(params)
    assert all(isinstance(p._runtime_param, cli_coercion.PlainRuntimeParam) for p in params)


def test_plain_value_declines_what_it_cannot_convert_exactly() -> None:
    miss = cli_coercion._MISS
    assert cli_coercion.plain_value(int, "12") == 12
    for value in ("007", "-1", " 1", "1_0", "١", "1" * 19, 1.0, True):
        assert cli_coercion.plain_value(int, value) is miss, value
    assert cli_coercion.plain_value(str, b"x") is miss
    assert cli_coercion.plain_value(list[str], ("a", 1)) is miss
    assert cli_coercion.plain_value(float, "1") is miss


def test_a_malformed_integer_is_still_typers_usage_error() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "tasks_conformance", "--command", "true", "--timeout", "abc"],
        capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL,
    )
    assert proc.returncode == 2
    assert "Invalid value for '--timeout'" in proc.stderr and "integer" in proc.stderr
