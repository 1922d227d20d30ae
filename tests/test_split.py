"""`tlscope split` and muxed logs, on the corpus's real muxed trace (3 ranks in one file)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from helpers import REPO

from tlscope.cli import main
from tlscope.pipeline.ranks import run_multi_rank
from tlscope.read.split import process_ranks, split_log
from tlscope.write.run_options import ParseOptions

MUXED = REPO / "corpus" / "traces" / "muxed" / "muxed.log.gz"


@pytest.fixture(scope="module")
def muxed() -> Path:
    if not MUXED.is_file():
        pytest.skip(f"corpus trace {MUXED} not generated yet (corpus/generate.py)")
    return MUXED


def test_split_routes_every_line_to_one_rank(muxed: Path, tmp_path: Path) -> None:
    written = split_log(muxed, tmp_path)
    assert list(written) == [f"dedicated_log_torch_trace_rank_{r}.log" for r in range(3)]
    with gzip.open(muxed, "rb") as f:
        total = sum(1 for _ in f)
    # Each process logged one rank here, so no line is duplicated and none is left unranked.
    assert all(len(ranks) == 1 for ranks in process_ranks(muxed).values())
    assert sum(written.values()) == total


def test_split_logs_are_clean_single_rank_logs(muxed: Path, tmp_path: Path) -> None:
    split_log(muxed, tmp_path / "split")
    for rank in range(3):
        out = tmp_path / f"out{rank}"
        log = tmp_path / "split" / f"dedicated_log_torch_trace_rank_{rank}.log"
        assert main([str(log), "-o", str(out), "--no-browser"]) == 0
        manifest = json.loads((out / "manifest.json").read_text("utf-8"))
        assert manifest["ranks"] == [rank]
        assert manifest["problems"]["total"] == 0, manifest["problems"]
        assert len(manifest["processes"]) == 1


def test_string_tables_follow_their_process(muxed: Path, tmp_path: Path) -> None:
    """Every rank's `str` lines reuse indices from 0; each split log keeps exactly its process's."""
    split_log(muxed, tmp_path)
    tables = []
    for rank in range(3):
        log = tmp_path / f"dedicated_log_torch_trace_rank_{rank}.log"
        indices = [json.loads(line.split("] ", 1)[1])["str"][1] for line in log.open() if '] {"str"' in line]
        assert indices and len(indices) == len(set(indices))  # no index from another process
        tables.append(indices)
    assert all(0 in t for t in tables)  # the indices collide across processes: keyed by pid


def test_muxed_log_is_reported_as_multi_rank(muxed: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    summaries = run_multi_rank(muxed, out, ParseOptions(), jobs=1, echo=lambda _: None)
    assert [s.rank for s in summaries] == [0, 1, 2]
    assert all(s.parsed and not s.errors for s in summaries)
    landing = (out / "index.html").read_text("utf-8")
    assert "split it by rank before parsing" in landing
    # What tlscope did to the input is said as plain text, not in the red problem box (issue 20).
    assert '<div class="problem-box">' not in landing
    assert '<a href="rank_2/index.html">' in landing


def test_split_command(muxed: Path, tmp_path: Path) -> None:
    out = tmp_path / "split"
    assert main(["split", str(muxed), "-o", str(out)]) == 0
    assert sorted(p.name for p in out.iterdir()) == [f"dedicated_log_torch_trace_rank_{r}.log" for r in range(3)]
    assert main(["split", str(muxed), "-o", str(out)]) == 1  # exists, no --overwrite


#: Files in which nothing is a trace event: text, an empty file, glog-prefixed lines whose
#: envelope is no JSON object, a glog line with an impossible date, orphan payload lines.
NOT_LOGS = {
    "text.txt": b"hello\nworld\n",
    "empty.log": b"",
    "glog_no_json.log": b"I1123 10:00:00.000000 42 torch/_logging/x.py:1] not json\n"
    b'I1123 10:00:00.000000 42 torch/_logging/x.py:1] ["a list"]\n',
    "bad_date.log": b'I1323 10:00:00.000000 42 torch/_logging/x.py:1] {"str": ["a", 0]}\n',
    "payload_only.log": b"\tdef forward(self):\n\t    pass\n",
}


@pytest.mark.parametrize("name", sorted(NOT_LOGS))
def test_split_refuses_a_file_with_no_trace_event(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Not a log: one line on stderr saying so (as `parse` words it), exit 1, nothing written."""
    log = tmp_path / name
    log.write_bytes(NOT_LOGS[name])
    out = tmp_path / "split"
    assert main(["split", str(log), "-o", str(out)]) == 1
    err = capsys.readouterr().err
    assert f"nothing in {log} was a trace event" in err and "Nothing written" in err
    lines = NOT_LOGS[name].count(b"\n")
    assert ("it is empty" if not lines else f"none of its {lines} line") in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert not out.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == [name]  # no temporary folder either


def test_split_refusal_leaves_an_existing_out_as_it_was(tmp_path: Path) -> None:
    log = tmp_path / "notes.txt"
    log.write_bytes(NOT_LOGS["text.txt"])
    out = tmp_path / "split"
    out.mkdir()
    (out / "keep.log").write_text("mine")
    assert main(["split", str(log), "-o", str(out), "--overwrite"]) == 1
    assert [p.name for p in out.iterdir()] == ["keep.log"]
    assert (out / "keep.log").read_text() == "mine"


def test_split_of_a_gzipped_non_log_is_refused(tmp_path: Path) -> None:
    log = tmp_path / "notes.log.gz"
    log.write_bytes(gzip.compress(b"just text\n" * 3))
    assert main(["split", str(log), "-o", str(tmp_path / "split")]) == 1
    assert not (tmp_path / "split").exists()


def test_split_keeps_a_log_whose_one_event_follows_junk(tmp_path: Path) -> None:
    """One real event after junk lines is a log: split writes it (rank-less: unranked.log)."""
    log = tmp_path / "mixed.log"
    event = b'V1123 10:00:00.000000 42 torch/_dynamo/x.py:1] {"dynamo_start": {"stack": []}, "frame_id": 0}\n'
    log.write_bytes(b"junk\n" * 5 + event)
    out = tmp_path / "split"
    assert main(["split", str(log), "-o", str(out)]) == 0
    assert (out / "unranked.log").read_bytes() == b"junk\n" * 5 + event
