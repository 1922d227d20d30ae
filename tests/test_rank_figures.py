"""One definition of a rank's figures (issue 19): each rank's compiles and compile time are what its
log's compilation_metrics records add up to, and every place that shows them (ranks.json, the landing
page's table, `tlscope summary JOB --json`, `tlscope.load(job).ranks`, the stragglers' median,
multi_rank_summary.json) shows the same numbers, on real multi-rank traces."""

from __future__ import annotations

import gzip
import html
import io
import json
import re
import statistics
from contextlib import redirect_stdout
from pathlib import Path
from typing import Any

import msgspec
import pytest
from helpers import CORPUS, TLPARSE_TRACES

import tlscope
from tlscope.cli import main
from tlscope.pipeline.parse import parse

#: A corpus job whose ranks compiled different ids in different times, and tlparse's job with a
#: failed rank, recompiles and cache hits.
JOBS = {"ranks_diverge_4": CORPUS / "ranks_diverge_4", "multi_rank_logs": TLPARSE_TRACES / "inputs" / "multi_rank_logs"}
_RANK_IN_NAME = re.compile(r"rank_(\d+)")
_TABLE_ROW = re.compile(r'<tr[^>]*><td><a href="rank_(\d+)/index.html">Rank \d+</a></td>((?:<td>[^<]*</td>){7})')


def metrics_records(log: Path) -> list[dict[str, Any]]:
    """The log's compilation_metrics objects, read with nothing of tlscope: the envelope is the JSON
    after the glog prefix's `] `; payload lines (tab-indented) are skipped."""
    opener = gzip.open if log.suffix == ".gz" else open
    found = []
    with opener(log, "rt", encoding="utf-8") as lines:
        for line in lines:
            _, sep, body = line.partition("] ")
            if not sep or line.startswith("\t") or '"compilation_metrics"' not in body:
                continue
            envelope = json.loads(body)
            if isinstance(envelope.get("compilation_metrics"), dict):
                found.append(envelope["compilation_metrics"])
    return found


def expected_figures(job: Path) -> dict[int, tuple[int, float]]:
    """rank -> (compiles, compile time): the count of its metrics records and the sum of their
    `entire_frame_compile_time_s` (`duration_us` where that is absent, as compiles.json's `time_s`)."""
    figures = {}
    for log in sorted(p for p in job.iterdir() if _RANK_IN_NAME.search(p.name)):
        records = metrics_records(log)
        seconds = [
            r["entire_frame_compile_time_s"]
            if r.get("entire_frame_compile_time_s") is not None
            else (r.get("duration_us") or 0) / 1e6
            for r in records
        ]
        figures[int(_RANK_IN_NAME.findall(log.name)[-1])] = (len(records), round(sum(seconds), 6))
    return figures


@pytest.fixture(scope="module", params=sorted(JOBS))
def job(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    logs = JOBS[request.param]
    if not logs.is_dir():
        pytest.skip(f"{logs} not found (the shared traces are beside the repository)")
    out = tmp_path_factory.mktemp(request.param) / "out"
    parse(logs, out, all_ranks=True, jobs=1)
    return logs, out


def _summary_ranks(out: Path) -> list[dict[str, Any]]:
    printed = io.StringIO()
    with redirect_stdout(printed):
        assert main(["summary", str(out), "--json"]) == 0
    ranks: list[dict[str, Any]] = json.loads(printed.getvalue())["ranks"]
    return ranks


def _landing_rows(out: Path) -> dict[int, list[str]]:
    page = (out / "index.html").read_text("utf-8")
    rows = {
        int(rank): [html.unescape(c) for c in re.findall(r"<td>([^<]*)</td>", cells)]
        for rank, cells in _TABLE_ROW.findall(page)
    }
    assert rows, "the landing page has no rank table"
    return rows


def test_a_ranks_compiles_and_compile_time_are_its_logs_metrics_records(job: tuple[Path, Path]) -> None:
    logs, out = job
    lines = json.loads((out / "ranks.json").read_text("utf-8"))["ranks"]
    assert {line["rank"]: (line["compiles"], line["compile_time_s"]) for line in lines} == expected_figures(logs)


def test_every_consumer_shows_the_same_figures(job: tuple[Path, Path]) -> None:
    _, out = job
    lines = json.loads((out / "ranks.json").read_text("utf-8"))["ranks"]
    assert len(lines) > 1
    assert _summary_ranks(out) == lines
    assert [msgspec.to_builtins(line) for line in tlscope.load(out).ranks] == lines
    behind_the_page = json.loads((out / "multi_rank_summary.json").read_text("utf-8"))
    assert [r["overview"]["line"] for r in behind_the_page if r["parsed"]] == lines
    # `stats`, the file's older names for the same figures.
    stats = [{"rank": r["rank"], "compiles": r["stats"].pop("compilations"), **r["stats"]} for r in behind_the_page]
    assert stats == lines
    rows = _landing_rows(out)
    for line in lines:
        shown = [line["compiles"], f"{line['compile_time_s']:.3f}", line["graph_breaks"], line["recompiles"]]
        shown += [line["cache_hits"], line["cache_misses"], line["failures"]]
        assert rows[line["rank"]] == [str(v) for v in shown], f"rank {line['rank']}"
    stragglers = tlscope.load(out).stragglers
    assert stragglers is not None
    assert stragglers.median_compile_time_s == round(statistics.median(line["compile_time_s"] for line in lines), 6)
    assert {s.rank: s.compile_time_s for s in stragglers.ranks}.items() <= {
        line["rank"]: line["compile_time_s"] for line in lines
    }.items()
