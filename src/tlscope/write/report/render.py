"""The Jinja2 environment of the report: package templates, autoescape on, safe JSON in scripts."""

from __future__ import annotations

import functools
import json
from collections.abc import Iterable, Iterator
from itertools import islice
from pathlib import Path
from typing import Any

from jinja2 import Environment, Template
from markupsafe import Markup

from tlscope.write import templates
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
    """The report's templates (write/report/templates/)."""
    filters = {"script_json": script_json, "num": num}
    return templates.environment("tlscope.write.report", filters, keep_trailing_newline=True)


#: Template fragments joined per batch. Jinja's own `render` joins every fragment at once, so a
#: big page (index.html lists every output: ~300,000 fragments for 26,000 outputs) held all
#: fragment objects and their list, twice the size of the page itself, at the run's peak.
_BATCH = 4096


def render(template: str, **context: Any) -> str:
    """The page as one string, built from batches so no list of every fragment ever exists."""
    page = environment().get_template(template)
    try:
        return "".join(batched(_fragments(page, context)))
    except Exception:
        page.environment.handle_exception()  # re-raised, its traceback showing the template's lines


def render_to(dest: Path, template: str, /, **context: Any) -> None:
    """Stream the page into `dest` (UTF-8, surrogateescape like the report's other pages).

    For pages that grow with the log (index.html): only one batch is ever in memory.
    """
    page = environment().get_template(template)
    with dest.open("w", encoding="utf-8", errors="surrogateescape") as out:
        try:
            for chunk in batched(_fragments(page, context)):
                out.write(chunk)
        except Exception:
            page.environment.handle_exception()


def _fragments(page: Template, context: dict[str, Any]) -> Iterator[str]:
    """The template's own generator of fragments: `Template.generate` is this generator wrapped
    in another (for its error handling, done by the callers above), which every fragment passed
    through (~114,000 a big trace's report: ~60 ns each)."""
    return page.root_render_func(page.new_context(context))


def batched(fragments: Iterable[str], size: int = _BATCH) -> Iterator[str]:
    """Consecutive runs of `size` fragments, each joined into one string."""
    it = iter(fragments)
    while batch := list(islice(it, size)):
        yield "".join(batch)
