"""The run's first answers (analyse/headline.py): each compiles.json's own words, cut to a line,
at the user's line when the log gives it."""

from __future__ import annotations

from tlscope.analyse.headline import CUT, first_answers
from tlscope.format.compiles import (
    CompileEntry,
    DistinctGraphBreak,
    Failure,
    FirstAnswer,
    Fix,
    Recompile,
    SourceLocation,
)


def headline(
    failed: CompileEntry | None, breaks: list[DistinctGraphBreak], recompiled: CompileEntry | None
) -> list[str]:
    """The answers' lines, each of the kind its place says, about the compile it names."""
    found = first_answers(failed, breaks, recompiled)
    assert all(isinstance(a, FirstAnswer) for a in found)
    return [a.text for a in found]


def _entry(cid: str, **fields: object) -> CompileEntry:
    return CompileEntry(id=cid, dir="d", status="ok", frame_compile=cid, **fields)  # type: ignore[arg-type]


def test_a_long_reason_is_cut_to_its_first_line_and_a_missing_frame_says_no_place() -> None:
    reason = "x" * (CUT + 40) + "\nsecond line"
    failed = _entry("[1/0]", failure=Failure(type="RuntimeError", reason=reason))
    (line,) = headline(failed, [], None)
    assert line == f"first failure: [1/0] failed: RuntimeError: {'x' * (CUT - 1)}…"
    assert [(a.kind, a.compile_id) for a in first_answers(failed, [], None)] == [("failure", "[1/0]")]


def test_the_break_met_most_often_the_first_among_equals() -> None:
    at = SourceLocation(file="/p/train.py", line=9, name="step", code="  print(x)  ")
    breaks = [
        DistinctGraphBreak(reason="one", user_frame=at, count=2, compile_ids=["[0/0]", "[1/0]"]),
        DistinctGraphBreak(reason="two", user_frame=at, count=3, compile_ids=["[2/0]"]),
        DistinctGraphBreak(reason="three", user_frame=at, count=3, compile_ids=["[3/0]"]),
    ]
    assert headline(None, breaks, None) == [
        "most frequent graph break (3 times in 1 compile): two at train.py:9 (`print(x)`)"
    ]
    # The compile to open: the first the break stopped; none for a break of no compile id.
    assert [(a.kind, a.compile_id) for a in first_answers(None, breaks, None)] == [("graph_break", "[2/0]")]
    breaks[1].compile_ids.clear()
    assert first_answers(None, breaks, None)[0].compile_id is None


def test_a_recompile_without_a_reason_or_a_place_for_its_fix() -> None:
    fix = Fix(kind="mark_dynamic", input="x", source="L['x']", dim=0, code="torch._dynamo.mark_dynamic(x, 0)", why="w")
    recompiled = _entry("[0/1]", function=SourceLocation(name="fn"), recompile=Recompile(fix=fix))
    assert headline(None, [], recompiled) == [
        "first recompile: [0/1] fn: no reason logged; fix: torch._dynamo.mark_dynamic(x, 0)"
    ]
    assert [(a.kind, a.compile_id) for a in first_answers(None, [], recompiled)] == [("recompile", "[0/1]")]
    assert headline(None, [], None) == []
