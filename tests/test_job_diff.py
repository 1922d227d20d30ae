"""Two jobs' ranks compared (analyse/ranks/job_diff.py): from each side's ranks.json view, the
lists whose counts differ and the stragglers; the compile time a rank is informative only."""

from __future__ import annotations

from tlscope.analyse.ranks.divergence import Divergence, JobView, RankLine
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
    assert (
        same.lines[1]
        == "  the ranks' divergence (what differs between ranks, counted) and stragglers are alike in A and B"
    )
    assert (same.a, same.b) == (JobSide(ranks=2, compared=1), JobSide(ranks=2, compared=1))


def test_one_side_a_single_trace_and_neither_a_job() -> None:
    found = job_diff(None, _view([1.0, 1.0], []), (None, 0))
    assert found is not None and found.differs
    assert found.lines == ["Jobs: A is one trace, B has 2 ranks; compared below: A with rank 0 of B."]
    assert job_diff(None, None, (None, None)) is None
