"""Which two ranks `tlscope diff JOB` compares (analyse/ranks/pair.py): the first item of the
job's divergence, in the order the text views say it, else the slowest straggler against the
median rank; an item without two sides (a ranks.json another writer made) is passed over."""

from __future__ import annotations

from tlscope.analyse.ranks.divergence import Divergence, JobView, RankGroup
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
