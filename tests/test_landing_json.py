"""The landing page's JSON: fast pretty printing gives json.dumps' exact text; the combined chromium array."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tlscope.write.landing import chromium
from tlscope.write.landing.jsonout import JSON_AS_PYTHON, array_body, pretty

_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**80), max_value=2**80)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text()
)
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=25,
)


def _reference(value: Any, sort_keys: bool = True) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False, sort_keys=sort_keys, allow_nan=False)


@settings(max_examples=400, deadline=None)
@given(_VALUES, st.booleans())
def test_pretty_is_json_dumps_text(value: Any, sort_keys: bool) -> None:
    assert pretty(value, sort_keys=sort_keys) == _reference(value, sort_keys)


def test_pretty_keeps_python_float_and_escape_forms() -> None:
    # The forms where msgspec's own encoder would differ from json's: exponents, control chars.
    value = {"b": [1e16, 9.7335e-05, 0.015463113784790039, -0.0, 1.0], "a": "\x1f\n\u2028é\U0001f600", "c": {}}
    assert pretty(value) == _reference(value)
    assert pretty([]) == "[]"


def test_pretty_lone_surrogate_falls_back_to_json() -> None:
    assert pretty({"s": "\ud800"}) == _reference({"s": "\ud800"})


def _as_decoded(values: list[Any]) -> list[Any]:
    """What array_body gets: JSON text decoded with JSON_AS_PYTHON (floats as raw repr text)."""
    decoded: list[Any] = JSON_AS_PYTHON.decode(json.dumps(values))
    return decoded


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(_VALUES, max_size=4), max_size=4))
def test_array_bodies_join_into_the_pretty_array(chunks: list[list[Any]]) -> None:
    bodies = [array_body(_as_decoded(chunk)) for chunk in chunks if chunk]
    joined = ("[" + ",".join(b.decode() for b in bodies) + "\n]") if bodies else "[]"
    assert joined == _reference([item for chunk in chunks for item in chunk])


@settings(max_examples=300, deadline=None)
@given(st.lists(st.floats(allow_nan=False, allow_infinity=False) | st.integers(), min_size=1, max_size=6))
def test_array_body_numbers_as_python_writes_them(numbers: list[float]) -> None:
    # Top-level and nested numbers of every magnitude, as json.dumps (Python's repr) writes them.
    items: list[Any] = [*numbers, {"v": numbers}, [numbers]]
    assert array_body(_as_decoded(items)).decode() == _reference(items)[1:-2]


def test_array_body_exponent_range_floats() -> None:
    items = [{"s": ",1e5 :0.00001"}, {"t": 1e-05, "u": 1.5e16, "w": 123.25, "x": 9.7335e-05, "y": -0.0}]
    assert array_body(_as_decoded(items)).decode() == _reference(items)[1:-2]
    assert b"9.7335e-05" in array_body(_as_decoded(items)) and b"1.5e+16" in array_body(_as_decoded(items))


def test_out_of_range_number_is_a_decode_error() -> None:
    with pytest.raises(msgspec.DecodeError, match="Number out of range"):
        JSON_AS_PYTHON.decode(b"[1e400]")


def _rank_folder(root: Path, rank: int, events: Any) -> None:
    folder = root / f"rank_{rank}"
    folder.mkdir()
    if events is not None:
        (folder / "chromium_events.json").write_bytes(msgspec.json.encode(events))


def test_combined_array_from_rank_files(tmp_path: Path) -> None:
    events = {0: [{"name": "a", "pid": 7, "ts": 1.5e-05}, 3], 1: None, 2: [], 3: [{"name": "b", "pid": 0}]}
    for rank, value in events.items():
        _rank_folder(tmp_path, rank, value)
    (tmp_path / "rank_x").mkdir()  # not a rank's folder
    (tmp_path / "rank_07").mkdir()  # nor this (rank 7's is rank_7)
    assert chromium.job_ranks(tmp_path) == [0, 1, 2, 3]
    text = b"".join(chromium.chunks(tmp_path, chromium.job_ranks(tmp_path))).decode("utf-8")
    # pid = rank, non-object items dropped, json.dumps' text of the whole array.
    expected = [{"name": "a", "pid": 0, "ts": 1.5e-05}, {"name": "b", "pid": 3}]
    assert text == _reference(expected)


def test_combined_array_skips_unreadable_ranks_and_is_empty_without_events(tmp_path: Path) -> None:
    _rank_folder(tmp_path, 0, None)
    (tmp_path / "rank_0" / "chromium_events.json").write_text("[{not json")
    _rank_folder(tmp_path, 1, [])
    assert b"".join(chromium.chunks(tmp_path, [0, 1, 2])) == b"[]"
    assert json.loads(b"".join(chromium.chunks(tmp_path, [0, 1]))) == []
