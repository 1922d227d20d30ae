"""ranks_codegen_2: 2 ranks compile one function into one Dynamo graph and one post-grad graph,
but rank 1 turns Inductor's C++ vectorisation off (a setting changed on one rank while chasing a
numerical difference), so Inductor generates other kernels for it: scalar loops where rank 0's
are vectorised. The ranks run other code, with other rounding, from the same graphs; the graphs
and their collectives cannot show it, the output code does. Each rank runs on torch's fake
process group (`fake` backend, `FakeStore`): only the rank in the log's file name is needed."""

from __future__ import annotations

import torch
import torch._inductor.config
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.testing._internal.distributed.fake_pg import FakeStore

WORLD = 2


def step(x: torch.Tensor) -> torch.Tensor:
    return (x.sin() * 2 + x.cos()).sum(0)


def run_rank(rank: int) -> None:
    torch.set_num_threads(1)
    dist.init_process_group("fake", rank=rank, world_size=WORLD, store=FakeStore())
    try:
        if rank == 1:
            torch._inductor.config.cpp.simdlen = 1  # on this rank only: no vectorised kernels
        torch.compile(step)(torch.randn(64, 64))
    finally:
        dist.destroy_process_group()


if __name__ == "__main__":
    mp.spawn(run_rank, nprocs=WORLD, join=True)
