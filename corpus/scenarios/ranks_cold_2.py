"""ranks_cold_2: 2 ranks compile one function, rank 0 from a warm Inductor cache (a folder a run
before filled, untraced), rank 1 from an empty one (a new node, a wiped local cache): rank 0's
AOTAutograd cache hits and it compiles nothing again, rank 1 misses and compiles it all, so rank 1
is the slow one for no reason in the code. Each rank runs on torch's fake process group (`fake`
backend, `FakeStore`): only the rank in the log's file name is needed."""

from __future__ import annotations

import os
import subprocess
import sys

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.testing._internal.distributed.fake_pg import FakeStore

WORLD = 2


def step(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    return ((x @ w).relu() * 2 + x.sin()).sum(0)


def compile_once() -> None:
    w = torch.randn(32, 32, requires_grad=True)
    torch.compile(step)(torch.randn(16, 32), w).sum().backward()


def run_rank(rank: int, warm: str, cold: str) -> None:
    # Each rank's own cache folder, read by Inductor when it first looks a cache up.
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = warm if rank == 0 else cold
    torch.set_num_threads(1)
    dist.init_process_group("fake", rank=rank, world_size=WORLD, store=FakeStore())
    try:
        compile_once()
    finally:
        dist.destroy_process_group()


def main() -> None:
    if "--warm-up" in sys.argv:
        # As rank 0 runs below (a spawned process, one thread, the fake process group): what the
        # caches' keys hash is the same.
        mp.spawn(run_rank, args=(sys.argv[-1], sys.argv[-1]), nprocs=1, join=True)
        return
    root = os.environ["TORCHINDUCTOR_CACHE_DIR"]  # generate.py's, empty at the start
    warm, cold = os.path.join(root, "warm"), os.path.join(root, "cold")
    # The run before, which filled rank 0's cache: not traced.
    env = {k: v for k, v in os.environ.items() if k != "TORCH_TRACE"}
    subprocess.run([sys.executable, __file__, "--warm-up", warm], env=env, check=True)
    mp.spawn(run_rank, args=(warm, cold), nprocs=WORLD, join=True)


if __name__ == "__main__":
    main()
