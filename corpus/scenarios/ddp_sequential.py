"""ddp_sequential: `torch.compile` of a DDP-wrapped `nn.Sequential` (one rank, gloo). DDP's
forward graph-breaks where it enters `_inside_ddp_forward`, a function Dynamo skips, and Dynamo
starts new frames only in user files, never in torch.nn's own `Sequential.forward`: no compile
makes a graph, and the model runs in eager while the log counts compiles. tlscope says that
nothing compiled (the `no_graph` first answer); a model whose forward is in a user file (the
ranks_* scenarios' `Mlp`) compiles."""

from __future__ import annotations

import os
import socket

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def main() -> None:
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(free_port())
    dist.init_process_group("gloo", rank=0, world_size=1)
    try:
        torch.manual_seed(0)
        model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 4))
        compiled = torch.compile(DistributedDataParallel(model), backend="aot_eager")
        for _ in range(2):
            compiled(torch.randn(8, 32)).sum().backward()
    finally:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
