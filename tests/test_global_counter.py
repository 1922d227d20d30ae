"""A global the loop advances, read by compiled code (corpus global_counter): every step
recompiles until the recompile limit; each recompile carries the fix `pass_as_argument`
(format 1.46), which automatic dynamic makes one recompile in all (checked by hand on torch
2.13: passed as an argument, the same function compiles twice)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from helpers import CORPUS, corpus_compiles

from tlscope.analyse.fold.guards import guard_failure
from tlscope.analyse.fold.value_fixes import GLOBAL_KIND, repeated_value_fixes
from tlscope.format.compiles import CompileEntry, RecommendedFailure, Recompile


def test_every_recompile_by_the_global_carries_the_fix(tmp_path_factory: pytest.TempPathFactory) -> None:
    data: dict[str, Any] = corpus_compiles("global_counter", tmp_path_factory)
    recompiled = [e for e in data["compiles"] if e["recompile"] is not None and e["status"] == "ok"]
    assert [e["id"] for e in recompiled] == [f"[0/{n}]" for n in range(1, 8)]
    fixes = {(e["recompile"]["fix"]["kind"], e["recompile"]["fix"]["code"]) for e in recompiled}
    assert fixes == {(GLOBAL_KIND, "pass STEP to warmed_up as an argument")}
    why = recompiled[0]["recompile"]["fix"]["why"]
    assert why.startswith("the global STEP explains 7 recompiles of warmed_up, one compile a value")
    said = [a["text"] for a in data["first_answers"] if a["kind"] == "recompile"]
    assert said == [
        "first recompile: [0/1] warmed_up: global STEP changed: 0 -> 1; fix: pass STEP to warmed_up as an argument"
    ]


def _recompiled(cid: str, guard: str) -> CompileEntry:
    failure = guard_failure(f"{cid.strip('[]')}: {guard}")
    recompile = Recompile(guard_failures=[failure], recommended=RecommendedFailure(index=0, why="w"))
    return CompileEntry(id=cid, dir="d", status="ok", frame_compile=cid, recompile=recompile)


def test_only_a_number_the_same_global_held_twice_is_fixed() -> None:
    assert repeated_value_fixes([_recompiled("[0/1]", "G['SCALE'] == 0.5")]) == {}
    twice = [_recompiled("[0/1]", "G['SCALE'] == 0.5"), _recompiled("[0/2]", "G['SCALE'] == 1e-05")]
    assert sorted(repeated_value_fixes(twice)) == ["[0/1]", "[0/2]"]
    names = [_recompiled("[0/1]", "G['MODE'] == 'a'"), _recompiled("[0/2]", "G['MODE'] == 'b'")]
    assert repeated_value_fixes(names) == {}  # a string: each value is its own graph


@pytest.mark.parametrize(
    ("scenario", "source", "later"), [("global_counter", "G['STEP']", 7), ("module_counter", "L['self'].step", 3)]
)
def test_a_value_marked_dynamic_that_still_recompiled_is_said_so(
    scenario: str, source: str, later: int, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """torch's automatic_dynamic event marks the value at [0/1], yet its value explains every later
    recompile: it stayed static (format 1.46 `recompiled`; before, said as made dynamic). The
    variable still makes it dynamic (checked on torch 2.13: one compile), so it stays recommended,
    and the repeated-value fix names it too."""
    data: dict[str, Any] = corpus_compiles(scenario, tmp_path_factory)
    (found,) = data["dynamic"]["sources"]
    assert found["source"] == source and found["recompiled"] == [f"[0/{n}]" for n in range(2, 2 + later)]
    sentence = data["dynamic"]["sentence"]
    assert "but its value still recompiled its function ([0/2], [0/3], [0/4]" in sentence
    assert "torch made" not in sentence and data["dynamic"]["recommended"] == source
    fixes = {e["recompile"]["fix"]["why"] for e in data["compiles"] if e["recompile"] and e["recompile"]["fix"]}
    assert fixes and all(why.endswith(f'TORCH_COMPILE_DYNAMIC_SOURCES="{source}"') for why in fixes)


def test_the_report_says_the_fix_as_words(tmp_path: Path) -> None:
    """The report's recompile section: `pass_as_argument`'s code is an instruction, not a line to add."""
    from tlscope.cli import main

    out = tmp_path / "out"
    assert main([str(CORPUS / "global_counter"), "-o", str(out), "--no-browser"]) == 0
    page = (out / "index.html").read_text()
    assert '<p class="answers-fix">To avoid it, pass STEP to warmed_up as an argument: the global STEP' in page
    assert "add <code>pass STEP" not in page
