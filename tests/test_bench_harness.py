"""Fast checks of the benchmark harness logic (bench/): no big cases are run here."""

from __future__ import annotations

import gzip
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from helpers import REPO, load_script

from tlscope.model.problems import ProblemKind, Problems
from tlscope.read.inputs import discover
from tlscope.read.reader import LogReader

BENCH = REPO / "bench"


def load(name: str) -> ModuleType:
    """bench/<name>.py as a module (bench/ is scripts, not a package)."""
    return load_script("bench", name)


harness = load("harness")
run = load("run")
memory = load("memory")
MB, Sample, ToolRuns = harness.MB, harness.Sample, harness.ToolRuns


def test_median_odd_even_and_empty() -> None:
    assert harness.median([3.0, 1.0, 2.0]) == 2.0
    assert harness.median([4.0, 1.0, 2.0, 3.0]) == 2.5
    with pytest.raises(ValueError):
        harness.median([])


def test_ratio_and_throughput_guard_missing_values() -> None:
    assert harness.ratio(1.0, 4.0) == 0.25
    assert harness.ratio(None, 4.0) is None
    assert harness.ratio(1.0, 0.0) is None
    assert harness.throughput_mb_s(50_000_000, 2.0) == 25.0
    assert harness.throughput_mb_s(50_000_000, None) is None


def test_tool_runs_median_and_peak() -> None:
    runs = ToolRuns("t", [Sample(3.0, 10, 0), Sample(1.0, 30, 0), Sample(2.0, 20, 0)])
    assert runs.median_wall() == 2.0
    assert runs.peak_rss() == 30
    assert runs.ok
    runs.samples.append(Sample(1.0, 1, 2))
    assert not runs.ok


def test_markdown_table_aligns_and_checks_width() -> None:
    text = harness.markdown_table(["case", "s"], [["a", "1.5"], ["longer", "10"]])
    lines = text.splitlines()
    assert lines[0] == "| case   |   s |"
    assert lines[1] == "| :----- | --: |"
    assert lines[3] == "| longer |  10 |"
    assert len({len(line) for line in lines}) == 1
    with pytest.raises(ValueError):
        harness.markdown_table(["a", "b"], [["only one"]])


def test_formatting_keeps_small_values_visible() -> None:
    assert harness.fmt_seconds(0.000123) == "0.000123"
    assert harness.fmt_seconds(0.0000354) == "0.000035"
    assert harness.fmt_seconds(1.2345) == "1.23"
    assert harness.fmt_seconds(None) == "-"
    assert harness.fmt_mb(2_500_000) == "2.5"
    assert harness.fmt_float(0.5, 2, "x") == "0.50x"


def test_rusage_is_per_child_not_cumulative() -> None:
    # A big child first, then a tiny one: RUSAGE_CHILDREN would report the big peak for both.
    big = harness.run_child([sys.executable, "-c", "b = bytearray(200_000_000); b[::4096] = b'x' * len(b[::4096])"])
    small = harness.run_child([sys.executable, "-c", "pass"])
    assert big.exit_code == 0 and small.exit_code == 0
    assert big.max_rss_bytes > 200 * MB
    assert small.max_rss_bytes < 100 * MB


def test_parent_peak_does_not_leak_into_child() -> None:
    # Linux folds the exec'ing address space's peak into the new program's ru_maxrss, so a
    # child forked from a parent that once held 300 MB would report >= 300 MB. The launcher
    # must hide that: run the check in a fresh process that first bloats itself.
    code = (
        "import sys; sys.path.insert(0, sys.argv[1]); import harness; "
        "b = bytearray(300_000_000); b[::4096] = b'x' * len(b[::4096]); del b; "
        "s = harness.run_child([sys.executable, '-c', 'pass']); print(s.exit_code, s.max_rss_bytes)"
    )
    done = subprocess.run([sys.executable, "-c", code, str(BENCH)], capture_output=True, text=True, check=True)
    exit_code, rss = map(int, done.stdout.split())
    assert exit_code == 0
    assert rss < 100 * MB


def test_rss_floor_is_small() -> None:
    assert harness.rss_floor() < 30 * MB
    sample = harness.run_child(["true"])
    assert sample.exit_code == 0
    assert sample.wall_s > 0


def test_missing_command_reports_127() -> None:
    assert harness.run_child(["/nonexistent/tlscope-bench-no-such-binary"]).exit_code == 127


