"""tlparse's multi-rank integration tests (reference §9, tests 19-41), ported to tlscope.

Every test runs on temporary copies of the shared traces (tlparse's tests 24/25 mutate their
fixtures and 34 writes into the input folder; these never do).
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

from tlscope.format.errors import InputError
from tlscope.pipeline.ranks import run_multi_rank
from tlscope.read.inputs import discover
from tlscope.write.landing import chromium
from tlscope.write.run_options import ParseOptions


def _copy(src: Path, dst: Path) -> Path:
    shutil.copytree(src, dst)
    return dst


def _run(src: Path, out: Path, **kwargs: object) -> str:
    lines: list[str] = []
    run_multi_rank(src, out, ParseOptions(), overwrite=True, jobs=1, echo=lines.append, **kwargs)  # type: ignore[arg-type]
    return "\n".join(lines)


def _landing(out: Path) -> str:
    return (out / "index.html").read_text("utf-8")


@pytest.fixture
def inputs(tlparse_traces: Path) -> Path:
    return tlparse_traces / "inputs"


@pytest.fixture
def multi_rank_logs(inputs: Path, tmp_path: Path) -> Path:
    return _copy(inputs / "multi_rank_logs", tmp_path / "in")


def test_all_ranks_basic(multi_rank_logs: Path, tmp_path: Path) -> None:  # 19
    out = tmp_path / "out"
    _run(multi_rank_logs, out)
    for page in ("rank_0/index.html", "rank_1/index.html", "index.html"):
        assert (out / page).is_file()
    landing = _landing(out)
    assert '<a href="rank_0/index.html">' in landing and '<a href="rank_1/index.html">' in landing
    assert "collectives_parity.json" not in landing
    assert (out / "rank_0" / "collectives_parity.json").is_file()
    assert "collectives_parity.json" in (out / "rank_0" / "index.html").read_text("utf-8")


def test_all_ranks_messy_input(inputs: Path, tmp_path: Path) -> None:  # 20
    src = _copy(inputs / "multi_rank_messy_input", tmp_path / "in")
    assert [log.rank for log in discover(src)[0]] == [0, 1]
    out = tmp_path / "out"
    _run(src, out)
    assert sorted(p.name for p in out.glob("rank_*")) == ["rank_0", "rank_1"]
    landing = _landing(out)
    assert '<a href="rank_0/index.html">' in landing and '<a href="rank_1/index.html">' in landing


def test_all_ranks_reports_progress(multi_rank_logs: Path, tmp_path: Path) -> None:  # 21
    out = tmp_path / "out"
    printed = _run(multi_rank_logs, out)
    assert "Multi-rank report generated" in printed and str(out) in printed
    assert (out / "index.html").is_file()


def test_all_ranks_no_logs(tmp_path: Path) -> None:  # 23
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(InputError, match="No rank log files found"):
        _run(empty, tmp_path / "out")
    assert not (tmp_path / "out").exists()  # unlike tlparse, nothing is left behind


def _chromium_by_pid(out: Path) -> dict[int, int]:
    # Not stored (the ranks' files hold the events): made from them as tlscope serve sends it.
    assert not (out / "chromium_events.json").exists()
    combined = json.loads(b"".join(chromium.chunks(out, chromium.job_ranks(out))))
    assert isinstance(combined, list) and combined
    counts: dict[int, int] = {}
    for event in combined:
        counts[event["pid"]] = counts.get(event["pid"], 0) + 1
    return counts


def _check_per_rank(out: Path, counts: dict[int, int]) -> None:
    for rank in range(4):
        events = json.loads((out / f"rank_{rank}" / "chromium_events.json").read_text("utf-8"))
        assert len(events) == counts.get(rank, 0)
        assert f"rank_{rank}" in _landing(out)


def test_all_ranks_chromium_events_combined(multi_rank_logs: Path, tmp_path: Path) -> None:  # 24, pristine
    out = tmp_path / "out"
    _run(multi_rank_logs, out)
    counts = _chromium_by_pid(out)
    assert set(counts) == {0, 1, 2, 3}
    _check_per_rank(out, counts)


def test_all_ranks_chromium_events_sparse(inputs: Path, multi_rank_logs: Path, tmp_path: Path) -> None:  # 25
    for rank in (0, 2):
        shutil.copy(inputs / "chromium_events.log", multi_rank_logs / f"dedicated_log_torch_trace_rank_{rank}.log")
    (multi_rank_logs / "dedicated_log_torch_trace_rank_1.log").write_bytes(b"")
    out = tmp_path / "out"
    _run(multi_rank_logs, out)
    counts = _chromium_by_pid(out)
    assert set(counts) == {0, 2, 3}
    _check_per_rank(out, counts)
    assert "chromium_events.json" in _landing(out)


def test_diverging_compile_ids_warning(multi_rank_logs: Path, tmp_path: Path) -> None:  # 26
    out = tmp_path / "out"
    _run(multi_rank_logs, out)
    assert "Diverging Compilation IDs detected" in _landing(out)


def _two_ranks(tmp_path: Path, rank0: Path, rank1: Path) -> Path:
    src = tmp_path / "in"
    src.mkdir()
    shutil.copy(rank0, src / "dedicated_log_torch_trace_rank_0.log")
    shutil.copy(rank1, src / "dedicated_log_torch_trace_rank_1.log")
    return src


def test_no_compile_id_divergence(inputs: Path, tmp_path: Path) -> None:  # 27
    out = tmp_path / "out"
    _run(_two_ranks(tmp_path, inputs / "simple.log", inputs / "simple.log"), out)
    assert "Diverging Compilation IDs detected" not in _landing(out)


def test_diverging_cache_events_warning(inputs: Path, tmp_path: Path) -> None:  # 28
    out = tmp_path / "out"
    _run(_two_ranks(tmp_path, inputs / "cache_hit_miss.log", inputs / "simple.log"), out)
    assert "Diverging Cache hit/miss patterns detected" in _landing(out)


def test_no_cache_event_divergence(inputs: Path, tmp_path: Path) -> None:  # 29
    out = tmp_path / "out"
    _run(_two_ranks(tmp_path, inputs / "cache_hit_miss.log", inputs / "cache_hit_miss.log"), out)
    assert "Diverging Cache hit/miss patterns detected" not in _landing(out)


def test_diverging_cache_events_multiple_groups(multi_rank_logs: Path, tmp_path: Path) -> None:  # 30
    out = tmp_path / "out"
    _run(multi_rank_logs, out)
    landing = _landing(out)
    assert "Diverging Cache hit/miss patterns detected" in landing
    assert "<li>Ranks: 0, 2</li>" in landing and "<li>Ranks: 1</li>" in landing and "<li>Ranks: 3</li>" in landing


def test_collective_schedule_parsing(inputs: Path, tmp_path: Path) -> None:  # 31
    out = tmp_path / "out"
    _run(_copy(inputs / "multi_rank_schedule", tmp_path / "in"), out)
    for rank in range(3):
        assert (out / f"rank_{rank}" / "index.html").is_file()
    schedules = json.loads((out / "collective_schedules.json").read_text("utf-8"))
    ops = {(s["rank"], s["graph"]): s["ops"] for s in schedules}
    assert {(0, "-_0_0_0"), (1, "-_0_0_0"), (2, "-_0_0_0")} <= set(ops)
    assert ops[(0, "-_0_0_0")] == ops[(2, "-_0_0_0")] != ops[(1, "-_0_0_0")]
    assert (len(ops[(0, "-_0_0_0")]), len(ops[(1, "-_0_0_0")])) == (6, 4)


def test_collective_schedule_no_divergence(inputs: Path, tmp_path: Path) -> None:  # 32
    sched = inputs / "multi_rank_schedule"
    src = _two_ranks(
        tmp_path,
        sched / "dedicated_log_torch_trace_rank_0_6u3fubwl.log",
        sched / "dedicated_log_torch_trace_rank_2.log",
    )
    out = tmp_path / "out"
    _run(src, out)
    assert "Warning:</strong> Diverging collective operation sequences" not in _landing(out)


def test_collective_schedule_with_divergence(inputs: Path, tmp_path: Path) -> None:  # 33
    out = tmp_path / "out"
    _run(_copy(inputs / "multi_rank_schedule", tmp_path / "in"), out)
    landing = _landing(out)
    assert "Warning:</strong> Diverging collective operation sequences" in landing
    assert "Ranks: 0, 2" in landing and "Ranks: 1" in landing


@pytest.fixture
def runtime_out(inputs: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("runtime")
    out = base / "out"
    _run(_copy(inputs / "multi_rank_runtime", base / "in"), out)
    return out


def test_runtime_estimation_parsing(runtime_out: Path) -> None:  # 34
    estimations = json.loads((runtime_out / "runtime_estimations.json").read_text("utf-8"))
    assert {0, 1} <= {e["rank"] for e in estimations}
    for entry in estimations:
        for op in entry["ops"]:
            assert isinstance(op["name"], str) and isinstance(op["estimated_runtime_ns"], (int, float))
            assert "type" not in op


def test_runtime_analysis_working(inputs: Path, tmp_path: Path) -> None:  # 35
    src = tmp_path / "in"
    src.mkdir()
    for rank in range(4):
        name = f"dedicated_log_torch_trace_rank_{rank}.log"
        shutil.copy(inputs / "multi_rank_runtime" / name, src / name)
    out = tmp_path / "out"
    _run(src, out)
    landing = _landing(out)
    assert "Graph Runtime Analysis" in landing and "ms delta" in landing
    assert "Runtime analysis not available" not in landing


def test_runtime_analysis_mismatched_graphs(runtime_out: Path) -> None:  # 36
    landing = _landing(runtime_out)
    assert "Graph Runtime Analysis" in landing and "Runtime analysis not available" in landing
    assert "ms delta" not in landing


def test_chromium_trace_with_runtime(runtime_out: Path) -> None:  # 37
    trace = json.loads((runtime_out / "chromium_trace_with_runtime.json").read_text("utf-8"))
    ops = [e for e in trace if e.get("ph") == "X" and e.get("cat") == "runtime"]
    assert ops
    for e in ops:
        assert isinstance(e["name"], str) and isinstance(e["dur"], int) and e["dur"] > 0
        assert isinstance(e["pid"], int) and isinstance(e["tid"], int)
        assert isinstance(e["args"]["runtime_ns"], (int, float)) and isinstance(e["args"]["graph"], str)
        assert e["pid"] == e["args"]["rank"]
    assert {e["pid"] for e in ops} == set(range(7))


def test_tensor_meta_divergence_groups(runtime_out: Path) -> None:  # 38
    landing = _landing(runtime_out)
    assert "Tensor Metadata Analysis" in landing
    assert "Ranks exhibit divergent inductor tensor meta" in landing
    assert "Ranks: 5, 6" in landing


def test_collectives_parity_detects_mismatch(inputs: Path, tmp_path: Path) -> None:  # 40
    out = tmp_path / "out"
    _run(_copy(inputs / "collectives_parity", tmp_path / "in"), out)
    parity = json.loads((out / "rank_0" / "collectives_parity.json").read_text("utf-8"))
    graphs = {g["graph"]: (g["compile_id"], g["offset"], g["missing_waits"]) for g in parity["graphs"]}
    assert graphs == {"-_0_1_0": ("[0/1]", 0, 3), "-_0_0_0": ("[0/0]", 0, 1)}


def test_graph_execution_order_diagnostics(tlparse_traces: Path, tmp_path: Path) -> None:  # 41
    out = tmp_path / "out"
    _run(_copy(tlparse_traces / "graph_exec_order_tests", tmp_path / "in"), out)
    landing = _landing(out)
    assert "Graph Execution-Order Diagnostics" in landing
    assert "Graph execution order differs across ranks" in landing
    assert "Cache hit/miss sequence: Consistent across ranks" in landing
    assert "Warning:</strong> Cache hit/miss mismatch across ranks" not in landing
    assert "Schedule mismatch across ranks: Rank 0, Rank 1" in landing


def test_malformed_rank_artifact_is_reported_and_others_analysed(inputs: Path, tmp_path: Path) -> None:
    """tlparse aborts the whole run on one bad runtime artifact; tlscope reports that rank."""
    out = tmp_path / "out"
    _run(_copy(inputs / "multi_rank_runtime", tmp_path / "in"), out)
    bad = next((out / "rank_2" / "-_0_0_0").glob("inductor_runtime_and_tensor_meta_*.json"))
    bad.write_text('{"ops": [{"name": 1}]', "utf-8")
    from rankdir import summarise_folder

    from tlscope.write.landing.writer import write_landing
    from tlscope.write.outdir import OutputDir

    summaries = [summarise_folder(r, out / f"rank_{r}") for r in range(7)]
    assert summaries[2].errors and not summaries[0].errors
    again = OutputDir(tmp_path / "again", overwrite=False)
    with again:
        for r in range(7):
            shutil.copytree(out / f"rank_{r}", again.root / f"rank_{r}")
        write_landing(again, summaries)
    landing = _landing(tmp_path / "again")
    assert "Rank 2: -_0_0_0/" in landing and "invalid JSON" in landing
    assert "Tensor Metadata Analysis" in landing and "Ranks: 5, 6" in landing


def test_unparseable_rank_is_reported(inputs: Path, tmp_path: Path) -> None:
    """A rank whose parse fails (--strict; rank 0 has payload MD5 mismatches) is listed, not fatal."""
    src = tmp_path / "in"
    src.mkdir()
    for rank in (0, 5):
        name = f"dedicated_log_torch_trace_rank_{rank}.log"
        shutil.copy(inputs / "multi_rank_runtime" / name, src / name)
    out = tmp_path / "out"
    summaries = run_multi_rank(src, out, ParseOptions(strict=True), jobs=1, echo=lambda _: None)
    assert [(s.rank, s.parsed) for s in summaries] == [(0, False), (5, True)]
    landing = _landing(out)
    assert "Rank 0: parse failed: --strict" in landing
    assert '<a href="rank_5/index.html">' in landing and (out / "rank_5" / "index.html").is_file()


def test_worker_pool_output_is_the_serial_output(inputs: Path, tmp_path: Path) -> None:
    """-j 2 (forked workers, biggest log first) writes exactly what -j 1 writes, in rank order."""
    src = tmp_path / "in"
    src.mkdir()
    # The small log as rank 0 and the big one as rank 1: the pool starts rank 1 first.
    runtime = inputs / "multi_rank_runtime"
    shutil.copy(runtime / "dedicated_log_torch_trace_rank_5.log", src / "dedicated_log_torch_trace_rank_0.log")
    shutil.copy(runtime / "dedicated_log_torch_trace_rank_0.log", src / "dedicated_log_torch_trace_rank_1.log")
    outs = {}
    for jobs in (1, 2):
        outs[jobs] = tmp_path / f"out{jobs}"
        summaries = run_multi_rank(src, outs[jobs], ParseOptions(), jobs=jobs, echo=lambda _: None)
        assert [s.rank for s in summaries] == [0, 1]
    files = {jobs: sorted(p.relative_to(out) for p in out.rglob("*") if p.is_file()) for jobs, out in outs.items()}
    assert files[1] == files[2] and not [p for p in files[1] if p.name.endswith(".part")]
    for rel in files[1]:
        assert (outs[1] / rel).read_bytes() == (outs[2] / rel).read_bytes(), rel


def test_landing_template_is_compiled_while_ranks_are_parsed(
    multi_rank_logs: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The landing page's modules are imported and its template compiled while the last ranks are
    parsed, on the core a worker leaves idle in the job's tail: neither before the workers are
    forked (they would delay every first rank) nor after the closing lines."""
    from tlscope.pipeline import ranks as multirank

    calls: list[str] = []
    real = multirank._prepare_landing

    def prepare() -> None:
        calls.append("prepare")
        real()

    monkeypatch.setattr(multirank, "_prepare_landing", prepare)
    run_multi_rank(multi_rank_logs, tmp_path / "out", ParseOptions(), jobs=2, echo=calls.append)
    # Once, after the "Processing rank N" lines (the work is handed out), before the closing lines.
    assert calls.count("prepare") == 1
    at = calls.index("prepare")
    assert all(c.startswith("Processing rank") for c in calls[:at]) and len(calls[:at]) == 4
    assert any(c.startswith("Multi-rank report generated") for c in calls[at:])


