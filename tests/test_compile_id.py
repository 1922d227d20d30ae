"""Compile ids from envelopes: the fast path accepts and refuses exactly what the plain rules say."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tlscope.model.compile_id import CONTEXT_FIELDS, BadCompileId, CompileId, compile_id_from_envelope

_U32_MAX = 2**32 - 1
_FIELD_VALUES = st.none() | st.integers(-3, _U32_MAX + 3) | st.booleans() | st.floats() | st.text(max_size=3)


def _reference(envelope: dict[str, Any]) -> CompileId | None:
    """The rules as written: each field absent, or an int (not bool) in 0..2^32-1; None: refused."""
    values = {}
    for name in CONTEXT_FIELDS:
        value = envelope.get(name)
        ok = value is None or (isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= _U32_MAX)
        if not ok:
            return None
        values[name] = value
    return CompileId(**values)


@settings(max_examples=500, deadline=None)
@given(st.dictionaries(st.sampled_from([*CONTEXT_FIELDS, "rank"]), _FIELD_VALUES))
def test_from_envelope_follows_the_rules(envelope: dict[str, Any]) -> None:
    expected = _reference(envelope)
    if expected is None:
        with pytest.raises(BadCompileId):
            compile_id_from_envelope(envelope)
    else:
        assert compile_id_from_envelope(envelope) == expected


@given(st.tuples(*(st.none() | st.integers(0, _U32_MAX) for _ in CONTEXT_FIELDS)))
def test_dirname_is_the_fields_joined(values: tuple[int | None, ...]) -> None:
    cid = CompileId(*values)
    assert cid.dirname == "_".join("-" if v is None else str(v) for v in values)
