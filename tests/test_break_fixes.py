"""A graph break's fix (format 1.50): a logging call in compiled code (`ignore_logging`), a training
step compiled whole with its backward (`compile_model`) and its optimizer (`step_outside`); each
checked on torch 2.13 by applying it (corpus/scenarios/logging_break.py, train_step.py)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from helpers import CORPUS, REPO, corpus_compiles

from tlscope.analyse.fold.break_fixes import BACKWARD_BREAK, GRAPH_BREAK_CALL, REMOVE_CALL_HINT, break_fix, step_fixes
from tlscope.analyse.fold.graphbreaks import parse_graph_break
from tlscope.format.compiles import DistinctGraphBreak, Fix, SourceLocation

LOGGING_PAYLOAD = """Graph break in user code at /work/app/train.py:7
Graph Break Reason: Encountered graph break when attempting to trace CALL: a function call, e.g. f(x, y):

logging.Logger method not supported for non-export cases
  Explanation: logging.Logger methods are not supported for non-export cases.
  Hint: Add the logging method to `{setting}`.

  Developer debug context: method: <Logger train (INFO)>.{method}, args: [], kwargs: {{}}

User code traceback:
  File "/work/app/train.py", line 7, in step
    {code}
"""

GRAPH_BREAK_PAYLOAD = """Graph break in user code at {file}:79
Graph Break Reason: Encountered graph break when attempting to trace CALL: a function call, e.g. f(x, y):

Call to `torch._dynamo.graph_break()`
  Explanation: User-inserted graph break. Message: None
  Hint: Remove the `torch._dynamo.graph_break()` call.

User code traceback:
  File "/work/app/train.py", line 9, in train_step
    opt.step()
  File "{file}", line 79, in _use_grad
    torch._dynamo.graph_break()
"""


def _breaks(data: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {b["reason"]: b for b in data["graph_breaks"]}


def test_a_logging_call_is_told_to_be_ignored(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Corpus logging_break: `log.info(...)` in a compiled step breaks it at every call and drags
    Dynamo into logging's own functions (16 compiles with the eager backend); the break's fix adds
    the user's logger method to the setting torch's hint names (checked: 1 compile)."""
    data = corpus_compiles("logging_break", tmp_path_factory)
    (group,) = [b for b in data["graph_breaks"] if b["reason"].startswith("logging.Logger method not supported")]
    fix = group["fix"]
    assert (fix["kind"], fix["input"], fix["source"], fix["dim"], fix["where"]) == (
        "ignore_logging",
        "log.info",
        "",
        None,
        None,
    )
    assert fix["code"] == "torch._dynamo.config.ignore_logging_functions.add(log.info)"
    assert "its message is not logged from there" in fix["why"]
    # The compile's own break at the user's line carries it too (the group's is the first's); the
    # breaks of logging's functions compiled after it (`Logger.info` calling `self._log`), not the
    # user's calls, carry none.
    own = {
        e["id"]: gb.get("fix") for e in data["compiles"] for gb in e["graph_breaks"] if gb["reason"] == group["reason"]
    }
    assert own == {"[0/0]": fix, "[1/0]": None, "[2/0]": None, "[3/0]": None}
    said = {a["kind"]: a["text"] for a in data["first_answers"]}
    assert said["graph_break"].startswith("most frequent graph break (4 times in 4 compiles): logging.Logger")
    assert said["graph_break"].endswith("; fix: torch._dynamo.config.ignore_logging_functions.add(log.info)")
    # logging's `_log`, compiled on its own after the break ran the call in eager, failed: named
    # with the user's line that called it, not as if it were the user's function.
    assert said["failure"].startswith("first failure: [3/0] _log (called from logging_break.py:22) failed at ")
    # ... and said to come from the user's break, whose fix avoids it (format 1.50).
    assert (
        "; the graph break at logging_break.py:22 ran it in eager, and that break's fix avoids it; " in said["failure"]
    )


