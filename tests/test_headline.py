"""The run's first answers (analyse/headline.py): each compiles.json's own words, cut to a line,
at the user's line when the log gives it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import REPO

from tlscope.analyse.headline import CUT, answer_changes, first_answers
from tlscope.cli import main
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


def test_two_runs_first_answers_compared_a_line_a_kind() -> None:
    """A failure fixed, a break that moved, a recompile alike: the diff says the first two."""
    a = [
        FirstAnswer(kind="failure", compile_id="[0/0]", text="first failure: [0/0] f failed: Unsupported: x"),
        FirstAnswer(kind="graph_break", compile_id="[1/0]", text="most frequent graph break (2 times in 1 compile): y"),
        FirstAnswer(kind="recompile", compile_id="[0/1]", text="first recompile: [0/1] f: size changed"),
    ]
    b = [
        FirstAnswer(
            kind="graph_break", compile_id="[1/0]", text="most frequent graph break (3 times in 2 compiles): z"
        ),
        a[2],
    ]
    assert answer_changes(a, b) == [
        "first failure only in A: [0/0] f failed: Unsupported: x",
        "most frequent graph break differs: in A (2 times in 1 compile): y; in B (3 times in 2 compiles): z",
    ]
    assert answer_changes(b, a, ("rank 0", "rank 1")) == [
        "first failure only on rank 1: [0/0] f failed: Unsupported: x",
        "most frequent graph break differs: on rank 0 (3 times in 2 compiles): z; on rank 1 (2 times in 1 compile): y",
    ]
    assert answer_changes(a, a) == []


def test_the_diff_says_the_runs_first_answers_first(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """corpus failures against recompiles_dynamic: `tlscope diff` says first how their first
    answers differ (each side's compiles.json's), --json as `summary.first_answers`."""
    outs = []
    for name in ("failures", "recompiles_dynamic"):
        outs.append(tmp_path / name)
        assert main([str(REPO / "corpus" / "traces" / name), "-o", str(outs[-1]), "--no-browser"]) == 0
    said = [json.loads((out / "compiles.json").read_text())["first_answers"] for out in outs]
    capsys.readouterr()
    assert main(["diff", str(outs[0]), str(outs[1])]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "What differs:"
    failure = [a["text"].removeprefix("first failure") for a in (said[0][0], said[1][0])]
    assert lines[1] == f"  first failure differs: in A{failure[0]}; in B{failure[1]}"
    recompile = next(a["text"] for a in said[1] if a["kind"] == "recompile")
    assert lines[2] == f"  first recompile only in B{recompile.removeprefix('first recompile')}"
    assert main(["diff", str(outs[0]), str(outs[1]), "--json"]) == 1
    assert [f"  {x}" for x in json.loads(capsys.readouterr().out)["summary"]["first_answers"]] == lines[1:3]
