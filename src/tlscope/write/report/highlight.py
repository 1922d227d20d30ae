"""inductor_output_code pages: Pygments-highlighted Python, one code line per HTML line.

Layout contract (provenance line numbers and tlparse's tests depend on it): line 1 of the
file is the opening `<pre>` line, code line i is file line i + 1, and an identifier is never
split by markup. Highlighting is the dominant cost of a tlparse run, so three things keep it
off our critical path: a lean lexer (lexer.py, ~5x faster than Pygments' PythonLexer), worker
processes that write pages while the main pass goes on, and identical code (same MD5)
highlighted once and hard-linked (both in derived.py).
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from pathlib import Path
from typing import TextIO

from pygments import highlight  # type: ignore[import-untyped]
from pygments.formatters import HtmlFormatter  # type: ignore[import-untyped]
from pygments.token import STANDARD_TYPES, _TokenType  # type: ignore[import-untyped]

from tlscope.write.report.lexer import LeanPythonLexer

_STYLE = "friendly"
HEAD = '<meta charset="UTF-8"><pre class="highlight">\n'
#: What HtmlFormatter escapes, the same way.
_ESCAPE = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;"})


class SpanFormatter(HtmlFormatter):  # type: ignore[misc]
    """HtmlFormatter's `nowrap` output (same classes, same escaping, spans closed at each line
    end) in one join: its general line machinery was half of the highlighting time."""

    def format_unencoded(self, tokensource: Iterable[tuple[_TokenType, str]], outfile: TextIO) -> None:
        parts: list[str] = []
        for ttype, value in tokensource:
            css = _css_class(ttype)
            text = value.translate(_ESCAPE)
            if not css:
                parts.append(text)
            elif "\n" in text:  # one span per line, so every code line is a whole HTML line
                parts.append("\n".join(f'<span class="{css}">{p}</span>' if p else "" for p in text.split("\n")))
            else:
                parts.append(f'<span class="{css}">{text}</span>')
        outfile.write("".join(parts))


@functools.cache
def _css_class(ttype: _TokenType) -> str:
    while ttype not in STANDARD_TYPES:
        ttype = ttype.parent
    return str(STANDARD_TYPES[ttype])


_lexer = LeanPythonLexer(stripnl=False, ensurenl=False)
_formatter = SpanFormatter(nowrap=True, style=_STYLE)


@functools.cache
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