def test_linux_workers_are_forked() -> None:
    from tlscope.pipeline import ranks as multirank

    context = multirank._fork_context()
    if sys.platform.startswith("linux"):
        assert context is not None and context.get_start_method() == "fork"
    else:
        assert context is None


def test_preload_runs_once_before_forking_workers(multi_rank_logs: Path, tmp_path: Path) -> None:
    from tlscope.write.report.assembly import preload_report, report_sinks

    calls: list[int] = []

    def preload() -> None:
        calls.append(os.getpid())
        preload_report()

    for jobs, expected in ((1, []), (2, [os.getpid()] if sys.platform.startswith("linux") else [])):
        calls.clear()
        out = tmp_path / f"out{jobs}"
        run_multi_rank(multi_rank_logs, out, ParseOptions(), jobs=jobs, sinks=report_sinks, preload=preload, echo=str)
        assert calls == expected  # in this process only: the workers inherit what it loaded
        assert (out / "rank_1" / "index.html").is_file()


def test_an_interrupt_kills_a_worker_the_pool_had_not_listed_yet() -> None:
    """An interrupt landing after a worker's fork but before the pool lists it (the race behind a
    run that said "Interrupted" and kept its pipes open): every process started since the pool was
    made is killed, and a process that was alive before it is left alone."""
    import multiprocessing
    import time
    from concurrent.futures import ProcessPoolExecutor

    from tlscope.pipeline import ranks as multirank

    fork = multiprocessing.get_context("fork")
    bystander = fork.Process(target=time.sleep, args=(60,))
    bystander.start()
    try:
        before = set(multiprocessing.active_children())
        executor = ProcessPoolExecutor(max_workers=1, mp_context=fork)
        unlisted = fork.Process(target=time.sleep, args=(60,))  # the worker the pool had not listed
        with pytest.raises(KeyboardInterrupt), multirank._stopped_on_failure(executor, before):
            unlisted.start()
            raise KeyboardInterrupt
        unlisted.join(10)
        assert unlisted.exitcode is not None and unlisted.exitcode < 0  # killed, not left waiting
        assert bystander.is_alive()
    finally:
        bystander.kill()
        bystander.join()


