"""A job's parent keeps no rank's summary: its memory must not grow with what each rank reports.

The rank workers are replaced by `_fat_rank` (forked with the pool, so the workers run it): a
summary of ~50 KB as Python objects per rank, which every pass of the landing page reads.
Held by the parent (a list of results, futures waiting in rank order, a landing that sorts or
filters the summaries into a list) that is ~50 KB more per rank; spilled and read back a rank at
a time (pipeline/rank_store.py, write/landing/writer.py) it is a few hundred bytes.
"""

from __future__ import annotations

import json
import tracemalloc
from pathlib import Path

import pytest

from tlscope.analyse.ranks.divergence import RankLine, RankOverview
from tlscope.analyse.ranks.rank_summary import CompileInfo, GraphRuntime, RankSummary
from tlscope.pipeline import ranks as ranks_module
from tlscope.pipeline.rank_store import RankSummaries
from tlscope.pipeline.ranks import RankResult, parse_ranks
from tlscope.write.context import SinkFactory
from tlscope.write.run_options import ParseOptions

IDS = [f"[{i}/0]" for i in range(8)]


def _fat_rank(
    log: str, rank: int, folder: str, options: ParseOptions, sinks: SinkFactory | None, landing: bool = True
) -> RankResult:
    """A rank's result with a big summary (no log read): what the parent must not keep."""
    Path(folder).mkdir(parents=True, exist_ok=True)
    line = RankLine(rank=rank, compiles=len(IDS), compile_time_s=1.0 + rank % 3)
    overview = RankOverview(line=line, compile_ids=IDS, statuses=dict.fromkeys(IDS, "ok"))
    summary = RankSummary(
        rank=rank,
        compile_ids=IDS,
        compiles={c: CompileInfo(status="ok", compile_time_s=0.5 + rank) for c in IDS},
        # ~480 entries: the bulk of the summary, read by the landing and needed by no fold.
        dir_to_cid={f"-_{i}_0_0/graph_{j}_of_rank_{rank}": IDS[i] for i in range(8) for j in range(60)},
        cache_pattern="✅" * 400,
        chromium_events=1,
        overview=overview,
    )
    return RankResult(summary)


def _peak(tmp_path: Path, ranks: int) -> tuple[int, Path]:
    """The parent's peak traced memory over a job of `ranks` ranks, above its start."""
    logs = tmp_path / f"logs{ranks}"
    logs.mkdir(parents=True)
    for rank in range(ranks):
        (logs / f"dedicated_log_torch_trace_rank_{rank}_x.log").write_bytes(b"")
    out = tmp_path / f"out{ranks}"
    tracemalloc.start()
    try:
        start = tracemalloc.get_traced_memory()[0]
        summaries = parse_ranks(logs, out, ParseOptions(), jobs=2, echo=lambda _: None)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert isinstance(summaries, RankSummaries) and [s.rank for s in summaries] == list(range(ranks))
    return peak - start, out


def _growth_per_rank(tmp_path: Path, small: int, big: int) -> tuple[float, Path]:
    """The parent's peak growth a rank between a job of `small` and one of `big` ranks.

    A peak also holds whatever results wait for the parent at that instant, which depends on how
    the two workers and the parent interleave: one run's peak moved by ~1 MB either way (CI saw
    2.6 KB a rank from a single pair). A first job takes the imports and caches; then each size
    runs three times and its lowest peak counts, the one least inflated by timing.
    """
    _peak(tmp_path / "warm", 8)
    low = min(_peak(tmp_path / f"s{i}", small)[0] for i in range(3))
    highs = [_peak(tmp_path / f"b{i}", big) for i in range(3)]
    high, out = min(highs, key=lambda pair: pair[0])
    return (high - low) / (big - small), out


