"""A Python int or float whose change recompiled a frame, which automatic dynamic made a symbol
in the new compile, so later values reuse it: `changes` says so (format 1.46), where before it
said nothing (an int) or `___as_tensor(L['lr']) presence: absent -> present` (a float, which
Dynamo passes to the graph as a tensor)."""

from __future__ import annotations

from typing import Any

import pytest
from helpers import corpus_recompiles

from tlscope.analyse.fold.callvalues import value_changes
from tlscope.analyse.fold.compileresult import input_changes
from tlscope.analyse.fold.guards import guard_failure
from tlscope.format.compiles import InputChange, TensorInput


def test_a_floats_tensor_input_is_said_as_its_dynamism() -> None:
    x = TensorInput(source="L['x']", size=[4], stride=[1])
    scalar = TensorInput(source="___as_tensor(L['lr'])", size=[], stride=[])
    assert input_changes([x], [x, scalar]) == [
        InputChange(input="L['lr']", what="dynamic", before="static", after="dynamic")
    ]
    assert input_changes([x, scalar], [x]) == [
        InputChange(input="L['lr']", what="dynamic", before="dynamic", after="static")
    ]
    other = TensorInput(source="L['y']", size=[2], stride=[1])
    assert input_changes([x], [x, other]) == [
        InputChange(input="L['y']", what="presence", before="absent", after="present")
    ]


def test_a_value_made_a_symbol_is_said_dynamic() -> None:
    failure = guard_failure("0/0: L['k'] == 2")
    failure.actual = "3"  # as fill_actuals sets it from the new compile's values
    values = {("value", "k"): ("L['k']", "3")}
    assert [(c.what, c.before, c.after) for c in value_changes([failure], values)] == [("value", "2", "3")]
    said = value_changes([failure], values, {("value", "k")})
    assert [(c.input, c.what, c.before, c.after) for c in said] == [
        ("L['k']", "value", "2", "3"),
        ("L['k']", "dynamic", "static", "dynamic"),
    ]


@pytest.mark.parametrize(
    ("scenario", "cid", "name"), [("recompiles_dynamic", "[1/1]", "L['k']"), ("globals_changed", "[0/4]", "L['lr']")]
)
def test_corpus(scenario: str, cid: str, name: str, tmp_path_factory: pytest.TempPathFactory) -> None:
    recompile: dict[str, Any] = corpus_recompiles(scenario, tmp_path_factory)[cid]
    said = [(c["input"], c["what"], c["before"], c["after"]) for c in recompile["changes"]]
    assert said[-1] == (name, "dynamic", "static", "dynamic") and said[-2][:2] == (name, "value")
    assert not any(c["input"].startswith("___as_tensor(") for c in recompile["changes"])


def test_a_views_storage_offset_is_no_condition_of_the_code() -> None:
    """A decode step's `out[:, -1:]` of a one-token output starts at offset 0; the entry compiled
    the prompt's slice (offset 96) at a dynamic offset. Dynamo's guard, not the user's `if`."""
    failure = guard_failure("0/1: 2 <= x.storage_offset()")
    assert (failure.kind, failure.subject) == ("dynamic_range", "x.storage_offset()")
    assert failure.explanation.startswith("the storage offset of x (where the view starts in its tensor's storage)")
    assert guard_failure("0/1: 2 <= L['k']").kind == "value_range"