def test_an_interrupted_pool_leaves_no_manager_thread_for_the_exit_hook() -> None:
    """On an interrupt the pool's manager thread is ended before the run exits: left running, it
    raced concurrent.futures' exit hook (which wakes it without the pool's lock) as it closed its
    wake-up pipe, and the interrupted run printed `OSError: [Errno 9] Bad file descriptor` from
    `_python_exit` (test_10_sigterm_at_random_moments failed so, now and then, under load)."""
    import multiprocessing
    import time
    from concurrent.futures import ProcessPoolExecutor

    from tlscope.pipeline import ranks as multirank

    fork = multiprocessing.get_context("fork")
    for _ in range(5):
        executor = ProcessPoolExecutor(max_workers=2, mp_context=fork)
        executor.submit(time.sleep, 60)
        manager = executor._executor_manager_thread  # type: ignore[attr-defined]
        assert manager is not None and manager.is_alive()
        with pytest.raises(KeyboardInterrupt), multirank._stopped_on_failure(executor):
            raise KeyboardInterrupt
        assert not manager.is_alive()  # its wake-up pipe closed: the exit hook's wake-up is a no-op


_POOL: Any = None  # the pool a forked worker finds, and the event it sets, for the test below
_WRITTEN: Any = None


def _half_a_result(length: int) -> None:
    """In a forked worker: the head of a `length`-byte result and a few of its bytes, then no more
    (a worker killed while sending a rank's result)."""
    import struct
    import time

    writer = _POOL._result_queue._writer
    os.write(writer.fileno(), struct.pack("!i", length) + b"x" * 100)
    _WRITTEN.set()
    time.sleep(60)


