"""The JSON decode boundary (format/json_boundary.py): serde_json's limits, and the only decoder.

tlparse parses with serde_json: 127 levels of nesting pass, the 128th is an error, and numbers
outside double range are errors. `decode` accepts exactly that, so a JSON artifact is
pretty-printed (or left as it was) exactly when tlparse does, and nothing decoded from a log
can be deep enough to exhaust Python's stack later. Every module that decodes log-derived
JSON must go through it (checked on the source below).
"""

from __future__ import annotations

import ast
import hashlib
import json
import subprocess
import sys
from pathlib import Path

import msgspec
import pytest
from helpers import REPO

from tlscope.format import json_boundary
from tlscope.format.json_boundary import MAX_DEPTH, JsonError, check, decode


def nested_list(depth: int) -> bytes:
    return b"[" * depth + b"1" + b"]" * depth


def nested_dict(depth: int) -> str:
    return '{"a":' * depth + "1" + "}" * depth


@pytest.mark.parametrize("depth", [1, 126, 127])
def test_up_to_127_levels_decode(depth: int) -> None:
    assert decode(nested_list(depth)) is not None
    assert decode(nested_dict(depth)) is not None


@pytest.mark.parametrize("depth", [128, 129, 999, 1000, 1500, 100_000])
def test_128_levels_and_more_are_refused(depth: int) -> None:
    for text in (nested_list(depth), nested_dict(depth)):
        with pytest.raises(JsonError, match="nested deeper than 127 levels"):
            decode(text)
    with pytest.raises(JsonError):
        decode(b"[" * depth)  # never closed: too deep or cut off, an error either way


def test_depth_counts_containers_wherever_they_are() -> None:
    wide = json.dumps({"k": [list(range(50)) for _ in range(200)], "deep": json.loads(nested_list(120))})
    assert decode(wide)["deep"] is not None
    with pytest.raises(JsonError):
        decode(json.dumps([1, {"x": json.loads(nested_list(127))}]))


@pytest.mark.parametrize(
    "text",
    [b"1" + b"0" * 400, b"-" + b"9" * 330, b'{"ts": 1' + b"0" * 309 + b"}", b"[1e400]", b"-1e400", b"1" * 5000],
)
def test_numbers_beyond_double_range_are_refused(text: bytes) -> None:
    with pytest.raises(JsonError, match="out of range"):
        decode(text)


@pytest.mark.parametrize("decoys", [0, 3, 40])
@pytest.mark.parametrize("offset", range(31))
def test_a_long_integer_among_digit_dense_text_is_found_at_any_offset(offset: int, decoys: int) -> None:
    # Decoy strings of 300 digits (text, never a number) make the sampled search check places
    # before the integer's: a few (each one looked at), or more than it looks at one at a time.
    strings = ['"' + "7" * 300 + '"'] * decoys
    head = " " * offset
    assert len(decode(head + "[" + ", ".join([*strings, "1" + "0" * 308]) + "]")) == decoys + 1  # 1e308
    for number in ("2" + "0" * 308, "-" + "9" * 400):  # 2e308: 309 digits, beyond a double
        with pytest.raises(JsonError, match="out of range"):
            decode(head + "[" + ", ".join([*strings, number, *strings]) + "]")


@pytest.mark.parametrize("pad", [0, 300, 20_000])
@pytest.mark.parametrize("brackets", [1, 127, 128, 129, 5_000])
def test_the_bracket_bound_is_the_count_at_every_size(pad: int, brackets: int) -> None:
    # Long text has its brackets found one by one, short text has them counted: one bound.
    half = brackets // 2
    for text in (b" " * pad + b"[" * brackets, b"{" * half + b" " * pad + b"[" * (brackets - half)):
        assert json_boundary._may_nest_deep(text) is (brackets > MAX_DEPTH)
    padded = b" " * pad  # JSON allows any whitespace before a value
    assert decode(padded + nested_list(min(brackets, MAX_DEPTH))) is not None
    if brackets > MAX_DEPTH:
        with pytest.raises(JsonError, match="nested deeper"):
            decode(padded + nested_list(brackets))


def test_a_wide_list_of_leaves_beside_a_deep_one_is_still_refused() -> None:
    wide = ["[x]" * 50] * 1000  # brackets in text: counted, then the walk skips the strings
    assert len(decode(json.dumps([wide, json.loads(nested_list(126))]))) == 2
    with pytest.raises(JsonError, match="nested deeper"):
        decode(json.dumps([wide, json.loads(nested_list(127))]))


@pytest.mark.parametrize(
    "text, value",
    [
        (b"18446744073709551616", 2**64),  # beyond u64: a float in serde, an int here, but in range
        (b"1" + b"0" * 308, 10**308),
        (b"2.5e-400", 0.0),
        (b'"' + b"9" * 400 + b'"', "9" * 400),  # digits in a string are text
    ],
)
def test_numbers_in_range_decode(text: bytes, value: object) -> None:
    assert decode(text) == value


