"""The compact compile directory and compile_directory.json written one key at a time.

The directory keeps each output as a name and a number (not an Entry object), so these tests
check that what it hands back is exactly what was registered, and that the streamed JSON is
byte for byte the document `jsonfmt.dumps_pretty(directory.as_json())` gives (which the parity
tests compare with tlparse's file).
"""

from __future__ import annotations

import io
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from tlscope.analyse.tlparse.directory import CompileDirectory, DirKey, Entry
from tlscope.model.compile_id import CompileId
from tlscope.write.report import compiledir, jsonfmt


def _reference(directory: CompileDirectory) -> bytes:
    """How compile_directory.json was written before streaming: one pretty document."""
    return jsonfmt.dumps_pretty(directory.as_json()).encode("utf-8", "surrogateescape")


def _streamed(directory: CompileDirectory) -> bytes:
    out = io.BytesIO()
    compiledir.write_to(out, directory)
    return out.getvalue()


def _sample() -> CompileDirectory:
    d = CompileDirectory()
    a, b = CompileId(frame_id=0, frame_compile_id=0, attempt=0), CompileId(frame_id=1, frame_compile_id=0, attempt=0)
    d.touch(a)
    d.register_file(a, "-_0_0_0/dynamo_output_graph_0.txt")
    d.register_file(None, "unknown_7/fx_graph_cache_miss_1.json")
    d.take_number()  # a readable page takes the number before its JSON
    d.register_file(a, "-_0_0_0/stack_traces_3.json", readable_url="-_0_0_0/stack_traces_readable.html")
    d.register_link(b, "perfetto", "https://example.com/trace")
    d.register_file(b, "-_1_0_0/not_json_5.json", readable_url="")
    d.touch(CompileId())
    return d


def test_entries_are_what_was_registered() -> None:
    d = _sample()
    a = CompileId(frame_id=0, frame_compile_id=0, attempt=0)
    assert d.entries(a) == [
        Entry(url="-_0_0_0/dynamo_output_graph_0.txt", name="-_0_0_0/dynamo_output_graph_0.txt", number=0, suffix=""),
        Entry(
            url="-_0_0_0/stack_traces_3.json",
            name="-_0_0_0/stack_traces_3.json",
            number=3,
            suffix="",
            readable_url="-_0_0_0/stack_traces_readable.html",
        ),
    ]
    b = CompileId(frame_id=1, frame_compile_id=0, attempt=0)
    assert d.entries(b) == [
        Entry(url="https://example.com/trace", name="perfetto", number=4, suffix="", link=True),
        # tlparse's empty readable_url for a stack-trace file that is not JSON stays "", not None.
        Entry(url="-_1_0_0/not_json_5.json", name="-_1_0_0/not_json_5.json", number=5, suffix="", readable_url=""),
    ]
    assert d.entries(None)[0].suffix == "\u274c"  # the cache mark follows from the name
    assert d.entries(CompileId()) == []
    assert [k for k, _ in d.items()] == [a, None, b, CompileId()]  # first appearance, not sorted
    assert len(d) == 4 and d.counter == 6


def test_register_returns_the_stored_entry() -> None:
    d = CompileDirectory()
    entry = d.register_file(None, "x/fx_graph_cache_hit_0.json", readable_url="r.html")
    assert d.entries(None) == [entry] and entry.suffix == "\u2705"
    link = d.register_link(None, "n", "u")
    assert d.entries(None)[1] == link and link.link


def test_streamed_json_is_the_pretty_document() -> None:
    d = _sample()
    assert _streamed(d) == _reference(d)
    assert _streamed(d).startswith(b'{\n  "[-/-]": {\n    "artifacts": []\n  },\n  "[0/0]": {\n    "artifacts": [\n')


def test_streamed_json_of_an_empty_directory() -> None:
    assert _streamed(CompileDirectory()) == _reference(CompileDirectory()) == b"{}"


def test_keys_with_one_display_keep_the_later_value() -> None:
    # attempt None and attempt 0 both display as `[0/-]`; the dict of as_json keeps the later one.
    d = CompileDirectory()
    d.register_file(CompileId(frame_id=0), "a/first_0.txt")
    d.register_file(CompileId(frame_id=0, attempt=0), "b/second_1.txt")
    assert _streamed(d) == _reference(d)
    assert b"second_1" in _streamed(d) and b"first_0" not in _streamed(d)


def test_streamed_json_with_an_undecodable_name() -> None:
    # A lone surrogate (from an undecodable file name) makes msgspec refuse the value: that key
    # takes jsonfmt's exact slow path and its bytes go out through surrogateescape.
    d = _sample()
    d.register_link(None, "bad\udcff", "https://example.com/\udc80")
    assert _streamed(d) == _reference(d)
    assert b"bad\xff" in _streamed(d)


def test_write_puts_the_document_in_a_file(tmp_path: Path) -> None:
    d = _sample()
    compiledir.write(tmp_path / "compile_directory.json", d)
    assert (tmp_path / "compile_directory.json").read_bytes() == _reference(d)


_keys: st.SearchStrategy[DirKey] = st.one_of(
    st.none(),
    st.builds(
        CompileId,
        compiled_autograd_id=st.none() | st.integers(0, 3),
        frame_id=st.none() | st.integers(0, 3),
        frame_compile_id=st.none() | st.integers(0, 3),
        attempt=st.none() | st.integers(0, 2),
    ),
)
# Names may hold anything a log can: quotes, newlines, non-Latin-1 text and the lone surrogates
# of undecodable bytes (U+DC80..U+DCFF, surrogateescape; JSON's own lone surrogate escapes are
# refused by the reader), which send jsonfmt down its slow exact path for that key.
_escaped_bytes = st.integers(0xDC80, 0xDCFF).map(chr)
_text = st.text(st.characters(exclude_categories=["Cs"]) | _escaped_bytes | st.sampled_from(['"', "\n"]), max_size=12)
_ops = st.lists(
    st.tuples(st.sampled_from(["file", "readable", "link", "skip"]), _keys, _text, _text),
    max_size=25,
)


@settings(max_examples=200, deadline=None)
@given(_ops)
def test_streamed_json_matches_the_document_for_any_outputs(ops: list[tuple[str, DirKey, str, str]]) -> None:
    d = CompileDirectory()
    for kind, key, name, other in ops:
        if kind == "file":
            d.register_file(key, name)
        elif kind == "readable":
            d.register_file(key, name, readable_url=other)
        elif kind == "link":
            d.register_link(key, name, other)
        else:
            d.take_number()
            d.touch(key)
    assert _streamed(d) == _reference(d)