def test_run_child_reports_exit_code_and_log(tmp_path: Path) -> None:
    log = tmp_path / "child.log"
    sample = harness.run_child(
        [sys.executable, "-c", "import sys; print('boom', file=sys.stderr); sys.exit(3)"], log_path=log
    )
    assert sample.exit_code == 3
    assert "boom" in log.read_text()


def test_decompress_tree_keeps_rank_names(tmp_path: Path) -> None:
    src = tmp_path / "ranks"
    src.mkdir()
    for rank in (0, 1):
        with gzip.open(src / f"dedicated_log_torch_trace_rank_{rank}_ab.log.gz", "wb") as out:
            out.write(f"rank {rank}\n".encode())
    copy = harness.decompress_tree(src, tmp_path / "copy" / "ranks")
    names = sorted(p.name for p in copy.iterdir())
    assert names == ["dedicated_log_torch_trace_rank_0_ab.log", "dedicated_log_torch_trace_rank_1_ab.log"]
    assert (copy / names[1]).read_text() == "rank 1\n"
    assert harness.input_size(copy) == 14
    assert harness.read_once(harness.input_files(copy)) == 14
    assert harness.read_floor(copy) >= 0


def test_supported_flags_reads_help() -> None:
    script = (
        "import argparse; p = argparse.ArgumentParser(); "
        "p.add_argument('--overwrite', action='store_true'); p.parse_args()"
    )
    kept, dropped = harness.supported_flags([sys.executable, "-c", script], ["--overwrite", "--no-browser"])
    assert kept == ["--overwrite"]
    assert dropped == ["--no-browser"]


def result_with(scope: Any, parse: Any) -> Any:
    return run.CaseResult("case", 10_000_000, 0.01, {"tlscope": scope, "tlparse": parse})


def test_row_ratios_and_throughput() -> None:
    scope = ToolRuns("tlscope", [Sample(1.0, 50_000_000, 0), Sample(3.0, 60_000_000, 0), Sample(2.0, 40_000_000, 0)])
    parse = ToolRuns("tlparse", [Sample(4.0, 120_000_000, 0)])
    cells = dict(zip(run.HEADER, run.row(result_with(scope, parse)), strict=True))
    assert cells["tlscope s"] == "2"
    assert cells["tlparse s"] == "4"
    assert cells["time ratio"] == "0.50x"
    assert cells["tlscope RSS MB"] == "60.0"
    assert cells["RSS ratio"] == "0.50x"
    assert cells["tlscope MB/s"] == "5.0"
    assert cells["floor MB/s"] == "1000"


def test_report_lists_failures() -> None:
    scope = ToolRuns("tlscope", [Sample(1.0, 1, 1)], error="exit 1: bad")
    parse = ToolRuns("tlparse", [Sample(1.0, 1, 0)])
    markdown, data = run.report([result_with(scope, parse)], {"runs": 1, "warmup": 0})
    assert "(failed)" in markdown
    assert "tlscope exit 1: bad" in markdown
    assert data["cases"][0]["runs"]["tlscope"]["error"] == "exit 1: bad"


def test_select_by_glob_and_prefix() -> None:
    cases = [run.Case("simple", Path("a"), False), run.Case("ranks_same_2/ (all ranks)", Path("b"), True)]
    assert [c.name for c in run.select(cases, ["ranks_same_2"])] == ["ranks_same_2/ (all ranks)"]
    assert [c.name for c in run.select(cases, ["sim*"])] == ["simple"]
    assert run.select(cases, None) == cases


def size_result(mb: int, rss_mb: float, code: int = 0) -> Any:
    return memory.SizeResult(mb, f"t{mb}", mb * 1_000_000, 0.01, 1.0, int(rss_mb * MB), code)


def test_memory_judge_passes_flat_and_fails_growth() -> None:
    flat = memory.judge([size_result(50, 80), size_result(500, 110)], 300, 1.25, 20)
    assert all(v.passed for v in flat)
    growing = memory.judge([size_result(50, 80), size_result(500, 130)], 300, 1.25, 20)
    assert [v.name for v in growing if not v.passed] == ["flatness"]
    too_big = memory.judge([size_result(50, 310)], 300, 1.25, 20)
    assert [v.name for v in too_big if not v.passed] == ["ceiling 50 MB"]
    crashed = memory.judge([size_result(50, 10, code=1)], 300, 1.25, 20)
    assert [v.name for v in crashed if not v.passed] == ["runs"]


def test_memory_table_reports_rss_slope() -> None:
    text = memory.table([size_result(50, 80), size_result(250, 100)])
    assert text.splitlines()[-1].endswith("|                10.00 |")


