"""A compiled optimizer's step recompiled by an LR scheduler (format 1.49, fix kind `tensor_lr`):
torch's recipe is a tensor learning rate, whose value is no guard."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from helpers import CORPUS, corpus_compiles

from tlscope.analyse.fold.guards import guard_failure
from tlscope.analyse.fold.value_fixes import LR_KIND, LR_RECIPE, repeated_value_fixes
from tlscope.format.compiles import CompileEntry, RecommendedFailure, Recompile, SourceLocation

ADAM = "/venv/lib/python3.11/site-packages/torch/optim/adam.py"


def test_the_scheduler_s_recompile_carries_the_fix(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Corpus lr_schedule: AdamW compiled in a function, StepLR halving the rate each step: the
    first change recompiles AdamW.step once (then torch makes the rate dynamic); checked on torch
    2.13, created with lr=torch.tensor(1e-3) it compiles once."""
    data: dict[str, Any] = corpus_compiles("lr_schedule", tmp_path_factory)
    recompiled = [e for e in data["compiles"] if e["recompile"] is not None]
    assert [e["id"] for e in recompiled] == ["[2/1]"]
    fix = recompiled[0]["recompile"]["fix"]
    assert (fix["kind"], fix["input"], fix["source"], fix["dim"], fix["where"]) == (
        LR_KIND,
        "lr",
        "L['self'].param_groups[0]['lr']",
        None,
        None,
    )
    assert fix["code"] == "create AdamW with lr=torch.tensor(0.001), not the float 0.001"
    assert fix["why"].startswith("the learning rate, a float in AdamW's param_groups, changed (0.001 -> 0.0005")
    assert "a recompile of AdamW.step" in fix["why"] and fix["why"].endswith(LR_RECIPE)
    said = [a["text"] for a in data["first_answers"] if a["kind"] == "recompile"]
    assert said == [
        "first recompile: [2/1] AdamW.step: self.param_groups[0]['lr'] changed: 0.001 -> 0.0005; "
        "fix: create AdamW with lr=torch.tensor(0.001), not the float 0.001"
    ]


def _recompiled(guard: str, file: str = ADAM, name: str = "step") -> CompileEntry:
    failure = guard_failure(f"2/0: {guard}")
    recompile = Recompile(guard_failures=[failure], recommended=RecommendedFailure(index=0, why="w"))
    function = SourceLocation(file=file, line=214, name=name)
    return CompileEntry(
        id="[2/1]", dir="d", status="ok", frame_compile="[2/0]", recompile=recompile, function=function, module="SGD"
    )


def test_only_a_torch_optimizer_s_learning_rate_is_fixed() -> None:
    (fix,) = repeated_value_fixes([_recompiled("self.param_groups[1]['lr'] == 0.1")]).values()
    assert fix.code == "create SGD with lr=torch.tensor(0.1), not the float 0.1"
    assert fix.source == "L['self'].param_groups[1]['lr']"
    # Another hyperparameter, the user's own optimizer, a function other than step: no such fix.
    assert repeated_value_fixes([_recompiled("self.param_groups[0]['momentum'] == 0.9")]) == {}
    assert repeated_value_fixes([_recompiled("self.param_groups[0]['lr'] == 0.1", file="/work/my_opt.py")]) == {}
    assert repeated_value_fixes([_recompiled("self.param_groups[0]['lr'] == 0.1", name="zero_grad")]) == {}


def test_the_report_says_the_fix_as_words(tmp_path: Path) -> None:
    """The report's recompile section says `tensor_lr`'s code as the instruction it is (before,
    "add <code>create AdamW …</code>", as if it were a line to paste)."""
    from tlscope.cli import main

    assert main([str(CORPUS / "lr_schedule"), "-o", str(tmp_path / "out"), "--no-browser"]) == 0
    page = (tmp_path / "out" / "index.html").read_text()
    assert '<p class="answers-fix">To avoid it, create AdamW with lr=torch.tensor(0.001), not the float 0.001: ' in page
    assert "add <code>create AdamW" not in page
