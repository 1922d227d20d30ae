"""lexer.py's scan as a Pygments `Lexer`, and `SpanFormatter`: the reference path of the highlighting.

`reference_spans` (Pygments' `highlight` with this lexer and SpanFormatter) is the definition
`highlight.spans` is held to by the tests; a run calls `spans`, which walks lexer.py's scan
itself. So these classes live apart from the scan: importing `pygments.lexer` (its filters,
regexopt...) is ~5 ms of start-up that a run never needs, and `pygments.formatters` ~20M
instructions (a run takes its colours' CSS from `highlight.tail`, kept between runs).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TextIO

from pygments import highlight  # type: ignore[import-untyped]
from pygments.formatters import HtmlFormatter  # type: ignore[import-untyped]
from pygments.lexer import Lexer  # type: ignore[import-untyped]
from pygments.token import Name, _TokenType  # type: ignore[import-untyped]

from tlscope.write.report.highlight import _ESCAPE, _STYLE, _css_class
from tlscope.write.report.lexer import (
    _KEYWORDS,
    _MASTER,
    _NAMESPACE,
    _NEXT_NAME,
    _SIMPLE,
    _name_type,
    _number_type,
    _string_tokens,
)


class LeanPythonLexer(Lexer):  # type: ignore[misc]
    """Python for reading, fast: see the module docstring for what it distinguishes."""

    name = "Python (lean)"

    def get_tokens_unprocessed(self, text: str) -> Iterator[tuple[int, _TokenType, str]]:
        # The name after def/class/import/from, carried across whitespace and (for dotted
        # imports) dots; any other token ends it.
        pending: _TokenType | None = None
        for match in _MASTER.finditer(text):
            kind = match.lastgroup
            value = match.group()
            start = match.start()
            if kind == "name":
                if pending is not None and value not in _KEYWORDS and value not in _NAMESPACE:
                    yield start, pending, value
                    if pending is not Name.Namespace:
                        pending = None
                    continue
                token = _name_type(value)
                pending = _NEXT_NAME.get(value)
                yield start, token, value
            elif kind == "tstr":
                pending = None
                yield from _string_tokens(start, value, match.group("tpre"))
            elif kind == "str":
                pending = None
                yield from _string_tokens(start, value, match.group("pre"))
            elif kind == "num":
                pending = None
                yield start, _number_type(value), value
            else:
                assert kind is not None
                if kind != "ws" and not (kind == "punct" and value.strip() == "." and pending is Name.Namespace):
                    pending = None
                yield start, _SIMPLE[kind], value


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


_formatter = SpanFormatter(nowrap=True, style=_STYLE)


def reference_spans(code: str) -> str:
    """The markup through Pygments (`highlight` with the lean lexer and SpanFormatter): what
    `highlight.spans` makes in one loop, kept as its definition (tests compare the two)."""
    return str(highlight(code, LeanPythonLexer(stripnl=False, ensurenl=False), _formatter))
