"""ranks_patched_2: 2 ranks compile the same three functions under the same settings, except that
rank 1 compiles the second one inside `torch._inductor.config.patch` (turning C++ vectorisation
off, as someone chasing a numerical difference on one rank would). Both ranks' first compiles ran
under one settings, so comparing the first compile's settings says nothing: the change is
mid-run, on one compile of one rank. Inductor generates other kernels for that compile there
(scalar loops where rank 0's are vectorised); the compiles before and after it are alike. Each
rank runs on torch's fake process group (`fake` backend, `FakeStore`)."""

from __future__ import annotations

import torch
import torch._inductor.config
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.testing._internal.distributed.fake_pg import FakeStore

WORLD = 2


def embed(x: torch.Tensor) -> torch.Tensor:
    return torch.tanh(x * 2)


def step(x: torch.Tensor) -> torch.Tensor:
    return (x.sin() * 2 + x.cos()).sum(0)


def head(x: torch.Tensor) -> torch.Tensor:
    return torch.relu(x - 1).mean()


def run_rank(rank: int) -> None:
    torch.set_num_threads(1)
    dist.init_process_group("fake", rank=rank, world_size=WORLD, store=FakeStore())
    try:
        x = torch.randn(64, 64)
        torch.compile(embed)(x)
        if rank == 1:
            with torch._inductor.config.patch({"cpp.simdlen": 1}):  # this compile, this rank only
                torch.compile(step)(x)
        else:
            torch.compile(step)(x)
        torch.compile(head)(x)
    finally:
        dist.destroy_process_group()


if __name__ == "__main__":
    mp.spawn(run_rank, nprocs=WORLD, join=True)
