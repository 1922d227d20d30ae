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

import pygments  # type: ignore[import-untyped]
from pygments.token import STANDARD_TYPES, Name, Whitespace, _TokenType  # type: ignore[import-untyped]

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
from tlscope.write.templates import kept_text

_STYLE = "friendly"
HEAD = '<meta charset="UTF-8"><pre class="highlight">\n'
#: What HtmlFormatter escapes, the same way.
_ESCAPE = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;"})


def _escape(text: str) -> str:
    """`text.translate(_ESCAPE)`, ~15x faster on a kernel's string: `translate` to several
    characters goes character by character in Python's slow path, each `replace` at memory speed."""
    return (
        text.replace("&", "&amp;")
        .replace("<", "&lt;")
        .replace(">", "&gt;")
        .replace('"', "&quot;")
        .replace("'", "&#39;")
    )


@functools.cache
def _css_class(ttype: _TokenType) -> str:
    while ttype not in STANDARD_TYPES:
        ttype = ttype.parent
    return str(STANDARD_TYPES[ttype])


class _CssClasses(dict[_TokenType, str]):
    """Token type -> its CSS class, filled on first use (`_css_class`)."""

    def __missing__(self, ttype: _TokenType) -> str:
        css = self[ttype] = _css_class(ttype)
        return css


_CSS = _CssClasses()
#: A name's span (most tokens are names, and generated code repeats them), bounded.
_NAME_SPANS: dict[str, str] = {}


def _name_span(name: str) -> str:
    css = _CSS[_name_type(name)]
    span = f'<span class="{css}">{name}</span>' if css else name
    if len(_NAME_SPANS) >= 65536:
        _NAME_SPANS.clear()
    _NAME_SPANS[name] = span
    return span


#: Kinds of lexer match whose text can hold a character HTML escapes, or a newline.
_ESCAPED_KINDS = frozenset({"comment", "op", "other"})
_NEWLINE_KINDS = frozenset({"ws", "punct", "other"})


def _span(css: str, text: str) -> str:
    """One token's markup as SpanFormatter writes it (`text` already escaped)."""
    if not css:
        return text
    if "\n" in text:
        # Each line in a span of its own, an empty line bare: spans around every line, then the
        # empty ones taken out (escaped text holds no `<`, so only those match), two passes at
        # memory speed instead of a generator step per line (a kernel's source is one token).
        opening = f'<span class="{css}">'
        spans = opening + text.replace("\n", "</span>\n" + opening) + "</span>"
        return spans.replace(opening + "</span>", "")
    return f'<span class="{css}">{text}</span>'


class _Segments:
    """Highlighted code by its text, kept for the process's next payloads (bounded).

    Generated code repeats itself: the big trace's 48 output-code payloads hold 49,339 lines, of
    which 4,308 are distinct, and the same kernels come back in every recompile. `spans` cuts the
    code where the lexer is at rest (the end of a line whose newline sits in a whitespace token,
    with no `def`/`import` waiting for its name) and looks each piece up here first: a single
    line in `lines`, a run of lines lexed as one (a kernel inside a triple-quoted string) in
    `runs`, by its first line. Bounded by characters kept; over the budget, it starts again.
    """

    def __init__(self, budget: int) -> None:
        self.lines: dict[str, str] = {}
        self.runs: dict[str, dict[str, str]] = {}
        self._budget = budget
        self._size = 0

    def add(self, segment: str, first: str, html: str) -> None:
        """Keep `html`, the markup of `segment` (whose first line, newline included, is `first`)."""
        self._size += len(segment) + len(html)
        if self._size > self._budget:
            self.lines.clear()
            self.runs.clear()
            self._size = len(segment) + len(html)
        if len(segment) == len(first):
            self.lines[segment] = html
            return
        runs = self.runs.setdefault(first, {})
        if len(runs) >= _RUNS_PER_LINE:  # each lookup tries them all: a few per first line
            del runs[next(iter(runs))]
        runs[segment] = html

    def run_at(self, code: str, pos: int, first: str) -> tuple[str, int] | None:
        """(markup, length) of a kept run of lines that `code` holds at `pos`, if any."""
        for segment, html in self.runs.get(first, {}).items():
            if code.startswith(segment, pos):
                return html, len(segment)
        return None


#: Runs kept per first line (a kernel's first line names it: different kernels rarely share one).
_RUNS_PER_LINE = 4
_SEGMENTS = _Segments(8 * 1024 * 1024)


