"""ranks_passes_2: 2 ranks compile one function into one Dynamo graph, but rank 1 turns Inductor's
pattern matcher off (a setting changed on one rank while chasing a numerical difference), so
Inductor's passes leave a pointless float64 round trip in rank 1's post-grad graph that rank 0's
removed: the ranks run other code from the same Dynamo graph. On a real job a pass that runs on
some ranks only (or takes another path on them) can reorder or change their collectives. Each
rank runs on torch's fake process group (`fake` backend, `FakeStore`): only the rank in the
log's file name is needed."""

from __future__ import annotations

import torch
import torch._inductor.config
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.testing._internal.distributed.fake_pg import FakeStore

WORLD = 2


def step(x: torch.Tensor) -> torch.Tensor:
    y = x.to(torch.float64).to(torch.float32)  # a round trip the pattern matcher removes
    return (y.relu() * 2).sum(0)


def run_rank(rank: int) -> None:
    torch.set_num_threads(1)
    dist.init_process_group("fake", rank=rank, world_size=WORLD, store=FakeStore())
    try:
        if rank == 1:
            torch._inductor.config.pattern_matcher = False  # on this rank only
        torch.compile(step)(torch.randn(8, 16))
    finally:
        dist.destroy_process_group()


if __name__ == "__main__":
    mp.spawn(run_rank, nprocs=WORLD, join=True)
