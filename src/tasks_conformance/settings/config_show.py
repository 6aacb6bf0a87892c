"""`tasks-conformance config show`: every setting of a subject, its effective value (secrets masked)
and where it came from; a client's settings (the file's [client] table) in a block of their own."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import fields
from typing import TYPE_CHECKING, Any

from tasks_conformance.settings import CLIENT, FILE, RUN, SERVER, SETTINGS, RunOptions
from tasks_conformance.settings.masking import masked

if TYPE_CHECKING:
    from tasks_conformance.settings.config_file import Resolved


def show(resolved: Resolved, environ: Mapping[str, str] | None = None, subject: str = SERVER) -> list[dict[str, Any]]:
    """Every setting of the subject: its file key, effective value (secrets masked) and source."""
    from tasks_conformance.core.redact import Redactor
    from tasks_conformance.settings.config import RunConfig
    from tasks_conformance.settings.masking import url_passwords

    o = resolved.options
    # A second fence: every secret the run itself would hide, wherever it shows up.
    env = dict(item.partition("=")[::2] for item in o.env)
    headers = dict((h.partition(":")[0].strip(), h.partition(":")[2].strip()) for h in o.headers)
    import shlex

    try:
        words = tuple(shlex.split(o.command)) if o.command and " " in o.command else (o.command or "",)
    except ValueError:
        words = (o.command or "",)
    lenient = RunConfig(transport="stdio", url=o.url, command=(*words, *o.args, *o.command_args),
                        env=env, show_env=o.show_env, headers=headers)
    secrets = lenient.secrets() + [v for v in (o.access_token, o.oauth_access_token, o.other_access_token) if v]
    secrets += [h.partition(":")[2].strip() for h in o.other_headers if h.partition(":")[2].strip()]
    secrets += [pw for v in env.values() for pw in url_passwords(v)]
    redactor = Redactor(secrets)
    rows = []
    for f in fields(RunOptions):
        spec = SETTINGS[f.name]
        if subject not in spec.subjects or not spec.applies & {RUN, FILE}:  # `subject`: the API's and suite's
            continue
        key = spec.key
        value = masked(f.name, getattr(o, f.name), o)
        rows.append({"key": key, "value": redactor.json(list(value) if isinstance(value, tuple) else value),
                     "source": resolved.sources.get(f.name, "default")})
    if subject == SERVER:
        rows.append({"key": "era", "value": resolved.era, "source": resolved.era_source})
    return rows


def show_text(rows: list[dict[str, Any]], file: str | None, client: list[dict[str, Any]] | None = None) -> str:
    """`config show` for people: one line per setting, `key = value` as TOML would write it; the
    client's settings (when the file has a [client] table) after `[client]`, as the file writes them."""
    from tasks_conformance.core.text import one_line
    from tasks_conformance.settings.config_file import FILE_NAME, PYPROJECT, TABLE, _display

    none = f"none ({FILE_NAME} or [tool.{TABLE}] in {PYPROJECT})"
    head = f"# config file: {_display(file) if file else none}"
    lines = [head, "# precedence: flag > environment > file > default"]
    shown = [(r["key"], "(not set)" if r["value"] in (None, []) else json.dumps(r["value"], ensure_ascii=False),
              r["source"]) for r in (*rows, *(client or ()))]
    width = max(len(k) for k, _v, _s in shown)
    value_width = min(48, max(len(v) for _k, v, _s in shown))
    for n, (key, value, source) in enumerate(shown):
        if n == len(rows):
            lines.append(f"[{CLIENT}]")
        lines.append(one_line(f"{key:<{width}} = {value:<{value_width}}  # {source}"))
    return "\n".join(lines)