def test_the_parent_keeps_no_rank_summary(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ranks_module, "parse_rank", _fat_rank)
    one = len(_fat_rank("", 0, str(tmp_path / "probe"), ParseOptions(), None).summary.dir_to_cid)
    assert one == 480
    per_rank, out = _growth_per_rank(tmp_path, 24, 120)
    # Held, each summary is ~50 KB (its dir_to_cid alone ~45 KB); kept as a spill position, a
    # rank line and a few numbers, ~1 KB. The bound leaves timing room and still fails a parent
    # that keeps a tenth of each summary.
    assert per_rank < 5_000, f"the parent grew {per_rank:.0f} bytes a rank"
    written = json.loads((out / "multi_rank_summary.json").read_text("utf-8"))
    assert [r["rank"] for r in written] == list(range(120)) and len(written[7]["dir_to_cid"]) == 480
    page = (out / "index.html").read_text("utf-8")
    assert page.count('<a href="rank_119/index.html">Rank 119</a>') == 2  # the list and the rank table
    assert len(json.loads((out / "ranks.json").read_text("utf-8"))["ranks"]) == 120


def _runtime_rank(
    log: str, rank: int, folder: str, options: ParseOptions, sinks: SinkFactory | None, landing: bool = True
) -> RankResult:
    """A rank that logged the runtime estimations of 4 graphs of 100 ops each (no log read)."""
    Path(folder).mkdir(parents=True, exist_ok=True)
    runtimes = [
        GraphRuntime(
            graph=f"-_{g}_0_0", ops=[(f"aten.op_{i}_of_graph_{g}", 1000.0 * (1 + i % 7) + rank) for i in range(100)]
        )
        for g in range(4)
    ]
    line = RankLine(rank=rank, compiles=1, compile_time_s=1.0)
    overview = RankOverview(line=line, compile_ids=IDS[:1], statuses={IDS[0]: "ok"})
    return RankResult(RankSummary(rank=rank, runtimes=runtimes, chromium_events=1, overview=overview))


def test_the_runtime_estimations_are_written_a_rank_at_a_time(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """runtime_estimations.json and chromium_trace_with_runtime.json were made as whole-job lists
    (every rank's ops as dicts, ~0.3 MB a rank here) before being written."""
    monkeypatch.setattr(ranks_module, "parse_rank", _runtime_rank)
    per_rank, out = _growth_per_rank(tmp_path, 16, 64)
    # Held as dicts, ~0.3 MB a rank.
    assert per_rank < 5_000, f"the parent grew {per_rank:.0f} bytes a rank"
    estimations = json.loads((out / "runtime_estimations.json").read_text("utf-8"))
    assert [(e["rank"], e["graph"]) for e in estimations] == [(r, f"-_{g}_0_0") for r in range(64) for g in range(4)]
    assert estimations[-1]["ops"][-1] == {"name": "aten.op_99_of_graph_3", "estimated_runtime_ns": 2063.0}
    trace = json.loads((out / "chromium_trace_with_runtime.json").read_text("utf-8"))
    ops = [e for e in trace if e["ph"] == "X"]
    assert len(ops) == 64 * 400 and [e["pid"] for e in ops[::400]] == list(range(64))
    names = [e for e in trace if e["ph"] == "M"]
    assert len(names) == 64 * 2 + 64 * 4 * 2 and trace[len(ops)]["args"] == {"name": "Rank 0"}
    page = (out / "index.html").read_text("utf-8")
    assert "ms delta" in page  # every rank estimated 4 graphs: the page compares them


def test_summaries_come_back_in_rank_order_as_they_were() -> None:
    store = RankSummaries()
    made = [RankSummary(rank=r, compile_ids=[f"[{r}/0]"], errors=["x"] * (r % 2)) for r in (5, 0, 3, 1)]
    for summary in made:
        store.add(summary)
    assert [s.rank for s in store] == [0, 1, 3, 5] and len(store) == 4
    assert store[2] == made[2] and store[-1] == made[0] and store[1:3] == [made[3], made[2]]
    assert list(store) == sorted(made, key=lambda s: s.rank)  # a second pass reads them again
    assert store == sorted(made, key=lambda s: s.rank) and store != made and store != made[:3]
    store.close()
