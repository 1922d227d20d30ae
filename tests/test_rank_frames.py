"""ranks.json's `divergence.frames` (format 1.31): functions some ranks compiled alone, and the
compile ids of the same function numbered differently on them, so that the graphs and the
collectives are compared by function.

The real job: the corpus's ranks_shifted_4 (rank 0 alone compiles `log_stats`, under `if rank ==
0:`, after the first function: its later functions' ids are one higher than ranks 1-3's; rank 3's
`head` gets a shorter batch).
tlparse's multi_rank_logs (two programs) is in tests/test_rank_graphs.py.
"""

from __future__ import annotations

import html
import json
import re
import subprocess
import sys
from pathlib import Path

import msgspec
from helpers import parse_job

from tlscope.analyse.ranks.divergence import RankLine, RankOverview, divergence
from tlscope.analyse.ranks.frames import alignment_keys, frame_of
from tlscope.analyse.ranks.graph_divergence import GraphPrint

CORPUS = Path(__file__).resolve().parents[1] / "corpus" / "traces"
SCRIPT = "ranks_shifted_4.py"
SHIFTED = (
    f"rank 0 compiled 1 function ranks 1, 2, 3 did not ([1/0] log_stats ({SCRIPT}:24)); so the same "
    f"functions have other compile ids: [2/0] block ({SCRIPT}:28) on rank 0 is [1/0] on ranks 1, 2, 3, "
    f"[3/0] head ({SCRIPT}:32) is [2/0]; tlscope compares their graphs and collectives by function"
)
GROUPS = [
    f"rank 0: 1 compile no other rank has ([1/0] log_stats ({SCRIPT}:24))",
    f"ranks 1, 2, 3: lack 1 compile other ranks have ([1/0] log_stats ({SCRIPT}:24) on rank 0)",
]


def test_a_function_one_rank_compiled_alone_is_named(tmp_path: Path) -> None:
    """By id, rank 0 "has [3/0]" and every later id names another function on it; by function, it
    compiled one more (log_stats) and the same graphs as the others under other numbers."""
    out = tmp_path / "out"
    found, stdout = parse_job(CORPUS / "ranks_shifted_4", out)
    div = found["divergence"]
    assert div["frames"] == [
        {
            "ranks": [0],
            "than": [1, 2, 3],
            "extra": [{"id": "[1/0]", "function": f"log_stats ({SCRIPT}:24)"}],
            "missing": [],
            "renumbered": [[2, 1], [3, 2]],
            "sentence": SHIFTED,
        }
    ]
    assert [g["sentence"] for g in div["groups"]] == GROUPS
    assert [(g["only_here"], g["missing"]) for g in div["groups"]] == [(["[1/0]"], []), ([], ["[1/0]"])]
    # block's graphs agree, compared by function (by id, rank 0's [1/0] is log_stats); head's
    # differ on rank 3 alone, said under the id most ranks give it, with rank 0's own beside it.
    (graphs,) = div["graphs"]
    assert (graphs["id"], [(g["id"], g["ranks"]) for g in graphs["groups"]]) == (
        "[2/0]",
        [("[3/0]", [0, 1, 2]), ("[2/0]", [3])],
    )
    assert graphs["sentence"].startswith(
        f"[2/0] head ({SCRIPT}:32) ([3/0] on rank 0): ranks traced different graphs: "
        "input L_x_ is f32[8] on ranks 0, 1, 2, f32[7] on rank 3"
    )
    assert f"Ranks compiled other functions:\n  {SHIFTED}\n" in stdout
    page = (out / "index.html").read_text()
    start = page.index('<ul id="rank-frames">')
    assert f"<li>{html.escape(SHIFTED)}</li>" in page[start : page.index("</ul>", start)]
    # The matrix's rows are functions: rank 0's block and head in the others' [1/0] and [2/0] (its
    # own ids said in its cells), its log_stats a row of its own; no row [3/0].
    rows = re.findall(r"<tr(?: class=\"odd\")?><td>([^<]*)(.*?)</tr>", page[page.index('id="compile-id-matrix"') :])
    labels = [label.strip() for label, _ in rows]
    assert labels == ["[0/0]", "[1/0]", f"[1/0] log_stats ({SCRIPT}:24)", "[2/0]"]
    own = [re.findall(r'<span class="own-id">\(its (\[[^<]*\])\)</span>', cells) for _, cells in rows]
    assert own == [[], ["[2/0]"], [], ["[3/0]"]]
    assert rows[2][1].count('class="absent"') == 3
    # What not every rank has is the function rank 0 alone compiled, drawn in its own column,
    # each row of the matrix saying where its ids are drawn.
    assert div["not_on_every_rank"] == [{"id": f"[1/0] log_stats ({SCRIPT}:24)", "ranks": [0]}]
    assert [(r["ranks"], r.get("columns")) for r in div["rows"]] == [
        ([0], {"[1/0]": f"[1/0] log_stats ({SCRIPT}:24)", "[2/0]": "[1/0]", "[3/0]": "[2/0]"}),
        ([1, 2, 3], None),
    ]
    assert f"  {GROUPS[0]}\n" in stdout

    summary = subprocess.run(
        [sys.executable, "-m", "tlscope", "summary", str(out), "--json"], capture_output=True, text=True, check=True
    )
    assert json.loads(summary.stdout)["divergence"]["frames"] == div["frames"]


