"""ranks_desync_2: 2 ranks compile the same functions, so their compile ids agree, but one
function's functional all_reduce gets a batch whose size depends on the rank (a bug of the kind
that desynchronises a job: rank 0 reduces f32[8, 16], rank 1 f32[9, 16]). On a real process group
that collective fails or hangs; here each rank runs on torch's fake process group (`fake`
backend, `FakeStore`: collectives return without communicating), so both ranks finish and their
logs hold what a desynchronised job logs before it stops. A second function reduces the same
shape on both ranks."""

from __future__ import annotations

import torch
import torch.distributed as dist
import torch.distributed._functional_collectives as funcol
import torch.multiprocessing as mp
from torch.testing._internal.distributed.fake_pg import FakeStore

WORLD = 2


def step(x: torch.Tensor) -> torch.Tensor:
    y = funcol.all_reduce(x.relu(), "sum", dist.group.WORLD)
    return y.mean(0)


def agreed(x: torch.Tensor) -> torch.Tensor:
    return funcol.all_reduce(x * 2, "sum", dist.group.WORLD) + 1


def run_rank(rank: int) -> None:
    torch.set_num_threads(1)
    dist.init_process_group("fake", rank=rank, world_size=WORLD, store=FakeStore())
    try:
        torch.manual_seed(rank)
        batch = 8 + rank  # the bug: each rank sizes its batch by its rank
        torch.compile(step)(torch.randn(batch, 16))
        torch.compile(agreed)(torch.ones(16))
    finally:
        dist.destroy_process_group()


if __name__ == "__main__":
    mp.spawn(run_rank, nprocs=WORLD, join=True)
