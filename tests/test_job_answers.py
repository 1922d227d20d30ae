"""A job's first answers (analyse/ranks/job_answers.py): each rank's line once, with the ranks
that say it, the most ranks' first; bounded a kind; and said by `tlscope JOB`, `summary JOB`
and the landing page as ranks.json holds them."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import msgspec
import pytest
from helpers import CORPUS, REPO, TLPARSE_TRACES, require_shared

from tlscope import load
from tlscope.analyse.ranks import job_answers
from tlscope.analyse.ranks.job_answers import AnswersFold, answer_lines
from tlscope.cli import main
from tlscope.format.compiles import FirstAnswer


def _failure(cid: str, why: str) -> FirstAnswer:
    return FirstAnswer(kind="failure", compile_id=cid, text=f"first failure: {cid} f failed: {why}")


def test_each_line_once_with_its_ranks_the_most_ranks_first() -> None:
    fold = AnswersFold()
    brk = FirstAnswer(kind="graph_break", compile_id="[1/0]", text="most frequent graph break (1 time in 1 compile): x")
    for rank in range(8):
        said = [brk]
        if rank in (3, 5):
            said.insert(0, _failure("[2/0]", "RuntimeError: rank 3 and 5"))
        if rank == 6:
            said.insert(0, _failure("[0/0]", "Unsupported: rank 6 alone"))
        said.append(FirstAnswer(kind="later_kind", text="a kind this reader does not know"))
        fold.add(rank, said)
    found = fold.result()
    assert [(line.kind, line.ranks, line.who) for line in found.lines] == [
        ("failure", [3, 5], "ranks 3, 5"),
        ("failure", [6], "rank 6"),
        ("graph_break", list(range(8)), "every rank"),
    ]
    assert found.more == 0
    assert answer_lines(found)[2] == f"every rank: {brk.text}"


def _slow(cid: str, fn: str, seconds: float, phase: str | None = "code_gen") -> FirstAnswer:
    text = f"most compile time: {cid} {fn} took {seconds:.2f} s of 99.00 s in 3 compiles (50 %)"
    return FirstAnswer(kind="slow_compile", compile_id=cid, text=text, seconds=seconds, phase=phase)


def test_the_slowest_compiles_folded_by_compile_with_their_range_and_phases() -> None:
    """Each rank's slowest compile took its own time: ranks whose slowest is the same compile are
    one line with the range and median of their seconds and the phases their time went to (one
    named alone; split, each with its ranks, the most ranks' first, two named and the rest
    counted); a line not as tlscope writes it (no ` took `, no seconds) is not folded."""
    fold = AnswersFold()
    for rank, seconds in enumerate([30.0, 31.5, 59.3, 29.0]):
        fold.add(rank, [_slow("[4/0]", "forward", seconds)])
    fold.add(4, [_slow("[4/0]", "forward", 12.0, phase="compile_file")])
    fold.add(5, [_slow("[7/0]", "<lambda>", 5.1, phase=None)])
    fold.add(6, [_slow("[8/0]", "tail", 3.0)])
    fold.add(7, [_slow("[8/0]", "tail", 2.0)])
    fold.add(8, [FirstAnswer(kind="slow_compile", compile_id="[0/0]", text="most compile time: odd", seconds=1.0)])
    fold.add(9, [FirstAnswer(kind="slow_compile", compile_id="[0/0]", text="most compile time: [0/0] f took 2 s")])
    found = fold.result()
    assert [(line.text, line.who) for line in found.lines] == [
        (
            "most compile time: [4/0] forward took 12.00 to 59.30 s a rank (median 30.00 s), in code_gen on 4 ranks, "
            "compile_file on 1",
            "ranks 0-4",
        ),
        ("most compile time: [8/0] tail took 2.00 to 3.00 s a rank, in code_gen", "ranks 6, 7"),
        ("most compile time: [7/0] <lambda> took 5.10 s", "rank 5"),
    ]
    fold = AnswersFold()
    for rank, phase in enumerate(["code_gen", "code_gen", "compile_file", "async_compile.wait", None]):
        fold.add(rank, [_slow("[4/0]", "forward", 10.0, phase=phase)])
    (line,) = fold.result().lines
    assert line.text.endswith("took 10.00 s, in code_gen on 2 ranks, async_compile.wait on 1, other phases on 1")


def test_a_slow_compile_s_fix_is_said_once_for_its_ranks() -> None:
    """Format 1.49: a rank's slowest compile ends with its `time_fix` (compile each block), or the
    line its big graph grew from: the job's line for the ranks whose slowest is that compile says
    it once, the most ranks'; a line with none says none."""
    fix = "fix: compile each block, not the whole: `for block in model.layers: block.compile()` before train.py:35"
    fold = AnswersFold()
    for rank, seconds in enumerate([30.0, 31.0, 32.0]):
        answer = _slow("[0/0]", "Model.forward", seconds)
        fold.add(rank, [msgspec.structs.replace(answer, text=f"{answer.text}; {fix}")])
    fold.add(3, [_slow("[1/0]", "step", 3.0)])
    grew = "600 of its graph's 601 nodes are body.py:4 (`x = f(x)`), one line traced again and again"
    for rank in (4, 5):
        answer = _slow("[2/0]", "body", 2.0)
        fold.add(rank, [msgspec.structs.replace(answer, text=f"{answer.text}; {grew}")])
    lines = [line.text for line in fold.result().lines]
    assert lines == [
        f"most compile time: [0/0] Model.forward took 30.00 to 32.00 s a rank (median 31.00 s), in code_gen; {fix}",
        f"most compile time: [2/0] body took 2.00 s, in code_gen; {grew}",
        "most compile time: [1/0] step took 3.00 s, in code_gen",
    ]


