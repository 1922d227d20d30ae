"""Shared multi-rank workload for the ranks_* and muxed scenarios.

Each rank is a separate process (torch.multiprocessing spawn) on the gloo backend over
127.0.0.1, so each writes its own dedicated_log_torch_trace_rank_N_*.log: the process group is
initialised before the first trace event, which is what puts the rank in the file name.
"""

from __future__ import annotations

import os
import socket

import torch
import torch.distributed as dist
import torch.distributed._functional_collectives as funcol
import torch.multiprocessing as mp
from torch.nn.parallel import DistributedDataParallel


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


class Mlp(torch.nn.Module):
    # Each 512x512 layer is 1 MiB of parameters, so with 1 MB buckets (DDP's first bucket is at
    # least 1 MiB, and the DDP optimizer requires the other buckets be no smaller) every layer
    # gets a bucket of its own and the graph splits into several submodules. The forward is
    # defined here, in user code: after DDP's own forward graph-breaks, dynamo only starts new
    # frames in user files, not in torch.nn's Sequential.
    def __init__(self) -> None:
        super().__init__()
        self.inp = torch.nn.Linear(32, 512)
        self.hidden1 = torch.nn.Linear(512, 512)
        self.hidden2 = torch.nn.Linear(512, 512)
        self.out = torch.nn.Linear(512, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = torch.relu(self.inp(x))
        x = torch.relu(self.hidden1(x))
        x = torch.relu(self.hidden2(x))
        return self.out(x)


def make_model() -> torch.nn.Module:
    torch.manual_seed(0)
    return Mlp()


def reduce_fn(x: torch.Tensor) -> torch.Tensor:
    # A functional collective inside a compiled region: traced into the graph as
    # all_reduce + wait_tensor.
    y = funcol.all_reduce(x * 2, "sum", dist.group.WORLD)
    return y.relu() + 1


def branchy_fn(x: torch.Tensor, rank: int) -> torch.Tensor:
    # A rank-dependent Python branch: ranks trace different graphs for the same frame.
    if rank % 2 == 0:
        return x.sin() + rank
    return x.cos() * rank


def run_rank(rank: int, world: int, port: int, diverge: bool) -> None:
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    torch.set_num_threads(1)  # ranks share two cores; avoid oversubscription
    dist.init_process_group("gloo", rank=rank, world_size=world)
    try:
        torch._dynamo.config.optimize_ddp = True
        ddp = DistributedDataParallel(make_model(), bucket_cap_mb=1)
        compiled = torch.compile(ddp)
        batch = 8 + (rank if diverge else 0)  # diverge: a different shape per rank
        compiled(torch.randn(batch, 32)).sum().backward()

        reduced = torch.compile(reduce_fn)(torch.ones(16))
        assert torch.equal(reduced, torch.full((16,), 2.0 * world + 1))

        if diverge:
            torch.compile(branchy_fn)(torch.randn(8), rank)
            if rank == world - 1:
                # One extra compile that no other rank does.
                torch.compile(lambda t: (t @ t.T).softmax(-1))(torch.randn(4, 4))
        dist.barrier()
    finally:
        dist.destroy_process_group()


def launch(world: int, diverge: bool) -> None:
    mp.spawn(run_rank, args=(world, free_port(), diverge), nprocs=world, join=True)
