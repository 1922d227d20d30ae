"""ranks_shifted_4: 4 ranks run one training step, but rank 0 alone also compiles a function
that summarises the activations for its log (code under `if rank == 0:`, the usual home of
logging and evaluation). Dynamo numbers frames in the order each process first compiles them,
so from that frame on rank 0's compile ids are one ahead of the other ranks' for the same code:
rank 0's [2/0] `block` is ranks 1-3's [1/0]. And rank 3's last batch is one short (an uneven
split), so its `head` traces another graph than the other ranks' `head`, which rank 0 numbers
[3/0] and ranks 1-3 [2/0]. Each rank runs on torch's fake process group
(`fake` backend, `FakeStore`): no collective is needed, only the rank in the log's file name."""

from __future__ import annotations

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.testing._internal.distributed.fake_pg import FakeStore

WORLD = 4


def embed(x: torch.Tensor) -> torch.Tensor:
    return torch.tanh(x) * 0.5


def log_stats(x: torch.Tensor) -> torch.Tensor:
    return torch.stack([x.mean(), x.std(), x.abs().max()])


def block(x: torch.Tensor) -> torch.Tensor:
    return torch.relu(x @ x.T).sum(1)


def head(x: torch.Tensor) -> torch.Tensor:
    return x.softmax(0) * 2


def run_rank(rank: int) -> None:
    torch.set_num_threads(1)
    dist.init_process_group("fake", rank=rank, world_size=WORLD, store=FakeStore())
    try:
        torch.manual_seed(rank)
        h = torch.compile(embed, backend="aot_eager")(torch.randn(8, 16))
        if rank == 0:
            torch.compile(log_stats, backend="aot_eager")(h)
        h = torch.compile(block, backend="aot_eager")(h)
        torch.compile(head, backend="aot_eager")(h[:7] if rank == 3 else h)
    finally:
        dist.destroy_process_group()


if __name__ == "__main__":
    mp.spawn(run_rank, nprocs=WORLD, join=True)