def _rank_log(rank: int, payload_rank: int) -> bytes:
    envelope = f'V1121 20:00:32.107000 4664 x.py:1] {{"chromium_event": {{}}, "rank": {rank}, "has_payload": "x"}}\n'
    return (envelope + f'\t{{"pid": 0, "rank": {payload_rank}}}\n').encode()


def test_rank_copies_renames_and_reranks_envelopes_only(tmp_path: Path) -> None:
    src = tmp_path / "src"
    src.mkdir()
    for rank, suffix in ((0, "ab"), (1, "cd")):
        with gzip.open(src / f"dedicated_log_torch_trace_rank_{rank}_{suffix}.log.gz", "wb") as out:
            out.write(_rank_log(rank, payload_rank=rank))
    (src / "notes.txt").write_text("not a rank log")
    copy = harness.rank_copies(src, tmp_path / "eight", 5)
    names = sorted(p.name for p in copy.iterdir())
    assert names == [f"dedicated_log_torch_trace_rank_{r}_{'ab' if r % 2 == 0 else 'cd'}.log" for r in range(5)]
    for rank in range(5):
        lines = (copy / names[rank]).read_bytes().splitlines(keepends=True)
        assert f'"rank": {rank},'.encode() in lines[0]
        # The payload is the source rank's, byte for byte: its MD5 must stay valid.
        assert lines[1] == f'\t{{"pid": 0, "rank": {rank % 2}}}\n'.encode()
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(ValueError, match="no rank logs"):
        harness.rank_copies(empty, tmp_path / "none", 2)


def test_eight_rank_case_is_eight_consistent_ranks(tmp_path: Path) -> None:
    # The issue-5 case: both tools must see 8 distinct ranks, each log agreeing with its name.
    case = next((c for c in run.discover_cases() if c.ranks), None)
    if case is None:
        pytest.skip(f"{run.RANK_COPIES_SOURCE} not available")
    assert case.name == "ranks_8 (copies of ranks_same_4)" and case.is_dir
    copy = harness.rank_copies(case.source, tmp_path / "in", case.ranks)
    logs, notes = discover(copy)
    assert [log.rank for log in logs] == list(range(8)) and notes == []
    for log in logs:
        problems = Problems()
        reader = LogReader(Path(log.path), problems=problems)
        for _ in reader:
            pass
        assert (reader.rank, reader.name_rank) == (log.rank, log.rank)
        assert problems.counts[ProblemKind.OTHER_RANK] == 0


def test_ab_alternates_sides_and_pairs_rounds() -> None:
    ab = load("ab")
    sides = ab.order(4)
    assert sides == ["base", "new", "new", "base", "base", "new", "new", "base"]
    assert sides.count("base") == sides.count("new") == 4
    sample = load("harness").Sample
    base = [sample(1.0, 1, 0), sample(2.0, 1, 0)]
    new = [sample(1.5, 1, 0), sample(1.0, 1, 0)]
    assert ab.pair_ratios(base, new) == [1.5, 0.5]
    assert ab.summary(base)["min"] == 1.0


def test_floor_lists_the_libraries_a_parse_imports(tmp_path: Path) -> None:
    floor = load("floor")
    log = tmp_path / "three.log"
    with gzip.open(REPO / "corpus" / "traces" / "simple" / "dedicated_log_torch_trace_ia4g6rv7.log.gz", "rb") as f:
        log.write_bytes(b"".join(f.readline() for _ in range(3)))
    modules = floor.libraries(REPO / "src", log, tmp_path / "out")
    assert {"msgspec", "jinja2", "argparse"} <= set(modules)  # what every parse imports...
    assert not [m for m in modules if m.split(".")[0] == "tlscope"]  # ...but tlscope's own
    assert not (tmp_path / "out").exists()
    layers = floor.layers(REPO / "src", log, log, tmp_path / "out", Path("tlparse"))
    assert list(layers) == ["interpreter", "libraries", "tlscope 3 lines", "tlscope", "tlparse"]


def test_floor_report_ratios_are_per_round_against_tlparse() -> None:
    floor = load("floor")
    sample = harness.Sample
    samples = {"tlscope": [sample(0.2, 1, 0, 0.2), sample(0.6, 1, 0, 0.5)], "tlparse": [sample(0.1, 1, 0, 0.1)] * 2}
    table = floor.report(samples, {})
    assert "| tlscope " in table and "4.00x" in table  # per-round ratios 2 and 6: median 4
    assert "1.00x" in table
