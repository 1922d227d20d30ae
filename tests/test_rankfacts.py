"""A multi-rank run summarises each rank from its parse (pipeline/rankfacts.py), never reading the
rank's folder back; tests/rankdir.py reads a folder on disk. Both must say the same of a rank."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import CORPUS, TLPARSE_TRACES
from rankdir import summarise_folder

from tlscope.pipeline.parse import parse
from tlscope.write.report.options import ReportOptions
from tlscope.write.run_options import ParseOptions

_CASES = [
    *(CORPUS / name for name in ("ranks_diverge_2", "ranks_same_2", "muxed/muxed.log.gz")),
    *(
        TLPARSE_TRACES / rel
        for rel in (
            "inputs/multi_rank_runtime",
            "inputs/multi_rank_schedule",
            "inputs/collectives_parity",
            "inputs/multi_rank_messy_input",
            "graph_exec_order_tests",
        )
    ),
]


def _id(path: Path) -> str:
    return path.name


@pytest.mark.parametrize("plain_text", [False, True], ids=["html", "plain"])
@pytest.mark.parametrize("source", _CASES, ids=_id)
def test_the_parse_summarises_each_rank_as_its_folder_reads(source: Path, plain_text: bool, tmp_path: Path) -> None:
    if not source.exists():
        pytest.skip(f"{source} is absent (shared traces not found)")
    options = ParseOptions(report=ReportOptions(plain_text=plain_text))
    parsed = parse(source, tmp_path / "out", options, all_ranks=True, jobs=1)
    assert parsed.ranks and all(r.parsed for r in parsed.ranks)
    for summary in parsed.ranks:
        assert summary == summarise_folder(summary.rank, tmp_path / "out" / f"rank_{summary.rank}"), summary.rank


def test_what_the_summaries_hold_is_not_vacuous(tmp_path: Path) -> None:
    """The shared traces exercise every part: runtimes, schedules, parity, execution order, metrics."""
    found: dict[str, bool] = {}
    for source in _CASES:
        if not source.exists():
            pytest.skip(f"{source} is absent (shared traces not found)")
        for r in parse(source, tmp_path / source.name, all_ranks=True, jobs=1).ranks:
            for part in ("runtimes", "schedules", "parity", "compiles", "tensor_meta", "cache_pattern"):
                found[part] = found.get(part, False) or bool(getattr(r, part))
            found["execution_order"] = found.get("execution_order", False) or r.execution_order is not None
    assert all(found.values()), found
