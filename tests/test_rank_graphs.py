"""ranks.json's `divergence.graphs` (format 1.30): compile ids whose Dynamo graphs differ between
ranks, compared by structure, said with the first difference.

Real jobs: the corpus's ranks_diverge_2/4 (each rank a different batch size, and a branch on
the rank), ranks_same_2 (the same program on both ranks), tlparse's multi_rank_runtime (ranks on
their own GPUs: every annotation says `cuda:0` on rank 0 and `cuda:1` on the others) and
multi_rank_logs (ranks 1 and 3 ran another program: said by `frames`, tests/test_rank_frames.py).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from helpers import parse_job

from tlscope.analyse.ranks.divergence import RankLine, RankOverview, divergence
from tlscope.analyse.ranks.graph_divergence import WORDED, GraphPrint, structure_digest

CORPUS = Path(__file__).resolve().parents[1] / "corpus" / "traces"

GRAPH = """class GraphModule(torch.nn.Module):
    def forward(self, L_x_: "f32[8, 32][32, 1]cuda:0"):
        l_x_ = L_x_

         # File: /w/train.py:12 in step, code: return x.sin() + rank
        sin: "f32[8, 32][32, 1]cuda:0" = torch.sin(l_x_);  l_x_ = None
        add: "f32[8, 32][32, 1]cuda:0" = sin + 0;  sin = None
        return (add,)
"""


def _job(source: Path, out: Path) -> dict[str, Any]:
    found, stdout = parse_job(source, out)
    # The parse's own lines name the folder where ranks.json's sentences say JOB: a command to paste.
    for graphs in found["divergence"]["graphs"]:
        said = graphs["sentence"].replace("tlscope diff JOB --ranks", f"tlscope diff {out} --ranks")
        assert f"  {said}\n" in stdout
    return found


def test_structure_ignores_devices_constants_strides_and_comments() -> None:
    """Each rank's own GPU, its own number in the code, strides and source comments are not the
    graph's structure; another op, another size or another input are."""
    same = structure_digest(GRAPH)
    assert same is not None
    other_rank = GRAPH.replace("cuda:0", "cuda:3").replace("sin + 0", "sin + 3").replace("[32, 1]", "[1, 8]")
    assert structure_digest(other_rank.replace("train.py:12", "train.py:40")) == same
    assert structure_digest(GRAPH.replace("torch.sin", "torch.cos")) != same
    assert structure_digest(GRAPH.replace("f32[8, 32]", "f32[9, 32]")) != same
    assert structure_digest(GRAPH.replace("sin + 0", "sin * 0")) != same
    assert (
        structure_digest(GRAPH.replace("bf16", "f32").replace('f32[8, 32][32, 1]cuda:0"):', 'bf16[8, 32]"):')) != same
    )
    assert structure_digest("def f(x):\n    return x\n") is None


def test_the_same_program_on_every_rank_has_no_graph_difference(tmp_path: Path) -> None:
    ranks = _job(CORPUS / "ranks_same_2", tmp_path / "out")
    assert ranks["divergence"]["graphs"] == []


def test_uneven_batches_and_a_branch_on_the_rank_are_said_with_every_rank(tmp_path: Path) -> None:
    """ranks_diverge_4: rank r's batch is 8 + r, and branchy_fn takes `x.sin() + rank` on even
    ranks, `x.cos() * rank` on odd ones: the compile ids agree there, the graphs do not."""
    graphs = _job(CORPUS / "ranks_diverge_4", tmp_path / "out")["divergence"]["graphs"]
    by_id = {g["id"]: g for g in graphs}
    assert list(by_id) == ["[4/0]", "[6/0]"]
    batch = by_id["[4/0]"]
    assert batch["kind"] == "graph" and [g["ranks"] for g in batch["groups"]] == [[0], [1], [2], [3]]
    assert batch["sentence"] == (
        "[4/0] forward (_ranks.py:40): ranks traced 4 different graphs: input L_x_ is f32[8, 32] on rank 0, "
        "f32[9, 32] on rank 1, f32[10, 32] on rank 2, f32[11, 32] on rank 3; tlscope diff JOB --ranks 0 1 "
        "shows the rest"
    )
    branch = by_id["[6/0]"]
    assert [g["ranks"] for g in branch["groups"]] == [[0, 2], [1, 3]]
    assert {g["function"] for g in branch["groups"]} == {"branchy_fn (_ranks.py:59)"}
    assert branch["sentence"] == (
        "[6/0] branchy_fn (_ranks.py:59): ranks traced different graphs: ranks 0, 2 call sin(l_x_) at "
        "_ranks.py:62 (return x.sin() + rank), ranks 1, 3 cos(l_x_) at _ranks.py:63 (return x.cos() * rank); "
        "tlscope diff JOB --ranks 0 1 shows the rest"
    )
    # Each group points at its lowest rank's graph, in the job's one payload store.
    for group in branch["groups"]:
        assert (tmp_path / "out" / group["payload"]).is_file()
    page = (tmp_path / "out" / "index.html").read_text()
    assert 'id="rank-graphs"' in page and "graphs differ</span>" in page
    assert "ranks 1, 3 cos(l_x_) at _ranks.py:63 (return x.cos() * rank)" in page
    # Each group's graph one click away: the lowest rank's Dynamo graph in the job's payloads.
    for group in branch["groups"]:
        assert f'<a href="{group["payload"]}">graph on rank {group["ranks"][0]}</a>' in page