def test_a_whole_training_step_is_told_to_compile_the_model(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Corpus train_step: the backward's break says to compile the model and run the backward
    after it; the optimizer's breaks (torch.optim's own graph_break() calls, the skipped
    zero_grad) say to call it after the step, without torch's hint to remove a call it makes."""
    data = corpus_compiles("train_step", tmp_path_factory)
    breaks = _breaks(data)
    backward = breaks["Unsupported Tensor.backward() call"]["fix"]
    assert (backward["kind"], backward["input"]) == ("compile_model", "train_step")
    assert backward["code"] == (
        "compile the model train_step calls (model.compile()), not train_step, and run `loss.backward()` after it"
    )
    assert "trace_autograd_ops, moves the break to the optimizer's step" in backward["why"]
    step = breaks["Call to `torch._dynamo.graph_break()`"]
    assert step["stopped_at"]["file"].endswith("torch/optim/optimizer.py")
    assert step["fix"]["kind"] == "step_outside"
    assert step["fix"]["code"] == (
        "call `opt.step()` after train_step, not inside it (or compile the optimizer's step on its own)"
    )
    assert REMOVE_CALL_HINT not in step["hints"]
    zero = next(b for r, b in breaks.items() if r.startswith("Attempted to inline function marked as skipped"))
    assert zero["fix"]["code"].startswith("call `opt.zero_grad()` after train_step")
    # The optimizer's fix is the distinct break's: a compile's own break does not know it is in a
    # training step (torch's compiled-optimizer recipe breaks there too, by design).
    assert all(
        gb.get("fix", {}).get("kind") in (None, "compile_model") for e in data["compiles"] for gb in e["graph_breaks"]
    )
    said = next(a["text"] for a in data["first_answers"] if a["kind"] == "graph_break")
    assert said.endswith(
        "; fix: call `opt.step()` after train_step, not inside it (or compile the optimizer's step on its own)"
    )


