"""What a PATH is, decided once (pipeline/classify.py, issue 19), on real corpus traces."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import CORPUS

from tlscope.pipeline.classify import InputKind, classify
from tlscope.pipeline.parse import parse


def test_each_kind_of_path(tmp_path: Path) -> None:
    simple = next((CORPUS / "simple").glob("*.log.gz"))
    muxed = CORPUS / "muxed" / "muxed.log.gz"
    assert classify(simple).kind is InputKind.LOG and classify(simple).logs == (simple,)
    assert classify(CORPUS / "simple").kind is InputKind.FOLDER_OF_LOGS
    assert classify(muxed).kind is InputKind.MUXED_LOG and classify(muxed).muxed == muxed
    assert classify(CORPUS / "muxed").muxed == muxed  # a folder holding one muxed log is that log
    assert classify(muxed, sniff=False).kind is InputKind.LOG  # only a parse pays for the sniff
    assert classify(CORPUS / "ranks_same_2").kind is InputKind.RANK_LOGS
    several = classify(CORPUS / "export")
    assert several.kind is InputKind.FOLDER_OF_LOGS and len(several.logs) > 1 and not several.multi_rank
    assert classify(tmp_path / "nothing").kind is InputKind.MISSING
    assert classify("s3://bucket/run/").kind is InputKind.STORE_URL


def test_output_folders_of_a_log_and_of_a_job(tmp_path: Path) -> None:
    parse(next((CORPUS / "simple").glob("*.log.gz")), tmp_path / "one", report=False)
    parse(CORPUS / "ranks_same_2", tmp_path / "job", jobs=1)
    for folder in (tmp_path / "one", tmp_path / "job"):
        found = classify(folder)
        assert found.kind is InputKind.OUTPUT_FOLDER and not found.multi_rank and found.logs == ()


def test_the_muxed_sniff_reads_envelope_lines_only(tmp_path: Path) -> None:
    """One scan of the whole head answers most logs (one rank or none); a head whose payload lines
    quote other ranks is looked at line by line, and only envelope lines count."""
    import gzip

    from tlscope.read.log_ranks import sniff_several_ranks
    from tlscope.read.source import LogSource

    rank0 = gzip.decompress(min((CORPUS / "ranks_same_2").glob("*rank_0*.log.gz")).read_bytes())
    assert b'"rank": 0' in rank0 or b'"rank":0' in rank0
    one = tmp_path / "one.log"
    one.write_bytes(rank0)
    assert not sniff_several_ranks(one)
    quoting = tmp_path / "quoting.log"  # an envelope line, then a payload line naming rank 5
    first, _, rest = rank0.partition(b"\n")
    quoting.write_bytes(first + b'\n\t{"rank": 5}\n' + rest)
    assert not sniff_several_ranks(quoting)
    assert sniff_several_ranks(CORPUS / "muxed" / "muxed.log.gz")
    with LogSource(one, hashed=False) as source, pytest.raises(ValueError):
        source.sha256()  # a sniff's source has no hash to give
