"""Cross-rank analyses on real rank folders (written by tlscope) and tlparse's unit test 39."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tlscope.analyse.ranks import compare, table
from tlscope.analyse.ranks.compare import Issue, analyze_execution_order
from tlscope.analyse.ranks.divergence import RankLine, RankOverview
from tlscope.analyse.ranks.rank_summary import RankSummary
from tlscope.pipeline.ranks import run_multi_rank
from tlscope.write.run_options import ParseOptions


def test_execution_order_multi_rank_divergence() -> None:  # tlparse test 39
    orders = {0: ["0/0", "0/1", "0/2"], 1: ["0/1", "0/0", "0/2"]}
    schedules = {
        (0, "0/0"): ["all_reduce"],
        (0, "0/1"): ["all_gather"],
        (1, "0/0"): ["all_reduce"],
        (1, "0/1"): ["broadcast"],
    }
    cache = {(0, "0/0"): "✅", (0, "0/1"): "❌", (1, "0/0"): "✅", (1, "0/1"): "✅"}
    rows = analyze_execution_order(orders, schedules, cache)
    assert len(rows) == 3
    assert rows[0].by_rank == {0: "0/0", 1: "0/1"} and Issue.SCHEDULE_MISMATCH in rows[0].issues
    assert rows[1].by_rank == {0: "0/1", 1: "0/0"} and Issue.CACHE_MISMATCH in rows[1].issues
    assert rows[2].by_rank == {0: "0/2", 1: "0/2"} and rows[2].issues == []


def test_outside_compile_events_do_not_make_compile_ids_diverge() -> None:
    """tlparse flags a divergence when only some ranks logged `[-/-]` events; tlscope does not."""
    a = RankSummary(rank=0, compile_ids=["[-/-]", "[0/0]", "[1/0]"])
    b = RankSummary(rank=1, compile_ids=["[0/0]", "[1/0]"])
    assert compare.compile_id_divergence([a, b]) == [[0, 1]]
    c = RankSummary(rank=2, compile_ids=["[0/0]"])
    assert compare.compile_id_divergence([c, a, b]) == [[0, 1], [2]]


def test_fxhash_thread_id_matches_tlparse(tlparse_bin: Path, tlparse_traces: Path, tmp_path: Path) -> None:
    import json

    src = tmp_path / "in"
    shutil.copytree(tlparse_traces / "inputs" / "multi_rank_runtime", src)
    import subprocess

    out = tmp_path / "ref"
    subprocess.run(
        [str(tlparse_bin), str(src), "--all-ranks-html", "--overwrite", "-o", str(out), "--no-browser"],
        check=True,
        capture_output=True,
    )
    trace = json.loads((out / "chromium_trace_with_runtime.json").read_text("utf-8"))
    tids = {(e["pid"], e["args"]["graph"]): e["tid"] for e in trace if e.get("cat") == "runtime"}
    assert tids
    for (rank, graph), tid in tids.items():
        assert compare.fxhash_rank_graph(rank, graph) == tid


@pytest.fixture(scope="module")
def runtime_ranks(tmp_path_factory: pytest.TempPathFactory) -> list[RankSummary]:
    from helpers import require_shared

    traces = require_shared()
    base = tmp_path_factory.mktemp("ranks")
    shutil.copytree(traces / "inputs" / "multi_rank_runtime", base / "in")
    return run_multi_rank(base / "in", base / "out", ParseOptions(), jobs=2, echo=lambda _: None)


def test_rank_table_marks_the_rank_that_compiled_more(runtime_ranks: list[RankSummary]) -> None:
    rows = {row.rank: row for row in table.rank_table(runtime_ranks)}
    assert [r for r in rows] == list(range(7))
    # Ranks 0-4 compiled [0/0]..[0/3]; ranks 5 and 6 only [0/0] and [0/1].
    assert [rows[r].line.compiles for r in range(7)] == [4, 4, 4, 4, 4, 2, 2]
    assert "fewer compilations" in rows[5].marks and "fewer compilations" in rows[6].marks
    assert not any("compilations" in m for r in range(5) for m in rows[r].marks)
    slowest = max(range(7), key=lambda r: rows[r].line.compile_time_s)
    assert "slowest" in rows[slowest].marks
    assert sum("slowest" in rows[r].marks for r in range(7)) == 1
    assert rows[0].line.cache_misses == 8 and rows[5].line.cache_misses == 4
    assert rows[0].line.recompiles == 3 and rows[0].line.failures == 0


def test_rank_table_marks_nothing_for_identical_ranks() -> None:
    lines = [RankLine(rank=r, compiles=2, compile_time_s=1.5) for r in range(3)]
    same = [RankSummary(rank=line.rank, overview=RankOverview(line=line)) for line in lines]
    assert all(row.marks == [] for row in table.rank_table(same))


def test_compile_id_matrix_shows_which_ranks_compiled_each_id(runtime_ranks: list[RankSummary]) -> None:
    matrix = {row.compile_id: row for row in table.compile_id_matrix(runtime_ranks)}
    assert list(matrix) == ["[0/0]", "[0/1]", "[0/2]", "[0/3]"]
    assert not matrix["[0/0]"].odd and not matrix["[0/1]"].odd
    row = matrix["[0/2]"]
    assert row.odd
    assert row.cells[5] is None and row.cells[6] is None
    cell = row.cells[0]
    assert cell is not None and cell.status == "ok" and cell.compile_time_s is not None and cell.compile_time_s > 0


def test_compile_id_matrix_is_in_natural_order() -> None:
    ranks = [RankSummary(rank=0, compile_ids=["[0/10]", "[0/2]", "[!1/0/0]", "[1/0]"])]
    assert [r.compile_id for r in table.compile_id_matrix(ranks)] == ["[0/2]", "[0/10]", "[1/0]", "[!1/0/0]"]


def test_landing_page_has_rank_table_and_matrix(runtime_ranks: list[RankSummary], tmp_path: Path) -> None:
    from tlscope.write.landing.writer import write_landing
    from tlscope.write.outdir import OutputDir

    out = OutputDir(tmp_path / "landing", overwrite=False)
    with out:
        write_landing(out, runtime_ranks, header="")
    page = (tmp_path / "landing" / "index.html").read_text("utf-8")
    assert '<table id="rank-table">' in page and '<table id="compile-id-matrix">' in page
    assert "fewer compilations" in page and "slowest" in page


def test_landing_escapes_log_derived_text(tmp_path: Path) -> None:
    from tlscope.write.landing.writer import write_landing
    from tlscope.write.outdir import OutputDir

    evil = RankSummary(rank=0, compile_ids=["[0/0]"], errors=["<script>alert(1)</script>"])
    out = OutputDir(tmp_path / "landing", overwrite=False)
    with out:
        write_landing(out, [evil, RankSummary(rank=1)], notes=["<img src=x>"])
    page = (tmp_path / "landing" / "index.html").read_text("utf-8")
    assert "<script>alert" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "<img src=x>" not in page


def test_stragglers_are_above_the_median_by_the_factor_and_the_margin() -> None:
    from tlscope.analyse.ranks.stragglers import FACTOR, MARGIN_S, find_stragglers

    times = [(0, 40.0), (1, 41.0), (2, 39.0), (3, 80.0), (4, 49.5), (5, 40.5), (6, 51.0)]
    found = find_stragglers(times)
    assert found.median_compile_time_s == 41.0
    # 80 s passes both; 51 s (10 s over) and 49.5 s are under 1.25 x 41 = 51.25 s.
    assert [(s.rank, s.over_median_s, s.ratio) for s in found.ranks] == [(3, 39.0, 1.951)]
    assert (found.factor, found.margin_s) == (FACTOR, MARGIN_S)
    # A factor alone would flag a 0.3 s rank beside 0.1 s ones: the margin keeps it out.
    assert find_stragglers([(0, 0.1), (1, 0.1), (2, 0.3)]).ranks == []
    assert find_stragglers([(0, 0.0), (1, 2.0), (2, 0.0)]).ranks[0].ratio is None
    assert find_stragglers([]).ranks == []


def _forward_compile_seconds(log: Path) -> float:
    """A rank's compile time read straight from its log: its `compilation_metrics` records' frame
    compile time (else their span), summed, as FORMAT.md's ranks.json `compile_time_s` says."""
    import gzip
    import json

    total = 0.0
    with gzip.open(log, "rt", encoding="utf-8") as lines:
        for line in lines:
            _head, sep, body = line.partition("] ")
            if not sep or not body.startswith('{"compilation_metrics"'):
                continue
            metrics = json.loads(body)["compilation_metrics"]
            if metrics.get("entire_frame_compile_time_s") is not None:
                total += float(metrics["entire_frame_compile_time_s"])
            elif metrics.get("duration_us") is not None:
                total += metrics["duration_us"] / 1e6
    return total


