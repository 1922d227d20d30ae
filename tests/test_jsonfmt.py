"""serde_json's pretty JSON: the msgspec fast path must print exactly what the exact walk prints."""

from __future__ import annotations

import random
import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tlscope.write.report import jsonfmt

_JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**80), max_value=2**80)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20),
    lambda children: st.lists(children, max_size=5) | st.dictionaries(st.text(max_size=8), children, max_size=5),
    max_leaves=30,
)


@settings(max_examples=400, deadline=None)
@given(_JSON)
def test_fast_path_equals_the_exact_walk(value: object) -> None:
    assert jsonfmt.dumps_pretty(value) == jsonfmt._dumps_pretty_walk(value)
    assert jsonfmt.pretty_bytes(value) == jsonfmt._dumps_pretty_walk(value).encode("utf-8")


def test_floats_print_as_serde_ryu_on_300k_random_doubles() -> None:
    rng = random.Random(1234)
    for _ in range(300_000):
        value = struct.unpack("d", struct.pack("Q", rng.getrandbits(64)))[0]
        if value == value and abs(value) != float("inf"):
            assert jsonfmt.dumps_pretty(value) == jsonfmt.ryu(value)


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (1e-05, "0.00001"),
        (1e16, "1e16"),
        (2.5e-7, "2.5e-7"),
        (100.0, "100.0"),
        (2**64 - 1, "18446744073709551615"),
        (2**64, "1.8446744073709552e19"),  # beyond u64: serde reads it as a float
        (-(2**63) - 1, "-9.223372036854776e18"),
        ({"b": [], "a": {}, "\u00e9": "\u00e9\x01"}, '{\n  "a": {},\n  "b": [],\n  "\u00e9": "\u00e9\\u0001"\n}'),
    ],
)
def test_known_texts(value: object, text: str) -> None:
    assert jsonfmt.dumps_pretty(value) == text


@pytest.mark.parametrize("bad", [b"NaN", b"[Infinity]", b'"\\ud800"', b"{", b"\xff"])
def test_loads_rejects_what_serde_rejects(bad: bytes) -> None:
    with pytest.raises(ValueError):
        jsonfmt.loads(bad)


def test_long_digit_string_is_not_mistaken_for_a_number() -> None:
    value = {"id": "1234567890123456789012345", "n": 1}
    assert jsonfmt.dumps_pretty(value) == '{\n  "id": "1234567890123456789012345",\n  "n": 1\n}'
