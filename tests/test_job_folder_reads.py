"""Reading a job's folder rank by rank costs each rank once, not the whole job each time.

`OutputFolder.rank(n)` checked `n` against the job's ranks by reading them again (the whole
multi_rank_summary.json decoded, or the folder listed and every rank's raw.jsonl looked for), and
every `Trace` of a rank opened the job afresh: a loop over a job's ranks (`tlscope.load(job).ranks`
of a job without ranks.json, what `tlscope.load` and `summary` of a job's logs give, or a user's
`for n in t.rank_numbers: t.rank(n)`) made O(ranks²) file probes. Counted here on a 64-rank
folder made of a real 2-rank job's rank folders (hard links), as file probes, never as time.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from helpers import CORPUS
from msgspec.structs import replace

import tlscope
from tlscope.api import Trace, TraceError
from tlscope.format import folder as folder_module
from tlscope.format import layout
from tlscope.format.errors import FormatError
from tlscope.pipeline.parse import parse
from tlscope.write.landing.jsonout import pretty

RANKS = 64


def _job(tmp_path: Path, *, summary: bool) -> Path:
    """A 64-rank job's folder (rank r: the real rank r % 2 of ranks_same_2), without ranks.json;
    with a multi_rank_summary.json listing the ranks when `summary`, as a landing page writes."""
    parsed = tmp_path / "parsed"
    parse(CORPUS / "ranks_same_2", parsed, jobs=1, report=False)
    job = tmp_path / ("job_listed" if summary else "job")
    job.mkdir()
    for rank in range(RANKS):
        source, target = parsed / layout.rank_dir(rank % 2), job / layout.rank_dir(rank)
        target.mkdir()
        for file in source.iterdir():
            if file.is_file():
                os.link(file, target / file.name)
    if summary:
        listed = [{"rank": rank, "parsed": True} for rank in range(RANKS)]
        (job / layout.MULTI_RANK_SUMMARY).write_text(pretty(listed), "utf-8")
    return job


class Probes:
    """Counts the file probes the layout rules make on local folders."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.count = 0
        for name in ("is_file", "read", "subfolders"):
            monkeypatch.setattr(folder_module.LocalFiles, name, self._counted(getattr(folder_module.LocalFiles, name)))

    def _counted(self, probe):  # type: ignore[no-untyped-def]
        def counted(files, *args):  # type: ignore[no-untyped-def]
            self.count += 1
            return probe(files, *args)

        return counted


@pytest.mark.parametrize("summary", [False, True], ids=["listed by folders", "listed by its summary"])
def test_every_rank_of_a_job_read_costs_the_job_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, summary: bool
) -> None:
    job = _job(tmp_path, summary=summary)
    probes = Probes(monkeypatch)
    # Without a summary it is what `tlscope.load` of a job's logs reads (its own parse, no landing).
    trace = tlscope.load(job) if summary else Trace(job)
    lines = trace.ranks  # no ranks.json: folded from every rank's compiles.json, a rank at a time
    others = [trace.rank(n) for n in trace.rank_numbers]
    last = next(trace.events(rank=RANKS - 1))
    assert [line.rank for line in lines] == list(range(RANKS)) == [t.current_rank for t in others]
    assert replace(lines[2], rank=0) == lines[0] and replace(lines[3], rank=1) == lines[1] and lines[0].compiles > 0
    assert last == next(trace.rank(1).events())
    # Reading the ranks once is a probe per rank (its raw.jsonl) and a few for the folder; the
    # old code read them again for each rank's Trace and each OutputFolder.rank: ~2 x 64 x 66.
    assert probes.count <= RANKS + 10, f"{probes.count} file probes for a {RANKS}-rank job"


def test_a_folder_read_once_still_refuses_a_rank_it_lacks(tmp_path: Path) -> None:
    job = _job(tmp_path, summary=True)
    top = folder_module.OutputFolder(job)
    assert top.rank(RANKS - 1).path == job / layout.rank_dir(RANKS - 1)
    with pytest.raises(FormatError, match=f"has no rank {RANKS}"):
        top.rank(RANKS)
    with pytest.raises(TraceError, match="has no rank 99"):
        tlscope.load(job).rank(99)