def test_malformed_text_and_bad_utf8_and_surrogates_are_json_errors() -> None:
    for bad in (b"{", b'"\xff"', b"[1,]", b"NaN", '"\udc80"'):
        with pytest.raises(JsonError):
            decode(bad)


def test_a_typed_decoder_keeps_the_bounds() -> None:
    decoder = msgspec.json.Decoder(dict[str, object])
    assert decode(b'{"a": [1]}', decoder) == {"a": [1]}
    with pytest.raises(JsonError):
        decode(b'{"a": ' + nested_list(1500) + b"}", decoder)
    with pytest.raises(JsonError):
        decode(b'{"a": ' + nested_list(200) + b"}", decoder)


def test_check_walks_without_recursion() -> None:
    value: list[object] = []
    for _ in range(100_000):
        value = [value]
    with pytest.raises(JsonError):
        check(value)
    check([[[]]] * 10_000)


def test_json_errors_are_value_errors_with_one_line() -> None:
    with pytest.raises(ValueError) as err:
        decode(nested_list(MAX_DEPTH + 1))
    assert "\n" not in str(err.value)


# -- same verdicts as tlparse --------------------------------------------------------------------


def _artifact_log(path: Path, payloads: dict[str, bytes]) -> None:
    lines = []
    for name, payload in payloads.items():
        envelope = {"artifact": {"name": name, "encoding": "json"}, "frame_id": 0, "frame_compile_id": 0}
        envelope |= {"attempt": 0, "has_payload": hashlib.md5(payload).hexdigest()}
        lines.append(b"V1121 19:30:32.270000 1 torch/x.py:1] " + json.dumps(envelope).encode())
        lines.append(b"\t" + payload)
    path.write_bytes(b"\n".join(lines) + b"\n")


def test_artifacts_are_json_exactly_when_tlparse_says_so(tlparse_bin: Path, tmp_path: Path) -> None:
    payloads = {
        "deep127": nested_list(127),
        "deep128": nested_list(128),
        "huge_int": b"[1" + b"0" * 400 + b"]",
        "huge_float": b"[1e400]",
        "u64_plus": b"[18446744073709551616]",
    }
    log = tmp_path / "t.log"
    _artifact_log(log, payloads)
    theirs, ours = tmp_path / "theirs", tmp_path / "ours"
    subprocess.run([str(tlparse_bin), str(log), "-o", str(theirs), "--no-browser"], check=True, capture_output=True)
    command = [sys.executable, "-m", "tlscope", str(log), "-o", str(ours), "--no-browser"]
    subprocess.run(command, check=True, capture_output=True)
    for name in payloads:
        [their_file] = (theirs / "-_0_0_0").glob(f"{name}_*.json")
        assert (ours / "-_0_0_0" / their_file.name).read_bytes() == their_file.read_bytes(), name


# -- the only decoder ----------------------------------------------------------------------------

#: Calls that decode JSON text; outside format/json_boundary.py only msgspec Decoder objects may be
#: built (to be passed to `decode`), never asked to decode themselves.
_DECODING = {("json", "loads"), ("json", "load"), ("msgspec.json", "decode"), ("msgspec", "decode")}


def _decoding_calls(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
            continue
        owner = ast.unparse(node.func.value)
        if (owner, node.func.attr) in _DECODING or (node.func.attr == "decode" and "DECODER" in owner.upper()):
            found.append(f"{path.relative_to(REPO)}:{node.lineno}: {ast.unparse(node.func)}")
    return found


#: The boundary itself; a module that reads only tlscope's own output files, whose nesting the
#: boundary already bounded; the viewer templates (projects of their own, copied out by users).
_ALLOWED = {
    "src/tlscope/format/json_boundary.py",
    "src/tlscope/viewers/pack.py",
    # Reads back the compiles.json entries this run wrote a moment before (streamed, then read
    # for the answers): tlscope's own output, whose nesting the boundary bounded on the way in.
    "src/tlscope/write/answers_sink.py",
    # Not JSON at all: msgpack of the parent's own RankSummary objects, spilled to a temporary
    # file so the parent's memory stays flat in the number of ranks.
    "src/tlscope/pipeline/rank_store.py",
}
_ALLOWED_UNDER = "src/tlscope/viewers/templates/"


def test_every_json_decode_goes_through_the_boundary() -> None:
    found = [
        call
        for path in sorted((REPO / "src" / "tlscope").rglob("*.py"))
        if str(path.relative_to(REPO)) not in _ALLOWED and not str(path.relative_to(REPO)).startswith(_ALLOWED_UNDER)
        for call in _decoding_calls(path)
    ]
    assert found == []


def test_the_source_check_finds_a_decoder() -> None:
    sample = REPO / "src" / "tlscope" / "format" / "json_boundary.py"
    assert any("decoder.decode" in call for call in _decoding_calls(sample))
