"""ranks_settings_2: 2 ranks run one program, but rank 1 turns automatic dynamic shapes off (a
setting changed on some ranks only: a debug flag, a config set under `if rank == ...`). Both
ranks see batches of 8 then 10: rank 0 recompiles `step` with a dynamic batch dimension, rank 1
with another static one, so the ranks compile the same compile ids from different graphs. Each
rank runs on torch's fake process group (`fake` backend, `FakeStore`): no collective is needed,
only the rank in the log's file name."""

from __future__ import annotations

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.testing._internal.distributed.fake_pg import FakeStore

WORLD = 2


def step(x: torch.Tensor) -> torch.Tensor:
    return (x.relu() * 2).sum(0)


def run_rank(rank: int) -> None:
    torch.set_num_threads(1)
    dist.init_process_group("fake", rank=rank, world_size=WORLD, store=FakeStore())
    try:
        if rank == 1:
            torch._dynamo.config.automatic_dynamic_shapes = False  # on this rank only
        compiled = torch.compile(step)
        for batch in (8, 10):
            compiled(torch.randn(batch, 16))
    finally:
        dist.destroy_process_group()


if __name__ == "__main__":
    mp.spawn(run_rank, nprocs=WORLD, join=True)
