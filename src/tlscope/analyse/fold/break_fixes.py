"""What to change so a graph break goes away, for breaks whose cause is a pattern of the user's code
that torch's own hint does not fix (a graph break's `fix`, format 1.50).

- **A logging call** (`log.info(...)` in compiled code): Dynamo does not trace a `logging.Logger`
  method, so the call breaks the graph, and then runs in eager, where Dynamo compiles logging's own
  functions (`Logger.info`, `_log`, `makeRecord`, `LogRecord.__init__`) as frames of their own,
  one of them recompiling on `time.time()`'s value: one line made 20 compiles on torch 2.13. The
  setting torch's hint names (`torch._dynamo.config.ignore_logging_functions`) drops the call from
  compiled code: 1 compile. The message is then not logged there, which the why says.
- **A print or a warning** (`print("loss", loss)`, `warnings.warn(...)` in compiled code): Dynamo
  does not trace them, so the call breaks the graph; the setting torch's hint names
  (`torch._dynamo.config.reorderable_logging_functions`) makes Dynamo call them after the graph,
  with the values they were given: 3 compiles became 1 on torch 2.13, the message still said.
- **A whole training step compiled** (`loss.backward()` and `opt.step()` inside a compiled
  function): Dynamo does not trace `Tensor.backward()`, and torch.optim breaks the graph before and
  after every step on purpose (`_use_grad`: AOTAutograd must see the step's no_grad). torch's hint
  for the backward (`trace_autograd_ops`) moves the break to the step (13 compiles against 11, on
  torch 2.13). Compiling the model instead compiles its forward and its backward: 1 compile, 4.8 s
  against 8.6 s.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

import msgspec

from tlscope.analyse.fold.linear import comment_start
from tlscope.format.compiles import CompileEntry, DistinctGraphBreak, Fix, SourceLocation

#: The logging break's reason (torch/_dynamo/variables/misc.py `LoggingLoggerVariable`).
LOGGING_BREAK = "logging.Logger method not supported"
#: A builtin Dynamo does not trace (torch/_dynamo/variables/builtin.py), `print` among them.
BUILTIN_BREAK = "Failed to trace builtin operator"
#: The builtin a print's break names in its first hint (`Avoid calling builtin `print` with …`).
_PRINT_HINT = "Avoid calling builtin `print`"
#: The argument types Dynamo prints after the graph (`DebuggingVariable.can_reorder_logs`:
#: tensors, constants, format strings), as the print's hint names them.
_REORDERABLE = frozenset({"str", "int", "float", "bool", "NoneType", "Tensor", "Parameter"})
#: How torch's hints name a setting, in backquotes: `torch._dynamo.config.<name>`.
_CONFIG = "torch._dynamo.config."
#: Characters a setting's name is looked for within, after `torch._dynamo.config.`.
_NAME_WITHIN = 200
#: A `warnings.warn` call, which Dynamo skips (a C function of `_warnings`).
WARN_BREAK = "Attempted to call function marked as skipped: _warnings.warn"
#: The backward break's reason (torch/_dynamo/variables/tensor.py).
BACKWARD_BREAK = "Unsupported Tensor.backward() call"
#: A call of `torch._dynamo.graph_break()`; in torch.optim's files, the step's own.
GRAPH_BREAK_CALL = "Call to `torch._dynamo.graph_break()`"
_OPTIM = "/torch/optim/"
#: A call of a function Dynamo skips, whose hints name it (`Avoid calling the function `Optimizer.zero_grad`.`).
SKIPPED_INLINE = "Attempted to inline function marked as skipped"
#: torch's recipe for a compiled optimizer step, which the step's fix cites.
OPTIMIZER_RECIPE = "https://docs.pytorch.org/tutorials/recipes/compiling_optimizer.html"
#: The hint torch gives with every `graph_break()` call, which a call in torch's own code does not fit.
REMOVE_CALL_HINT = "Remove the `torch._dynamo.graph_break()` call."
#: How a metrics record's `dynamo_config` (JSON text) says compiled autograd is on: a backward
#: inside a compiled function is then its design (compiled autograd captures it), not a mistake.
COMPILED_AUTOGRAD_ON = '"compiled_autograd": true'
#: Checked on torch 2.13 (m35): what the fixes made of the scripts that showed the breaks.
_LOGGING_CHECKED = "checked on torch 2.13: a log call in a compiled step made 20 compiles, 1 with it ignored"
_PRINT_CHECKED = "checked on torch 2.13: a print in a compiled step made 3 compiles, 1 reordered, still printing"
_WARN_CHECKED = "checked on torch 2.13: a warning in a compiled step made 3 compiles, 1 reordered, still warning"
_STEP_CHECKED = "checked on torch 2.13: a compiled train step of 11 compiles (8.6 s) became 1 (4.8 s)"


def break_fix(
    reason: str, frame: SourceLocation, stopped_at: SourceLocation | None, hints: list[str], lines: list[str]
) -> Fix | None:
    """The fix of one graph break (`lines`: its payload's), or None when tlscope knows none."""
    if reason.startswith(LOGGING_BREAK):
        # At the user's own call only: logging's functions, compiled on their own after it, break
        # at their calls of the logger's other methods (`self._log`), which are not the user's.
        return _logging_fix(frame, hints, lines) if stopped_at is None else None
    if reason == BACKWARD_BREAK:
        return _backward_fix(frame)
    if reason == BUILTIN_BREAK and stopped_at is None and _printable(hints):
        return _reorder_fix(hints, "print", "print", _PRINT_CHECKED)
    if reason == WARN_BREAK:  # a library's warning too: the setting is the process's
        return _reorder_fix(hints, "warnings.warn", "a warning", _WARN_CHECKED)
    return None


def step_fixes(groups: Sequence[DistinctGraphBreak]) -> None:
    """Give the optimizer's breaks (`step_outside`) in a function whose backward break has the
    `compile_model` fix: a training step compiled whole. Not elsewhere: torch's own recipe for a
    compiled optimizer wraps `opt.step()` in a compiled function, whose breaks are by design."""
    steps = {(g.user_frame.file, g.user_frame.name) for g in groups if _kind(g.fix) == "compile_model"}
    for group in groups:
        if _kind(group.fix) is None and (group.user_frame.file, group.user_frame.name) in steps and _optimizer(group):
            group.fix = _step_fix(group.user_frame)


def _kind(fix: Fix | msgspec.UnsetType) -> str | None:
    return fix.kind if isinstance(fix, Fix) else None


def _optimizer(group: DistinctGraphBreak) -> bool:
    """Whether the break is an optimizer's: torch.optim's own `graph_break()` around its step, or a
    skipped function torch's hint names as `Optimizer.…` (`zero_grad`)."""
    if group.reason == GRAPH_BREAK_CALL and group.stopped_at is not None:
        return _OPTIM in (group.stopped_at.file or "").replace("\\", "/")
    return group.reason.startswith(SKIPPED_INLINE) and any("`Optimizer." in hint for hint in group.hints)


def drop_model_fixes(entries: Iterable[CompileEntry]) -> None:
    """Leave out the `compile_model` fix of a run with compiled autograd on (corpus
    `compiled_autograd`): its compiled function calls the backward so that compiled autograd
    captures it, and the break there is torch's way of doing so."""
    for entry in entries:
        for gb in entry.graph_breaks:
            if isinstance(gb.fix, Fix) and gb.fix.kind == "compile_model":
                gb.fix = msgspec.UNSET


def user_hints(hints: list[str], stopped_at: SourceLocation | None) -> list[str]:
    """torch's hints but one the user cannot follow: removing a `graph_break()` call that torch's
    own code makes (`stopped_at`, library code), as torch.optim's step does."""
    if stopped_at is None or REMOVE_CALL_HINT not in hints:
        return hints
    return [hint for hint in hints if hint != REMOVE_CALL_HINT]


def _logging_fix(frame: SourceLocation, hints: list[str], lines: list[str]) -> Fix | None:
    """`torch._dynamo.config.ignore_logging_functions.add(log.info)`: the setting torch's hint names
    (an older torch's `ignore_logger_methods`), the method as the user's line calls it."""
    setting = _setting(hints)
    method = next((m[1] for t in lines if (m := re.search(r"method: <Logger [^>\n]{0,200}>\.(\w+)", t))), None)
    if setting is None or method is None:
        return None
    receiver = _receiver(frame.code or "", method)
    target = f"{receiver}.{method}" if receiver else f"logging.Logger.{method}"
    why = (
        f"Dynamo does not trace a logging.Logger method: the call breaks the graph each time, then runs in "
        f"eager, where Dynamo compiles logging's own functions as frames of their own (one recompiling on "
        f"the record's time); added to {setting} before the first compile, the call is left out of compiled "
        f"code, so its message is not logged from there: to keep it, log outside the compiled function "
        f"(return the value and log it after the call); {_LOGGING_CHECKED}"
    )
    return Fix(kind="ignore_logging", input=target, source="", code=f"{setting}.add({target})", why=why)


def _printable(hints: list[str]) -> bool:
    """Whether the break is a print whose arguments Dynamo can print after the graph, as torch's
    hint types them (`with argument types ['str', 'Tensor']`): tensors and constants. Another
    (`t.shape`'s `Size`) breaks the graph there still (checked on torch 2.13: 11 compiles with
    the setting as without)."""
    lead = f"{_PRINT_HINT} with argument types ["
    hint = next((h for h in hints if h.startswith(lead)), None)
    end = hint.find("]", len(lead)) if hint is not None else -1
    if hint is None or end < 0:
        return False
    types = [t.strip().strip("'\"") for t in hint[len(lead) : end].split(",") if t.strip()]
    return all(t in _REORDERABLE for t in types)


def _reorder_fix(hints: list[str], function: str, what: str, checked: str) -> Fix | None:
    """`torch._dynamo.config.reorderable_logging_functions.add(print)`: the setting torch's hint
    names, under which Dynamo calls `function` after the graph instead of breaking it."""
    setting = _setting(hints, "reorderable_logging_functions")
    if setting is None:
        return None
    why = (
        f"Dynamo does not trace {function}: the call breaks the graph in two, the rest compiled as a function "
        f"of its own; added to {setting} before the first compile, Dynamo keeps one graph and calls it after "
        f"the graph, with the values it was given ({what} then comes after the graph's work, an object changed "
        "after the call shows its new value, and an argument other than a tensor or a constant, `x.shape`, "
        f"breaks the graph there still); {checked}"
    )
    return Fix(kind="reorder_logging", input=function, source="", code=f"{setting}.add({function})", why=why)


def _setting(hints: list[str], name: str | None = None) -> str | None:
    """The setting `torch._dynamo.config.<name>` as torch's hints name it in backquotes (any name
    when `name` is None), or None; read with `str.find` (no pattern to compile for a small log)."""
    for hint in hints:
        start = hint.find(_CONFIG)
        while start >= 0:
            end = hint.find("`", start, start + _NAME_WITHIN)  # bounded: a hint of no backquote is read once
            said = hint[start:end] if end > 0 else ""
            key = said[len(_CONFIG) :]
            if key.isidentifier() and (name is None or key == name) and hint[start - 1 : start] == "`":
                return said
            start = hint.find(_CONFIG, start + 1)
    return None


def _receiver(code: str, method: str) -> str:
    """What the line calls `method` on (`self.log` in `self.log.info(...)`), "" when it does not
    show it; read back from the call, in linear time (a regex tried at each character was not)."""
    end = code.find(f".{method}(")
    start = end
    while start > 0 and (code[start - 1].isalnum() or code[start - 1] in "_."):
        start -= 1
    name = code[start:end] if end > 0 else ""
    return name if name and (name[0].isalpha() or name[0] == "_") else ""


def _backward_fix(frame: SourceLocation) -> Fix:
    """Compile the model, not the step that calls backward."""
    step, line = frame.name or "the compiled function", _statement(frame.code) or "backward()"
    code = f"compile the model {step} calls (model.compile()), not {step}, and run `{line}` after it"
    why = (
        f"Dynamo does not trace Tensor.backward(): {step} breaks there, and what follows (an optimizer's "
        "step, which torch.optim breaks the graph around, its zero_grad) compiles as frames of their own; "
        "torch's hint, torch._dynamo.config.trace_autograd_ops, moves the break to the optimizer's step. A "
        "compiled model compiles its forward and, at the first backward, its backward; the optimizer's step "
        f"can be compiled on its own (torch.compile(opt.step), {OPTIMIZER_RECIPE}); {_STEP_CHECKED}"
    )
    return Fix(kind="compile_model", input=step, source="", code=code, why=why)


def _step_fix(frame: SourceLocation) -> Fix:
    """Call the optimizer outside the compiled function: its step, its zero_grad."""
    step, line = frame.name or "the compiled function", _statement(frame.code) or "step()"
    code = f"call `{line}` after {step}, not inside it (or compile the optimizer's step on its own)"
    why = (
        "torch.optim breaks the graph before and after every optimizer step on purpose (so AOTAutograd "
        f"sees the step's no_grad) and Dynamo skips its zero_grad: an optimizer's call inside {step} splits "
        "it, and the rest compiles as frames of their own; compile the model and call the optimizer after it, "
        "its step compiled on its own if wanted "
        f"(torch.compile(opt.step), {OPTIMIZER_RECIPE}); {_STEP_CHECKED}"
    )
    return Fix(kind="step_outside", input=step, source="", code=code, why=why)


def _statement(code: str | None) -> str:
    """The user's line without its trailing comment (`opt.step()  # …`), as the fix names it."""
    text = (code or "").strip()
    cut = comment_start(text)
    return (text if cut is None else text[:cut]).strip()
