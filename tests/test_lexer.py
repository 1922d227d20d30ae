"""The lean output-code lexer: lossless, line-preserving, and classifying what readers look at."""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pygments.token import Comment, Keyword, Name, Number, Operator, String

from tlscope.read.reader import LogReader
from tlscope.write.report.highlight import render_code
from tlscope.write.report.pygments_lexer import LeanPythonLexer

CORPUS = Path(__file__).resolve().parents[1] / "corpus" / "traces"
_LEXER = LeanPythonLexer(stripnl=False, ensurenl=False)
_TAG = re.compile(r"<[^>]*>")


def _output_codes() -> list[str]:
    """Every distinct inductor_output_code payload of the corpus (real torch 2.13 output)."""
    codes: dict[str, str] = {}
    for trace in sorted(CORPUS.glob("*/*.log.gz")):
        for record in LogReader(trace):
            if record.key == "inductor_output_code" and record.payload is not None:
                codes.setdefault(record.payload_md5 or "", record.payload.decode("utf-8"))
    return list(codes.values())


@pytest.fixture(scope="module")
def output_codes() -> list[str]:
    codes = _output_codes()
    if not codes:
        pytest.skip("no corpus traces with inductor output code")
    return codes


def _tokens(text: str) -> list[tuple[object, str]]:
    return [(t, v) for _, t, v in _LEXER.get_tokens_unprocessed(text)]


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("ab1_ .'\"\\#\n\t()=@rbf+-e0x\u00e9")) | st.characters(), max_size=80))
def test_tokens_are_lossless_on_any_text(text: str) -> None:
    offset = 0
    for start, _, value in _LEXER.get_tokens_unprocessed(text):
        assert start == offset and value
        offset += len(value)
    assert offset == len(text)


def test_real_output_code_round_trips_line_for_line(output_codes: list[str]) -> None:
    for code in output_codes:
        assert "".join(v for _, v in _tokens(code)) == code
        page = render_code(code).split("\n")
        lines = code.split("\n")
        assert page[0].endswith('<pre class="highlight">')
        # Code line i is file line i + 1, with its text intact once the markup is removed.
        assert [html.unescape(_TAG.sub("", line)) for line in page[1 : 1 + len(lines)]] == lines


def test_identifiers_are_never_split(output_codes: list[str]) -> None:
    for code in output_codes:
        for start, _, _ in _LEXER.get_tokens_unprocessed(code):
            # No token boundary falls between two word characters, i.e. inside a name.
            assert not (start > 0 and code[start - 1].isidentifier() and ("a" + code[start]).isidentifier())


def test_classifies_like_pygments_on_what_matters() -> None:
    code = (
        "# AOT ID: ['0_forward']\n"
        "from torch._inductor.async_compile import AsyncCompile\n"
        "import torch\n"
        "@torch.no_grad\n"
        "def call(self, args):\n"
        "    arg0_1, = args\n"
        "    buf0 = empty_strided_cpu((64, ), (1, ), torch.float32)\n"
        "    if x is not None and 1.5e-3 > 0x1F:\n"
        "        return len(r'''\n#include <x.h>\n''')\n"
        'class Runner:\n    s = "a\\"b" + b\'x\'\n'
    )
    tokens = _tokens(code)
    kinds = {v: t for t, v in tokens}
    assert kinds["# AOT ID: ['0_forward']"] is Comment.Single
    assert kinds["from"] is Keyword.Namespace and kinds["import"] is Keyword.Namespace
    assert kinds["_inductor"] is Name.Namespace
    assert kinds["def"] is Keyword and kinds["return"] is Keyword and kinds["if"] is Keyword
    assert kinds["call"] is Name.Function and kinds["Runner"] is Name.Class
    assert kinds["self"] is Name.Builtin.Pseudo and kinds["len"] is Name.Builtin
    assert kinds["None"] is Keyword.Constant and kinds["is"] is Operator.Word and kinds["and"] is Operator.Word
    assert kinds["64"] is Number.Integer and kinds["1.5e-3"] is Number.Float and kinds["0x1F"] is Number.Hex
    assert kinds["@torch.no_grad"] is Name.Decorator
    assert kinds["'''\n#include <x.h>\n'''"] is String.Single and kinds["r"] is String.Affix
    assert kinds['"a\\"b"'] is String.Double and kinds["'x'"] is String.Single
    assert kinds["buf0"] is Name


def test_page_markup_escapes_code() -> None:
    page = render_code("x = '</pre><script>alert(1)</script>'\n")
    assert "<script>" not in page and "&lt;script&gt;" in page


