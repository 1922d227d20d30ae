"""A global tensor, a global module, `*rest` and a float keyword that recompile one function
(corpus globals_changed): each said in words (format 1.45), where before a global tensor's
mismatch, whose name holds quotes (`tensor 'G['buf']' dtype mismatch`), and an empty `*rest`
(`not rest`) were guards tlscope did not classify."""

from __future__ import annotations

from typing import Any

import pytest
from helpers import corpus_recompiles

from tlscope.analyse.fold.callvalues import guard_codes, guard_values
from tlscope.analyse.fold.guards import guard_failure


@pytest.fixture(scope="module")
def recompiles(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return corpus_recompiles("globals_changed", tmp_path_factory)


def _said(recompile: dict[str, Any]) -> tuple[str, str | None, str]:
    failure = recompile["guard_failures"][recompile["recommended"]["index"]]
    return failure["kind"], failure["subject"], failure["explanation"]


def test_each_recompile_in_words(recompiles: dict[str, Any]) -> None:
    assert {cid: _said(r) for cid, r in recompiles.items()} == {
        "[0/1]": ("dtype", "G['buf']", "dtype of buf changed: torch.float32 -> torch.float64"),
        "[0/2]": ("type", "act", "act has a different type than when the entry was compiled (it was a ReLU)"),
        "[0/3]": ("length", "rest", "length of rest changed: 0 -> 1"),
        "[0/4]": ("value", "lr", "lr changed: 0.1 -> 0.2"),
    }
    change = {"input": "L['rest']", "what": "length", "before": "0", "after": "1", "name": "rest"}
    assert change in recompiles["[0/3]"]["changes"]


def test_a_quoted_tensor_name_and_an_empty_container() -> None:
    size = guard_failure(
        "0/0: tensor 'L['self']._modules['lin']._parameters['weight']' size mismatch at index 0. expected 4, actual 8"
    )
    assert (size.kind, size.subject, size.explanation) == (
        "size",
        "L['self']._modules['lin']._parameters['weight']",
        "size of self.lin.weight on dim 0 changed: 4 -> 8",
    )
    empty = guard_failure("0/0: not L['xs']  # for t in xs:  # a.py:3 in f")
    assert (empty.kind, empty.subject, empty.expected) == ("length", "xs", "0")
    assert guard_failure("0/0: not (a or b)").kind == "other"


def test_an_empty_container_is_the_calls_value_too() -> None:
    tree = (
        "TREE_GUARD_MANAGER:\n"
        "+- RootGuardManager\n"
        "| +- LENGTH_CHECK: not L['rest']                                 # for r in rest:  # a.py:9 in f\n"
        "| +- LENGTH_CHECK: len(L['xs']) == 2                             # for t in xs:  # a.py:8 in f\n"
    )
    codes = guard_codes("dynamo_cpp_guards_str", tree.encode())
    assert codes == ["not L['rest']", "len(L['xs']) == 2"]
    values = guard_values(codes, {("length", "rest"), ("length", "xs")})
    assert values == {("length", "rest"): ("L['rest']", "0"), ("length", "xs"): ("L['xs']", "2")}


def test_a_parameters_mismatch_and_torchs_note_after_it() -> None:
    """torch 2.13 goes on after a parameter's mismatch (a layer frozen, a weight swapped)."""
    note = " Guard failed on a parameter, consider using torch._dynamo.config.force_parameter_static_shapes = False"
    dtype = guard_failure(
        "0/1: tensor 'self._modules['a']._parameters['weight']' dtype mismatch. expected Float, actual Double." + note
    )
    assert (dtype.kind, dtype.expected, dtype.actual) == ("dtype", "Float", "Double")
    assert dtype.explanation == "dtype of self.a.weight changed: torch.float32 -> torch.float64"
    frozen = guard_failure(
        "0/0: tensor 'self._modules['a']._parameters['bias']' requires_grad mismatch. expected requires_grad=1." + note
    )
    assert frozen.explanation == "requires_grad of self.a.bias changed: True -> False"


def test_frozen_layer(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Corpus frozen_layer: a layer frozen, then its weight swapped for a float64 one."""
    said = {cid: _said(r) for cid, r in corpus_recompiles("frozen_layer", tmp_path_factory).items()}
    assert said == {
        "[0/1]": (
            "requires_grad",
            "self._modules['a']._parameters['bias']",
            "requires_grad of self.a.bias changed: True -> False",
        ),
        "[0/2_1]": (
            "dtype",
            "self._modules['a']._parameters['weight']",
            "dtype of self.a.weight changed: torch.float32 -> torch.float64",
        ),
    }


def test_the_same_tensor_twice() -> None:
    """torch 2.13's reason when a call passes one tensor as two inputs (`add(x, x)` after
    `add(x, y)`): its NO_TENSOR_ALIASING guard."""
    twice = guard_failure('0/0: Duplicate tensors found: ["a", "b"]')
    assert (twice.kind, twice.subject) == ("aliasing", "a b")
    assert twice.explanation == "a and b are the same tensor in this call; the entry was compiled for distinct tensors"
    three = guard_failure("""0/0: Duplicate tensors found: ["G['x']", 'y', "z"]""")
    assert three.explanation.startswith("x, y and z are the same tensor")
