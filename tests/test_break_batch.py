"""A graph break, then a smaller last batch (corpus break_batch): the function and its resume
function (`torch_dynamo_resume_in_step_at_N`, the rest of it after the break) each recompile.
The resume function's fix goes where the user can act: the call of the function when its input
is that function's own parameter, else the line of the graph break (a tensor made inside the
compiled function, which no mark_dynamic before a call reaches). Before, both said
`mark_dynamic(out, 0)` before the break's line, inside the compiled function."""

from __future__ import annotations

from typing import Any

import pytest
from helpers import corpus_recompiles


@pytest.fixture(scope="module")
def recompiles(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return corpus_recompiles("break_batch", tmp_path_factory)


def _fix(recompile: dict[str, Any]) -> tuple[str, str, int, str]:
    fix = recompile["fix"]
    return fix["kind"], fix["code"], fix["where"]["line"], fix["where"]["code"].strip()


def test_a_tensor_made_inside_is_fixed_at_the_break(recompiles: dict[str, Any]) -> None:
    step_call = "step(torch.randn(n, 16), torch.randn(n, 1))"
    both = "torch._dynamo.mark_dynamic(batch, 0); torch._dynamo.mark_dynamic(target, 0)"
    assert _fix(recompiles["[0/1]"]) == ("mark_dynamic", both, 36, step_call)
    kind, code, line, said = _fix(recompiles["[1/1]"])
    assert (kind, line) == ("change_code", 25) and code == said and said.startswith("if torch.isnan(loss):")
    why = recompiles["[1/1]"]["fix"]["why"]
    assert why.startswith("out is made inside step; the graph break at this line runs the rest of step")
    assert "(torch_dynamo_resume_in_step_at_25)" in why and "(32 -> 4)" in why


def test_the_functions_own_parameter_is_marked_at_its_call(recompiles: dict[str, Any]) -> None:
    call = ("mark_dynamic", "torch._dynamo.mark_dynamic(x, 0)", 37, "scale(torch.randn(n, 8))")
    assert _fix(recompiles["[2/1]"]) == call
    assert _fix(recompiles["[3/1]"]) == call  # the resume function's x is scale's own x


def test_inputs_whose_sizes_changed_together_are_marked_together(recompiles: dict[str, Any]) -> None:
    """`out - target` ties target's batch to batch's: the recompile made both dynamic (s2, s48,
    `Eq(s2, s48)`). Marking batch alone raises ConstraintViolationError on torch 2.13 (its first
    graph specialises it against target's 32); marking both compiles once (checked by hand)."""
    why = recompiles["[0/1]"]["fix"]["why"]
    assert why.endswith(
        "; this recompile made dim 0 of target dynamic too, whose size changed with it: marked alone, "
        "batch would be specialised against it in the first graph, and mark_dynamic raises"
    )
