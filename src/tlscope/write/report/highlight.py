"""inductor_output_code pages: Pygments-highlighted Python, one code line per HTML line.

Layout contract (provenance line numbers and tlparse's tests depend on it): line 1 of the
file is the opening `<pre>` line, code line i is file line i + 1, and an identifier is never
split by markup. Highlighting is the dominant cost of a tlparse run, so three things keep it
off our critical path: a lean lexer (lexer.py, ~5x faster than Pygments' PythonLexer), worker
processes that write pages while the main pass goes on, and identical code (same MD5)
highlighted once and hard-linked (both in derived.py).
"""

from __future__ import annotations

from pathlib import Path

from pygments import highlight  # type: ignore[import-untyped]
from pygments.formatters import HtmlFormatter  # type: ignore[import-untyped]

from tlscope.write.report.lexer import LeanPythonLexer

_STYLE = "friendly"
HEAD = '<meta charset="UTF-8"><pre class="highlight">\n'
_lexer = LeanPythonLexer(stripnl=False, ensurenl=False)
_formatter = HtmlFormatter(nowrap=True, style=_STYLE)


def tail() -> str:
    """What follows the code: the closing tag and the colours (after the code, so lines stay put)."""
    css = _formatter.get_style_defs(".highlight")
    return f"</pre>\n<style>\n.highlight {{ background: #ffffff; }}\n{css}\n</style>\n"


def render_code(code: str) -> str:
    """The whole page for one code payload."""
    body = highlight(code, _lexer, _formatter) if code else ""
    if body and not body.endswith("\n"):
        body += "\n"
    return HEAD + body + tail()


def write_page(source: str, dest: str) -> None:
    """Worker entry: read a payload file, write its highlighted page."""
    code = Path(source).read_bytes().decode("utf-8", "replace")
    Path(dest).write_text(render_code(code), encoding="utf-8")
