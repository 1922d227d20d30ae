"""An older torch's log. Which function a compile compiled, on an older torch (tlparse's comp_metrics.log, torch of
April 2024): its `dynamo_start` stack ends in the caller, not the frame compiled (`_fn` in
eval_frame.py for the first frame, the resumed function for a resume function's). The code
object the metrics name is the compiled function; an attempt without metrics takes its
sibling's. Before, `[0/0]` read `_fn`, `[1/0]` `fn` and `[2/0]` the resume function of line 9551
though its code object is the one of line 9553."""

from __future__ import annotations

from pathlib import Path

from helpers import trace_path

import tlscope
from tlscope.format.compiles import CompileEntry, GraphBreak, PayloadRef, SourceLocation


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


def test_an_older_torchs_breaks_come_from_its_restart_reasons() -> None:
    """No `dynamo_graph_break_reason` in the log: each restart reason is a break, placed at the
    line of the first resume function of its function compiled after it (`fn`'s breaks at 9551
    and, in the resume function of 9551, at 9553)."""
    trace = tlscope.load(trace_path("inputs/comp_metrics.log"))
    said = [(b.reason, b.user_frame.line, b.count, b.compile_ids) for b in trace.graph_breaks]
    reason = "skip function graph_break in file /data/users/jjwu/a/pytorch/torch/_dynamo/decorators.py"
    assert said == [(reason, 9551, 1, ["[0/0_1]"]), (reason, 9553, 1, ["[1/0_1]"])]
    (answer,) = [a for a in trace.first_answers if a.kind == "graph_break"]
    assert answer.text.endswith(f"{reason} at test_misc.py:9551") and answer.compile_id == "[0/0_1]"


def _entry(cid: str, name: str, line: int, first: int, reasons: list[str]) -> CompileEntry:
    fn = SourceLocation(file="/p/a.py", line=line, name=name)
    return CompileEntry(
        id=cid, dir="d", status="ok", frame_compile=cid, function=fn, restart_reasons=reasons, log_lines=[first, first]
    )


def test_restart_breaks_in_any_order_and_only_without_artifacts() -> None:
    from tlscope.analyse.fold.graphbreaks import distinct_graph_breaks

    entries = [
        _entry("[2/0]", "torch_dynamo_resume_in_f_at_9", 9, 30, []),
        _entry("[0/0_1]", "f", 3, 10, ["'x'"]),
        _entry("[1/0]", "torch_dynamo_resume_in_f_at_5", 5, 20, []),
        _entry("[1/0_1]", "torch_dynamo_resume_in_f_at_5", 5, 25, ["'x'"]),
    ]
    found = distinct_graph_breaks(entries)
    assert [(b.reason, b.user_frame.line, b.compile_ids) for b in found] == [
        ("x", 5, ["[0/0_1]"]),
        ("x", 9, ["[1/0_1]"]),
    ]
    # No resume function after it (the log was cut): said at the function itself.
    assert distinct_graph_breaks([entries[1]])[0].user_frame.line == 3
    # A log with break artifacts says those alone (a newer torch repeats them in restart_reasons).
    event = PayloadRef(kind="artifact", raw_line=1, log_line=12)
    artifact = GraphBreak(reason="y", user_frame=SourceLocation(file="/p/a.py", line=4), event=event)
    entries[1].graph_breaks = [artifact]
    assert [b.reason for b in distinct_graph_breaks(entries)] == ["y"]
