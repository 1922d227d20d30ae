"""lexer.py's scan as a Pygments `Lexer`: the reference path of the highlighting.

`highlight.reference_spans` (Pygments' `highlight` with this lexer and SpanFormatter) is the
definition `highlight.spans` is held to by the tests; a run calls `spans`, which walks
lexer.py's scan itself. So this class lives apart from the scan: importing `pygments.lexer` (its
filters, regexopt...) is ~5 ms of start-up that a run never needs.
"""

from __future__ import annotations

from collections.abc import Iterator

from pygments.lexer import Lexer  # type: ignore[import-untyped]
from pygments.token import Name, _TokenType  # type: ignore[import-untyped]

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