def test_lines_beyond_the_bounds_are_counted(monkeypatch: pytest.MonkeyPatch) -> None:
    """SHOWN lines a kind, the rest counted; past KEPT distinct lines a kind, a new line is only
    counted (a thousand ranks each failing its own way keep the parent's memory bounded)."""
    monkeypatch.setattr(job_answers, "KEPT", 6)
    fold = AnswersFold()
    for rank in range(10):
        fold.add(rank, [_failure(f"[{rank}/0]", "own")])
    found = fold.result()
    assert [line.ranks for line in found.lines] == [[0], [1], [2], [3], [4]]
    assert found.more == 1 + 4  # one kept but not shown, four never kept
    assert answer_lines(found)[-1] == "and 5 more lines on some ranks (--rank N)"


def test_the_job_says_its_ranks_answers(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """ranks_diverge_2: both ranks break their graphs at one line: ranks.json says it once for
    every rank; `tlscope JOB` and `summary JOB` print it so, `summary --json` as `rank_answers`."""
    out = tmp_path / "out"
    assert main([str(REPO / "corpus" / "traces" / "ranks_diverge_2"), "-o", str(out), "--no-browser"]) == 0
    printed = capsys.readouterr().out.splitlines()
    data = json.loads((out / "ranks.json").read_text())["first_answers"]
    mine = [json.loads((out / f"rank_{r}" / "compiles.json").read_text())["first_answers"] for r in (0, 1)]
    # Each rank's slowest compile took its own time: one line, said with both ranks' seconds.
    slow = [next(a for a in answers if a["kind"] == "slow_compile") for answers in mine]
    assert slow[0]["text"] != slow[1]["text"] and slow[0]["compile_id"] == slow[1]["compile_id"]
    low, high = sorted(a["seconds"] for a in slow)
    cid, phase = slow[0]["compile_id"], slow[0]["phase"]
    assert slow[0]["text"].startswith(f"most compile time: {cid} Mlp.forward (_ranks.py:")
    label = slow[0]["text"].removeprefix("most compile time: ").split(" took ")[0]
    folded = f"most compile time: {label} took {low:.2f} to {high:.2f} s a rank, in {phase}"
    mine = [[a for a in answers if a["kind"] != "slow_compile"] for answers in mine]
    assert mine[0] == mine[1] and mine[0]
    said = [*mine[0], {"kind": "slow_compile", "compile_id": cid, "text": folded}]
    assert data["lines"] == [{**a, "ranks": [0, 1], "who": "every rank"} for a in said]
    at = printed.index("First answers, all ranks:")
    assert printed[at + 1 : at + 1 + len(said)] == [f"  every rank: {a['text']}" for a in said]
    # The landing page lists them too (escaped: log text).
    page = (out / "index.html").read_text()
    listed = re.findall(r"<li>(.*?)</li>", page.split('<ul id="rank-first-answers">', 1)[1].split("</ul>", 1)[0])
    assert [html.unescape(item) for item in listed] == [f"every rank: {a['text']}" for a in said]
    assert main(["summary", str(out), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["rank_answers"] == data
    # tlscope.load's job says them too, read from ranks.json and folded again without it.
    found = load(out).rank_answers
    assert found is not None and msgspec.to_builtins(found) == data
    (out / "ranks.json").unlink()
    found = load(out).rank_answers
    assert found is not None and msgspec.to_builtins(found) == data
    assert load(out / "rank_0").rank_answers is None
    assert main(["summary", str(out)]) == 0
    assert "First answers, all ranks:" in capsys.readouterr().out


def test_diff_job_compares_a_rank_that_failed_with_one_that_did_not(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """tlparse's multi_rank_logs: ranks 0 and 2 failed [0/0] in the broken backend, ranks 1 and 3
    did not (they recompiled). `tlscope JOB` and `diff JOB` pick a healthy rank and a failed one,
    the failure said, before the divergence the job also has."""
    require_shared()
    out = tmp_path / "out"
    assert main([str(TLPARSE_TRACES / "inputs" / "multi_rank_logs"), "-o", str(out), "--no-browser"]) == 0
    printed = capsys.readouterr().out
    lines = json.loads((out / "ranks.json").read_text())["first_answers"]["lines"]
    failure = next(line for line in lines if line["kind"] == "failure")
    assert failure["ranks"] == [0, 2]
    assert f"Rank 1 and rank 0 side by side (one that failed otherwise): tlscope diff {out}" in printed
    assert main(["diff", str(out)]) == 1
    first = capsys.readouterr().out.splitlines()[0]
    assert first == (
        f"Comparing rank 1 with rank 0, rank 0 failed where rank 1 did not ({failure['text']}) "
        "(--ranks 1 0; give --ranks R1 R2 for another pair)."
    )
    assert main(["diff", str(out), "--json"]) == 1
    assert json.loads(capsys.readouterr().out)["pair"]["kind"] == "failure"


def test_a_rank_whose_log_ends_inside_a_compile_is_said_first(tmp_path: Path) -> None:
    """corpus ranks_same_2 with rank 1's log cut at its middle, inside its [4/0] compile (a rank the
    out-of-memory killer stopped): the job's first answers say it for rank 1 alone (format 1.48,
    `unfinished`), and rank 0, the straggler against it, is slower than a rank whose log ends inside
    that compile, not one "which did not compile it" (the dying rank logged no guards, so its
    compile is `forward` where rank 0's is `Mlp.forward`: paired by the same id and code)."""
    import gzip

    job = tmp_path / "job"
    job.mkdir()
    for log in sorted((CORPUS / "ranks_same_2").glob("*.log.gz")):
        lines = gzip.decompress(log.read_bytes()).decode().splitlines(keepends=True)
        if "_rank_1_" in log.name:
            lines = lines[: len(lines) // 2]
        (job / log.name.removesuffix(".gz")).write_text("".join(lines))
    out = tmp_path / "out"
    assert main([str(job), "-o", str(out), "--no-browser"]) == 0
    ranks = json.loads((out / "ranks.json").read_text())
    lines = ranks["first_answers"]["lines"]
    cut = [line for line in lines if line["kind"] == "unfinished"]
    assert [(line["ranks"], line["compile_id"]) for line in cut] == [([1], "[4/0]")]
    assert cut[0]["text"].startswith("unfinished: the log ends inside [4/0] forward (_ranks.py:")
    (straggler,) = ranks["stragglers"]["ranks"]
    assert straggler["rank"] == 0 and straggler["why"].endswith(
        "against none on rank 1, whose log ends inside it (in backend_compile)"
    )
