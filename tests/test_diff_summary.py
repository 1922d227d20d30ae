"""Diffs that summarise first (issue 20, finding 6): what differs in the first lines, object ids
and addresses ignored (in the verdict and in what is shown), cache hits understood, recompile
reasons shown, and a side-by-side page that uses the width with a table of contents."""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path
from typing import Any

import pytest
from helpers import CORPUS

from tlscope.cli import main as cli

_GRAPH_ID = re.compile(r"(# graph id: )(\d+)")
_ADDRESS = re.compile(r"0x([0-9a-f]{8,})")
_OBJ_ID = re.compile(r"(___check_obj_id\([^()]*?, )(\d+)\)")


def other_ids(text: str) -> str:
    """The same log as another run would write it: every object id and address changed."""
    text = _GRAPH_ID.sub(lambda m: f"{m[1]}{int(m[2]) + 7_340_032}", text)
    text = _ADDRESS.sub(lambda m: "0x" + format(int(m[1], 16) + 0x10_0000, "x"), text)
    return _OBJ_ID.sub(lambda m: f"{m[1]}{int(m[2]) + 7_340_032})", text)


def out_of(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    capsys.readouterr()
    status = cli(["diff", *args])
    return status, capsys.readouterr().out


@pytest.mark.parametrize("scenario", ["graph_breaks", "graph_breaks_repeated", "compile_failure"])
def test_a_trace_differing_only_in_object_ids_is_equal(
    scenario: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = next((CORPUS / scenario).glob("*.log.gz"))
    text = gzip.decompress(log.read_bytes()).decode("utf-8")
    changed = other_ids(text)
    assert changed != text and _GRAPH_ID.search(text) and _OBJ_ID.search(text) and _ADDRESS.search(text)
    again = tmp_path / "again.log"
    again.write_text(changed, encoding="utf-8")
    status, out = out_of(capsys, str(log), str(again))
    assert status == 0, out
    assert out.startswith("No differences.")


def test_rank_diff_says_the_compiles_only_on_one_rank_first(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """ranks_diverge_2: rank 1 compiled one function rank 0 did not; said in the first lines, and
    no object id is shown as a change anywhere (both ranks' graphs have their own ids)."""
    status, out = out_of(capsys, str(CORPUS / "ranks_diverge_2"), "--ranks", "0", "1")
    assert status == 1
    lines = out.splitlines()
    lines = lines[lines.index("What differs:") :]  # after the job's divergence groups (test below)
    assert any("compile only on rank 1: " in line for line in lines[:3]), lines[:3]
    details = lines.index("Details:")
    assert details < 40
    # A change made in the user's code is said once, for every graph stage it reaches.
    graphs = [line for line in lines[:details] if line.startswith("  graphs differ: branchy_fn")]
    assert len(graphs) == 1 and "the change, in dynamo_output_graph #1:" in graphs[0]
    assert not re.search(r"^[-+].*(# graph id: \d|0x[0-9a-f]{6,})", out, re.M)


@pytest.mark.parametrize(
    ("job", "pair"), [("ranks_diverge_4", (0, 3)), ("ranks_diverge_4", (1, 2)), ("ranks_same_2", (0, 1))]
)
def test_rank_diff_says_the_jobs_divergence_groups_first(
    job: str, pair: tuple[int, int], capsys: pytest.CaptureFixture[str]
) -> None:
    """diff --ranks starts with the job's divergence groups, the very ones of `tlscope summary
    --json` (ranks.json's), each group's sentence, and the group each of the two ranks is in; its
    --json carries them as `divergence` beside the diff's fields."""
    capsys.readouterr()
    assert cli(["summary", str(CORPUS / job), "--json"]) == 0
    divergence = json.loads(capsys.readouterr().out)["divergence"]
    groups = divergence["groups"]
    assert divergence["diverges"] == (job != "ranks_same_2")
    status, out = out_of(capsys, str(CORPUS / job), "--ranks", *map(str, pair))
    head = out.split("What differs:")[0].split("No differences.")[0].splitlines()
    if not groups:
        assert head[0].startswith("Ranks agree: all 2 ranks compiled the same compile ids")
        assert status in (0, 1)
    else:
        assert head[0] == f"Ranks diverge: 4 ranks in {len(groups)} groups by compile id sequence:"
        shown = head[1 : 1 + len(groups)]
        assert [line.split(". ", 1)[1].split("   <- ")[0] for line in shown] == [g["sentence"] for g in groups]
        where = [next(i for i, g in enumerate(groups, 1) if r in g["ranks"]) for r in pair]
        said = head[1 + len(groups)]
        same = f"Rank {pair[0]} and rank {pair[1]} are in the same group ({where[0]})."
        assert said == (
            same
            if where[0] == where[1]
            else f"Rank {pair[0]} is in group {where[0]}, rank {pair[1]} in group {where[1]}."
        )
        if where[0] != where[1]:
            assert status == 1, "ranks of different groups compiled different ids"
    status, out = out_of(capsys, str(CORPUS / job), "--ranks", *map(str, pair), "--json")
    result = json.loads(out)
    assert result["divergence"] == divergence and "compiles" in result and "equal" in result


def test_warm_cache_run_deletes_no_graph(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """caches/run2 hit run1's caches, so Inductor logged fewer graphs: not compared, not deleted."""
    status, out = out_of(capsys, str(CORPUS / "caches" / "run1"), str(CORPUS / "caches" / "run2"), "--json")
    result: dict[str, Any] = json.loads(out)
    assert status == 1  # the status (ok -> cache_hit) and the cache outcomes do differ
    (pair,) = result["compiles"]
    assert {d["what"] for d in pair["differences"]} == {"status", "cache"}
    assert pair["not_logged"] and all("hit a cache" in what for what in pair["not_logged"])
    assert result["summary"]["not_logged"] == len(pair["not_logged"])
    status, out = out_of(capsys, str(CORPUS / "caches" / "run1"), str(CORPUS / "caches" / "run2"))
    assert "not compared" in out.split("Details:")[0]


def test_ids_diff_shows_the_recompile_reason(capsys: pytest.CaptureFixture[str]) -> None:
    status, out = out_of(capsys, str(CORPUS / "recompiles"), "--ids", "0/0", "0/1")
    assert status == 1
    head = out.split("Details:")[0]
    assert "recompile reason differs: [0/0] vs [0/1]: A not a recompile / B size of x on dim 0 changed: 4 -> 5" in head


def test_side_by_side_page_uses_the_width_and_has_contents(
    browser: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    page_file = tmp_path / "diff.html"
    status, _ = out_of(capsys, str(CORPUS / "ranks_diverge_2"), "--ranks", "0", "1", "-o", str(page_file))
    assert status == 1
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    page.goto(page_file.as_uri())
    toc = page.locator("#toc a")
    assert toc.count() == page.locator("h2[id^=d]").count() > 3
    assert "compile only on rank 1: " in page.locator("#summary").text_content()
    width = page.evaluate("document.querySelector('td.a').getBoundingClientRect().width")
    assert width > 550, width
    page.close()


@pytest.mark.parametrize(
    ("job", "pair", "said"),
    [
        ("ranks_desync_2", (0, 1), "the job's first difference: their collectives differ at [0/0]"),
        ("ranks_diverge_4", (0, 3), "the job's first difference: they compiled different compile ids"),
        ("ranks_patched_2", (0, 1), "the job's first difference: they compiled under other settings for [1/0]"),
        ("ranks_cold_2", (0, 1), "the job's first difference: their caches answered differently for [0/0]"),
        ("ranks_same_2", (0, 1), "the ranks compiled alike and none straggles"),
    ],
)
def test_a_job_alone_is_diffed_on_the_pair_its_divergence_names_first(
    job: str, pair: tuple[int, int], said: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """`tlscope diff JOB` without --ranks compares the two ranks ranks.json's divergence names
    first (the reference group's lowest rank first), says which and why in its first line, then
    prints what `--ranks A B` prints; --json carries the pair."""
    status, out = out_of(capsys, str(CORPUS / job))
    first, rest = out.split("\n", 1)
    tail = f"(--ranks {pair[0]} {pair[1]}; give --ranks R1 R2 for another pair)."
    assert first == f"Comparing rank {pair[0]} with rank {pair[1]}, {said} {tail}"
    again, named = out_of(capsys, str(CORPUS / job), "--ranks", *map(str, pair))
    assert (status, rest) == (again, "\n" + named)
    _, text = out_of(capsys, str(CORPUS / job), "--json")
    chosen = json.loads(text)["pair"]
    assert chosen["ranks"] == list(pair) and chosen["kind"] == ("lowest" if job == "ranks_same_2" else "divergence")


def test_a_single_trace_alone_is_not_a_diff(capsys: pytest.CaptureFixture[str]) -> None:
    capsys.readouterr()
    assert cli(["diff", str(CORPUS / "simple")]) == 2
    assert "is a single-rank trace: give B (another trace) or --ids ID1 ID2" in capsys.readouterr().err
    assert cli(["diff", str(CORPUS / "simple"), str(CORPUS / "simple"), "--ids", "0/0", "0/0"]) == 2


def test_two_jobs_are_compared_by_their_ranks_first(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """diff JOB_A JOB_B says first what one rank's diff cannot: how many ranks, which rank of each
    is compared, and each divergence list whose count differs, with the first sentence of the side
    that has more (ranks.json's, its diff command naming that side's folder); --json carries it
    as `jobs`, and the -o page lists it. Jobs whose ranks diverge differently are different (exit 1)."""
    same, diverge = str(CORPUS / "ranks_same_2"), str(CORPUS / "ranks_diverge_2")
    capsys.readouterr()
    assert cli(["summary", diverge, "--json"]) == 0
    divergence = json.loads(capsys.readouterr().out)["divergence"]
    status, out = out_of(capsys, same, diverge)
    assert status == 1
    lines = out.split("\n\n", 1)[0].splitlines()
    assert lines[0] == "Jobs: A and B have 2 ranks each; compared below: rank 0 of A with rank 0 of B."
    assert lines[1] == "  ranks agree on their compile ids in A, diverge in 2 groups by compile id sequence in B"
    assert lines[2] == f"    the first in B: {divergence['groups'][0]['sentence']}"
    graphs = f"  compile ids whose graphs or code differ between ranks: 0 in A, {len(divergence['graphs'])} in B"
    at = lines.index(graphs)
    first = divergence["graphs"][0]["sentence"].replace("tlscope diff JOB ", f"tlscope diff {diverge} ")
    assert lines[at + 1] == f"    the first in B: {first}"
    assert lines[-1].startswith("  compile time a rank: median ") and lines[-1].endswith("(informative)")
    assert "=== " in out and f"{diverge} rank 0" in out  # the details name each side's rank
    _, text = out_of(capsys, same, diverge, "--json")
    jobs = json.loads(text)["jobs"]
    assert (jobs["a"], jobs["b"], jobs["differs"]) == ({"ranks": 2, "compared": 0}, {"ranks": 2, "compared": 0}, True)
    assert jobs["lines"] == lines
    # The side-by-side page lists them too, escaped (`<lambda>` is log text).
    out_of(capsys, same, diverge, "-o", str(tmp_path / "diff.html"))
    page = (tmp_path / "diff.html").read_text()
    listed = page.split('<ul class="header" id="jobs">', 1)[1].split("</ul>", 1)[0]
    assert f"<li>{lines[0]}</li>" in listed and "&lt;lambda&gt;" in listed and "<lambda>" not in listed
    # --rank N compares rank N of each; the same job twice is alike.
    status, out = out_of(capsys, diverge, diverge, "--rank", "1")
    assert status == 0 and out.startswith(
        "Jobs: A and B have 2 ranks each; compared below: rank 1 of A with rank 1 of B.\n"
    )
    assert "  the ranks' divergence, item by item, and stragglers are alike in A and B\n" in out


def test_a_job_against_one_trace_and_rank_without_b(capsys: pytest.CaptureFixture[str]) -> None:
    status, out = out_of(capsys, str(CORPUS / "ranks_same_2"), str(CORPUS / "simple"))
    assert status == 1 and out.startswith("Jobs: A has 2 ranks, B is one trace; compared below: rank 0 of A with B.\n")
    assert cli(["diff", str(CORPUS / "ranks_same_2"), "--rank", "1"]) == 2
    assert "--rank N compares rank N of two multi-rank traces: give B" in capsys.readouterr().err


def test_an_edit_above_a_function_still_matches_its_compiles(capsys: pytest.CaptureFixture[str]) -> None:
    """corpus edited: the same train.py before and after its author fixed a recompile, with two
    lines added at its top, so `gram` is defined at line 6, not 4, and every user line in its
    graphs and guards moved. Its first compile is matched (by function and file when the line
    moved) and equal once the user's line numbers are masked; the recompile the fix removed is the
    one difference. Before, nothing matched: 2 compiles only in A, 1 only in B."""
    status, out = out_of(capsys, str(CORPUS / "edited" / "run1"), str(CORPUS / "edited" / "run2"))
    assert status == 1  # they differ
    head = out.split("\nDetails:", 1)[0]
    assert "1 compile only in A: [0/1] gram (train.py:4)" in head
    assert not re.search(r"compiles? only in B", head) and "graphs differ" not in head and "guards differ" not in head
    assert "1 compiles matched, 1 only in A, 0 only in B" in out
    status, text = out_of(capsys, str(CORPUS / "edited" / "run1"), str(CORPUS / "edited" / "run2"), "--json")
    data = json.loads(text)
    assert (data["matched"], data["only_a"], data["only_b"]) == (1, 1, 0)
    keys = [(c["key"], c["a_id"], c["b_id"]) for c in data["compiles"]]
    assert keys == [("gram (train.py:4) compile 2", "[0/1]", None)]


def test_a_renamed_script_matches_by_function_when_one_function_has_the_name(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The after run of corpus edited as if its file had been renamed train_fixed.py: `gram` is
    the one function of that name on each side, so its compile is matched across the rename and
    keyed with both places; nothing else differs but the recompile."""
    log = next((CORPUS / "edited" / "run2").glob("*.log.gz"))
    text = gzip.decompress(log.read_bytes()).decode()
    renamed = tmp_path / "renamed.log"
    renamed.write_text(text.replace("train.py", "train_fixed.py"))
    status, out = out_of(capsys, str(CORPUS / "edited" / "run1"), str(renamed), "--json")
    data = json.loads(out)
    assert (data["matched"], data["only_a"], data["only_b"]) == (1, 1, 0)
    status, out = out_of(capsys, str(CORPUS / "edited" / "run1"), str(renamed))
    assert status == 1 and not re.search(r"compiles? only in B", out) and "graphs differ" not in out


def test_a_moved_function_is_matched_only_when_one_compile_of_each_side_can_be_it() -> None:
    """`matched` pairs a compile left over by its key again by function, file and nth compile, and
    then by function and nth compile, only when one compile of each side has that looser key: two
    functions `f` of one file both moved are not guessed at."""
    from tlscope.analyse.diff import matched
    from tlscope.format.compiles import CompileEntry, SourceLocation

    def entry(cid: str, name: str, file: str, line: int) -> CompileEntry:
        return CompileEntry(
            id=cid, dir=cid, status="ok", frame_compile=cid, function=SourceLocation(file=file, line=line, name=name)
        )

    a = [entry("[0/0]", "f", "/a/m.py", 4), entry("[1/0]", "g", "/a/m.py", 9), entry("[2/0]", "h", "/a/m.py", 20)]
    b = [entry("[0/0]", "f", "/b/m.py", 6), entry("[1/0]", "g", "/b/n.py", 11), entry("[2/0]", "h", "/b/m.py", 20)]
    assert [(key, x and x.id, y and y.id) for key, x, y in matched(a, b)] == [
        ("f (m.py:4 -> m.py:6) compile 1", "[0/0]", "[0/0]"),
        ("g (m.py:9 -> n.py:11) compile 1", "[1/0]", "[1/0]"),
        ("h (m.py:20) compile 1", "[2/0]", "[2/0]"),
    ]
    twice = [entry("[0/0]", "f", "/a/m.py", 4), entry("[1/0]", "f", "/a/m.py", 30)]
    moved = [entry("[0/0]", "f", "/a/m.py", 5), entry("[1/0]", "f", "/a/m.py", 31)]
    assert [(x and x.id, y and y.id) for _, x, y in matched(twice, moved)] == [
        ("[0/0]", None),
        ("[1/0]", None),
        (None, "[0/0]"),
        (None, "[1/0]"),
    ]