def test_the_fallback_without_ranks_json_says_the_same(tmp_path: Path) -> None:
    """tlscope.load on a job folder without ranks.json folds each rank's compiles.json: the same
    frames and groups."""
    import tlscope

    out = tmp_path / "out"
    written = parse_job(CORPUS / "ranks_shifted_4", out)[0]["divergence"]
    (out / "ranks.json").unlink()
    folded = tlscope.load(out).divergence
    assert folded is not None
    assert [f.sentence for f in folded.frames] == [SHIFTED]
    assert [g.sentence for g in folded.groups] == [g["sentence"] for g in written["groups"]]


def test_compile_ids_are_named_by_function() -> None:
    """The n-th frame of a function, then the attempt; a function the log does not name, and ids
    that are no Dynamo frame's (compiled autograd's), keep their number."""
    frames = {0: "f (a.py:1)", 1: "<lambda> (a.py:9)", 2: "?", 3: "<lambda> (a.py:9)"}
    ids = ["[0/0]", "[0/1]", "[1/0]", "[1/0_1]", "[2/0]", "[3/0]", "[!0/1/0]", "[-/-]"]
    assert alignment_keys(ids, frames) == {
        "[0/0]": "f (a.py:1)#0/0]",
        "[0/1]": "f (a.py:1)#0/1]",
        "[1/0]": "<lambda> (a.py:9)#0/0]",
        "[1/0_1]": "<lambda> (a.py:9)#0/0_1]",
        "[2/0]": "[2/0]",
        "[3/0]": "<lambda> (a.py:9)#1/0]",
        "[!0/1/0]": "[!0/1/0]",
        "[-/-]": "[-/-]",
    }
    assert [frame_of(cid) for cid in ("[12/3]", "[4/0_2]", "[!0/1/0]", "[-/-]", "12/3")] == [12, 4, None, None, None]


def _rank(rank: int, functions: list[str], digests: dict[str, str], calls: dict[str, str]) -> RankOverview:
    """A rank that compiled `functions` in order (one attempt each), their graphs and collectives
    given by function."""
    ids = [f"[{n}/0]" for n in range(len(functions))]
    by_function = dict(zip(functions, ids, strict=True))
    return RankOverview(
        line=RankLine(rank=rank),
        compile_ids=ids,
        frames={n: f for n, f in enumerate(functions)},
        graphs={
            by_function[f]: GraphPrint(function=f, digest=d, payload=f"payloads/{rank}{n}.txt")
            for n, (f, d) in enumerate(digests.items())
        },
        collectives={by_function[f]: c for f, c in calls.items()},
    )


def test_graphs_and_collectives_are_compared_by_function() -> None:
    """Rank 0 compiled `extra` second: its `b` is [2/0], the others' [1/0]. Their `b` graphs are
    compared with each other (not rank 0's [1/0], `extra`, with their [1/0]), and so are their
    collectives; a difference is said under the most ranks' id, with rank 0's own."""
    a, b, extra = "a (t.py:1)", "b (t.py:5)", "extra (t.py:9)"
    reduce = "all_reduce f32[4] 'sum' '0'"
    ranks = [
        _rank(0, [a, extra, b], {a: "1", b: "2"}, {b: reduce}),
        _rank(1, [a, b], {a: "1", b: "2"}, {b: reduce}),
        _rank(2, [a, b], {a: "1", b: "2"}, {b: reduce}),
    ]
    found = divergence(ranks)
    assert (found.graphs, found.collectives) == ([], [])
    assert [(f.ranks, f.than, f.renumbered) for f in found.frames] == [([0], [1, 2], [[2, 1]])]

    ranks[0] = _rank(0, [a, extra, b], {a: "1", b: "3"}, {b: "all_reduce f32[5] 'sum' '0'"})
    found = divergence(reversed(ranks))
    assert [(g.id, [(x.id, x.ranks) for x in g.groups]) for g in found.graphs] == [
        ("[1/0]", [("[1/0]", [1, 2]), ("[2/0]", [0])])
    ]
    assert found.graphs[0].sentence.startswith(f"[1/0] {b} ([2/0] on rank 0): ranks traced different graphs")
    assert [(c.id, [g.ranks for g in c.groups]) for c in found.collectives] == [("[1/0]", [[1, 2], [0]])]


