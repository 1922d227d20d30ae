"""A fix names the input as the user's line does (analyse/fold/caller.py): corpus last_batch
compiled a module, so Dynamo named its input `args[0]` (the wrapper's `*args`); the line
before which the fix goes passes `batch`, so the fix is `torch._dynamo.mark_dynamic(batch, 0)`,
code that runs there. Where the line leaves any doubt, the compiled function's name stays."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import CORPUS

from tlscope.analyse.fold.caller import caller_argument
from tlscope.cli import main


@pytest.mark.parametrize(
    ("code", "name", "said"),
    [
        ("loss = compiled(batch).sum()", "args[0]", "batch"),
        ("out = model(self.inputs, mask)", "args[1]", "mask"),
        ("y = f(t)", "x", "t"),
        ("y = f(x=t)", "x", "t"),
        ("if f(t) > 0:", "x", "t"),
        ("compiled(torch.randn(5, 8))  # an expression", "x", None),
        ("y = f(a) + g(b)", "x", None),
        ("y = f(*xs)", "args[0]", None),
        ("y = f(a)", "args[1]", None),
        ("for i in range(3):", "args[0]", None),
        ("not python (", "x", None),
        (None, "x", None),
        ("a+" * 600 + "f(b)", "x", None),  # over MAX_LINE: not parsed
        ("(" * 300 + "f(b)" + ")" * 300, "x", None),  # nested past the parser's limit
    ],
)
def test_the_callers_argument_when_certain_and_plain(code: str | None, name: str, said: str | None) -> None:
    found = caller_argument(code, name)
    assert found == said


def test_a_hostile_line_is_not_parsed() -> None:
    """A log's line can be anything: one that would make Python's parser recurse past its limit
    says nothing (it raised RecursionError from the fold)."""
    for code in ("a+" * 100_000 + "f(b)", "f(" * 5000 + "b" + ")" * 5000):
        assert caller_argument(code, "x") is None
    assert caller_argument("y = " + "a+" * 300 + "f(b)", "x") == "b"


def test_last_batch_is_marked_by_the_callers_name(tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert main([str(CORPUS / "last_batch"), "-o", str(out), "--no-browser"]) == 0
    compiles = json.loads((out / "compiles.json").read_text("utf-8"))
    (entry,) = [c for c in compiles["compiles"] if c["recompile"]]
    fix = entry["recompile"]["fix"]
    assert (fix["input"], fix["source"], fix["dim"]) == ("args[0]", "L['args'][0]", 0)
    assert fix["where"]["code"].strip().startswith("loss = compiled(batch).sum()")
    assert fix["code"] == "torch._dynamo.mark_dynamic(batch, 0)"
    assert fix["why"].endswith("(the line before which it goes passes it as batch)")
    said = next(a["text"] for a in compiles["first_answers"] if a["kind"] == "recompile")
    assert said.endswith("fix: torch._dynamo.mark_dynamic(batch, 0) before last_batch.py:21")


def test_only_the_compiled_functions_call_counts_when_the_line_names_it() -> None:
    """`step(x, torch.stack(cache))`: the one call with one argument is torch.stack's, not the
    compiled function's; `keys` (the second parameter) is no plain name there. Before, the fix
    said `mark_dynamic(cache, 0)`, a list (m32's kv2.py, a decode cache passed stacked)."""
    line = "y = decode_step(x, torch.stack(cache))"
    assert caller_argument(line, "keys", "decode_step") is None
    assert caller_argument("y = decode_step(t)", "x", "decode_step") == "t"
    assert caller_argument("y = self.decode_step(t)", "x", "decode_step") == "t"
    # The line calls the function by another name (a module called as `model(x)`): every call counts.
    assert caller_argument("loss = model(batch).sum()", "x", "forward") == "batch"
