"""--scheduler: the per-rank parses on a Dask distributed cluster (a LocalCluster here)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from tlscope.pipeline.ranks import run_multi_rank
from tlscope.write.run_options import ParseOptions

distributed = pytest.importorskip("distributed", reason="the dask extra is not installed (pip install 'tlscope[dask]')")


def _two_a_task(queue: list[Any], threads: int) -> list[Any]:
    """Dask tasks of two ranks (the job's biggest logs first), whatever the logs' sizes."""
    return [queue.pop()[1:] for _ in range(min(2, len(queue)))]


def test_local_cluster_gives_the_same_report_as_local_workers(
    tlparse_traces: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tlscope.pipeline import ranks

    # Two ranks in one task (the biggest logs, ranks 0 and 2), rank 1 in the next (a job this
    # small would go one rank a task).
    monkeypatch.setattr(ranks, "_next_batch", _two_a_task)
    src = tmp_path / "in"
    shutil.copytree(tlparse_traces / "inputs" / "multi_rank_schedule", src)
    local = run_multi_rank(src, tmp_path / "local", ParseOptions(), jobs=1, echo=lambda _: None)
    import dask

    # Worker processes must be allowed children: the report highlights code in a process pool
    # (docs/MULTIRANK.md: start real workers with DASK_DISTRIBUTED__WORKER__DAEMON=False).
    with (
        dask.config.set({"distributed.worker.daemon": False}),
        distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster,
    ):
        remote = run_multi_rank(
            src, tmp_path / "dask", ParseOptions(), scheduler=cluster.scheduler_address, echo=lambda _: None
        )
    assert [s.rank for s in remote] == [0, 1, 2]
    assert remote == local
    for name in ("index.html", "collective_schedules.json", "multi_rank_summary.json"):
        assert (tmp_path / "dask" / name).read_bytes() == (tmp_path / "local" / name).read_bytes()
    for rank in range(3):
        directory = tmp_path / "dask" / f"rank_{rank}" / "compile_directory.json"
        assert json.loads(directory.read_text("utf-8"))


def test_a_rank_whose_dask_task_fails_is_listed_not_a_traceback(
    tlparse_traces: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What the cluster raises for a task (a killed worker, a lost connection) fails that rank
    only; the others are parsed and the landing page lists it."""
    from tlscope.pipeline import ranks

    parse = ranks.parse_rank

    def cluster_fails_rank_1(log: str, rank: int, *args: Any) -> ranks.RankResult:
        if rank == 1:
            raise RuntimeError("worker tcp://127.0.0.1:1 lost")  # what the client re-raises
        return parse(log, rank, *args)

    monkeypatch.setattr(ranks, "parse_rank", cluster_fails_rank_1)
    src = tmp_path / "in"
    shutil.copytree(tlparse_traces / "inputs" / "multi_rank_schedule", src)
    with distributed.LocalCluster(n_workers=1, processes=False, dashboard_address=None) as cluster:
        summaries = run_multi_rank(
            src, tmp_path / "out", ParseOptions(), scheduler=cluster.scheduler_address, echo=lambda _: None
        )
    assert [(s.rank, s.parsed) for s in summaries] == [(0, True), (1, False), (2, True)], [s.errors for s in summaries]
    assert summaries[1].errors == ["parse failed: its Dask task failed (RuntimeError: worker tcp://127.0.0.1:1 lost)"]
    assert (tmp_path / "out" / "index.html").is_file() and (tmp_path / "out" / "rank_2" / "index.html").is_file()


def test_a_dask_task_that_fails_fails_each_of_its_ranks_listed(
    tlparse_traces: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A task parses several ranks: what the cluster raises for it fails each of them, named, and
    the ranks of the other tasks are parsed."""
    from tlscope.pipeline import ranks

    parse = ranks.parse_rank

    def cluster_fails_rank_2(log: str, rank: int, *args: Any) -> ranks.RankResult:
        if rank == 2:
            raise RuntimeError("worker tcp://127.0.0.1:1 lost")
        return parse(log, rank, *args)

    monkeypatch.setattr(ranks, "parse_rank", cluster_fails_rank_2)
    monkeypatch.setattr(ranks, "_next_batch", _two_a_task)  # ranks 0 and 2 (the biggest logs), then 1
    src = tmp_path / "in"
    shutil.copytree(tlparse_traces / "inputs" / "multi_rank_schedule", src)
    with distributed.LocalCluster(n_workers=1, processes=False, dashboard_address=None) as cluster:
        summaries = run_multi_rank(
            src, tmp_path / "out", ParseOptions(), scheduler=cluster.scheduler_address, echo=lambda _: None
        )
    assert [(s.rank, s.parsed) for s in summaries] == [(0, False), (1, True), (2, False)]
    why = "parse failed: its Dask task failed (RuntimeError: worker tcp://127.0.0.1:1 lost)"
    assert summaries[0].errors == summaries[2].errors == [why]
    assert (tmp_path / "out" / "index.html").is_file() and (tmp_path / "out" / "rank_1" / "index.html").is_file()


def test_a_job_keeps_a_bounded_number_of_ranks_in_flight(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Submitted all at once, every rank of a job had its future (and its result, until every lower
    rank's was taken) in the parent: ~10 KB a rank. Handed out as results come, the parent holds a
    few per worker thread whatever the number of ranks."""
    from tlscope.pipeline import ranks

    def quick_rank(log: str, rank: int, folder: str, *args: Any) -> ranks.RankResult:
        Path(folder).mkdir(parents=True, exist_ok=True)
        return ranks.RankResult(ranks.RankSummary(rank=rank, chromium_events=0))

    held: list[int] = []
    per_task: list[int] = []
    submit = distributed.Client.submit

    def counted(client: Any, *args: Any, **kwargs: Any) -> Any:
        future = submit(client, *args, **kwargs)
        held.append(len(client.futures))  # the futures this client holds (keys not yet released)
        per_task.append(len(args[1]))  # parse_rank_batch's calls: the ranks of this task
        return future

    monkeypatch.setattr(ranks, "parse_rank", quick_rank)
    monkeypatch.setattr(distributed.Client, "submit", counted)
    monkeypatch.setattr(ranks, "_MAX_RANKS_PER_TASK", 2)  # many more tasks than the window
    logs = tmp_path / "in"
    logs.mkdir()
    for rank in range(40):
        (logs / f"dedicated_log_torch_trace_rank_{rank}_x.log").write_bytes(b"")
    with distributed.LocalCluster(
        n_workers=1, threads_per_worker=1, processes=False, dashboard_address=None
    ) as cluster:
        summaries = run_multi_rank(
            logs, tmp_path / "out", ParseOptions(), scheduler=cluster.scheduler_address, echo=lambda _: None
        )
    assert [s.rank for s in summaries] == list(range(40)) and all(s.parsed for s in summaries)
    assert sum(per_task) == 40 and len(per_task) == 20
    # The window (8 for one thread), plus taken futures whose keys the client releases on its own
    # loop a tick later (one or two under load: the final CI of session 9 saw 10): bounded by the
    # window, not by the job's 20 tasks, which submitting all at once held.
    assert max(held) <= 2 * ranks._MIN_IN_FLIGHT, f"up to {max(held)} tasks held at once"
    assert (tmp_path / "out" / "index.html").is_file()


def _task_sizes(sizes: list[int], threads: int) -> list[int]:
    """The ranks of each Dask task of a job whose logs have these sizes (biggest first)."""
    from tlscope.pipeline import ranks

    queue: list[Any] = [(size, None, "") for size in sorted(sizes)]  # biggest last: popped first
    tasks = []
    while queue:
        tasks.append(len(ranks._next_batch(queue, threads)))
    return tasks


def test_dask_tasks_shrink_with_what_is_left_to_one_rank_at_the_end() -> None:
    """distributed's own CPU is paid per task: a task takes half of the bytes left over the
    threads' count (at most 32 ranks), one rank a task at the job's tail so the threads end together."""
    assert _task_sizes([1000] * 80, threads=1) == [32, 24, 12, 6, 3, 1, 1, 1]
    assert _task_sizes([1000] * 40, threads=1) == [20, 10, 5, 2, 1, 1, 1]
    # 256 ranks of similar sizes on two threads (bench/ranks.py's job: 23): 22 tasks (77 at 4 a task).
    two = _task_sizes([2_400_000 + 100 * (r % 7) for r in range(256)], threads=2)
    assert len(two) == 22 and two[:4] == [32] * 4 and two[-7:] == [1] * 7 and sum(two) == 256
    # Many threads: a share of a rank or two; a log bigger than its share is a task of its own.
    assert _task_sizes([1000] * 64, threads=64) == [1] * 64
    assert _task_sizes([10_000, 10, 10, 10], threads=1) == [1, 1, 1, 1]
    assert _task_sizes([100] * 8 + [5_000], threads=1) == [1, 4, 2, 1, 1]
