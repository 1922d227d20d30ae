"""Two jobs' ranks compared (analyse/ranks/job_diff.py): from each side's ranks.json view, the
lists whose items differ and the stragglers; the compile time a rank is informative only."""

from __future__ import annotations

from tlscope.analyse.ranks.divergence import (
    CollectiveGroup,
    CollectiveMismatch,
    Divergence,
    JobView,
    RankGroup,
    RankLine,
)
from tlscope.analyse.ranks.graph_divergence import GraphMismatch
from tlscope.analyse.ranks.job_answers import JobAnswer, JobAnswers
from tlscope.analyse.ranks.job_diff import JobSide, job_diff
from tlscope.analyse.ranks.stragglers import Straggler, Stragglers


def _view(times: list[float], slow: list[int]) -> JobView:
    lines = [RankLine(rank=n, compile_time_s=t) for n, t in enumerate(times)]
    found = [Straggler(rank=r, compile_time_s=times[r], over_median_s=1.5, ratio=1.4) for r in slow]
    stragglers = Stragglers(rule="rule", factor=1.25, margin_s=1.0, median_compile_time_s=2.0, ranks=found)
    return JobView(ranks=lines, divergence=Divergence(diverges=False), stragglers=stragglers)


def test_a_rank_that_started_to_straggle_is_a_difference_and_the_times_are_informative() -> None:
    a, b = _view([2.0, 2.0, 2.5], []), _view([2.0, 6.0, 2.5, 9.0], [1, 3])
    found = job_diff(a, b, (0, 0))
    assert found is not None and found.differs
    assert found.lines == [
        "Jobs: A has 3 ranks, B 4; compared below: rank 0 of A with rank 0 of B.",
        "  stragglers: none in A, ranks 1, 3 in B",
        "  compile time a rank: median 2.00 s in A, 4.25 s in B; slowest 2.50 s (rank 2) in A, 9.00 s (rank 3) "
        "in B (informative)",
    ]
    # Slower ranks alone, with the same stragglers (none), do not make two jobs different.
    same = job_diff(_view([2.0, 2.0], []), _view([5.0, 5.0], []), (1, 1))
    assert same is not None and not same.differs
    assert same.lines[1] == "  the ranks' divergence, item by item, and stragglers are alike in A and B"
    assert (same.a, same.b) == (JobSide(ranks=2, compared=1), JobSide(ranks=2, compared=1))


def test_one_side_a_single_trace_and_neither_a_job() -> None:
    found = job_diff(None, _view([1.0, 1.0], []), (None, 0))
    assert found is not None and found.differs
    assert found.lines == ["Jobs: A is one trace, B has 2 ranks; compared below: A with rank 0 of B."]
    assert job_diff(None, None, (None, None)) is None


def _mismatch(cid: str, what: str) -> CollectiveMismatch:
    groups = [CollectiveGroup(ranks=[0], collectives=[what]), CollectiveGroup(ranks=[1])]
    return CollectiveMismatch(id=cid, groups=groups, at=0, sentence=f"{cid}: ranks call different collectives: {what}")


def _graphs(sentence: str) -> GraphMismatch:
    return GraphMismatch(id=sentence.split(" ", 1)[0], kind="graph", groups=[], sentence=sentence)


def _diverging(collectives: list[CollectiveMismatch], groups: list[str]) -> JobView:
    found = [RankGroup(ranks=[n], sentence=s) for n, s in enumerate(groups)]
    divergence = Divergence(diverges=len(groups) > 1, groups=found, collectives=collectives)
    return JobView(
        ranks=[RankLine(rank=0, compile_time_s=1.0), RankLine(rank=1, compile_time_s=1.0)], divergence=divergence
    )


