"""The CLI's multi-rank paths: tlparse's tests 22-23, plain `tlscope DIR`, muxed logs, -j."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from helpers import stored_payloads_once

from tlscope.cli import main


def _copy(src: Path, dst: Path) -> Path:
    shutil.copytree(src, dst)
    return dst


def test_latest_with_all_ranks_fails_before_output(
    tlparse_traces: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """tlparse test 22."""
    logs = _copy(tlparse_traces / "inputs" / "multi_rank_logs", tmp_path / "in")
    out = tmp_path / "out"
    assert main([str(logs), "--all-ranks-html", "--latest", "-o", str(out), "--no-browser"]) == 1
    assert "--latest cannot be used with --all-ranks-html" in capsys.readouterr().err
    assert not out.exists()


def test_no_rank_logs_fails_and_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """tlparse test 23, without its quirk of leaving ./tl_out behind."""
    empty = tmp_path / "empty"
    empty.mkdir()
    monkeypatch.chdir(tmp_path)
    assert main([str(empty), "--all-ranks-html", "--overwrite", "--no-browser"]) == 1
    assert "No rank log files found" in capsys.readouterr().err
    assert not (tmp_path / "tl_out").exists()


def test_plain_path_of_several_ranks_runs_multi_rank(tlparse_traces: Path, tmp_path: Path) -> None:
    logs = _copy(tlparse_traces / "inputs" / "multi_rank_logs", tmp_path / "in")
    out = tmp_path / "out"
    assert main([str(logs), "-o", str(out), "--no-browser", "-j", "2"]) == 0
    landing = (out / "index.html").read_text()
    for rank in range(4):
        assert f'href="rank_{rank}/index.html"' in landing
        # Each rank's report links the collectives parity file written beside it (tlparse test 19).
        assert "collectives_parity.json" in (out / f"rank_{rank}" / "index.html").read_text()
        assert (out / f"rank_{rank}" / "collectives_parity.json").exists()
    assert "collectives_parity.json" not in landing


def test_single_rank_report_does_not_link_a_missing_parity_file(tlparse_traces: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert main([str(tlparse_traces / "inputs" / "simple.log"), "-o", str(out), "--no-browser"]) == 0
    assert not (out / "collectives_parity.json").exists()
    assert "collectives_parity.json" not in (out / "index.html").read_text()


def test_muxed_log_is_reported_per_rank(tmp_path: Path) -> None:
    corpus = Path(__file__).resolve().parents[1] / "corpus" / "traces" / "muxed"
    muxed = sorted(corpus.glob("*.log*"))
    if not muxed:
        pytest.skip(f"no muxed corpus trace in {corpus}")
    out = tmp_path / "out"
    assert main([str(muxed[0]), "-o", str(out), "--no-browser"]) == 0
    ranks = sorted(p.name for p in out.iterdir() if p.name.startswith("rank_"))
    assert len(ranks) >= 2, ranks
    for rank in ranks:
        assert (out / rank / "index.html").exists()


def test_out_holding_the_rank_logs_is_refused(tlparse_traces: Path, tmp_path: Path) -> None:
    """`tlscope logs/ -o logs --overwrite` must not replace the folder and delete the logs."""
    logs = _copy(tlparse_traces / "inputs" / "multi_rank_logs", tmp_path / "logs")
    before = sorted(p.name for p in logs.iterdir())
    assert main([str(logs), "-o", str(logs), "--overwrite", "--no-browser"]) == 1
    assert sorted(p.name for p in logs.iterdir()) == before


def test_a_job_stores_each_payload_once_and_ranks_read_them_there(tmp_path: Path) -> None:
    import json

    import tlscope

    src = Path(__file__).resolve().parents[1] / "corpus" / "traces" / "ranks_diverge_4"
    assert main([str(src), "-o", str(tmp_path / "out"), "--no-browser"]) == 0
    out = tmp_path / "out"
    files, linked = stored_payloads_once(out)
    occurrences = 0
    for rank in range(4):
        manifest = json.loads((out / f"rank_{rank}" / "manifest.json").read_text())
        assert manifest["payloads"]["root"] == ".." and not (out / f"rank_{rank}" / "raw.log").exists()
        occurrences += manifest["payloads"]["files"]
        trace = tlscope.load(out, rank=rank)
        event = next(e for e in trace.events() if "payload_filename" in e)
        assert trace.payload(event) == (out / event["payload_filename"]).read_text()
    assert files < occurrences, "payloads logged by several ranks are stored once"
    assert linked > files / 2, "the ranks' report files link the job's payloads"


def _stored_bytes(out: Path) -> tuple[int, int]:
    """(bytes of OUT on disk, counted per inode as the disk holds them; bytes of files whose
    content another file of OUT already holds)."""
    import hashlib
    import os

    inodes: set[int] = set()
    digests: set[str] = set()
    total = repeated = 0
    for root, _, names in os.walk(out):
        for name in names:
            path = Path(root) / name
            st = path.lstat()
            if st.st_ino in inodes:
                continue
            inodes.add(st.st_ino)
            total += st.st_size
            digest = hashlib.sha256(path.read_bytes()).hexdigest()
            if digest in digests:
                repeated += st.st_size
            digests.add(digest)
    return total, repeated


@pytest.mark.parametrize("scenario", ["ranks_diverge_4", "ranks_same_4"])
def test_a_real_jobs_output_is_at_most_one_and_a_half_times_its_logs(scenario: str, tmp_path: Path) -> None:
    """Issue 22: a job's output <= 1.5x its logs (it was 2.7x at 4 ranks with a payloads/ per rank,
    1.8x with the combined chromium_events.json), and nothing of it stored twice: each payload
    once, no combined copy of the ranks' chromium events. A size, not a time."""
    import gzip

    src = Path(__file__).resolve().parents[1] / "corpus" / "traces" / scenario
    logs = sum(len(gzip.decompress(p.read_bytes())) for p in src.glob("*.log.gz"))
    out = tmp_path / "out"
    assert main([str(src), "--all-ranks-html", "-o", str(out), "--no-browser"]) == 0
    stored_payloads_once(out)
    assert not (out / "chromium_events.json").exists()
    total, repeated = _stored_bytes(out)
    assert total <= 1.5 * logs, f"output {total} bytes, {total / logs:.2f}x the logs' {logs}"
    # What repeats is pages, not data: small ones every rank has alike (an empty failures page,
    # compile_directory.json of ranks that compiled alike), and a highlighted output-code page
    # that two rank workers rendered at the same time (ranks_same_4: 2.3% of the output).
    assert repeated < 0.05 * total, f"{repeated} bytes stored twice"


