"""Which two ranks `tlscope diff JOB` compares (analyse/ranks/pair.py): the first item of the
job's divergence, in the order the text views say it, else the slowest straggler against the
median rank; an item without two sides (a ranks.json another writer made) is passed over."""

from __future__ import annotations

from tlscope.analyse.ranks.divergence import Divergence, JobView, RankGroup, RankLine
from tlscope.analyse.ranks.job_answers import JobAnswer, JobAnswers
from tlscope.analyse.ranks.pair import RankPair, pair_to_compare
from tlscope.analyse.ranks.settings_divergence import SettingsMismatch
from tlscope.analyse.ranks.stragglers import Straggler, Stragglers


def _stragglers(median_rank: int | None, slow: list[int]) -> Stragglers:
    ranks = [Straggler(rank=r, compile_time_s=12.5, over_median_s=8.0, ratio=2.8) for r in slow]
    rule = "above 1.25x the median and 1 s"
    return Stragglers(
        rule=rule, factor=1.25, margin_s=1.0, median_compile_time_s=4.5, median_rank=median_rank, ranks=ranks
    )


def test_the_slowest_straggler_is_compared_with_the_median_rank_when_nothing_differs() -> None:
    view = JobView(ranks=[], divergence=Divergence(diverges=False), stragglers=_stragglers(5, [7, 2]))
    assert pair_to_compare(view) == RankPair(
        ranks=(5, 7), kind="straggler", why="rank 7 compiled slowest, 12.50 s against the median rank's 4.50 s"
    )
    assert pair_to_compare(JobView(ranks=[], divergence=Divergence(diverges=False), stragglers=None)) is None
    assert (
        pair_to_compare(JobView(ranks=[], divergence=Divergence(diverges=False), stragglers=_stragglers(None, [7])))
        is None
    )


def test_the_most_ranks_group_is_the_reference_and_one_sided_items_are_passed_over() -> None:
    groups = [
        RankGroup(ranks=[6], sentence="rank 6: 1 compile no other rank has"),
        RankGroup(ranks=[3, 1, 2], sentence="ranks 1-3 lack 1 compile"),
    ]
    lone = SettingsMismatch(ranks=[4], than=[], sentence="rank 4 compiled under other settings")
    divergence = Divergence(diverges=True, groups=groups, settings=[lone])
    view = JobView(ranks=[], divergence=divergence, stragglers=_stragglers(2, [6]))
    # The groups come before the settings in every text view; the settings item has one side.
    assert pair_to_compare(view) == RankPair(ranks=(1, 6), kind="divergence", why="they compiled different compile ids")
    divergence.diverges = False
    # The compile ids agree now; the settings item has no reference side: the straggler is next.
    assert pair_to_compare(view) == RankPair(
        ranks=(2, 6), kind="straggler", why="rank 6 compiled slowest, 12.50 s against the median rank's 4.50 s"
    )
    lone.than = [0, 3]
    assert pair_to_compare(view) == RankPair(ranks=(0, 4), kind="divergence", why="they compiled under other settings")


def _failing(lines: list[tuple[list[int], str]], ranks: int, groups: list[RankGroup] | None = None) -> JobView:
    said = [
        JobAnswer(kind="failure", compile_id="[2/0]", text=f"first failure: {text}", ranks=r, who="w")
        for r, text in lines
    ]
    said.append(
        JobAnswer(kind="graph_break", compile_id="[1/0]", text="most frequent graph break: b", ranks=[0], who="w")
    )
    divergence = Divergence(diverges=bool(groups), groups=groups or [])
    lines_ = [RankLine(rank=n) for n in range(ranks)]
    return JobView(ranks=lines_, divergence=divergence, first_answers=JobAnswers(lines=said))


def test_ranks_that_failed_otherwise_than_the_most_ranks_come_first() -> None:
    """ranks.json's first answers: a rank that failed where the rest did not is compared with the
    lowest of the rest, before the divergence the failure caused; ranks failing two ways, the
    most ranks' failure against the next; every rank failing alike says no pair of its own."""
    groups = [RankGroup(ranks=[5], sentence="rank 5: lacks 3 compiles"), RankGroup(ranks=[0, 1, 2, 3, 4], sentence="x")]
    found = pair_to_compare(_failing([([5], "[2/0] f failed: RuntimeError: oom")], 6, groups))
    assert found == RankPair(
        ranks=(0, 5),
        kind="failure",
        why="rank 5 failed where rank 0 did not (first failure: [2/0] f failed: RuntimeError: oom)",
    )
    found = pair_to_compare(_failing([([0, 1, 2], "a"), ([3], "b")], 4))
    assert found == RankPair(
        ranks=(0, 3),
        kind="failure",
        why="they failed differently (first failure: a on rank 0; first failure: b on rank 3)",
    )
    found = pair_to_compare(_failing([([0, 1, 2], "a")], 6))
    assert found == RankPair(ranks=(3, 0), kind="failure", why="rank 0 failed where rank 3 did not (first failure: a)")
    # Every rank failed alike: the divergence, here its groups, says the pair.
    found = pair_to_compare(
        _failing(
            [([0, 1, 2, 3], "a")], 4, [RankGroup(ranks=[1], sentence="s"), RankGroup(ranks=[0, 2, 3], sentence="t")]
        )
    )
    assert found is not None and found.kind == "divergence" and found.ranks == (0, 1)