def test_lists_of_one_length_that_say_other_items_differ() -> None:
    """Run A and run B each have one compile whose collectives differ, not the same one, and
    their ranks diverge in two groups each, not the same two: the counts alone would call them
    alike; each item is matched by its sentence."""
    groups_a = ["rank 0: 1 compile no other rank has ([3/0] f (a.py:1))", "rank 1: lacks [3/0]"]
    groups_b = ["rank 0: 1 compile no other rank has ([4/0] g (a.py:9))", "rank 1: lacks [3/0]"]
    a = _diverging([_mismatch("[0/0]", "all_reduce")], groups_a)
    b = _diverging([_mismatch("[1/0]", "all_gather")], groups_b)
    found = job_diff(a, b, (0, 0), ("runA", "runB"))
    assert found is not None and found.differs
    assert found.lines[1:-1] == [
        "  ranks diverge in 2 groups by compile id sequence in A and in B, not the same groups (1 only in A, "
        "1 only in B)",
        f"    the first only in A: {groups_a[0]}",
        f"    the first only in B: {groups_b[0]}",
        "  compile ids whose collectives differ between ranks: 1 in A, 1 in B (1 only in A, 1 only in B)",
        "    the first only in A: [0/0]: ranks call different collectives: all_reduce",
        "    the first only in B: [1/0]: ranks call different collectives: all_gather",
    ]
    # B saying A's item and one more: only the new one is said, as B's.
    b = _diverging([_mismatch("[0/0]", "all_reduce"), _mismatch("[1/0]", "all_gather")], groups_a)
    found = job_diff(a, b, (0, 0))
    assert found is not None and found.lines[1:-1] == [
        "  compile ids whose collectives differ between ranks: 1 in A, 2 in B (1 only in B)",
        "    the first only in B: [1/0]: ranks call different collectives: all_gather",
    ]
    # The same items in both: alike.
    same = job_diff(a, _diverging([_mismatch("[0/0]", "all_reduce")], groups_a), (0, 0))
    assert same is not None and not same.differs


def test_a_failure_that_went_away_or_moved_to_other_ranks_is_said_first() -> None:
    """ranks.json's first answers (1.42): a line only one run says, or said by other ranks."""

    def answered(*lines: tuple[str, list[int]]) -> JobView:
        view = _diverging([], [])
        said = [JobAnswer(kind=k, compile_id=None, text=f"{k}: x", ranks=r, who=f"ranks {r}") for k, r in lines]
        view.first_answers = JobAnswers(lines=said)
        return view

    found = job_diff(answered(("failure", [0, 2]), ("recompile", [1])), answered(("recompile", [0, 1])), (0, 0))
    assert found is not None and found.differs
    assert found.lines[1:3] == [
        "  first answer only in A: ranks [0, 2]: failure: x",
        "  first answer said by other ranks: recompile: x (ranks [1] in A, ranks [0, 1] in B)",
    ]
    same = job_diff(answered(("failure", [3])), answered(("failure", [3])), (0, 0))
    assert same is not None and not same.differs


def test_a_run_that_numbers_its_compiles_otherwise_says_the_same_divergence() -> None:
    """Run B compiled one more function first, so each later compile id is one higher: the same
    desync of the same functions, said under other ids, is alike (items matched with their compile
    ids masked, not their shapes); a second such item only one side has is still said."""
    graph = "{} forward (_ranks.py:40): ranks traced different graphs: input L_x_ is f32[8, 32] on rank 0, "
    graph += "f32[9, 32] on rank 1"
    group = "rank 3: 1 compile no other rank has ({} <lambda> (_ranks.py:85))"
    a = _diverging([_mismatch("[0/0]", "all_reduce f32[8]")], [group.format("[7/0]"), "rank 1: lacks [7/0]"])
    b = _diverging([_mismatch("[1/0]", "all_reduce f32[8]")], [group.format("[8/0]"), "rank 1: lacks [8/0]"])
    a.divergence.graphs, b.divergence.graphs = [_graphs(graph.format("[4/0]"))], [_graphs(graph.format("[5/0]"))]
    found = job_diff(a, b, (0, 0))
    assert found is not None and not found.differs
    assert found.lines[1] == "  the ranks' divergence, item by item, and stragglers are alike in A and B"
    # Two items alike but for their ids in B, one in A: one only in B.
    b.divergence.graphs.append(_graphs(graph.format("[6/0]")))
    found = job_diff(a, b, (0, 0))
    assert found is not None and found.differs
    assert found.lines[1:3] == [
        "  compile ids whose graphs or code differ between ranks: 1 in A, 2 in B (1 only in B)",
        f"    the first only in B: {graph.format('[6/0]')}",
    ]
    # A shape is not a compile id: another shape is another divergence.
    b.divergence.graphs = [_graphs(graph.format("[5/0]").replace("f32[9, 32]", "f32[10, 32]"))]
    found = job_diff(a, b, (0, 0))
    assert found is not None and found.differs


def test_first_answers_under_other_compile_ids_are_alike() -> None:
    view_a, view_b = _diverging([], []), _diverging([], [])
    for view, cid in ((view_a, "[0/0]"), (view_b, "[2/0]")):
        text = f"first failure: {cid} fn failed at a.py:3: Unsupported: x"
        view.first_answers = JobAnswers(lines=[JobAnswer(kind="failure", text=text, ranks=[0, 1], who="every rank")])
    found = job_diff(view_a, view_b, (0, 0))
    assert found is not None and not found.differs