@pytest.mark.parametrize("job", ["ranks_diverge_4", "ranks_same_4"])
def test_median_rank_is_the_lower_middle_rank_by_compile_time(job: str, tmp_path: Path) -> None:
    """ranks.json's `stragglers.median_rank` names the rank the rule names, recomputed here from the logs."""
    import json
    import re
    import subprocess
    import sys

    folder = Path(__file__).resolve().parents[1] / "corpus" / "traces" / job
    times = {
        int(re.search(r"_rank_(\d+)_", log.name).group(1)): _forward_compile_seconds(log)  # type: ignore[union-attr]
        for log in folder.glob("*.log.gz")
    }
    assert len(times) == 4 and all(t > 0 for t in times.values())
    ordered = sorted(times, key=lambda rank: (times[rank], rank))
    expected = ordered[(len(ordered) - 1) // 2]
    subprocess.run([sys.executable, "-m", "tlscope", str(folder), "-o", str(tmp_path / "out")], check=True)
    stragglers = json.loads((tmp_path / "out" / "ranks.json").read_text("utf-8"))["stragglers"]
    assert stragglers["median_rank"] == expected
    lines = json.loads((tmp_path / "out" / "ranks.json").read_text("utf-8"))["ranks"]
    assert {line["rank"]: line["compile_time_s"] for line in lines} == pytest.approx(times, abs=1e-5)


def test_median_rank_breaks_ties_by_the_lower_rank_and_takes_the_lower_middle() -> None:
    from tlscope.analyse.ranks.stragglers import find_stragglers

    assert find_stragglers([(3, 5.0), (1, 5.0), (2, 5.0), (0, 5.0)]).median_rank == 1
    assert find_stragglers([(0, 4.0), (1, 1.0), (2, 3.0), (3, 2.0)]).median_rank == 3
    assert find_stragglers([(0, 9.0), (1, 1.0), (2, 3.0)]).median_rank == 2
    assert find_stragglers([(7, 2.0)]).median_rank == 7
    assert find_stragglers([]).median_rank is None


def test_a_sentences_ranks_are_said_as_ranges_when_they_run() -> None:
    """Short lists as they are; runs of 4 or more as ranges; past 11 pieces the first 9, "…", the
    last, and the count (a 1,000-rank job's 10 diverging ranks split the rest into 11 ranges)."""
    from tlscope.analyse.ranks.words import rank_list as _rank_list

    assert _rank_list([0, 1, 2]) == "0, 1, 2"
    assert _rank_list([0, 1, 2, 3, 5, 7, 8, 9, 10]) == "0-3, 5, 7-10"
    odd = (310, 366, 414, 488, 597, 802, 849, 913, 940, 991)
    rest = [r for r in range(1000) if r not in odd]
    assert _rank_list(rest) == (
        "0-309, 311-365, 367-413, 415-487, 489-596, 598-801, 803-848, 850-912, 914-939, 941-990, 992-999 (990 ranks)"
    )
    assert _rank_list(list(range(0, 40, 2))) == "0, 2, 4, 6, 8, 10, 12, 14, 16, …, 38 (20 ranks)"
