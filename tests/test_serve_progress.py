"""A job's parse progress in `tlscope serve`: counted per finished rank, from typed JSON lines.

Before, the server counted every line the parse echoed that started with `rank`, so the four
"Processing rank N" lines printed before any rank started, plus the closing lines, made a
4-rank job report "8 rank(s) done" (issue 19).
"""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

from helpers import CORPUS

from tlscope.pipeline.parse import parse
from tlscope.serve.cache import Cache
from tlscope.serve.progress import DECODER, ENCODER, Progress
from tlscope.serve.traces import ServedTrace, Traces
from tlscope.write.run_options import ParseOptions


def test_a_four_rank_job_served_reports_each_rank_once_as_it_finishes(tmp_path: Path) -> None:
    job = tmp_path / "job"
    shutil.copytree(CORPUS / "ranks_same_4", job)
    seen: list[dict[str, int]] = []
    traces = Traces(Cache(tmp_path / "cache", 1 << 30), {}, on_progress=lambda t: seen.append(dict(t.progress)))
    (trace,) = traces.add_source(str(job))
    asyncio.run(traces.ready(trace))
    assert trace.state == "ready"
    counts = [p["ranks_done"] for p in seen if "ranks_done" in p]
    assert counts == [0, 1, 2, 3, 4]  # never more ranks than the job has, one step per rank
    assert {p.get("ranks_total") for p in seen} == {4}  # how many there are, from the start
    finished = [p["last_rank"] for p in seen if "last_rank" in p]
    assert sorted(finished) == [0, 1, 2, 3]
    assert finished == trace.ranks_finished  # in the order the lines came: the order they finished


def test_only_progress_lines_count(tmp_path: Path) -> None:
    """Text, a repeated rank and a malformed line change nothing; bytes and ranks are typed."""
    seen: list[dict[str, int]] = []
    traces = Traces(Cache(tmp_path / "cache", 1 << 20), {}, on_progress=lambda t: seen.append(dict(t.progress)))
    trace = ServedTrace("t", "t", "log")
    for raw in (
        b"rank 0\n",
        b"Processing rank 1 -> out/rank_1\n",
        ENCODER.encode(Progress(rank_done=2)),
        ENCODER.encode(Progress(rank_done=2)),
        b'{"rank_done": "3"}',
        ENCODER.encode(Progress(bytes=5, total=10)),
    ):
        traces._progress(trace, raw)
    assert seen == [{"ranks_done": 1, "last_rank": 2}, {"bytes": 5, "total": 10}]
    assert DECODER.decode(ENCODER.encode(Progress(rank_done=7))).rank_done == 7


def test_parse_tells_each_rank_once_when_it_finishes(tmp_path: Path) -> None:
    done: list[int] = []
    parse(CORPUS / "ranks_diverge_2", tmp_path / "out", ParseOptions(), jobs=2, on_rank=done.append)
    assert sorted(done) == [0, 1]
    serial: list[int] = []
    parse(CORPUS / "ranks_diverge_2", tmp_path / "out1", ParseOptions(), jobs=1, on_rank=serial.append)
    assert serial == [0, 1]