def test_summary_and_the_api_fold_the_same_graphs_from_a_folder_without_ranks_json(tmp_path: Path) -> None:
    """A job folder without ranks.json (written before 1.5, or removed): tlscope.load folds each
    rank's compiles.json and reads the graphs from the job's payloads: the same answer."""
    import tlscope

    written = _job(CORPUS / "ranks_diverge_2", tmp_path / "out")["divergence"]["graphs"]
    (tmp_path / "out" / "ranks.json").unlink()
    folded = tlscope.load(tmp_path / "out").divergence
    assert folded is not None
    assert [(g.id, g.sentence) for g in folded.graphs] == [(g["id"], g["sentence"]) for g in written]


def test_ranks_on_their_own_gpus_trace_the_same_graphs(tlparse_traces: Path, tmp_path: Path) -> None:
    """tlparse's multi_rank_runtime: rank 0's graphs print `cuda:0`, the others' `cuda:1` (their
    payloads differ byte for byte); by structure they are the same graphs."""
    out = tmp_path / "out"
    ranks = _job(tlparse_traces / "inputs" / "multi_rank_runtime", out)
    # No graph nor post-grad graph differs; the output code of ranks 5, 6 does (tests/test_rank_code.py).
    assert {g["kind"] for g in ranks["divergence"]["graphs"]} == {"output_code"}
    first = json.loads((out / "rank_0" / "compiles.json").read_text())["compiles"]
    other = json.loads((out / "rank_1" / "compiles.json").read_text())["compiles"]
    dynamo = [
        [g["payload_filename"] for g in e["graphs"] if g["kind"] == "dynamo_output_graph"] for e in (first[1], other[1])
    ]
    assert dynamo[0] != dynamo[1]  # other bytes (the device), one structure


def test_an_id_naming_other_functions_is_said_by_the_frames(tlparse_traces: Path, tmp_path: Path) -> None:
    """tlparse's multi_rank_logs: ranks 1 and 3 ran another program; their [0/0] is another
    function: said as functions the ranks compiled alone (`frames`), not as a graph that differs
    (the graphs are compared by function)."""
    found = _job(tlparse_traces / "inputs" / "multi_rank_logs", tmp_path / "out")["divergence"]
    assert found["graphs"] == []
    assert [(f["ranks"], f["than"]) for f in found["frames"]] == [([1, 3], [0, 2])]
    assert found["frames"][0]["sentence"] == (
        "ranks 1, 3 compiled 1 function ranks 0, 2 did not ([0/0] kernel (gen_many_frames.py:6)), "
        "and not 1 they did ([0/0] fn (test_misc.py:10755))"
    )


def _overview(rank: int, prints: dict[str, GraphPrint]) -> RankOverview:
    return RankOverview(line=RankLine(rank=rank), compile_ids=list(prints), graphs=prints)


def test_at_most_worded_ids_read_graphs_and_groups_are_largest_first() -> None:
    """Reading two graphs per id is bounded: past WORDED ids a sentence names the groups only."""
    ids = [f"[{n}/0]" for n in range(WORDED + 3)]
    ranks = [
        _overview(
            r,
            {
                cid: GraphPrint(function="f (a.py:1)", digest="x" if r else "y", payload=f"payloads/{r}.txt")
                for cid in ids
            },
        )
        for r in range(3)
    ]
    reads: list[str] = []

    def read(name: str) -> str | None:
        reads.append(name)
        return None

    found = divergence(reversed(ranks), read).graphs
    assert len(found) == len(ids)
    assert [g.ranks for g in found[0].groups] == [[1, 2], [0]]
    said = "ranks traced different graphs (ranks 1, 2; rank 0); tlscope diff JOB --ranks 1 0 shows how"
    assert found[-1].sentence == f"[22/0] f (a.py:1): {said}"
    # The worded ids tried the first group's graph (unreadable here: then no difference is said).
    assert reads == ["payloads/1.txt"] * WORDED