def _char_classes(markup: str) -> list[tuple[str, str]]:
    """Per character of text, the class of the span around it ('' outside spans).

    Compared unescaped: Pygments releases differ in how they escape quotes (2.20: `&#39;`).
    """
    out: list[tuple[str, str]] = []
    for m in re.finditer(r'<span class="([^"]*)">([^<]*)</span>|([^<]+)', markup):
        css, text = (m.group(1), m.group(2)) if m.group(1) is not None else ("", m.group(3))
        out.extend((css, ch) for ch in html.unescape(text))
    return out


def test_span_formatter_marks_every_character_as_htmlformatter_does(output_codes: list[str]) -> None:
    from pygments import highlight
    from pygments.formatters import HtmlFormatter

    from tlscope.write.report.pygments_lexer import SpanFormatter

    ours, reference = SpanFormatter(nowrap=True), HtmlFormatter(nowrap=True)
    for code in [*output_codes[:10], "s = '''a\n<b>\n'''  # \"q\" & done\n"]:
        mine, theirs = highlight(code, _LEXER, ours), highlight(code, _LEXER, reference)
        assert _char_classes(mine) == _char_classes(theirs)
        assert mine.count("\n") == theirs.count("\n")


_MARKUP_ALPHABET = [*"ab1_ .'\"\\#\n\r\t()=@rbf+-e0x\u00e9<>&{}[]:;`\ufeff", "def ", "import ", "from ", "class "]


@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from(_MARKUP_ALPHABET) | st.characters(), max_size=60).map("".join))
def test_one_pass_markup_is_pygments_markup_on_any_text(text: str) -> None:
    """`spans` (the page's one loop) writes what Pygments with the lean lexer and SpanFormatter writes."""
    from tlscope.write.report.highlight import spans
    from tlscope.write.report.pygments_lexer import reference_spans

    assert spans(text) == reference_spans(text)


def test_one_pass_markup_is_pygments_markup_on_real_code(output_codes: list[str]) -> None:
    from tlscope.write.report.highlight import spans
    from tlscope.write.report.pygments_lexer import reference_spans

    for code in [
        *output_codes,
        "\ufeffx = 1\r\ny = 2\rz",
        "from a . b import c\n@d.e\ndef f(self): return 0x1F & 2 < 3j",
    ]:
        assert spans(code) == reference_spans(code)


#: Lines that change the lexer's state at their end (an open string, a waiting name, a
#: continuation), so that pieces kept by `spans`' memo meet every context.
_MEMO_LINES = ["x = 1", "'''", 'r"""a', "b'''", "import", "from a", "def", "  ", "", "\\", "y = 'c\\", "#'''",
               "f(a, '''q", "s = \"\"\"", "@d", "class", "  z  ", "\\\\", "x.y", "'''\\"]  # fmt: skip


@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from(_MEMO_LINES) | st.text(alphabet=list("'\" \\\n#iax"), max_size=6), max_size=12))
def test_memo_of_pieces_keeps_the_markup_pygments_markup(lines: list[str]) -> None:
    """Lines seen in earlier texts (hypothesis' examples run in one process) are copied from the
    memo: the result is still the whole text's markup, whatever precedes or follows them."""
    from tlscope.write.report.highlight import spans
    from tlscope.write.report.pygments_lexer import reference_spans

    text = "\n".join(lines)
    assert spans(text) == reference_spans(text)
    assert spans(text + "\n") == reference_spans(text + "\n")


def test_memo_is_not_used_past_a_string_that_backtracks() -> None:
    """A triple-quoted string with no end, before a final unpaired backslash, is not a string (the
    regex backtracks): its first line must not be kept as markup for text where it is one."""
    from tlscope.write.report.highlight import spans
    from tlscope.write.report.pygments_lexer import reference_spans

    for text in ["'''abc\n\\", "'''abc\nx'''\n", "'''abc\n\\", "'''abc\n"]:
        assert spans(text) == reference_spans(text)


def test_memo_copies_real_code_seen_before(output_codes: list[str]) -> None:
    """Each real payload highlighted twice (the second time mostly from the memo) and once with an
    empty memo: all three the same markup."""
    from tlscope.write.report import highlight

    for code in output_codes[:8]:
        first, second = highlight.spans(code), highlight.spans(code)
        saved = highlight._SEGMENTS
        highlight._SEGMENTS = highlight._Segments(1 << 20)
        try:
            assert first == second == highlight.spans(code)
        finally:
            highlight._SEGMENTS = saved