def test_a_jobs_landing_page_links_only_files_it_has_or_serve_makes(tmp_path: Path) -> None:
    """Opened from disk, every relative link of a job's index.html finds its file; the combined
    chromium_events.json (made only by tlscope serve) is the one exception, and the page then
    links each rank's own chromium_events.json, which exist."""
    import re

    src = Path(__file__).resolve().parents[1] / "corpus" / "traces" / "ranks_diverge_4"
    out = tmp_path / "out"
    assert main([str(src), "--all-ranks-html", "-o", str(out), "--no-browser"]) == 0
    page = (out / "index.html").read_text()
    links = {h for h in re.findall(r"href='([^']+)'|href=\"([^\"]+)\"", page) for h in h if h}
    local = {h.split("#")[0] for h in links if "://" not in h and not h.startswith(("#", "mailto:"))}
    missing = sorted(h for h in local if h and not (out / h).exists())
    assert missing == ["chromium_events.json"]
    rank_files = sorted(h for h in local if h.endswith("/chromium_events.json"))
    assert rank_files == [f"rank_{k}/chromium_events.json" for k in range(4)]


def test_a_jobs_provenance_pages_read_the_jobs_payloads(tlparse_traces: Path, tmp_path: Path) -> None:
    """-i on a job: a rank's output code is in the job's payloads/, not the rank's folder; every rank
    parses (it failed on every rank whose compilations had output code) and its provenance pages
    are the ones a parse of its log alone writes."""
    logs = _copy(tlparse_traces / "inputs" / "multi_rank_runtime", tmp_path / "in")
    out = tmp_path / "out"
    assert main([str(logs), "--all-ranks-html", "-i", "-o", str(out), "--no-browser", "-j", "2"]) == 0
    assert "parse failed" not in (out / "index.html").read_text()
    for rank in (0, 6):
        alone = tmp_path / f"alone_{rank}"
        log = logs / f"dedicated_log_torch_trace_rank_{rank}.log"
        assert main([str(log), "-i", "-o", str(alone), "--no-browser"]) == 0
        pages = sorted(p.name for p in alone.glob("provenance_tracking_*.html"))
        assert len(pages) >= 2  # the trace's compilations have output code to map
        assert sorted(p.name for p in (out / f"rank_{rank}").glob("provenance_tracking_*.html")) == pages
        for page in pages:
            assert (out / f"rank_{rank}" / page).read_bytes() == (alone / page).read_bytes()
        index = (out / f"rank_{rank}" / "index.html").read_text()
        assert all(f"href='{page}'" in index for page in pages)