def test_a_user_s_own_graph_break_call_keeps_torch_s_hint(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Corpus graph_breaks calls `torch._dynamo.graph_break()` itself: torch's hint to remove it
    stands, and no fix is given."""
    data = corpus_compiles("graph_breaks", tmp_path_factory)
    mine = _breaks(data)["Call to `torch._dynamo.graph_break()`"]
    assert mine["stopped_at"] is None and REMOVE_CALL_HINT in mine["hints"]
    assert "fix" not in mine
    fixed = {gb["reason"] for e in data["compiles"] for gb in e["graph_breaks"] if "fix" in gb}
    assert fixed == {"Failed to trace builtin operator"}  # its print: the next test


def test_a_print_of_constants_and_tensors_is_told_to_be_reordered(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Corpus graph_breaks prints a str (`print("graph break: print")`): the setting torch's hint
    names makes Dynamo print after the graph (checked on torch 2.13: 3 compiles become 1, still
    printing); graph_breaks_repeated prints `t.shape`, a Size Dynamo cannot print after the
    graph (checked: 11 compiles with the setting as without): no fix."""
    data = corpus_compiles("graph_breaks", tmp_path_factory)
    group = _breaks(data)["Failed to trace builtin operator"]
    fix = group["fix"]
    assert (fix["kind"], fix["input"], fix["where"]) == ("reorder_logging", "print", None)
    assert fix["code"] == "torch._dynamo.config.reorderable_logging_functions.add(print)"
    assert "calls it after the graph, with the values it was given" in fix["why"]
    repeated = corpus_compiles("graph_breaks_repeated", tmp_path_factory)
    assert "fix" not in _breaks(repeated)["Failed to trace builtin operator"]


@pytest.mark.parametrize(
    ("types", "fixed"),
    [("['str', 'Tensor']", True), ("['str', 'int', 'float']", True), ("['str', 'Size']", False), ("[]", True)],
)
def test_only_a_print_dynamo_can_reorder_is_fixed(types: str, fixed: bool) -> None:
    hints = [
        f"Avoid calling builtin `print` with argument types {types}. Consider using an equivalent alternative.",
        "If you are attempting to call a logging function (e.g. `print`), you can try adding it to "
        "`torch._dynamo.config.reorderable_logging_functions`.",
    ]
    frame = SourceLocation(file="/work/app/train.py", line=7, name="step", code="print(x)")
    fix = break_fix("Failed to trace builtin operator", frame, None, hints, [])
    assert (fix is not None) == fixed
    # Another builtin (`len` of an object), or a torch whose hints name no setting: none.
    assert break_fix("Failed to trace builtin operator", frame, None, [hints[0].replace("print", "len")], []) is None
    assert break_fix("Failed to trace builtin operator", frame, None, hints[:1], []) is None


@pytest.mark.parametrize(
    ("setting", "code", "expected"),
    [
        # The setting as torch's hint names it, the method as the user's line calls it.
        ("torch._dynamo.config.ignore_logging_functions", "self.log.warning('x')", "self.log.warning"),
        # An older torch's setting; a line that does not show the call: the method on the class.
        ("torch._dynamo.config.ignore_logger_methods", "report(x)", "logging.Logger.warning"),
    ],
)
def test_the_logging_fix_names_torch_s_setting_and_the_user_s_method(setting: str, code: str, expected: str) -> None:
    text = LOGGING_PAYLOAD.format(setting=setting, method="warning", code=code)
    found = parse_graph_break(text)
    assert found.fix is not None
    assert found.fix.code == f"{setting}.add({expected})" and found.fix.input == expected


def test_no_logging_fix_without_torch_s_setting_or_the_method() -> None:
    """A torch whose hint names no setting, or a context that names no method: nothing to set."""
    frame = SourceLocation(file="/work/app/train.py", line=7, name="step", code="log.info('x')")
    reason = "logging.Logger method not supported for non-export cases"
    context = ["  Developer debug context: method: <Logger train (INFO)>.info, args: []"]
    assert break_fix(reason, frame, None, ["Move the call out."], context) is None
    assert break_fix(reason, frame, None, ["Add it to `torch._dynamo.config.ignore_logging_functions`."], []) is None


def test_only_torch_optim_s_graph_break_call_loses_the_remove_hint() -> None:
    """A `graph_break()` a library calls is not the user's to remove: torch's hint to remove it is
    dropped, torch.optim's or another's; no fix from the break alone."""
    for file in ("/venv/site-packages/torch/optim/optimizer.py", "/venv/site-packages/mylib/core.py"):
        found = parse_graph_break(GRAPH_BREAK_PAYLOAD.format(file=file))
        assert found.fix is None and found.hints == [] and found.stopped_at is not None


def _group(reason: str, name: str, stopped: str | None = None, fix: Fix | None = None) -> DistinctGraphBreak:
    frame = SourceLocation(file="/work/app/train.py", line=9, name=name, code="opt.step()")
    at = SourceLocation(file=stopped, line=79, name="_use_grad") if stopped else None
    group = DistinctGraphBreak(reason=reason, user_frame=frame, stopped_at=at, count=1, compile_ids=["[1/0]"])
    if fix is not None:
        group.fix = fix
    return group


def test_the_optimizer_s_breaks_are_fixed_only_beside_a_compiled_backward() -> None:
    """`step_outside` goes to torch.optim's breaks in a function whose backward break has
    `compile_model` (a training step compiled whole); torch's recipe for a compiled optimizer,
    `opt.step()` alone in a compiled function (corpus lr_schedule), breaks there by design."""
    optim = "/venv/site-packages/torch/optim/optimizer.py"
    model = Fix(kind="compile_model", input="train_step", source="", code="c", why="w")
    whole = [_group(BACKWARD_BREAK, "train_step", fix=model), _group(GRAPH_BREAK_CALL, "train_step", optim)]
    step_fixes(whole)
    assert isinstance(whole[1].fix, Fix) and whole[1].fix.kind == "step_outside"
    recipe = [_group(GRAPH_BREAK_CALL, "fn", optim)]
    elsewhere = [_group(BACKWARD_BREAK, "train_step", fix=model), _group(GRAPH_BREAK_CALL, "fn", optim)]
    mine = [_group(BACKWARD_BREAK, "train_step", fix=model), _group(GRAPH_BREAK_CALL, "train_step")]
    for groups in (recipe, elsewhere, mine):
        step_fixes(groups)
        assert not isinstance(groups[-1].fix, Fix)


def test_torch_s_compiled_optimizer_recipe_gets_no_fix(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Corpus lr_schedule compiles `opt.step()` in a function, as torch's recipe does: its breaks
    are torch.optim's own, by design; none is told to move the step out."""
    data = corpus_compiles("lr_schedule", tmp_path_factory)
    assert data["graph_breaks"] and not any("fix" in b for b in data["graph_breaks"])
    assert all(REMOVE_CALL_HINT not in b["hints"] for b in data["graph_breaks"])


def test_compiled_autograd_s_backward_break_is_by_design(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Corpus compiled_autograd calls `loss.backward()` inside its compiled step on purpose: with
    compiled autograd on, the break is how torch captures the backward. No fix to compile the
    model instead, in the compile's breaks or the distinct ones."""
    data = corpus_compiles("compiled_autograd", tmp_path_factory)
    (backward,) = [b for b in data["graph_breaks"] if b["reason"] == "Unsupported Tensor.backward() call"]
    assert "fix" not in backward
    assert not any("fix" in gb for e in data["compiles"] for gb in e["graph_breaks"])
    said = next(a["text"] for a in data["first_answers"] if a["kind"] == "graph_break")
    assert "; fix:" not in said


def test_a_warning_is_told_to_be_reordered() -> None:
    """`warnings.warn(...)` in compiled code, a C function Dynamo skips: the reorder setting torch's
    hint names (checked on torch 2.13: 3 compiles become 1, the warning still issued)."""
    hints = [
        "If you are attempting to call a logging function (e.g. `_warnings.warn`), you can try adding it to "
        "`torch._dynamo.config.reorderable_logging_functions`.",
    ]
    frame = SourceLocation(file="/work/app/train.py", line=7, name="step", code='warnings.warn("old path")')
    fix = break_fix("Attempted to call function marked as skipped: _warnings.warn", frame, None, hints, [])
    assert fix is not None and (fix.kind, fix.input) == ("reorder_logging", "warnings.warn")
    assert fix.code == "torch._dynamo.config.reorderable_logging_functions.add(warnings.warn)"
    assert break_fix("Attempted to call function marked as skipped: _warnings.warn", frame, None, [], []) is None


def test_a_warning_and_a_logger_s_warning_once_are_both_fixed(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Corpus warnings_break: `warnings.warn(...)` and Hugging Face's `log.warning_once(...)` (an
    lru_cache-wrapped Logger method) in one compiled step: each break gets its own setting
    (checked on torch 2.13: with both set, 5 compiles become 1)."""
    data = corpus_compiles("warnings_break", tmp_path_factory)
    fixes = {b["reason"]: (b["fix"]["kind"], b["fix"]["code"]) for b in data["graph_breaks"]}
    assert fixes == {
        "Attempted to call function marked as skipped: _warnings.warn": (
            "reorder_logging",
            "torch._dynamo.config.reorderable_logging_functions.add(warnings.warn)",
        ),
        "logging.Logger method not supported for non-export cases": (
            "ignore_logging",
            "torch._dynamo.config.ignore_logging_functions.add(log.warning_once)",
        ),
    }


def test_the_report_says_each_break_s_fix(tmp_path: Path) -> None:
    """index.html's Distinct graph breaks table: a break's fix under its reason, an instruction in
    words as it is (`compile_model`, `step_outside`), a setting as the line to add."""
    from tlscope.cli import main

    pages = {}
    for name in ("train_step", "graph_breaks"):
        assert main([str(CORPUS / name), "-o", str(tmp_path / name), "--no-browser"]) == 0
        pages[name] = (tmp_path / name / "index.html").read_text()
    fixes = re.findall(r'<span class="answers-fix">To avoid it, (.*?): ', pages["train_step"])
    assert fixes == [
        "call `opt.step()` after train_step, not inside it (or compile the optimizer&#39;s step on its own)",
        "compile the model train_step calls (model.compile()), not train_step, and run `loss.backward()` after it",
        "call `opt.zero_grad()` after train_step, not inside it (or compile the optimizer&#39;s step on its own)",
    ]
    said = re.findall(r'<span class="answers-fix">To avoid it, (.*?): ', pages["graph_breaks"])
    assert said == ["add <code>torch._dynamo.config.reorderable_logging_functions.add(print)</code>"]


def test_the_explorer_says_in_words_the_kinds_python_does() -> None:
    """The explorer's fix box (explorer/compile.js INSTRUCTIONS) and the report and summary
    (format/compiles.py INSTRUCTION_KINDS) treat the same kinds' `code` as words."""
    from tlscope.format.compiles import INSTRUCTION_KINDS

    source = (REPO / "src/tlscope/viewers/explorer/compile.js").read_text()
    listed = re.search(r"const INSTRUCTIONS = new Set\(\[([^\]]*)\]\)", source)
    assert listed is not None
    assert set(re.findall(r"'(\w+)'", listed[1])) == INSTRUCTION_KINDS