def test_ranks_that_number_functions_alike_have_no_frames() -> None:
    """The same functions in the same order: nothing said, the groups by id as before."""
    ranks = [_rank(r, ["a (t.py:1)", "b (t.py:5)"], {}, {}) for r in range(3)]
    ranks[2].compile_ids.append("[1/1]")
    found = divergence(ranks)
    assert found.frames == []
    assert [g.sentence for g in found.groups] == [
        "rank 2: 1 compile no other rank has ([1/1])",
        "ranks 0, 1: lack 1 compile other ranks have ([1/1])",
    ]


def test_the_matrix_columns_are_functions() -> None:
    """Where ranks number functions differently, each function is one column of the matrix: the
    reference ranks' id for it; a function no reference rank compiled keeps its own id, followed
    by its function when the reference gives that frame to another (every attempt of it alike),
    and two groups' own functions of one id get a column each (one function on two ranks, one).
    What is not on every rank is said by those columns, and each row says which of its ids are
    drawn where."""
    a, b, c, log, ev = "a (t.py:1)", "b (t.py:5)", "c (t.py:9)", "log (t.py:20)", "ev (t.py:30)"
    ranks = [
        _rank(0, [a, log, b, c], {}, {}),
        _rank(1, [a, b, c], {}, {}),
        _rank(2, [a, b, c], {}, {}),
        _rank(3, [a, ev, b], {}, {}),
        _rank(4, [a, b, c, log], {}, {}),
    ]
    ranks[0].compile_ids.append("[1/1]")  # log recompiled on rank 0
    found = divergence(ranks)
    rows = {tuple(r.ranks): r.columns or {} for r in found.rows}
    assert rows == {
        (0,): {"[1/0]": f"[1/0] {log}", "[1/1]": f"[1/1] {log}", "[2/0]": "[1/0]", "[3/0]": "[2/0]"},
        (1, 2): {},
        (3,): {"[1/0]": f"[1/0] {ev}", "[2/0]": "[1/0]"},
        # log, the same function as rank 0's, in rank 0's column: ranks 0 and 4 compiled it.
        (4,): {"[3/0]": f"[1/0] {log}"},
    }
    assert [(p.id, p.ranks) for p in found.not_on_every_rank] == [
        (f"[1/0] {ev}", [3]),
        (f"[1/0] {log}", [0, 4]),
        (f"[1/1] {log}", [0]),
        ("[2/0]", [0, 1, 2, 4]),
    ]
    # Without another numbering, nothing changes: the columns are the ids.
    same = divergence([_rank(r, [a, b], {}, {}) for r in range(2)])
    assert [r.columns for r in same.rows] == [msgspec.UNSET]


def test_the_landing_matrix_draws_each_rank_from_its_own_id() -> None:
    """Rows are functions: a renumbering rank's compile in the row of the reference's id, its own
    id said beside it; a function of its own in its named row; the other ranks untouched."""
    from tlscope.analyse.ranks.rank_summary import CompileInfo, RankSummary
    from tlscope.analyse.ranks.table import compile_id_matrix

    def rank(n: int, times: list[float]) -> RankSummary:
        ids = [f"[{f}/0]" for f in range(len(times))]
        compiles = {c: CompileInfo("ok", t) for c, t in zip(ids, times, strict=True)}
        return RankSummary(rank=n, compile_ids=ids, compiles=compiles)

    log = "[1/0] log (t.py:20)"
    renamed = {0: {"[1/0]": log, "[2/0]": "[1/0]"}}
    rows = {row.compile_id: row for row in compile_id_matrix([rank(0, [1.0, 2.0, 3.0]), rank(1, [1.5, 3.5])], renamed)}
    assert list(rows) == ["[0/0]", "[1/0]", log]
    assert {r: c and c.compile_time_s for r, c in rows["[1/0]"].cells.items()} == {0: 3.0, 1: 3.5}
    assert (rows["[1/0]"].ids, rows["[1/0]"].odd) == ({0: "[2/0]"}, True)
    assert {r: c and c.compile_time_s for r, c in rows[log].cells.items()} == {0: 2.0, 1: None}
    assert rows[log].ids == {} and rows["[0/0]"].ids == {} and not rows["[0/0]"].odd
