"""A lean lexer for inductor output code: one regex scan instead of Pygments' state machine.

Why not `pygments.lexers.PythonLexer`: it tries up to thirty rules at every position and costs
about 4 microseconds a token; on a real 130 MB trace with 7.8 MB of distinct output code that is
4.0 s of lexing, more than the rest of the report. This lexer makes one pass with a single
compiled alternation (the regex engine does the work in C) and classifies names with set
lookups: 0.75 s on the same code. It emits Pygments token types, so Pygments' HtmlFormatter and
styles render it exactly like any other lexer's output (pygments_lexer.py wraps it as a Pygments
`Lexer`, the reference path; highlight.py's `spans` walks the scan itself).

What it tells apart (enough for generated code): comments, strings with their prefixes, numbers
(integer, float, hex), keywords, word operators, constants, builtins, `self`/`cls`, decorators,
the names after `def`, `class`, `import` and `from`, operators and punctuation. What it does
not: f-string fields and escape sequences inside strings (shown as string text).

The token values always concatenate back to the input, so no character is lost or split:
an identifier is always one token.
"""

from __future__ import annotations

import builtins
import keyword
import re
from collections.abc import Iterator

from pygments.token import (  # type: ignore[import-untyped]
    Comment,
    Keyword,
    Name,
    Number,
    Operator,
    Punctuation,
    String,
    Text,
    Whitespace,
    _TokenType,
)

# Strings use the "unrolled loop" form (normal* (special normal*)*) so the engine never
# backtracks, and an unterminated string simply runs to the end of the text (or line).
_MASTER = re.compile(
    r"""
    (?P<ws>[ \t\f]*\n[ \t\f]*|[ \t\f]+)
  | (?P<comment>\#[^\n]*)
  | (?P<tstr>(?P<tpre>[rRuUbBfF]{0,2})(?:
        '''[^'\\]*(?:(?:\\.|'(?!''))[^'\\]*)*(?:'''|\Z)
      | \"\"\"[^"\\]*(?:(?:\\.|"(?!""))[^"\\]*)*(?:\"\"\"|\Z)))
  | (?P<str>(?P<pre>[rRuUbBfF]{0,2})(?:
        '[^'\\\n]*(?:\\.[^'\\\n]*)*'?
      | "[^"\\\n]*(?:\\.[^"\\\n]*)*"?))
  | (?P<num>0[xX][0-9a-fA-F_]+|0[bB][01_]+|0[oO][0-7_]+
      |(?:\d[\d_]*(?:\.[\d_]*)?|\.\d[\d_]*)(?:[eE][+-]?\d[\d_]*)?[jJ]?)
  | (?P<deco>@[^\W\d][\w.]*)
  | (?P<name>[^\W\d]\w*)
  | (?P<op>\*\*=?|//=?|>>=?|<<=?|->|:=|[-+*/%&|^@<>=!]=?|~)
  | (?P<punct>(?:[()\[\]{},:;`]|\.(?!\d))(?:[()\[\]{},:;` \t]|\.(?!\d))*|\\\n?)
  | (?P<other>.)
    """,
    re.VERBOSE | re.DOTALL,
)

_WORD_OPERATORS = frozenset({"and", "or", "not", "in", "is"})
_CONSTANTS = frozenset({"True", "False", "None"})
_NAMESPACE = frozenset({"import", "from"})
_KEYWORDS = frozenset(keyword.kwlist) - _WORD_OPERATORS - _CONSTANTS - _NAMESPACE
_PSEUDO = frozenset({"self", "cls"})
_BUILTINS = frozenset(name for name in dir(builtins) if not name.startswith("_"))
#: A keyword's effect on the next name: `def f` -> f is a function name, and so on.
_NEXT_NAME = {"def": Name.Function, "class": Name.Class, "import": Name.Namespace, "from": Name.Namespace}
_SIMPLE: dict[str, _TokenType] = {
    "ws": Whitespace,
    "comment": Comment.Single,
    "op": Operator,
    "punct": Punctuation,
    "deco": Name.Decorator,
    "other": Text,
}


def _name_type(value: str) -> _TokenType:
    if value in _KEYWORDS:
        return Keyword
    if value in _NAMESPACE:
        return Keyword.Namespace
    if value in _WORD_OPERATORS:
        return Operator.Word
    if value in _CONSTANTS:
        return Keyword.Constant
    if value in _PSEUDO:
        return Name.Builtin.Pseudo
    if value in _BUILTINS:
        return Name.Builtin
    return Name


def _number_type(value: str) -> _TokenType:
    if value[:2] in ("0x", "0X"):
        return Number.Hex
    if value[:2] in ("0b", "0B"):
        return Number.Bin
    if value[:2] in ("0o", "0O"):
        return Number.Oct
    if "." in value or "e" in value or "E" in value or value[-1] in "jJ":
        return Number.Float
    return Number.Integer


def _string_tokens(start: int, value: str, prefix: str) -> Iterator[tuple[int, _TokenType, str]]:
    if prefix:
        yield start, String.Affix, prefix
    body = value[len(prefix) :]
    yield start + len(prefix), String.Double if body[:1] == '"' else String.Single, body
