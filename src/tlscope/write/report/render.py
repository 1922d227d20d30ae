"""The Jinja2 environment of the report: package templates, autoescape on, safe JSON in scripts."""

from __future__ import annotations

import functools
import json
from typing import Any

from jinja2 import Environment, PackageLoader, select_autoescape
from markupsafe import Markup

from tlscope.write.report.jsonfmt import number

_SCRIPT_UNSAFE = str.maketrans(
    {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}
)


def script_json(value: Any) -> Markup:
    """JSON for inside `<script>`: `<`, `>`, `&` escaped so no string can close the script."""
    return Markup(json.dumps(value, ensure_ascii=False, sort_keys=True).translate(_SCRIPT_UNSAFE))


def num(value: Any) -> str:
    """A metric as tlparse prints it: null -> empty, floats in ryu style (`1.0`, `1e-7`)."""
    if value is None:
        return ""
    if isinstance(value, (int, float)):
        return number(value)
    return str(value)


def safe_href(url: Any) -> str | None:
    """Only http(s) URLs become links: a log must not plant `javascript:` in the report."""
    if not isinstance(url, str):
        return None
    lowered = url.strip().lower()
    return url if lowered.startswith(("http://", "https://")) else None


@functools.cache
def environment() -> Environment:
    env = Environment(
        loader=PackageLoader("tlscope.write.report", "templates"),
        autoescape=select_autoescape(default=True, default_for_string=True),
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["script_json"] = script_json
    env.filters["num"] = num
    return env


def render(template: str, **context: Any) -> str:
    return environment().get_template(template).render(**context)
