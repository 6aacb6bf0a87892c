"""Flag values converted without pydantic when they are plainly what their type asks for.

Typer (0.2x on) converts every non-flag option through a pydantic TypeAdapter, built the first
time the option is processed, including options left at their default. On a run that is about
70 ms of each start (importing pydantic, then some thirty adapters), more than the whole
exchange with a fast server. The values of our options are almost always plain: a string, a
list of strings, a decimal integer. Those are converted here exactly as typer would; anything
else (a malformed integer, a value of another type) goes to typer's own conversion, which
builds its adapter then, so its error messages stay typer's.

This leans on typer internals (`type_descriptor`, `_runtime_param`, `typer._coercion`); where
they are missing (another typer version) `install` does nothing and typer converts as usual.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

_MISS = object()
# A decimal integer this long converts the same with int() as with pydantic's lax int parsing.
_MAX_INT_DIGITS = 18

try:  # typer >= 0.2x: the coercion layer this module short-cuts
    from typer._coercion import RuntimeParam, TypeDescriptor, build_runtime_param
except ImportError:  # pragma: no cover - another typer: nothing to short-cut
    RuntimeParam = None  # type: ignore[assignment,misc]


def plain_value(annotation: Any, value: Any) -> Any:
    """`value` converted to `annotation` where that is unambiguous, else _MISS."""
    if annotation is str:
        return value if type(value) is str else _MISS
    if annotation is bool:
        return value if type(value) is bool else _MISS
    if annotation is int:
        if type(value) is int:
            return value
        if (type(value) is str and value.isascii() and value.isdigit() and len(value) <= _MAX_INT_DIGITS
                and (value == "0" or not value.startswith("0"))):
            return int(value)
        return _MISS
    if annotation == list[str]:
        if isinstance(value, (list, tuple)) and all(type(v) is str for v in value):
            return list(value)
        return _MISS
    return _MISS


if RuntimeParam is not None:

    @dataclass(frozen=True)
    class PlainRuntimeParam(RuntimeParam):
        """Typer's RuntimeParam (so None and multi-value handling stay typer's), converting
        plain values itself and handing anything else to the conversion typer would build."""

        descriptor: TypeDescriptor
        _fallback: list[Any] = field(default_factory=list)

        def _coerce_value(self, value: Any, param: Any, ctx: Any) -> Any:
            plain = plain_value(self.annotation, value)
            if plain is not _MISS:
                return plain
            if not self._fallback:
                self._fallback.append(build_runtime_param(self.descriptor))
            return self._fallback[0]._coerce_value(value, param=param, ctx=ctx)


def _eligible(param: Any) -> bool:
    desc = getattr(param, "type_descriptor", None)
    if desc is None or not hasattr(param, "_runtime_param") or param._runtime_param is not None:
        return False
    info = desc.parameter_info
    return (desc.file_annotation is None and info.parser is None and info.min is None and info.max is None
            and _known(desc.annotation))


def _known(annotation: Any) -> bool:
    return annotation in (str, bool, int) or annotation == list[str]


def install(params: Iterable[Any]) -> int:
    """Give each eligible typer parameter the plain conversion; returns how many got it."""
    if RuntimeParam is None:
        return 0
    n = 0
    for param in params:
        if _eligible(param):
            desc = param.type_descriptor
            param._runtime_param = PlainRuntimeParam(
                parameter_info=desc.parameter_info, annotation=desc.annotation, descriptor=desc,
            )
            n += 1
    return n
