"""Which function a compile compiled, on an older torch (tlparse's comp_metrics.log, torch of
April 2024): its `dynamo_start` stack ends in the caller, not the frame compiled (`_fn` in
eval_frame.py for the first frame, the resumed function for a resume function's). The code
object the metrics name is the compiled function; an attempt without metrics takes its
sibling's. Before, `[0/0]` read `_fn`, `[1/0]` `fn` and `[2/0]` the resume function of line 9551
though its code object is the one of line 9553."""

from __future__ import annotations

from pathlib import Path

from helpers import trace_path

import tlscope


def test_each_compile_is_named_by_its_code_object(tmp_path: Path) -> None:
    trace = tlscope.load(trace_path("inputs/comp_metrics.log"))
    named = {e.id: (e.function.name if e.function else None) for e in trace.compiles if e.id != "[-/-]"}
    assert named == {
        "[0/0]": "fn",
        "[0/0_1]": "fn",
        "[1/0]": "torch_dynamo_resume_in_fn_at_9551",
        "[1/0_1]": "torch_dynamo_resume_in_fn_at_9551",
        "[2/0]": "torch_dynamo_resume_in_fn_at_9553",
    }
    first = next(e for e in trace.compiles if e.id == "[0/0]")
    assert first.function is not None and (first.function.file or "").endswith("test_misc.py")
    assert first.function.line == 9549