@pytest.mark.parametrize("job", ["ranks_diverge_4"])
def test_diff_ranks_marks_where_the_pair_differs(job: str) -> None:
    out = subprocess.run(
        [sys.executable, "-m", "tlscope", "diff", str(CORPUS / job), "--ranks", "0", "2"],
        capture_output=True,
        text=True,
    ).stdout
    head = out.split("What differs:")[0]
    graphs = head.split("Graphs differ between ranks:\n", 1)[1].splitlines()
    assert graphs[0].startswith("  [4/0] forward") and graphs[0].endswith("<- rank 0 and rank 2 differ here")
    assert graphs[1].startswith("  [6/0] branchy_fn") and "differ here" not in graphs[1]
    # The command to see a pair names the folder diff was given (ranks.json says JOB).
    assert f"tlscope diff {CORPUS / job} --ranks 0 1 shows the rest" in graphs[0]


def test_a_rank_dynamic_from_its_own_pgo_profile_is_said_with_why(tmp_path: Path) -> None:
    """pgo_ranks (real torch, TORCH_COMPILE_JOB_ID): in run1 rank 1 got an uneven last batch and
    recompiled with a dynamic batch; torch keeps a PGO profile per rank, so in run2 (batches of 8
    on both) rank 1 compiles [0/0] dynamic from its first call and rank 0 static: the same ids, other
    graphs, and the graph's symbol inputs (`s77`) are not what is said first."""
    (graphs,) = _job(CORPUS / "pgo_ranks" / "run2", tmp_path / "out")["divergence"]["graphs"]
    assert graphs["id"] == "[0/0]" and graphs["sentence"] == (
        "[0/0] step (pgo_ranks.py:23): ranks traced different graphs: input L_x_ is f32[8, 16] on rank 0, "
        "f32[s77, 16] on rank 1; rank 1 made it dynamic from its PGO profile (torch keeps one a rank); "
        "tlscope diff JOB --ranks 0 1 shows the rest"
    )


def test_one_dynamo_graph_that_inductors_passes_made_two_ways_is_said(tmp_path: Path) -> None:
    """ranks_passes_2 (format 1.32): rank 1 turned Inductor's pattern matcher off, so its post-grad
    graph keeps a float64 round trip rank 0's passes removed, from one Dynamo graph. The settings
    say the cause; the graphs say what it made, from the two post-grad graphs."""
    out = tmp_path / "out"
    div = _job(CORPUS / "ranks_passes_2", out)["divergence"]
    assert [s["sentence"] for s in div["settings"]] == [
        "rank 1 compiled under other settings than rank 0: inductor pattern_matcher False (True on rank 0)"
    ]
    (found,) = div["graphs"]
    assert (found["id"], found["kind"], [g["ranks"] for g in found["groups"]]) == ("[0/0]", "post_grad", [[0], [1]])
    assert found["sentence"].startswith(
        "[0/0] step (ranks_passes_2.py:20): ranks traced one graph, but Inductor's passes made different "
        "post-grad graphs of it: rank 1 calls torch.ops.prims.convert_element_type.default(arg0_1) at "
        "ranks_passes_2.py:21 (y = x.to(torch.float64).to(torch.float32)"
    )
    for group in found["groups"]:  # each group's payload is its lowest rank's post-grad graph
        rank = group["ranks"][0]
        (entry,) = [
            e
            for e in json.loads((out / f"rank_{rank}" / "compiles.json").read_text())["compiles"]
            if e["id"] == "[0/0]"
        ]
        assert (
            group["payload"]
            == [g["payload_filename"] for g in entry["graphs"] if g["kind"] == "inductor_post_grad_graph"][-1]
        )


def test_post_grad_graphs_are_compared_only_where_the_dynamo_graphs_agree_and_both_logged_one() -> None:
    """A rank whose FX graph cache hit logs no post-grad graph: not compared (not a difference);
    ranks whose Dynamo graphs differ: said as such, not as post-grad graphs."""

    def rank(r: int, digest: str, post: str) -> RankOverview:
        prints = {"[0/0]": GraphPrint(function="f (a.py:1)", digest=digest, payload="payloads/a.txt", post_grad=post)}
        return _overview(r, prints)

    assert divergence([rank(0, "x", "p"), rank(1, "x", "")]).graphs == []
    assert [g.kind for g in divergence([rank(0, "x", "p"), rank(1, "x", "q")]).graphs] == ["post_grad"]
    assert [g.kind for g in divergence([rank(0, "x", "p"), rank(1, "y", "q")]).graphs] == ["graph"]
