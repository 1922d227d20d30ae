"""A prompt, then one token at a time (corpus decode): the first decode step recompiles for size
1, which torch always specialises, so the fix is mark_unbacked (before 1.46, maybe_mark_dynamic,
which gives way at size 1, and a why that blamed automatic dynamic shapes being off); the next
step fails a guard on its input view's dynamic storage offset, Dynamo's, said as such (before,
as a condition the user's code had tested)."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import pytest
from helpers import CORPUS, corpus_recompiles

import tlscope


@pytest.fixture(scope="module")
def recompiles(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return corpus_recompiles("decode", tmp_path_factory)


def test_size_one_is_fixed_by_an_unbacked_dimension(recompiles: dict[str, Any]) -> None:
    first = recompiles["[0/1]"]
    failure = first["guard_failures"][first["recommended"]["index"]]
    assert failure["explanation"] == "size of x on dim 1 changed: 7 -> 1"
    fix = first["fix"]
    assert (fix["kind"], fix["code"], fix["where"]["line"]) == (
        "mark_unbacked",
        "torch._dynamo.decorators.mark_unbacked(x, 1)",
        36,
    )
    assert "a size of 0 or 1 is always specialised" in fix["why"] and "automatic dynamic" not in fix["why"]


def test_a_views_offset_is_dynamos_guard(recompiles: dict[str, Any]) -> None:
    second = recompiles["[0/2]"]
    failure = second["guard_failures"][second["recommended"]["index"]]
    assert (failure["kind"], failure["subject"]) == ("dynamic_range", "x.storage_offset()")
    assert "condition the entry's code tested" not in failure["explanation"]


def test_summary_lists_only_the_inputs_whose_sizes_changed() -> None:
    """A model's parameters keep their shapes: `summary` names them in one caption line, so the
    inputs that changed (the layer's x and caches) are not lost among hundreds of equal rows."""
    log = str(next((CORPUS / "decode").glob("*.log.gz")))
    run = [sys.executable, "-m", "tlscope", "summary", "--width", "200", log]
    text = subprocess.run(run, check=True, capture_output=True, text=True).stdout
    table = text.split("Did the sizes change? Attention.forward (frame [0/0])", 1)[1].split("Dynamic dimensions", 1)[0]
    assert "│ x " in table and "│ cache_k " in table and "│ cache_v " in table
    assert "self.k.weight │" not in table  # not a row
    said = " ".join(table.split())  # the caption wraps at the table's width
    assert "6 other inputs (self.k.weight, self.k.bias, self.v.weight, …) unchanged throughout" in said


def test_a_sequence_that_starts_one_token_long_is_marked_unbacked() -> None:
    """corpus short_prompt (format 1.48): generation without a KV cache from a one-token start.
    The first call compiled for length 1, which Dynamo always specialises, so the second (length
    2) recompiled; maybe_mark_dynamic at the first call changes nothing (1.47's fix: checked on
    torch 2.13, still two compiles), mark_unbacked does (one compile). The code names
    torch._dynamo.decorators, where torch 2.13 has it (`torch._dynamo.mark_unbacked` does not exist)."""
    trace = tlscope.load(CORPUS / "short_prompt")
    (entry,) = trace.recompiles
    assert entry.recompile is not None and entry.recompile.fix is not None
    failure = entry.recompile.shown_failure()
    assert failure is not None and (failure.kind, failure.expected, failure.actual) == ("size", "1", "2")
    fix = entry.recompile.fix
    assert (fix.kind, fix.input, fix.dim) == ("mark_unbacked", "tokens", 1)
    assert fix.code == "torch._dynamo.decorators.mark_unbacked(tokens, 1)"
    assert "[0/0] held for size 1 alone" in fix.why and "at its first call" in fix.why