def spans(code: str) -> str:
    """`pygments_lexer.reference_spans(code)`, byte for byte, in one pass: the lexer's loop (lexer.py) writing
    each token's span as it classifies it, and pieces of code met before (`_Segments`) copied.

    Why a piece's markup is the same wherever it appears: the lexer's regex has no look-behind,
    a piece ends where the lexer is at rest (a newline inside a whitespace token, which splits
    into the same markup on either side of the newline, no name pending), and no token before
    that newline looks past it, so the piece lexes alone as it does in place. The one exception
    is a triple-quoted string that finds no end and meets an unpaired backslash at the end of
    the text: the regex then backtracks out of the string, and text ending with a backslash is
    lexed without the memo. Going through Pygments (its lexer wrapper's two generators, a class
    lookup and an escape per token) took twice as long as the loop without the memo: output code
    is the biggest page job of a large trace (bench/README.md, stages)."""
    if code.startswith("\ufeff"):  # what Pygments' lexer input preprocessing does first
        code = code[1:]
    code = code.replace("\r\n", "\n").replace("\r", "\n")
    parts: list[str] = []
    if code.endswith("\\"):
        _lex(code, 0, parts, None)
        return "".join(parts)
    memo = _SEGMENTS
    pos, size = 0, len(code)
    while pos < size:
        end = code.find("\n", pos) + 1
        if end == 0:  # the last line, without a newline: not kept
            _lex(code, pos, parts, None)
            break
        line = code[pos:end]
        html = memo.lines.get(line)
        if html is not None:
            parts.append(html)
            pos = end
        elif (run := memo.run_at(code, pos, line)) is not None:
            parts.append(run[0])
            pos += run[1]
        else:
            pos = _lex(code, pos, parts, memo)
    return "".join(parts)


#: A token's markup by its kind and text, for the kinds whose markup is a function of those two
#: alone (all but names, whose class may depend on the name before, and strings): generated code
#: repeats its punctuation, operators, numbers and indents (the big trace's lexed pieces: 43,000
#: tokens, 14,000 of them punctuation of a few dozen texts). Bounded, as _NAME_SPANS is.
_TOKEN_SPANS: dict[str | None, dict[str, str]] = {}


def _token_span(kind: str, value: str) -> str:
    """The markup of a token of `kind` (not a name, not a string) and text `value`, kept."""
    if kind == "num":
        html = f'<span class="{_CSS[_number_type(value)]}">{value}</span>'
    else:  # whitespace, comments, operators, punctuation, decorators, other characters
        html = _span(_CSS[_SIMPLE[kind]], _escape(value) if kind in _ESCAPED_KINDS else value)
    spans = _TOKEN_SPANS.get(kind)
    if spans is None or len(spans) >= 16384:
        spans = _TOKEN_SPANS[kind] = {}
    spans[value] = html
    return html


def _lex(code: str, pos: int, parts: list[str], memo: _Segments | None) -> int:
    """Append the markup of `code` from `pos` (where the lexer is at rest) to the next place it
    is at rest again, a newline, and return the position after that newline (the end of `code`
    when there is none; everything, when `memo` is None). The piece is kept in `memo`."""
    append = parts.append
    css_of = _CSS
    names = _NAME_SPANS
    kept = _TOKEN_SPANS
    pending: _TokenType | None = None
    mark = len(parts)
    for match in _MASTER.finditer(code, pos):
        kind = match.lastgroup
        value = match.group()
        if kind == "name":
            if pending is not None and value not in _KEYWORDS and value not in _NAMESPACE:
                append(f'<span class="{css_of[pending]}">{value}</span>')
                if pending is not Name.Namespace:
                    pending = None
                continue
            pending = _NEXT_NAME.get(value)
            append(names[value] if value in names else _name_span(value))
            continue
        if kind == "ws":
            newline = value.find("\n")
            if newline != -1 and pending is None and memo is not None:
                append(_span(css_of[Whitespace], value[: newline + 1]))
                end = match.start() + newline + 1
                piece = code[pos:end]
                html = parts[mark] if len(parts) == mark + 1 else "".join(parts[mark:])
                memo.add(piece, code[pos : code.find("\n", pos) + 1], html)
                return end
        elif kind == "tstr" or kind == "str":
            pending = None
            for _, ttype, text in _string_tokens(0, value, match.group("tpre" if kind == "tstr" else "pre")):
                append(_span(css_of[ttype], _escape(text)))
            continue
        elif pending is not None and not (kind == "punct" and pending is Name.Namespace and value.strip() == "."):
            pending = None  # a number, an operator, a comment: the name a keyword announced is not next
        assert kind is not None
        spans = kept.get(kind)
        known = spans.get(value) if spans is not None else None
        append(known if known is not None else _token_span(kind, value))
    return len(code)


@functools.cache
def tail() -> str:
    """What follows the code: the closing tag and the colours (after the code, so lines stay put).
    Long lines wrap inside the page (generated kernels' signatures ran 500 px past a 1280 px
    window: issue 20, finding 9); each code line stays one line of the file."""
    css = kept_text(f"style_{_STYLE}_pygments_{pygments.__version__}.css", _style_defs)
    wrap = "white-space: pre-wrap; overflow-wrap: anywhere;"
    return f"</pre>\n<style>\n.highlight {{ background: #ffffff; {wrap} }}\n{css}\n</style>\n"


def _style_defs() -> str:
    """The style's CSS rules as Pygments' HTML formatter writes them: the one use of the
    formatter's modules in a run, kept between runs (`kept_text`), so a run need not import them."""
    from pygments.formatters import HtmlFormatter  # type: ignore[import-untyped]

    return str(HtmlFormatter(style=_STYLE).get_style_defs(".highlight"))


def render_code(code: str) -> str:
    """The whole page for one code payload."""
    body = spans(code) if code else ""
    if body and not body.endswith("\n"):
        body += "\n"
    return HEAD + body + tail()


def code_page(payload: bytes) -> bytes:
    """The highlighted page of an output-code payload, as written (a page job: derived.py)."""
    return render_code(payload.decode("utf-8", "replace")).encode("utf-8")