def test_an_interrupt_while_a_worker_sends_its_result_leaves_no_manager_thread() -> None:
    """A worker killed mid-result left the manager thread waiting for the rest of the message
    forever (this process holds the pipe's other end), and the interrupted run's exit waited on
    that thread: it said "Interrupted" and kept its pipes open (test_signals, 1 CI run in ~50).
    The results pipe's end here is closed once the workers are dead, so the thread ends."""
    import multiprocessing
    import time
    from concurrent.futures import ProcessPoolExecutor

    from tlscope.pipeline import ranks as multirank

    global _POOL, _WRITTEN
    fork = multiprocessing.get_context("fork")
    _WRITTEN = fork.Event()
    _POOL = executor = ProcessPoolExecutor(max_workers=1, mp_context=fork)
    executor.submit(_half_a_result, 1 << 20)
    manager = executor._executor_manager_thread  # type: ignore[attr-defined]
    try:
        assert _WRITTEN.wait(30)
        time.sleep(0.2)  # the manager has woken on the partial message and waits in recv for the rest
        started = time.monotonic()
        with pytest.raises(KeyboardInterrupt), multirank._stopped_on_failure(executor):
            raise KeyboardInterrupt
        assert not manager.is_alive()
        assert time.monotonic() - started < 5  # ended by the closed pipe, not by the join's timeout
    finally:
        _POOL = _WRITTEN = None
        if manager.is_alive():  # the test failed: let this process exit all the same
            manager.result_queue._writer.close()
