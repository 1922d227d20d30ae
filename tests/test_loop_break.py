"""A break inside a loop over a model's blocks (corpus loop_break, as FSDP2's disabled hooks
make one): torch fails the whole outer frame and runs it in eager. The failure's reason names the
disabled function and goes on to torch's second break, `graph break in loop`, with its
explanation (format 1.46; before, `Skip calling torch.compiler.disable()d function` alone)."""

from __future__ import annotations

from typing import Any

import pytest
from helpers import corpus_compiles

from tlscope.analyse.fold.compileacc import failure_headline

_LOOP = (
    "graph break in loop: torch.compile detected a graph break in a for/while loop. Skipping the frame and "
    "falling back to eager, as graph breaks in loops are not supported."
)


def test_the_outer_frames_failure_says_it_ran_in_eager(tmp_path_factory: pytest.TempPathFactory) -> None:
    data: dict[str, Any] = corpus_compiles("loop_break", tmp_path_factory)
    failed = next(e for e in data["compiles"] if e["status"] == "failed")
    assert failed["id"] == "[0/0]" and failed["function"]["name"] == "forward"
    assert failed["failure"]["reason"] == f"Skip calling `torch.compiler.disable()`d function: hook; then {_LOOP}"
    assert [b["reason"] for b in data["graph_breaks"]] == ["Skip calling `torch.compiler.disable()`d function: hook"]


def test_a_reason_without_a_second_break_is_left_alone() -> None:
    skipped = [
        "Attempted to call function marked as skipped",
        "  Explanation: Dynamo developers have intentionally marked that the function `disable` …",
        "  Developer debug context: module: torch._dynamo.decorators, qualname: disable, skip reason: MOD_SKIPLIST",
    ]
    said = "Attempted to call function marked as skipped: torch._dynamo.decorators.disable"
    assert failure_headline(skipped) == said
    tail = ["", "*** While handling this graph break, another graph break occurred: ***", "", "graph break in loop"]
    assert failure_headline(skipped + tail) == f"{said}; then graph break in loop"
    assert failure_headline(["Unsupported thing", "  Explanation: x"]) == "Unsupported thing"
