"""One recompile, one explanation: `tlscope summary`, `tlscope diff` and the ranks' divergence
sentence all say compiles.json's `recommended` guard failure (analyse/fold/recommend.py), as the
explorer does (lib/compiles.js recommendedFailure). Before, diff and the divergence sentence took
the newest cache entry's failure (`guard_failures[0]`), so on recompiles_dynamic's [0/5] they
blamed a stride while summary and the explorer said mark_dynamic."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import CORPUS

import tlscope
from tlscope.analyse.diff import why_recompiled
from tlscope.analyse.ranks.divergence import divergence, rank_overview
from tlscope.format.compiles import CompileEntry

TRACES = ["recompiles", "recompiles_dynamic"]  # the corpus traces that recompile


def _entries(name: str) -> list[list[CompileEntry]]:
    trace = tlscope.load(CORPUS / name)
    numbers = trace.rank_numbers
    return [list(trace.compiles)] if not numbers else [list(trace.rank(r).compiles) for r in numbers]


def _recommended(entry: CompileEntry) -> str | None:
    """What compiles.json recommends, read straight from its fields."""
    recompile = entry.recompile
    assert recompile is not None
    if recompile.recommended is None:
        return recompile.reason
    return recompile.guard_failures[recompile.recommended.index].explanation


@pytest.mark.parametrize("name", TRACES)
def test_every_answer_explains_each_recompile_by_the_recommended_failure(name: str) -> None:
    seen = 0
    for rank, entries in enumerate(_entries(name)):
        overview = rank_overview(rank, entries)
        for entry in entries:
            if entry.recompile is None or entry.status == "outside":
                continue
            seen += 1
            expected = _recommended(entry)
            assert why_recompiled(entry) == (expected or "reason not logged")
            assert overview.recompiles[entry.id] == (expected or "no reason logged")
    assert seen, f"{name} has recompiles"


def test_where_the_newest_entry_is_not_the_cause_all_three_say_the_recommended_one() -> None:
    """recompiles_dynamic's [0/5]: the newest entry failed on a stride it had specialised; the
    recommended one on mark_dynamic."""
    (entries,) = _entries("recompiles_dynamic")
    entry = next(e for e in entries if e.id == "[0/5]")
    assert entry.recompile is not None and entry.recompile.recommended is not None
    assert entry.recompile.recommended.index > 0
    newest = entry.recompile.guard_failures[0].explanation
    best = _recommended(entry)
    assert best is not None and "mark_dynamic" in best and newest != best
    assert why_recompiled(entry) == best
    # A job whose rank 1 alone holds [0/5]: its divergence sentence gives the same reason.
    view = divergence([rank_overview(0, [e for e in entries if e.id != "[0/5]"]), rank_overview(1, entries)])
    (sentence,) = [g.sentence for g in view.groups if g.ranks == [1]]
    assert f"recompiled [0/5] because {best}" in sentence
    # And the commands as typed.
    env_run = [sys.executable, "-m", "tlscope"]
    path = str(CORPUS / "recompiles_dynamic")
    summary = json.loads(subprocess.run([*env_run, "summary", path, "--json"], capture_output=True, check=True).stdout)
    assert [r["explanation"] for r in summary["recompiles"] if r["id"] == "[0/5]"] == [best]
    diff = subprocess.run([*env_run, "diff", path, "--ids", "0/4", "0/5"], capture_output=True, text=True)
    assert diff.returncode == 1, diff.stderr  # 1: the two compiles differ
    assert f"/ B {best}" in diff.stdout
    assert newest not in diff.stdout


@pytest.mark.parametrize("name", TRACES)
def test_the_reports_recompiles_say_the_same_reason_and_the_fix_beside_it(name: str, tmp_path: Path) -> None:
    """index.html's "Recompiles explained": each recompile's reason is the recommended failure's
    (it listed only every entry's failure, newest first), with the change that avoids a size
    recompile (compiles.json `recompile.fix`, e.g. mark_dynamic) in the same block."""
    from markupsafe import escape  # the report's escaping (Jinja's)

    from tlscope.cli import main as tlscope_main

    out = tmp_path / "out"
    assert tlscope_main([str(CORPUS / name), "-o", str(out), "--no-browser"]) == 0
    index = (out / "index.html").read_text()
    (entries,) = _entries(name)
    fixes = 0
    for entry in (e for e in entries if e.recompile is not None and e.status != "outside"):
        assert entry.recompile is not None
        start = index.index(f'<a href="#{entry.id}">{entry.id}</a>', index.index('<h2 id="recompiles">'))
        block = index[start : index.index("</div>", start)]
        assert f"Why: <strong>{escape(_recommended(entry) or 'no reason logged')}</strong>" in block
        fix = entry.recompile.fix
        if fix is not None:
            fixes += 1
            assert f"To avoid it, add <code>{escape(fix.code)}</code>" in block
            assert escape(fix.why) in block
    if name == "recompiles":
        assert fixes >= 1  # [0/1]: torch._dynamo.mark_dynamic(x, 0)


def test_a_failure_another_entry_explains_is_not_the_cause() -> None:
    """recompiles_dynamic's [0/4], a transposed 2-D call: the newest entry [0/3] (compiled for a
    3-D x) failed on the rank, which [0/2] was compiled for; [0/2] failed on the stride, the
    call's change (the rule before, which put shape failures last, said the rank). [0/5]: the
    transposed [0/4]'s stride is [0/2]'s too, so mark_dynamic stays the cause. `compared_with` is
    the recommended entry, and `changes` against it."""
    (entries,) = _entries("recompiles_dynamic")
    by_id = {e.id: e for e in entries}
    four, five = by_id["[0/4]"].recompile, by_id["[0/5]"].recompile
    assert four is not None and four.recommended is not None and five is not None and five.recommended is not None
    chosen = four.guard_failures[four.recommended.index]
    assert (chosen.cache_entry, chosen.kind) == ("[0/2]", "stride")
    assert four.guard_failures[0].kind == "rank" and "[0/2] was compiled for the call's rank" in four.recommended.why
    assert four.compared_with == "[0/2]"
    assert {(c.what, c.before, c.after) for c in four.changes} >= {("stride", "[9, 1]", "[1, 6]")}
    chosen = five.guard_failures[five.recommended.index]
    assert (chosen.cache_entry, chosen.kind) == ("[0/2]", "dim_marking") and five.compared_with == "[0/2]"


def test_a_call_of_a_new_rank_after_an_int_went_dynamic_blames_the_rank() -> None:
    """The newest entry is the most general one (automatic dynamic): a call with a new rank, after
    an int went dynamic, fails it on the rank and the older entries on the int's old value. The
    rank is the cause (the rule before, which put shape failures last, said the int)."""
    from tlscope.analyse.fold.recommend import recommended_failure
    from tlscope.format.compiles import GuardFailure, TensorInput

    failures = [
        GuardFailure(cache_entry="[0/1]", guard="tensor 'x' rank mismatch. expected 1, actual 2", kind="rank",
                     explanation="x has 2 dimensions", subject="x", expected="1", actual="2"),
        GuardFailure(cache_entry="[0/0]", guard="k == 3", kind="value", explanation="k changed: 3 -> 4",
                     subject="k", expected="3", actual="4"),
    ]  # fmt: skip
    one_d = [TensorInput(source="L['x']", size=[4], stride=[1])]
    call = [TensorInput(source="L['x']", size=[2, 2], stride=[2, 1])]
    found = recommended_failure(failures, {"[0/1]": one_d, "[0/0]": one_d}, call)
    assert found is not None and found.index == 0
    # Had an entry been compiled for a 2-D x, the rank would say nothing of the call.
    found = recommended_failure(failures, {"[0/1]": one_d, "[0/0]": call}, call)
    assert found is not None and found.index == 1
