"""--scheduler: the per-rank parses on a Dask distributed cluster (a LocalCluster here)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tlscope.pipeline.options import ParseOptions
from tlscope.pipeline.ranks import run_multi_rank

distributed = pytest.importorskip("distributed", reason="the dask extra is not installed (pip install 'tlscope[dask]')")


def test_local_cluster_gives_the_same_report_as_local_workers(tlparse_traces: Path, tmp_path: Path) -> None:
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
