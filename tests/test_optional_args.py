"""Optional arguments that recompile (corpus optional_args): `mask is None` and a tensor guard
that finds None are the guard kind `none` (format 1.45), and the call with a scale is blamed on
the scale, not on the mask entry Dynamo tried first (FORMAT.md "Which failure is the cause")."""

from __future__ import annotations

from typing import Any

import pytest
from helpers import corpus_recompiles

from tlscope.analyse.fold.guards import guard_failure


@pytest.fixture(scope="module")
def recompiles(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return corpus_recompiles("optional_args", tmp_path_factory)


def test_a_mask_passed_then_a_scale(recompiles: dict[str, Any]) -> None:
    first = recompiles["[0/1]"]["guard_failures"][0]
    assert (first["kind"], first["subject"], first["expected"], first["actual"]) == ("none", "mask", "None", "not None")
    assert first["explanation"] == "mask changed: None -> not None (the entry was compiled for mask None)"
    second = recompiles["[0/2]"]
    assert [(f["cache_entry"], f["kind"], f["subject"]) for f in second["guard_failures"]] == [
        ("[0/1]", "none", "mask"),
        ("[0/0]", "none", "scale"),
    ]
    assert second["guard_failures"][0]["explanation"] == (
        "mask changed: a tensor -> None (the entry was compiled for a tensor mask)"
    )
    assert second["recommended"] == {
        "index": 1,
        "why": "[0/0] is the newest entry whose failure the others do not explain: [0/1] failed on mask being "
        "not None, but [0/0] was compiled for mask None, as the call's",
    }


def test_none_guards_read_as_written() -> None:
    passed = guard_failure("0/0: L['bias'] is not None")
    assert (passed.kind, passed.subject, passed.expected, passed.actual) == ("none", "bias", "not None", "None")
    number = guard_failure("0/0: expected type of 'x' to be a tensor type, ' but found <class 'int'>")
    assert (number.kind, number.expected, number.actual) == ("type", "Tensor", "int")
    assert number.explanation == "x is an int now; the entry was compiled for a tensor"
    # A tensor of another class (format 1.46): an nn.Parameter where a plain tensor was, or the reverse.
    plain = guard_failure("0/0: expected type of 'w' to be a tensor type, ' but found <class 'torch.Tensor'>")
    assert (plain.kind, plain.expected, plain.actual) == ("type", None, "Tensor")
    assert plain.explanation == (
        "w is a Tensor now; the entry was compiled for another tensor type "
        "(an nn.Parameter, a plain Tensor and each tensor subclass compile apart)"
    )
    assert guard_failure("0/0: f(x) is None").kind == "other"
