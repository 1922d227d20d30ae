"""Failures while Dynamo runs an operator on fake tensors (corpus fake_errors): torch's first
line says only `RuntimeError when making fake tensor call`; the failure's reason joins the error
its explanation gives (format 1.45), a shape mismatch in the user's code and a custom op without
a fake kernel."""

from __future__ import annotations

from typing import Any

import pytest
from helpers import corpus_compiles

from tlscope.analyse.fold.compileacc import failure_headline

LEAD = "RuntimeError when making fake tensor call: RuntimeError: "


@pytest.fixture(scope="module")
def compiles(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return corpus_compiles("fake_errors", tmp_path_factory)


def test_each_failure_says_its_error(compiles: dict[str, Any]) -> None:
    failures = {c["id"]: c["failure"] for c in compiles["compiles"] if c["failure"]}
    assert failures["[0/0]"]["reason"] == LEAD + "a and b must have same reduction dim, but got [2, 5] X [4, 3]."
    assert failures["[1/0]"]["reason"].startswith(
        LEAD + "There was no fake impl registered for <CustomOpDef(corpus::scale)>"
    )
    assert failures["[1/0]"]["reason"].endswith("Please use `scale.register_fake` to add an fake impl.")
    said = {a["kind"]: a["text"] for a in compiles["first_answers"]}
    assert said["failure"].startswith("first failure: [0/0] forward failed at fake_errors.py:25 (`return h @ self.w")
    assert said["failure"].endswith(
        ": TorchRuntimeError: " + LEAD + "a and b must have same reduction dim, but got [2, 5] X [4, 3]."
    )


def test_only_an_fx_nodes_error_is_joined() -> None:
    node = "  Explanation: Dynamo failed to run FX node with fake tensors: call_function f(*(x,), **{}): got "
    assert failure_headline(["E", node + "ValueError(\"bad 'x'\")"]) == "E: ValueError: bad 'x'"
    assert failure_headline(["E", node + "ValueError()"]) == "E"
    assert failure_headline(["E", node + "not an error"]) == "E"
    assert failure_headline(["E", "  Explanation: something else: got RuntimeError('x')"]) == "E"
    assert failure_headline(["E", "  Hint: f(a): got RuntimeError('x')"]) == "E"
