"""pgo_ranks: each rank keeps its own PGO profile (torch keys it by job id and rank), so ranks
of one job can start the next run from different profiles. run1/ (TORCH_COMPILE_JOB_ID set): both
ranks call `step` on batches of 8, then rank 1 gets an uneven last batch of 6: rank 1 recompiles
with a dynamic batch dimension and its profile keeps that. run2/ (the same job id, batches of 8
on both ranks): rank 1 reads its profile and compiles [0/0] dynamic from the first call, rank 0
compiles it static: the same compile ids from different graphs, which no line of the code
explains. Each rank runs on torch's fake process group (`fake` backend, `FakeStore`)."""

from __future__ import annotations

import os
import subprocess
import sys

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.testing._internal.distributed.fake_pg import FakeStore

WORLD = 2


def step(x: torch.Tensor) -> torch.Tensor:
    return (x.relu() * 2).sum(0)


def run_rank(rank: int, uneven: bool) -> None:
    torch.set_num_threads(1)
    dist.init_process_group("fake", rank=rank, world_size=WORLD, store=FakeStore())
    try:
        compiled = torch.compile(step)
        batches = (8, 8, 6) if uneven and rank == 1 else (8, 8)
        for batch in batches:
            compiled(torch.randn(batch, 16))
    finally:
        dist.destroy_process_group()


def main() -> None:
    if "--child" in sys.argv:
        mp.spawn(run_rank, args=(sys.argv[-1] == "uneven",), nprocs=WORLD, join=True)
        return
    trace_root = os.environ["TORCH_TRACE"]
    for run, batches in (("run1", "uneven"), ("run2", "even")):
        env = dict(os.environ, TORCH_TRACE=os.path.join(trace_root, run), TORCH_COMPILE_JOB_ID="tlscope-ranks-pgo")
        # Both runs share the inherited TORCHINDUCTOR_CACHE_DIR (generate.py's, empty at the
        # start), where each rank's local PGO profile is kept.
        subprocess.run([sys.executable, __file__, "--child", batches], env=env, check=True)


if __name__ == "__main__":
    main()
